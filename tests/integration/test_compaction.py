"""Compaction after erasures: the stream rebuild keeps the consumer group exactly, the loop coalesces
erases into one run per window under a lease, and Redis' files lose deleted stream entries (real Redis)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aredis

from harness.services import ServerProcess, running, start_redis
from memory import keys
from memory.governance.compaction import (
    AtRestPolicy,
    CompactionQueue,
    Compactor,
    RedisFiles,
)

pytestmark = pytest.mark.integration

STREAM = "t:stream"
RAW_RDB = ("--rdbcompression", "no")
GROUP = "g"


@pytest.fixture
async def r(redis_server: ServerProcess) -> Any:
    client = aredis.Redis.from_url(f"{redis_server.url}/2", decode_responses=True)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


def stream_id(entry_id: str) -> tuple[int, int]:
    ms, seq = entry_id.split("-")
    return int(ms), int(seq)


async def group_state(r: aredis.Redis) -> tuple[Any, ...]:
    groups: Any = await r.xinfo_groups(STREAM)
    pending: Any = await r.xpending_range(STREAM, GROUP, "-", "+", 100)
    info: Any = await r.xinfo_stream(STREAM)
    return (
        [(g["name"], g["last-delivered-id"], g["entries-read"]) for g in groups],
        [(p["message_id"], p["consumer"], p["times_delivered"]) for p in pending],
        sorted(c["name"] for c in await r.xinfo_consumers(STREAM, GROUP)),
        (info["last-generated-id"], info["entries-added"], info["max-deleted-entry-id"]),
        await r.xrange(STREAM),
    )


async def test_stream_rebuild_keeps_ids_group_and_pending_entries(r: aredis.Redis) -> None:
    ids = [str(await r.xadd(STREAM, {"user_id": u, "text": f"{u} 第{i}条"})) for i, u in enumerate("abacab")]
    await r.xgroup_create(STREAM, GROUP, id="0")
    await r.xreadgroup(GROUP, "c1", {STREAM: ">"}, count=2)  # ids 0, 1 pending for c1
    await r.xreadgroup(GROUP, "c2", {STREAM: ">"}, count=1)  # id 2 pending for c2
    await r.xreadgroup(GROUP, "c2", {STREAM: "0"})  # c2 reads its own again: delivered twice
    await r.xgroup_createconsumer(STREAM, GROUP, "idle-consumer")
    await r.xack(STREAM, GROUP, ids[0])
    await r.xdel(STREAM, ids[0], ids[3], ids[5])  # acked and deleted; two unread ones erased
    before = await group_state(r)

    assert await RedisFiles(r).rebuild_streams([STREAM]) == 3
    after = await group_state(r)
    assert after == before
    assert [i for i, _ in after[4]] == [ids[1], ids[2], ids[4]]
    # the group goes on where it was: the next new entry is the one after id 2, then new appends
    new = str(await r.xadd(STREAM, {"user_id": "z", "text": "later"}))
    assert stream_id(new) > stream_id(ids[5])
    got: Any = await r.xreadgroup(GROUP, "c1", {STREAM: ">"})
    assert [i for i, _ in got[0][1]] == [ids[4], new]
    assert await RedisFiles(r).rebuild_streams(["t:missing"]) == 0


async def test_rebuild_of_an_empty_or_groupless_stream(r: aredis.Redis) -> None:
    one = await r.xadd(STREAM, {"a": "1"})
    await r.xadd(STREAM, {"a": "2"})
    await r.xdel(STREAM, one)
    assert await RedisFiles(r).rebuild_streams([STREAM]) == 1
    left: Any = await r.xrange(STREAM)
    await r.xdel(STREAM, *[i for i, _ in left])
    assert await RedisFiles(r).rebuild_streams([STREAM]) == 0  # nothing left: no node holds bytes
    assert await r.xlen(STREAM) == 0


async def test_deleted_stream_entries_leave_the_aof_and_rdb_files(tmp_path: Path) -> None:
    token_en, token_zh = "Wisteria9Kp2Lq", "紫藤9Kp2Lq测试"
    # uncompressed RDB (the AOF preamble too), so that a grep of the files sees every stored string
    with running(start_redis(tmp_path / "redis", persist=True, extra_args=RAW_RDB)) as server:
        r = aredis.Redis.from_url(server.url, decode_responses=True)
        await r.xadd(keys.outbox_stream(0), {"user_id": "bob", "messages": "bob's turn"})
        erased = await r.xadd(keys.outbox_stream(0), {"user_id": "eve", "messages": f"{token_en} {token_zh}"})
        await r.xadd(keys.outbox_stream(0), {"user_id": "bob", "messages": "bob again Kept4Bob"})
        await r.bgsave()
        await until_idle(r)
        await r.xdel(keys.outbox_stream(0), erased)
        await r.bgrewriteaof()  # what a plain rewrite gives: the deleted entry is still in the node
        await until_idle(r)
        assert grep(tmp_path / "redis", token_en) > 0

        files = RedisFiles(r)

        persistence = await files.run(timeout=60)
        assert (persistence.aof, persistence.rdb) == (True, True)  # a snapshot was taken: rewrite it too
        assert grep(tmp_path / "redis", token_en) == 0
        assert grep(tmp_path / "redis", token_zh) == 0
        assert grep(tmp_path / "redis", "Kept4Bob") > 0
        await r.aclose()


async def until_idle(r: aredis.Redis) -> None:
    for _ in range(300):
        info: Any = await r.info("persistence")
        if not int(info["rdb_bgsave_in_progress"]) and not int(info["aof_rewrite_in_progress"]):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("redis still rewriting")


def grep(directory: Path, token: str) -> int:
    needle = token.encode()
    return sum(
        p.read_bytes().count(needle) for p in directory.rglob("*") if p.is_file() and p.suffix != ".log"
    )


class Counting:
    def __init__(self, hold: float = 0.0) -> None:
        self.runs = 0
        self.running = 0
        self.max_running = 0
        self._hold = hold

    async def __call__(self) -> object:
        self.runs += 1
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        await asyncio.sleep(self._hold)
        self.running -= 1
        return None


async def test_many_erases_one_run_per_window_and_one_runner(r: aredis.Redis) -> None:
    queue = CompactionQueue(r)
    job = Counting(hold=0.3)
    workers = [Compactor(queue, {"redis": job}, window_seconds=2.0, timeout_seconds=10) for _ in range(2)]
    for _ in range(20):
        await queue.request(["redis"])
    first = await asyncio.gather(*(w.tick() for w in workers))
    assert job.runs == 1
    assert job.max_running == 1
    assert sorted(len(o) for o in first) == [0, 1]
    assert await queue.pending("redis") == 0

    await queue.request(["redis"])  # inside the window: waits
    assert await workers[0].tick() == {}
    assert job.runs == 1
    await asyncio.sleep(2.0)
    assert await workers[1].tick() == {"redis": "ok"}
    assert job.runs == 2
    assert await workers[1].tick() == {}  # nothing pending
    assert (await queue.last("redis"))["outcome"] == "ok"


async def test_a_failed_run_keeps_the_requests_and_is_retried(r: aredis.Redis) -> None:
    queue = CompactionQueue(r)
    calls = 0

    async def flaky() -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise OSError("disk full")
        return None

    compactor = Compactor(queue, {"chroma": flaky}, window_seconds=60, timeout_seconds=5, retry_seconds=0.2)
    await queue.request(["chroma"])
    assert await compactor.tick() == {"chroma": "failed"}
    assert await queue.pending("chroma") == 1
    await asyncio.sleep(0.25)
    assert await compactor.tick() == {"chroma": "ok"}
    assert await queue.pending("chroma") == 0


def test_receipt_plan_states_the_bound() -> None:
    policy = AtRestPolicy(window_seconds=300, timeout_seconds=300, tick_seconds=5)
    plan = policy.plan(1000.0, redis_persists=True)
    assert plan["redis"].state == "scheduled"
    assert plan["redis"].purged_by == 1605.0
    assert plan["chroma"].state == "operator"
    assert plan["chroma"].purged_by is None
    assert plan["chroma"].command is not None
    assert "app.cli.compact" in plan["chroma"].command
    automatic = AtRestPolicy(chroma_automatic=True).plan(0.0, redis_persists=False)
    assert automatic["redis"].state == "none"
    assert automatic["chroma"].state == "scheduled"
