"""Many writers on one outbox: partitions shared by leases, a dead writer's work taken over, every turn
written once and each user's turns in order (real Redis, standalone or the cluster pass)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest

from app.clients.redis import connect
from app.settings import Settings
from memory import keys
from memory.errors import MemoryBusy
from memory.locks import RedisLocks
from memory.models import Message
from memory.outbox.leases import PartitionLeases
from memory.outbox.stream import Outbox, OutboxEntry
from memory.outbox.worker import Handler, OutboxWorker
from memory.redis_client import RedisClient
from tests.conftest import redis_of

pytestmark = pytest.mark.integration
USERS = [f"w{i:02d}" for i in range(12)] + ["陈-x", "ana.b"]
LEASE_MS = 1500


@pytest.fixture
async def r(settings: Settings) -> AsyncIterator[RedisClient]:
    client = redis_of(settings)
    await connect(client)
    yield client
    await client.aclose()


class Journal:
    """What each writer wrote, in the order it wrote it (one list for all: the order between writers)."""

    def __init__(self) -> None:
        self.writes: list[tuple[str, str, int]] = []  # (writer, user, turn number)

    def handler(self, writer: str, *, crash_after: int | None = None) -> Handler:
        async def handle(batch: Sequence[OutboxEntry]) -> None:
            for entry in batch:
                for m in entry.messages:
                    self.writes.append((writer, entry.user_id, int(str(m.id).split(":")[1])))
            if crash_after is not None and len([w for w in self.writes if w[0] == writer]) >= crash_after:
                # the process dies after writing and before acknowledging: the worst moment
                raise asyncio.CancelledError

        return handle


async def fill(outbox: Outbox, turns_per_user: int) -> None:
    for n in range(turns_per_user):
        for user in USERS:
            text = f"第{n}条 note {n} of {user}"
            await outbox.append(OutboxEntry(user, "s", (Message("user", text, id=f"{user}:{n}"),)))


async def test_leases_split_the_partitions_fairly(r: RedisClient) -> None:
    a, b = PartitionLeases(r, "writer-a", ttl_ms=LEASE_MS), PartitionLeases(r, "writer-b", ttl_ms=LEASE_MS)
    held_a, _ = await a.refresh()
    assert held_a == list(range(keys.partitions()))  # alone: everything
    await b.refresh()  # b sees two writers but a still holds all: b gets none yet
    held_a, _ = await a.refresh()  # a gives back its extra share
    held_b, acquired = await b.refresh()
    half = keys.partitions() // 2
    assert len(held_a) == len(held_b) == half
    assert set(held_a).isdisjoint(held_b)
    assert sorted(acquired) == held_b
    await a.release_all()  # a clean stop hands everything over at once
    held_b, _ = await b.refresh()
    assert held_b == list(range(keys.partitions()))


async def test_two_writers_one_dies_every_turn_written_once_in_order(r: RedisClient) -> None:
    outbox = Outbox(r)
    await fill(outbox, 6)
    journal = Journal()
    crashing = OutboxWorker(
        outbox,
        journal.handler("a", crash_after=5),
        consumer="a",
        lease_ttl_ms=LEASE_MS,
        coalesce=1,
        batch=8,
    )
    steady = OutboxWorker(
        outbox, journal.handler("b"), consumer="b", lease_ttl_ms=LEASE_MS, coalesce=1, batch=8
    )
    dying = asyncio.create_task(crashing.run())
    await asyncio.sleep(0.05)
    living = asyncio.create_task(steady.run())
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(dying, timeout=30)  # a's handler "crashed": its leases stay until they expire
    assert await steady.drain(timeout=30), "b did not take over a's partitions"
    steady.stop()
    await living

    assert {w for w, _, _ in journal.writes} == {"a", "b"}  # both wrote, a died mid-way
    by_a = {(u, n) for w, u, n in journal.writes if w == "a"}
    by_b = {(u, n) for w, u, n in journal.writes if w == "b"}
    assert by_a & by_b, "b never took over what a had read and not acknowledged"
    for user in USERS:
        turns = [n for _, u, n in journal.writes if u == user]
        # a turn a wrote and did not acknowledge is written again by b (same ids: the store keeps one);
        # apart from that repeat, each user's turns come in order and none is missing
        deduped = [n for i, n in enumerate(turns) if i == 0 or n != turns[i - 1]]
        assert deduped == sorted(set(turns)) == list(range(6)), (user, turns)
    assert await outbox.pending() == 0


async def test_a_partition_that_cannot_be_read_holds_back_no_other(r: RedisClient) -> None:
    """One partition Redis refuses to serve (here its stream key holds a string: WRONGTYPE, as a node
    failing over refuses its slots) is skipped; every other user's turns are written meanwhile, in
    order, and the skipped partition's are written once it answers again."""
    outbox = Outbox(r)
    await fill(outbox, 3)
    stuck_user = USERS[0]
    stuck = outbox.stream_of(stuck_user)
    aside = f"{stuck}:aside"  # same hash tag: same slot in a cluster
    await r.rename(stuck, aside)
    await r.set(stuck, "not a stream")
    journal = Journal()
    worker = OutboxWorker(outbox, journal.handler("w"), consumer="w", lease_ttl_ms=LEASE_MS, batch=8)
    running = asyncio.create_task(worker.run())
    try:
        others = [u for u in USERS if outbox.stream_of(u) != stuck]
        assert others, "every user in the stuck partition: pick another"

        async def written(users: list[str]) -> bool:
            while {u for _, u, _ in journal.writes} < set(users):
                await asyncio.sleep(0.05)
            return True

        await asyncio.wait_for(written(others), timeout=30)
        assert stuck_user not in {u for _, u, _ in journal.writes}
        await r.delete(stuck)
        await r.rename(aside, stuck)  # the partition answers again
        await asyncio.wait_for(written(USERS), timeout=30)
        assert await worker.drain(timeout=30)
    finally:
        worker.stop()
        await running
    for user in USERS:
        assert [n for _, u, n in journal.writes if u == user] == [0, 1, 2], user


async def test_a_user_whose_lock_is_held_elsewhere_holds_back_only_their_own_turns(r: RedisClient) -> None:
    """Another holder keeps one user's long-term write lock (a writer stuck mid-round, a rebalance):
    the rounds go on without that user, whose turns stay pending in order and are written once the
    lock is free. The handler takes every user's lock as the write policy's batch does."""
    outbox = Outbox(r)
    await fill(outbox, 3)
    journal = Journal()
    locks = RedisLocks(r)
    record = journal.handler("w")

    def busy(user: str) -> Callable[[], Exception]:
        return lambda: MemoryBusy(user, 0.2)

    async def locked(batch: Sequence[OutboxEntry]) -> None:
        async with contextlib.AsyncExitStack() as held:
            for entry in sorted(batch, key=lambda e: e.user_id):
                user = entry.user_id
                await held.enter_async_context(
                    locks.hold(keys.ltm_lock(user), ttl_seconds=5, wait_seconds=0.2, on_timeout=busy(user))
                )
            await record(batch)

    blocked = USERS[3]
    elsewhere = RedisLocks(r)
    release = asyncio.Event()

    async def hold_elsewhere() -> None:
        async with elsewhere.hold(keys.ltm_lock(blocked), ttl_seconds=2, wait_seconds=1):
            await release.wait()  # its keeper extends it meanwhile, as a stuck holder's would

    holder = asyncio.create_task(hold_elsewhere())
    await asyncio.sleep(0.1)
    worker = OutboxWorker(
        outbox, locked, consumer="w", lease_ttl_ms=LEASE_MS, batch=64, max_backoff_seconds=0.3
    )
    running = asyncio.create_task(worker.run())
    try:
        others = set(USERS) - {blocked}

        async def written(users: set[str], turns: int) -> None:
            while any(len([n for _, u, n in journal.writes if u == user]) < turns for user in users):
                await asyncio.sleep(0.05)

        await asyncio.wait_for(written(others, 3), timeout=30)
        assert blocked not in {u for _, u, _ in journal.writes}
        release.set()
        await holder
        await asyncio.wait_for(written({blocked}, 3), timeout=30)
        assert await worker.drain(timeout=30)
    finally:
        release.set()
        worker.stop()
        await running
    for user in USERS:
        assert [n for _, u, n in journal.writes if u == user] == [0, 1, 2], user


async def test_a_stalled_round_is_cancelled_its_locks_released_and_its_turns_retried(r: RedisClient) -> None:
    """A round that never returns (a call stuck under a failover) while it holds a user's lock, which its
    keeper keeps extending, is cancelled at the round bound: the lock is given back, so another holder
    can take it, and the round's turns are written by the retry, in order."""
    outbox = Outbox(r)
    await fill(outbox, 2)
    journal = Journal()
    locks = RedisLocks(r)
    record = journal.handler("w")
    stalled = asyncio.Event()

    async def stalls_once(batch: Sequence[OutboxEntry]) -> None:
        async with contextlib.AsyncExitStack() as held:
            for entry in sorted(batch, key=lambda e: e.user_id):
                await held.enter_async_context(
                    locks.hold(keys.ltm_lock(entry.user_id), ttl_seconds=1, wait_seconds=5)
                )
            if not stalled.is_set():
                stalled.set()
                await asyncio.Event().wait()  # never returns
            await record(batch)

    worker = OutboxWorker(
        outbox,
        stalls_once,
        consumer="w",
        lease_ttl_ms=LEASE_MS,
        round_timeout_seconds=2.5,
        max_backoff_seconds=0.2,
    )
    running = asyncio.create_task(worker.run())
    try:
        await asyncio.wait_for(stalled.wait(), timeout=10)
        await asyncio.sleep(1.5)  # past the lock's TTL: only its keeper holds it now
        assert await r.exists(keys.ltm_lock(USERS[0])), "the stuck round's lock lapsed before the bound"
        assert journal.writes == []
        assert await worker.drain(timeout=30)
    finally:
        worker.stop()
        await running
    for user in USERS:
        assert [n for _, u, n in journal.writes if u == user] == [0, 1], user
    assert not await r.exists(*(keys.ltm_lock(u) for u in USERS))


async def test_entries_delivered_by_a_read_whose_answer_was_lost_are_written(r: RedisClient) -> None:
    """A read of new entries whose answer a broken connection took away (redis-py then retries on
    another connection, and the retry answers with what came after) leaves entries in this writer's
    pending list without the writer knowing: they are found by the periodic read of that list."""
    outbox = Outbox(r)
    journal = Journal()
    worker = OutboxWorker(
        outbox, journal.handler("w"), consumer="w", lease_ttl_ms=LEASE_MS, pending_check_seconds=0.5
    )
    running = asyncio.create_task(worker.run())
    try:
        await asyncio.sleep(0.5)  # leased, grouped, own pending list read: the writer reads ">" only now
        await fill(outbox, 1)
        streams = {outbox.stream_of(u) for u in USERS}
        stolen = 0
        for stream in streams:  # delivered to this writer's consumer, the answer never reaching it
            answer: Any = await r.xreadgroup(outbox.group, "w", {stream: ">"})
            stolen += sum(
                len(entries) for _, entries in (answer.items() if isinstance(answer, dict) else answer)
            )
        assert stolen, "the writer read every entry first: nothing was lost to it"
        await fill_more(outbox)
        assert await worker.drain(timeout=30)
    finally:
        worker.stop()
        await running
    for user in USERS:
        assert sorted(n for _, u, n in journal.writes if u == user) == [0, 1], user


async def fill_more(outbox: Outbox) -> None:
    for user in USERS:
        await outbox.append(
            OutboxEntry(user, "s", (Message("user", f"第1条 note 1 of {user}", id=f"{user}:1"),))
        )
