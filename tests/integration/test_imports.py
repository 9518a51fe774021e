"""The import lane (issue 45): a whole history queued off the request path, written by the writers after
the chat turns, with its status; erase and export see what is still pending (real Redis, standalone or
the cluster pass, real Chroma and the real embedding model)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
import pytest

from app.http.ids import path_segment
from app.settings import Settings
from memory import Embedder, keys
from memory.models import Message
from memory.outbox.stream import IMPORT_CHUNK, IMPORT_PREVIOUS, Outbox, OutboxEntry
from memory.outbox.worker import OutboxWorker
from memory.redis_client import RedisClient
from tests.conftest import AuthHeaders, app_client, redis_of, until
from tests.integration.test_memory_api import assert_envelope

pytestmark = pytest.mark.integration

# a history of 21 messages in Chinese and English (3 entries of the lane), one of them blank
HISTORY: list[dict[str, Any]] = [
    {"role": "user", "content": "我住在杭州，在西湖边上", "timestamp": "2024-03-01T09:00:00+08:00"},
    {"role": "assistant", "content": "好的，杭州是个好地方。"},
    {"role": "user", "content": "I work as a nurse at a children's hospital", "id": "en-job"},
    {"role": "assistant", "content": "   "},
    *[{"role": "user", "content": f"第{i}天：今天读了{i}页书 / day {i}: read {i} pages"} for i in range(16)],
    {"role": "user", "content": "我的狗叫旺财 / my dog is called Wangcai"},
]


def import_body(messages: list[dict[str, Any]] = HISTORY, **extra: object) -> dict[str, object]:
    return {"session_id": "history", "messages": messages, "time_zone": "Asia/Shanghai", **extra}


@pytest.fixture
async def r(settings: Settings) -> AsyncIterator[RedisClient]:
    client = redis_of(settings)
    yield client
    await client.aclose()


async def lane_users(r: RedisClient) -> list[str]:
    users: list[str] = []
    for stream in Outbox.import_streams():
        entries: Any = await r.xrange(stream)
        users += [fields["user_id"] for _, fields in entries]
    return users


async def test_an_import_is_accepted_then_written_and_found_in_both_languages(
    client: httpx.AsyncClient, auth: AuthHeaders
) -> None:
    resp = await client.post("/v1/memory/chen.x/imports", json=import_body(), headers=auth("chen.x"))
    assert resp.status_code == 202, resp.text
    body = resp.json()
    assert set(body) == {"import_id", "messages", "entries", "status_url"}
    assert (body["messages"], body["entries"]) == (20, 3)  # the blank one is skipped
    assert resp.headers["location"] == body["status_url"]
    assert body["status_url"] == f"/v1/memory/{path_segment('chen.x')}/imports/{body['import_id']}"

    async def done() -> bool:
        status = await client.get(body["status_url"], headers=auth("chen.x"))
        assert status.status_code == 200, status.text
        return bool(status.json()["done"])

    await until(done, timeout=60)
    final = (await client.get(body["status_url"], headers=auth("chen.x"))).json()
    assert final == {
        **{k: body[k] for k in ("import_id", "messages", "entries")},
        "pending_entries": 0,
        "done": True,
    }
    for query, expected in (
        ("我住在哪个城市？", "杭州"),
        ("What is my job?", "nurse"),
        ("我的狗叫什么名字", "旺财"),
        ("what is my dog called", "Wangcai"),
    ):
        found = await client.post("/v1/memory/chen.x/search", json={"query": query}, headers=auth("chen.x"))
        assert found.status_code == 200, found.text
        assert expected in found.json()["results"][0]["content"], (query, found.json()["results"][:2])
    # another user, even one who guesses the id, learns nothing of it
    other = await client.get(f"/v1/memory/bob/imports/{body['import_id']}", headers=auth("bob"))
    assert_envelope(other, 404, "not_found")
    forbidden = await client.get(body["status_url"], headers=auth("bob"))
    assert_envelope(forbidden, 403, "forbidden")


async def drained(worker: OutboxWorker) -> None:
    """Run `worker` until every partition is empty, then stop it."""
    running = asyncio.create_task(worker.run())
    try:
        assert await worker.drain(timeout=30)
    finally:
        worker.stop()
        await running


def same_partition_user(user: str) -> str:
    return next(u for i in range(10_000) if keys.partition_of(u := f"u{i}") == keys.partition_of(user))


async def test_chat_turns_are_written_before_a_pending_import(r: RedisClient) -> None:
    """An import of 5 entries is queued first; a chat turn of the user, and one of another user of the
    same partition, are appended after it, while its first round is being written: both are written
    before the rest of the import. The import itself is spread over rounds, in order."""
    outbox = Outbox(r)
    user, neighbour = "ana.b", same_partition_user("ana.b")
    history = [Message("user", f"旧消息 old message {n}", id=f"h{n}") for n in range(5 * IMPORT_CHUNK)]
    await outbox.append_import(user, "history", history, import_id="imp_" + "a" * 32)
    writes: list[tuple[str, str]] = []  # (kind, first message id) in write order

    async def handle(batch: Sequence[OutboxEntry]) -> None:
        for entry in batch:
            writes.append(("import" if entry.import_id else "chat", str(entry.messages[0].id)))
        if len(writes) == 1:  # chat arrives while the import is being written
            await outbox.append(OutboxEntry(user, "s", (Message("user", "我刚搬到上海", id="c1"),)))
            await outbox.append(OutboxEntry(neighbour, "s", (Message("user", "I moved to Lisbon", id="c2"),)))

    await drained(OutboxWorker(outbox, handle, consumer="w", lease_ttl_ms=1500, import_batch=2, coalesce=1))
    # a round takes 2 entries of the import lane (`import_batch`, whatever the chat batch: 64) and
    # writes both; the next round reads the chat stream first: the import's other 3 entries come after
    assert writes == [
        ("import", "h0"),
        ("import", f"h{IMPORT_CHUNK}"),
        ("chat", "c1"),
        ("chat", "c2"),
        *[("import", f"h{n * IMPORT_CHUNK}") for n in range(2, 5)],
    ]


async def test_erase_while_an_import_is_pending_leaves_nothing(
    settings: Settings, embedder: Embedder, auth: AuthHeaders, r: RedisClient
) -> None:
    no_worker = settings.model_copy(update={"outbox_worker": False})  # the import stays pending
    async with app_client(no_worker, embedder) as (client, _):
        for user in ("alice", "bob"):
            resp = await client.post(f"/v1/memory/{user}/imports", json=import_body(), headers=auth(user))
            assert resp.status_code == 202, resp.text
        alice_import = (
            await client.post(
                "/v1/memory/alice/imports", json=import_body(HISTORY[:2]), headers=auth("alice")
            )
        ).json()
        status = await client.get(alice_import["status_url"], headers=auth("alice"))
        assert status.json()["pending_entries"] == 1
        assert status.json()["done"] is False

        export = await client.get("/v1/memory/alice/export", headers=auth("alice"))
        assert export.status_code == 200
        pending = export.json()["pending_writes"]
        assert len(pending) == 4  # 3 entries of the first import, 1 of the second
        contents = [m["content"] for p in pending for m in p["messages"]]
        assert "我住在杭州，在西湖边上" in contents
        assert "I work as a nurse at a children's hospital" in contents
        assert pending[1]["messages"][0]["content"] == HISTORY[IMPORT_CHUNK + 1]["content"]  # blank skipped

        receipt = await client.delete("/v1/memory/alice", params={"confirm": "alice"}, headers=auth("alice"))
        assert receipt.status_code == 200, receipt.text
        assert receipt.json()["deleted"]["outbox"] == 4
        assert [k async for k in r.scan_iter("*") if "{alice}" in k] == []
        assert sorted(set(await lane_users(r))) == ["bob"]
        gone = await client.get(alice_import["status_url"], headers=auth("alice"))
        assert_envelope(gone, 404, "not_found")
        bob = await client.get(resp.headers["location"], headers=auth("bob"))  # untouched
        assert bob.json()["pending_entries"] == 3


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({}, 422),
        ({"session_id": "s", "messages": []}, 422),
        ({"session_id": "s", "messages": [{"role": "user", "content": "x"}] * 501}, 422),
        ({"session_id": "s/..", "messages": [{"role": "user", "content": "我住在杭州"}]}, 422),
        ({"session_id": "s", "messages": [{"role": "user", "content": "x"}], "extra": 1}, 422),
    ],
)
async def test_an_invalid_import_is_refused(
    client: httpx.AsyncClient, auth: AuthHeaders, r: RedisClient, body: dict[str, object], status: int
) -> None:
    resp = await client.post("/v1/memory/alice/imports", json=body, headers=auth("alice"))
    assert_envelope(resp, status, "validation_error")
    assert await lane_users(r) == []


@pytest.mark.parametrize(
    "import_id",
    [
        "%2E%2E",
        "..%2F..%2Fexport",
        "%E5%AF%BC%E5%85%A5",
        "imp_" + "a" * 200,
        "imp_" + "A" * 32,
        "imp_%7Bx%7D",
    ],
)
async def test_a_bad_import_id_is_refused(
    client: httpx.AsyncClient, auth: AuthHeaders, import_id: str
) -> None:
    resp = await client.get(f"/v1/memory/alice/imports/{import_id}", headers=auth("alice"))
    assert 400 <= resp.status_code < 500
    assert_envelope(resp, resp.status_code)
    assert resp.status_code != 200


async def test_an_unknown_import_is_404(client: httpx.AsyncClient, auth: AuthHeaders) -> None:
    resp = await client.get("/v1/memory/alice/imports/imp_" + "0" * 32, headers=auth("alice"))
    assert_envelope(resp, 404, "not_found")


async def test_a_full_import_lane_is_429_with_retry_after(
    settings: Settings, embedder: Embedder, auth: AuthHeaders, r: RedisClient
) -> None:
    bounded = settings.model_copy(update={"outbox_worker": False, "import_max_pending_entries": 2})
    async with app_client(bounded, embedder) as (client, _):
        first = await client.post("/v1/memory/alice/imports", json=import_body(), headers=auth("alice"))
        assert first.status_code == 202, first.text  # the lane held 0: taken, though it brings 3
        full = await client.post("/v1/memory/alice/imports", json=import_body(), headers=auth("alice"))
        assert_envelope(full, 429, "import_lane_full")
        assert int(full.headers["retry-after"]) > 0
        assert "导入队列已满" in full.json()["detail"]
        assert len(await lane_users(r)) == 3  # nothing of the refused one


async def test_an_import_with_an_idempotency_key_is_queued_once(
    settings: Settings, embedder: Embedder, auth: AuthHeaders, r: RedisClient
) -> None:
    no_worker = settings.model_copy(update={"outbox_worker": False})
    async with app_client(no_worker, embedder) as (client, _):
        headers = {**auth("alice"), "Idempotency-Key": "history-2024-导入".encode().hex()}
        first = await client.post("/v1/memory/alice/imports", json=import_body(), headers=headers)
        again = await client.post("/v1/memory/alice/imports", json=import_body(), headers=headers)
        assert first.status_code == again.status_code == 202, again.text
        assert again.json() == first.json()
        assert again.headers["idempotent-replayed"] == "true"
        assert again.headers["location"] == first.headers["location"]
        assert len(await lane_users(r)) == 3
        other = await client.post("/v1/memory/alice/imports", json=import_body(HISTORY[:3]), headers=headers)
        assert_envelope(other, 422, "idempotency_key_reused")
        # the messages without an id got one derived from the key: a lost answer's retry rewrites them
        entries: Any = await r.xrange(keys.import_stream_of("alice"))
        ids = [m["id"] for _, f in entries for m in json.loads(f["messages"])]
        assert ids[2] == "en-job"
        assert all(i.startswith(first.json()["import_id"]) for i in ids if i != "en-job")
        previous = json.loads(entries[1][1]["previous"])
        assert len(previous) == IMPORT_PREVIOUS
