"""Acceptance (issue #12 item 6): after an erase and the documented compaction, the erased user's text is
in no file of Redis (AOF + RDB) or Chroma (SQLite, its log, index files), grepped as raw bytes.

Own servers, so that their data directories hold this test's data only: redis-server with
`--appendonly yes --dir <tmp>` (and `--rdbcompression no`: compressed strings in the RDB file and the
AOF's RDB preamble could hide a surviving token from a grep), `chroma run --path <tmp>`. The token goes
in through the API: a stored message (Chroma), chat turns (session keys, outbox, then Chroma through the
outbox worker), a search (shared query vector, rate-limit log), a turn still pending in the outbox next
to another user's, a malformed turn in the dead letters, and a snapshot (dump.rdb) taken before the erase.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aredis

from app.settings import Settings
from harness.services import ServerProcess, start_chroma, start_redis
from memory import Embedder, keys
from memory.outbox.stream import Outbox
from memory.relations.extract import person_id
from tests.conftest import TEST_SECRET, AuthHeaders, app_client, make_settings

log = logging.getLogger(__name__)

pytestmark = [
    pytest.mark.integration,
    pytest.mark.standalone,
]  # its own redis-server and Chroma, whose data directories it greps
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def own_servers(tmp_path: Path) -> Iterator[tuple[ServerProcess, ServerProcess, Path, Path]]:
    redis_dir, chroma_dir = tmp_path / "redis", tmp_path / "chroma"
    redis_server = start_redis(redis_dir, persist=True, extra_args=("--rdbcompression", "no"))
    try:
        chroma_server = start_chroma(chroma_dir)
        try:
            yield redis_server, chroma_server, redis_dir, chroma_dir
        finally:
            chroma_server.stop()
    finally:
        redis_server.stop()


def needles(text: str) -> list[bytes]:
    """The text as UTF-8 and as JSON \\u escapes (lower and upper hex), whichever a store wrote."""
    escaped = json.dumps(text)[1:-1]
    return sorted({text.encode(), escaped.encode(), escaped.upper().replace("\\U", "\\u").encode()})


def hits(directory: Path, text: str) -> dict[str, int]:
    """File (relative to `directory`) -> occurrences of `text`, over every file below it."""
    found: dict[str, int] = {}
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        data = path.read_bytes()
        n = sum(data.count(needle) for needle in needles(text))
        if n:
            found[str(path.relative_to(directory))] = n
    return found


# the files hnswlib persists a segment in (chroma-core/hnswlib `persistDirty`), written from buffers it
# never zeroes: their unused slots hold whatever the Chroma process had freed, which may be any record's
# text, erased or not (chroma-core/chroma#7688; seen here once in length.bin). Outside what compaction
# can rewrite (docs/decisions/known-limits.md), as in tests/deploy/test_one_node.py: logged, and every
# other file must be clean.
HNSW_FILES = frozenset({"data_level0.bin", "length.bin", "link_lists.bin", "header.bin"})


def outside_hnsw(found: dict[str, int]) -> dict[str, int]:
    recycled = {f: n for f, n in found.items() if f.rsplit("/", 1)[-1] in HNSW_FILES}
    if recycled:
        log.warning("erased text in HNSW files (recycled heap memory) %s", json.dumps(recycled))
    return {f: n for f, n in found.items() if f not in recycled}


async def wait_idle(r: aredis.Redis) -> None:
    for _ in range(600):
        info: Any = await r.info("persistence")
        if not int(info["rdb_bgsave_in_progress"]) and not int(info["aof_rewrite_in_progress"]):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("redis still writing its files")


async def drain(r: aredis.Redis) -> None:
    for _ in range(600):
        if await Outbox(r).pending() == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("outbox did not drain")


async def chat(client: Any, auth: AuthHeaders, user: str, session: str, text: str) -> None:
    resp = await client.post(
        "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": text}], "session_id": session},
        headers=auth(user),
    )
    assert resp.status_code == 200, resp.text


def compact(settings: Settings, chroma_data: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The documented operator command, as a process of its own."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "REDIS_URL": settings.redis_url,
        "CHROMA_URL": settings.chroma_url,
        "AUTH_JWT_SECRET": TEST_SECRET,
        "LOG_LEVEL": "INFO",
    }
    return subprocess.run(
        [sys.executable, "-m", "app.cli.compact", "--chroma-path", str(chroma_data)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


async def test_erased_text_is_in_no_file_of_redis_or_chroma(
    own_servers: tuple[ServerProcess, ServerProcess, Path, Path],
    embedder: Embedder,
    auth: AuthHeaders,
    tmp_path: Path,
) -> None:
    redis_server, chroma_server, redis_dir, chroma_dir = own_servers
    chroma_data = chroma_dir / "data"
    suffix = secrets.token_hex(4)
    en, zh = f"Wisteria7Qx{suffix}", f"紫藤7Qx{suffix}花园"
    bob_en, bob_zh = f"Camellia3Rk{suffix}", f"山茶3Rk{suffix}花"
    doc = f"QX-{int(suffix, 16) % 10**8:08d}"  # an entity id: relation memory holds it too
    # entity names: a person in English and one in Chinese, merged into one (the merge names both ids)
    person = "Zo" + "".join(chr(ord("a") + int(c, 16)) for c in suffix)
    zh_person = "赵钱孙周吴郑冯陈褚卫"[int(suffix[0], 16) % 10] + chr(0x9F00 + int(suffix[1:3], 16) % 0xA0)
    names = (person, person.lower(), zh_person)
    user = f"eve-{suffix}"
    settings = make_settings(
        redis_server.url,
        chroma_server.url,
        chroma_data_path=str(chroma_data),
        erasure_compactor=False,  # the test runs the operator command itself
        relation_memory=True,  # its records name the entity: they must go too
    )
    r = aredis.Redis.from_url(settings.redis_url, decode_responses=True)

    # 1. through the API with the outbox worker: Chroma directly and through the outbox
    async with app_client(settings, embedder) as (client, _):
        stored = await client.post(
            f"/v1/memory/{user}/messages",
            json={
                "session_id": "notes",
                "messages": [
                    {"role": "user", "content": f"My locker code word is {en}, 我的暗号是{zh}，报价单 {doc}"},
                    {"role": "user", "content": f"I met {person} in Paris. 我朋友{zh_person}推荐了一本书"},
                ],
            },
            headers=auth(user),
        )
        assert stored.status_code == 200, stored.text
        await chat(client, auth, user, "s1", f"请记住：我家的 Wi-Fi 密码是 {zh}，英文提示 {en}")
        await chat(client, auth, "bob", "s1", f"请记住：我的车牌暗号是 {bob_zh} / {bob_en}")
        await r.xadd(  # a malformed turn of the user: the worker moves it to the dead letters
            keys.outbox_stream_of(user),
            {"user_id": user, "session_id": "s1", "messages": f"not json {en} {zh}"},
        )
        await drain(r)
        search = await client.post(
            f"/v1/memory/{user}/search", json={"query": f"{en} {zh}"}, headers=auth(user)
        )
        assert search.status_code == 200
        assert any(zh in hit["content"] for hit in search.json()["results"])
        listed = (await client.get(f"/v1/memory/{user}/list?limit=100", headers=auth(user))).json()
        assert sum(zh in m["content"] for m in listed["items"]) >= 2  # the stored message and the chat turn
        # a deleted memory stays restorable for a grace period: its copy in Redis must go with the erase
        doomed = next(m["id"] for m in listed["items"] if zh in m["content"])
        assert (await client.delete(f"/v1/memory/{user}/{doomed}", headers=auth(user))).status_code == 204
        restorable = (await client.get(f"/v1/memory/{user}/deleted", headers=auth(user))).json()
        assert [m["id"] for m in restorable["items"]] == [doomed]
        assert zh in json.dumps(await r.hgetall(keys.ltm_restorable(user)), ensure_ascii=False)
    assert await r.xlen(keys.OUTBOX_DEAD_LETTERS) == 1
    async with app_client(settings, embedder) as (client, _):
        merged = await client.post(
            f"/v1/memory/{user}/entities/merges",
            json={"source": person_id(zh_person), "target": person_id(person)},
            headers=auth(user),
        )
        assert merged.status_code == 201, merged.text
    records = json.dumps(await r.hgetall(keys.relations(user)), ensure_ascii=False)
    assert doc in records  # relation memory names it
    assert person in records
    assert zh_person in records
    assert person.lower() in json.dumps(await r.hgetall(keys.relation_merges(user)))

    # 2. without a worker: the user's turn waits in the outbox, next to one of bob's
    pending_worker_off = settings.model_copy(update={"outbox_worker": False})
    async with app_client(pending_worker_off, embedder) as (client, _):
        await chat(client, auth, user, "s2", f"还有，记住我的储物柜是 {zh} 号 {en}")
        await chat(client, auth, "bob", "s2", f"I parked at {bob_en} 停车场 {bob_zh}")
        assert await Outbox(r).pending() == 2
        await r.bgsave()  # a snapshot with everything in it
        await wait_idle(r)
        for text in (en, zh):
            assert hits(redis_dir, text), f"{text!r} never reached Redis' files: the grep proves nothing"
            assert hits(chroma_data, text), f"{text!r} never reached Chroma's files"
        for name in names:  # the relation records and the merge, in the snapshot
            assert hits(redis_dir, name), f"{name!r} never reached Redis' files: the grep proves nothing"

        receipt = await client.delete(f"/v1/memory/{user}", params={"confirm": user}, headers=auth(user))
        assert receipt.status_code == 200, receipt.text
        body = receipt.json()
        assert body["deleted"]["outbox"] == 1
        assert body["deleted"]["dead_letters"] == 1
        assert body["deleted"]["chroma"] >= 2
        assert body["at_rest"]["redis"]["state"] == "scheduled"
        assert body["at_rest"]["chroma"]["state"] == "scheduled"  # CHROMA_DATA_PATH is set
        assert body["at_rest_purged_by"] == max(a["purged_by"] for a in body["at_rest"].values())
        assert body["at_rest_purged_by"] > body["at"]
        nothing = (await client.get(f"/v1/memory/{user}/deleted", headers=auth(user))).json()
        assert nothing["total"] == 0
        assert (
            await client.post(f"/v1/memory/{user}/{doomed}/restore", headers=auth(user))
        ).status_code == 404
    assert await r.zscore(keys.restorable_queue_of(user), user) is None
    # erased is not yet gone from disk: this is what the compaction is for
    assert hits(redis_dir, en)
    assert hits(chroma_data, en)

    # 3. the documented compaction
    done = compact(settings, chroma_data, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]

    for text in (en, zh, doc, *names):
        assert hits(redis_dir, text) == {}, f"{text!r} still in Redis' files"
        assert outside_hnsw(hits(chroma_data, text)) == {}, f"{text!r} still in Chroma's files"
        assert outside_hnsw(hits(chroma_dir, text)) == {}  # its log too
    # ... nor anywhere in Redis' memory: every key serialised
    for key in [k async for k in r.scan_iter("*")]:
        raw: Any = await aredis.Redis.from_url(settings.redis_url).dump(key)
        assert not any(n in raw for t in (en, zh, doc, *names) for n in needles(t)), key
    assert await r.zcard(keys.compaction_pending("redis")) == 0
    assert await r.zcard(keys.compaction_pending("chroma")) == 0

    # bob's data is intact in both stores, and his pending turn is still delivered
    for text in (bob_en, bob_zh):
        assert hits(redis_dir, text)
        assert hits(chroma_data, text)
    async with app_client(settings, embedder) as (client, _):
        await drain(r)
        found = await client.post("/v1/memory/bob/search", json={"query": bob_en}, headers=auth("bob"))
        contents = " ".join(h["content"] for h in found.json()["results"])
        assert bob_zh in contents
        listed = (await client.get("/v1/memory/bob/list?limit=100", headers=auth("bob"))).json()
        assert any("停车场" in m["content"] for m in listed["items"])
        gone = await client.post(f"/v1/memory/{user}/search", json={"query": en}, headers=auth(user))
        assert gone.json()["results"] == []
    await r.aclose()


async def test_workers_compact_by_themselves_within_the_receipts_bound(
    own_servers: tuple[ServerProcess, ServerProcess, Path, Path], embedder: Embedder, auth: AuthHeaders
) -> None:
    """With CHROMA_DATA_PATH set, the API workers' compaction loop does it all, before `purged_by`."""
    redis_server, chroma_server, redis_dir, chroma_dir = own_servers
    chroma_data = chroma_dir / "data"
    token = f"紫藤Auto{secrets.token_hex(4)}"
    settings = make_settings(
        redis_server.url,
        chroma_server.url,
        chroma_data_path=str(chroma_data),
        erasure_compaction_window_seconds=1,
        erasure_compaction_timeout_seconds=60,
    )
    r = aredis.Redis.from_url(settings.redis_url, decode_responses=True)
    async with app_client(settings, embedder) as (client, _):
        stored = await client.post(
            "/v1/memory/zoe/messages",
            json={"session_id": "s", "messages": [{"role": "user", "content": f"记住我的暗号 {token}"}]},
            headers=auth("zoe"),
        )
        assert stored.status_code == 200
        assert hits(chroma_data, token)
        receipt = (
            await client.delete("/v1/memory/zoe", params={"confirm": "zoe"}, headers=auth("zoe"))
        ).json()
        promised = receipt["at_rest_purged_by"]
        assert promised is not None
        for _ in range(300):
            pending = [await r.zcard(keys.compaction_pending(s)) for s in ("redis", "chroma")]
            if pending == [0, 0]:
                break
            await asyncio.sleep(0.1)
        assert pending == [0, 0], "the workers did not compact"
        for store in ("redis", "chroma"):
            last: Any = await r.hgetall(keys.compaction_last(store))
            assert last["outcome"] == "ok"
            finished = datetime.fromtimestamp(float(last["finished"]), UTC)
            assert finished <= datetime.fromisoformat(promised)
    assert hits(redis_dir, token) == {}
    assert outside_hnsw(hits(chroma_data, token)) == {}
    await r.aclose()
