"""An owned lock is given back when its holder is done, even if the cancellation of the task that keeps
extending it is lost (memory/locks.py `_stop_keeper`), against a real Redis."""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import pytest

from app.settings import Settings
from memory.locks import RedisLocks
from memory.redis_client import close
from tests.conftest import redis_of

pytestmark = pytest.mark.integration


@pytest.mark.timeout(30)
async def test_a_release_ends_even_when_the_keepers_cancellation_is_lost(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    redis = redis_of(settings)
    locks = RedisLocks(redis)
    real_extend = locks._extend
    extending = asyncio.Event()

    async def swallowing_extend(*, keys: list[str], args: list[Any]) -> Any:
        """The keeper's PEXPIRE in flight when the holder finishes; its cancellation is lost, as Python
        3.11's `wait_for` inside redis-py loses one when the answer arrives at the same moment."""
        extending.set()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.3)
        return await real_extend(keys=keys, args=args)

    monkeypatch.setattr(locks, "_extend", swallowing_extend)
    key = "mnemo:{test}:用户:ltm:lock"

    done = 0.0

    async def hold_until_extending() -> None:
        nonlocal done
        async with locks.hold(key, ttl_seconds=1, wait_seconds=1, kind="test"):
            await extending.wait()  # the keeper is inside its PEXPIRE when the work ends
            done = time.monotonic()

    try:
        # before the fix the release awaited a keeper that kept the lock alive, for ever: this test then
        # hangs until its own timeout fails it
        await asyncio.wait_for(hold_until_extending(), timeout=8)
        assert time.monotonic() - done < 2.0
        assert await redis.get(key) is None
        await asyncio.sleep(1.2)  # past the TTL: nothing extended or took it again
        assert await redis.get(key) is None
        # and it can be taken again at once
        async with locks.hold(key, ttl_seconds=1, wait_seconds=0.1, kind="test"):
            assert await redis.get(key) is not None
    finally:
        await close(redis)
