"""An owned Redis lock: `SET key token NX EX ttl`, released or extended only by the token's holder."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable

from memory.redis_client import RedisClient

log = logging.getLogger(__name__)

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_EXTEND = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""


class LockTimeout(Exception):
    pass


class RedisLocks:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._release = redis.register_script(_RELEASE)
        self._extend = redis.register_script(_EXTEND)

    @contextlib.asynccontextmanager
    async def hold(
        self,
        key: str,
        *,
        ttl_seconds: int,
        wait_seconds: float,
        on_timeout: Callable[[], Exception] | None = None,
    ) -> AsyncIterator[str]:
        """Waits at most `wait_seconds` for the lock (then raises `on_timeout()` or LockTimeout). While
        held, a background task extends the TTL, so long work keeps the lock; if the process dies, the
        lock expires after `ttl_seconds`."""
        token = secrets.token_hex(16)
        deadline = time.monotonic() + wait_seconds
        delay = 0.005
        while not await self._redis.set(key, token, nx=True, ex=ttl_seconds):
            if time.monotonic() >= deadline:
                raise on_timeout() if on_timeout else LockTimeout(key)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.02)  # locks here are held for milliseconds: poll often
        keeper = asyncio.create_task(self._keep_alive(key, token, ttl_seconds))
        try:
            yield token
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper
            # shielded: a cancelled request must still give the lock back
            await asyncio.shield(self._release(keys=[key], args=[token]))

    async def _keep_alive(self, key: str, token: str, ttl: int) -> None:
        while True:
            await asyncio.sleep(ttl / 2.5)
            try:
                if not await self._extend(keys=[key], args=[token, int(ttl * 1000)]):
                    log.warning("lock lost before the work finished", extra={"key": key})
                    return
            except Exception:  # a Redis hiccup: retry next tick; the TTL still protects everyone
                log.warning("could not extend lock", exc_info=True)
