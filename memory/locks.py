"""An owned Redis lock: `SET key token NX EX ttl`, released or extended only by the token's holder.

The work a lock guards decides the outcome, never the release: a release that fails (Redis went away
right after the work) is logged and counted, not raised, and the lock expires by its TTL. The next
holder of the same key in this process releases such a left-behind lock first (it knows the token),
so a retry through the same worker does not wait for the TTL; elsewhere the wait is bounded by it.

A commit can instead release the lock inside its own atomic write (`hand_over`, then the write, then
`settled`): a script that applies only while the token still holds the lock (fencing a holder whose
lock expired), and once it is applied no separate release is left that could fail. The turn commit
(memory/session/store.py) is such a script; one that a lost connection re-sends finds its own turn
already in the buffer and changes nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from redis.exceptions import RedisError

from memory.redis_client import RedisClient
from monitoring import metrics

log = logging.getLogger(__name__)

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_EXTEND = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""


KEEPER_STOP_SECONDS = 1.0  # the longest a release waits for the keeper to end


class LockTimeout(Exception):
    pass


@dataclass(slots=True)
class _Held:
    key: str
    kind: str
    ttl_seconds: int
    keeper: asyncio.Task[None] | None = None
    settled: bool = False  # released by the caller's own transaction: nothing left to release
    stopped: bool = False  # the holder is done: the keeper must not extend it again


class RedisLocks:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._release = redis.register_script(_RELEASE)
        self._extend = redis.register_script(_EXTEND)
        self._held: dict[str, _Held] = {}  # token -> the lock it holds, while held
        # key -> {token: when its TTL ends}: locks this process may hold but could not release
        self._left_behind: dict[str, dict[str, float]] = {}

    @contextlib.asynccontextmanager
    async def hold(
        self,
        key: str,
        *,
        ttl_seconds: int,
        wait_seconds: float,
        on_timeout: Callable[[], Exception] | None = None,
        kind: str = "lock",
    ) -> AsyncIterator[str]:
        """Waits at most `wait_seconds` for the lock (then raises `on_timeout()` or LockTimeout). While
        held, a background task extends the TTL, so long work keeps the lock; if the process dies, the
        lock expires after `ttl_seconds`. `kind` names the lock in logs and metrics (never the key: it
        carries a user id). Yields the token."""
        await self._release_left_behind(key)
        token = secrets.token_hex(16)
        deadline = time.monotonic() + wait_seconds
        delay = 0.005
        while not await self._acquire(key, token, ttl_seconds):
            if time.monotonic() >= deadline:
                raise on_timeout() if on_timeout else LockTimeout(key)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.02)  # locks here are held for milliseconds: poll often
        held = self._held[token] = _Held(key, kind, ttl_seconds)
        held.keeper = asyncio.create_task(self._keep_alive(held, token))
        try:
            yield token
        finally:
            await self._stop_keeper(held)
            del self._held[token]
            if not held.settled:
                # shielded: a cancelled request must still give the lock back
                await asyncio.shield(self._give_back(key, token, kind, ttl_seconds))

    async def _acquire(self, key: str, token: str, ttl_seconds: int) -> bool:
        """SET NX, answering the previous value (GET): a SET applied whose answer was lost, then
        retried on a fresh connection, finds its own token and holds the lock instead of waiting for
        itself. If the answer never comes, the lock may be ours: the next holder here releases it."""
        try:
            previous = await self._redis.set(key, token, nx=True, ex=ttl_seconds, get=True)
        except (RedisError, OSError):
            self._leave(key, token, ttl_seconds)
            raise
        if isinstance(previous, bytes):
            previous = previous.decode()
        return previous is None or previous == token

    def hand_over(self, token: str) -> str:
        """The caller's own atomic write (a script) releases the lock `token` holds, owner-checked: stop
        extending it first, so nothing else touches the key. Then that write, then `settled`."""
        held = self._held[token]
        held.stopped = True
        if held.keeper is not None:
            held.keeper.cancel()  # it only sleeps and PEXPIREs (and checks `stopped` after each)
            held.keeper = None
        return token

    def settled(self, token: str, *, released: bool) -> None:
        """The transaction that carried `release_in` was applied; `released` False means its release
        step itself failed (the lock is then left to its TTL, logged and counted like any release)."""
        held = self._held.get(token)
        if held is None:
            return
        held.settled = True
        if not released:
            self._leave(held.key, token, held.ttl_seconds)
            metrics.LOCK_RELEASE_FAILURES.labels(held.kind).inc()
            log.warning("lock not released with its commit; it expires by its TTL", extra={"lock": held.kind})

    async def _stop_keeper(self, held: _Held) -> None:
        """Stop extending the lock. Cancelling the keeper is not enough on its own: a cancellation that
        arrives while its PEXPIRE is answered can be lost (Python 3.11's `asyncio.wait_for`, inside
        redis-py, swallows it when the call completes at the same moment; fixed in 3.12), and awaiting
        the keeper then waited forever while it kept the lock alive (a rebalance held a user's lock for
        minutes this way: bench/served_models.py --dense-switch-only). So the keeper also checks
        `stopped` after every step, and it is waited for at most a second."""
        keeper, held.keeper = held.keeper, None
        held.stopped = True
        if keeper is not None:
            keeper.cancel()
            await asyncio.wait([keeper], timeout=KEEPER_STOP_SECONDS)

    async def _give_back(self, key: str, token: str, kind: str, ttl_seconds: int) -> None:
        try:
            await self._release(keys=[key], args=[token])
        except (RedisError, OSError) as exc:
            self._leave(key, token, ttl_seconds)
            metrics.LOCK_RELEASE_FAILURES.labels(kind).inc()
            log.warning(
                "lock release failed; it expires by its TTL",
                extra={"lock": kind, "ttl_s": ttl_seconds, "reason": f"{type(exc).__name__}: {exc}"},
            )

    def _leave(self, key: str, token: str, ttl_seconds: int) -> None:
        self._left_behind.setdefault(key, {})[token] = time.monotonic() + ttl_seconds

    async def _release_left_behind(self, key: str) -> None:
        """A lock this process failed to release (or may have taken without hearing back) is released
        by the next holder of the same key here. Owner-checked: if it expired and someone else holds
        the key now, nothing happens."""
        now = time.monotonic()
        for other in [k for k, tokens in self._left_behind.items() if max(tokens.values(), default=0) <= now]:
            self._left_behind.pop(other, None)  # expired by now anyway
        for token, until in list(self._left_behind.get(key, {}).items()):
            if until > now:
                try:
                    await self._release(keys=[key], args=[token])
                except (RedisError, OSError):
                    continue  # still unreachable: acquiring will say so; try again next time
            self._left_behind.get(key, {}).pop(token, None)
        if not self._left_behind.get(key, True):
            self._left_behind.pop(key, None)

    async def _keep_alive(self, held: _Held, token: str) -> None:
        """Extends the lock every `ttl / 2.5` s: it outlives any work as long as the event loop runs this
        task (work that blocks the loop for longer than the rest of a TTL loses it: issue 39). Ends when
        the holder is done (`stopped`), even if its cancellation was lost."""
        ttl = held.ttl_seconds
        while not held.stopped:
            await asyncio.sleep(ttl / 2.5)
            if held.stopped:
                return
            try:
                if not await self._extend(keys=[held.key], args=[token, int(ttl * 1000)]):
                    if not held.settled and not held.stopped:
                        log.warning("lock lost before the work finished", extra={"lock": held.kind})
                    return
            except Exception:  # a Redis hiccup: retry next tick; the TTL still protects everyone
                log.warning("could not extend lock", exc_info=True)
