"""SessionStore and the outbox against a real redis-server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from app.clients.redis import connect
from app.settings import Settings
from memory import keys
from memory.errors import SessionBusy, StoreUnavailable
from memory.models import Message
from memory.outbox.stream import Outbox, OutboxEntry
from memory.outbox.worker import DEAD_LETTER_STREAM, OutboxWorker
from memory.redis_client import RedisClient
from memory.session.store import BufferedMessage, SessionLimits, SessionStore
from tests.conftest import redis_of

pytestmark = pytest.mark.integration


@pytest.fixture
async def r(settings: Settings) -> AsyncIterator[RedisClient]:
    client = redis_of(settings)  # flushed by the settings fixture
    await connect(client)
    yield client
    await client.aclose()


def msg(i: int) -> BufferedMessage:
    return BufferedMessage(id=f"m{i}", role="user", content=f"message {i}", timestamp=1000.0 + i)


class TestLock:
    async def test_bounded_wait_then_busy(self, r: RedisClient) -> None:
        store = SessionStore(r, SessionLimits(lock_wait_seconds=0.3))
        async with store.lock("alice", "s"):
            assert 0 < await r.pttl(keys.lock("alice", "s")) <= 5000
            with pytest.raises(SessionBusy):
                async with store.lock("alice", "s"):
                    pass
        assert await r.exists(keys.lock("alice", "s")) == 0

    async def test_only_the_owner_releases(self, r: RedisClient) -> None:
        store = SessionStore(r)
        async with store.lock("alice", "s"):
            await r.set(keys.lock("alice", "s"), "someone-else", ex=5)  # our lock expired and was re-taken
        assert await r.get(keys.lock("alice", "s")) == "someone-else"

    async def test_kept_alive_while_held(self, r: RedisClient) -> None:
        # held for over twice its TTL; a 2 s TTL (extended every 0.8 s) rides out a scheduling stall of
        # ~1 s on a loaded CI host, which a 1 s TTL did not once in the cluster pass
        store = SessionStore(r, SessionLimits(lock_ttl_seconds=2))
        async with store.lock("alice", "s") as token:
            await asyncio.sleep(4.4)
            assert await r.get(keys.lock("alice", "s")) == token
        assert await r.exists(keys.lock("alice", "s")) == 0

    async def test_different_sessions_do_not_block(self, r: RedisClient) -> None:
        store = SessionStore(r, SessionLimits(lock_wait_seconds=0.2))
        async with store.lock("alice", "s1"), store.lock("alice", "s2"), store.lock("bob", "s1"):
            pass


class TestBufferAndSummary:
    async def test_buffer_keeps_newest_in_time_order(self, r: RedisClient) -> None:
        store = SessionStore(r)
        for i in range(25):
            await store.record_turn("alice", "s", [msg(i)])
        state = await store.load("alice", "s")
        assert [m.id for m in state.buffer] == [f"m{i}" for i in range(15, 25)]

    async def test_concurrent_appends_lose_nothing_but_the_oldest(self, r: RedisClient) -> None:
        store = SessionStore(r, SessionLimits(buffer_size=50))
        await asyncio.gather(*(store.record_turn("alice", "s", [msg(i)]) for i in range(40)))
        state = await store.load("alice", "s")
        assert sorted(m.id for m in state.buffer) == sorted(f"m{i}" for i in range(40))

    async def test_summary_compare_and_set(self, r: RedisClient) -> None:
        store = SessionStore(r)
        assert await store.replace_summary("alice", "s", "用户住在杭州", expected_version=0) == 1
        assert await store.replace_summary("alice", "s", "stale writer", expected_version=0) is None
        assert await store.replace_summary("alice", "s", "User lives in Hangzhou", expected_version=1) == 2
        state = await store.load("alice", "s")
        assert state.summary is not None
        assert (state.summary.text, state.summary.version) == ("User lives in Hangzhou", 2)
        assert 7190 <= await r.ttl(keys.summary("alice", "s")) <= 7200


def entry(i: int) -> OutboxEntry:
    return OutboxEntry("alice", "s", (Message("user", f"fact {i}", None, f"id{i}", 1000.0 + i),))


class TestOutbox:
    async def test_retries_until_the_store_is_back(self, r: RedisClient) -> None:
        outbox = Outbox(r, group="g")
        for i in range(3):
            await outbox.append(entry(i))
        calls: list[str] = []
        failures = 2

        async def handler(batch: Sequence[OutboxEntry]) -> None:
            nonlocal failures
            if failures:
                failures -= 1
                raise StoreUnavailable("chroma", "down")
            calls.extend(m.content for e in batch for m in e.messages)  # consecutive turns: one write

        worker = OutboxWorker(outbox, handler, consumer="c1", max_backoff_seconds=0.2)
        task = asyncio.create_task(worker.run())
        assert await worker.drain(timeout=10)
        worker.stop()
        await task
        assert calls == ["fact 0", "fact 1", "fact 2"]
        stream = outbox.stream_of("alice")
        assert await r.xlen(stream) == 0
        assert (await r.xpending(stream, "g"))["pending"] == 0

    async def test_a_users_entries_live_in_their_partition_only(self, r: RedisClient) -> None:
        outbox = Outbox(r, group="g")
        for user in ("ann", "bob", "陈"):
            await outbox.append(OutboxEntry(user, "s", (Message("user", f"{user} 住在杭州", id=user),)))
        assert await r.xlen(outbox.stream_of("ann")) >= 1
        assert keys.outbox_stream_of("ann").startswith(keys.user_prefix("ann").split(":u:")[0])
        assert [e.user_id async for _, e in outbox.entries_of("bob")] == ["bob"]
        assert await outbox.pending() == 3
        assert await outbox.drop_user("ann") == 1
        assert await outbox.pending() == 2

    async def test_entry_of_a_crashed_consumer_is_claimed(self, r: RedisClient) -> None:
        outbox = Outbox(r, group="g")
        stream = outbox.stream_of("alice")
        await outbox.ensure_group(stream)
        await outbox.append(entry(7))
        # consumer "dead" reads the entry and crashes before acknowledging it
        await r.xreadgroup("g", "dead", {stream: ">"}, count=10)
        seen: list[str] = []

        async def handler(batch: Sequence[OutboxEntry]) -> None:
            seen.extend(e.messages[0].content for e in batch)

        # the new lease holder claims it at once, whatever its idle time
        worker = OutboxWorker(outbox, handler, consumer="alive")
        task = asyncio.create_task(worker.run())
        assert await worker.drain(timeout=10)
        worker.stop()
        await task
        assert seen == ["fact 7"]

    async def test_malformed_entry_goes_to_dead_letters(self, r: RedisClient) -> None:
        outbox = Outbox(r, group="g")
        await r.xadd(outbox.stream_of("alice"), {"user_id": "alice", "messages": "not json"})

        async def handler(batch: Sequence[OutboxEntry]) -> None:
            raise AssertionError("must not be called")

        worker = OutboxWorker(outbox, handler, consumer="c")
        task = asyncio.create_task(worker.run())
        assert await worker.drain(timeout=10)
        worker.stop()
        await task
        assert await r.xlen(DEAD_LETTER_STREAM) == 1
        await r.delete(DEAD_LETTER_STREAM)

    async def test_group_recreated_after_redis_loses_it(self, r: RedisClient) -> None:
        outbox = Outbox(r, group="g")
        seen: list[str] = []

        async def handler(batch: Sequence[OutboxEntry]) -> None:
            seen.extend(e.messages[0].content for e in batch)

        worker = OutboxWorker(outbox, handler, consumer="c", max_backoff_seconds=0.2)
        task = asyncio.create_task(worker.run())
        await outbox.append(entry(1))
        assert await worker.drain(timeout=10)
        await r.delete(outbox.stream_of("alice"))  # stream and group gone, as after a flush
        await outbox.append(entry(2))  # XADD recreates the stream, not the group
        assert await worker.drain(timeout=10)
        worker.stop()
        await task
        assert seen == ["fact 1", "fact 2"]

    async def test_one_handler_call_per_round_of_users(self, r: RedisClient) -> None:
        outbox = Outbox(r, group="g")
        turns = [("ann", "s1", "我住在杭州"), ("bob", "s1", "I live in Porto"), ("ann", "s1", "我对花生过敏")]
        turns.append(("ann", "s2", "remind me on Friday"))
        for n, (user, session, text) in enumerate(turns):
            await outbox.append(OutboxEntry(user, session, (Message("user", text, id=f"m{n}"),)))
        calls: list[list[tuple[str, str, int]]] = []

        async def handler(batch: Sequence[OutboxEntry]) -> None:
            calls.append(sorted((e.user_id, e.session_id, len(e.messages)) for e in batch))

        worker = OutboxWorker(outbox, handler, consumer="c")
        task = asyncio.create_task(worker.run())
        assert await worker.drain(timeout=10)
        worker.stop()
        await task
        # ann's two turns of s1 are one write; her s2 turn comes in the next round, after them
        assert calls == [[("ann", "s1", 2), ("bob", "s1", 1)], [("ann", "s2", 1)]]

    async def test_a_bad_entry_does_not_hold_back_the_others(self, r: RedisClient) -> None:
        outbox = Outbox(r, group="g")
        for user, text in (("ann", "我住在杭州"), ("bad", "poison 毒"), ("bob", "I live in Porto")):
            await outbox.append(OutboxEntry(user, "s", (Message("user", text, id=user),)))
        written: list[str] = []

        async def handler(batch: Sequence[OutboxEntry]) -> None:
            if any(e.user_id == "bad" for e in batch):
                raise ValueError("cannot write this one")
            written.extend(e.user_id for e in batch)

        worker = OutboxWorker(outbox, handler, consumer="c")
        task = asyncio.create_task(worker.run())
        for _ in range(200):
            if await outbox.pending() == 1:
                break
            await asyncio.sleep(0.05)
        worker.stop()
        await task
        assert sorted(written) == ["ann", "bob"]
        left: Any = await r.xrange(outbox.stream_of("bad"))
        assert [f["user_id"] for _, f in left] == ["bad"]  # still pending, retried later
