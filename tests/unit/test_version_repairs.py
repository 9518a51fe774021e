"""VersionRepairs: the bumps a Redis failure left unrecorded are retried until Redis takes them, merged
per user, and what arrives while one is in flight is not lost (memory/longterm/versions.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

from redis.exceptions import ConnectionError as RedisConnectionError

from memory.longterm.versions import VersionRepairs


class Redis:
    """The bump as Redis would answer it: refused while `down`, recorded otherwise."""

    def __init__(self) -> None:
        self.down = True
        self.recorded: list[tuple[str, list[str], list[str]]] = []
        self.in_flight = asyncio.Event()
        self.hold = asyncio.Event()
        self.hold.set()

    async def bump(self, user_id: str, upserted: Sequence[str], deleted: Sequence[str]) -> int:
        self.in_flight.set()
        await self.hold.wait()
        if self.down:
            raise RedisConnectionError("Connection refused")
        self.recorded.append((user_id, list(upserted), list(deleted)))
        return len(self.recorded)


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)


async def test_retried_until_redis_takes_it_and_merged_per_user() -> None:
    redis = Redis()
    repairs = VersionRepairs(redis.bump, backoff=(0.01, 0.02))
    repairs.add("ann", ["a", "b"], [])
    repairs.add("ann", [], ["b"])  # written, then deleted: recorded as deleted only
    repairs.add("bo", [], ["x"])
    await asyncio.sleep(0.05)
    assert redis.recorded == []
    assert repairs.pending == {
        "ann": (frozenset({"a"}), frozenset({"b"})),
        "bo": (frozenset(), frozenset({"x"})),
    }
    redis.down = False
    await until(lambda: not repairs.pending)
    assert sorted(redis.recorded) == [("ann", ["a"], ["b"]), ("bo", [], ["x"])]


async def test_a_change_added_while_a_bump_is_in_flight_is_recorded_too() -> None:
    redis = Redis()
    redis.down = False
    redis.hold.clear()
    repairs = VersionRepairs(redis.bump, backoff=(0.01, 0.02))
    repairs.add("cy", ["one"], [])
    await asyncio.wait_for(redis.in_flight.wait(), 5)
    repairs.add("cy", ["two"], [])  # arrives while "one" is being recorded
    redis.hold.set()
    await until(lambda: not repairs.pending)
    assert redis.recorded == [("cy", ["one"], []), ("cy", ["two"], [])]


async def test_an_empty_change_still_records_a_version() -> None:
    redis = Redis()
    redis.down = False
    repairs = VersionRepairs(redis.bump, backoff=(0.01, 0.02))
    repairs.add("di", [], [])  # a version that changed no record (a reembed): every worker re-reads
    await until(lambda: not repairs.pending)
    assert redis.recorded == [("di", [], [])]
