"""Per-user request limit, atomic in Redis (one Lua script), so it holds across workers and replicas.

A sliding-window log: the script drops entries older than the window, counts the rest, and admits the
request only if fewer than the limit remain, all with Redis' own clock (TIME), so workers on different
hosts agree. Why not the `limits` library: its Redis sliding window is approximate (two fixed windows
weighted), and the acceptance asks that exactly the limit succeeds within the window.

If Redis cannot be reached the request is let through (fail open) and a warning is logged: mnemo's
own routes would fail on Redis anyway, and an outage of the limiter must not take the API down.
"""

from __future__ import annotations

import logging
import math
import secrets
from dataclasses import dataclass

from redis.exceptions import RedisError

from memory import keys
from memory.redis_client import RedisClient
from monitoring import metrics

log = logging.getLogger(__name__)

# KEYS[1] = the user's log   ARGV: limit, window_ms, member suffix
# -> {allowed (1/0), remaining, reset_ms (until the oldest entry leaves the window)}
_SLIDING_WINDOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local reset = window
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
if count >= limit then
  return {0, 0, reset}
end
redis.call('ZADD', KEYS[1], now, now .. '-' .. ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
if count == 0 then reset = window end
return {1, limit - count - 1, reset}
"""


@dataclass(frozen=True, slots=True)
class RateDecision:
    allowed: bool
    limit: int
    remaining: int
    reset_seconds: int  # until a slot frees up (Retry-After when refused)


class RateLimiter:
    def __init__(self, redis: RedisClient, *, limit: int, window_seconds: int = 60) -> None:
        self._redis = redis
        self.limit = limit
        self.window_ms = window_seconds * 1000
        self._script = redis.register_script(_SLIDING_WINDOW)

    async def hit(self, user_id: str) -> RateDecision | None:
        """The decision for one request; None when Redis could not decide (the caller lets it pass)."""
        try:
            allowed, remaining, reset_ms = await self._script(
                keys=[keys.rate_limit(user_id)], args=[self.limit, self.window_ms, secrets.token_hex(4)]
            )
        except RedisError:
            metrics.RATE_LIMITER_ERRORS.inc()
            log.warning("rate limiter unavailable; request let through", exc_info=True)
            return None
        if not allowed:
            metrics.RATE_LIMITED.inc()
        return RateDecision(
            allowed=bool(allowed),
            limit=self.limit,
            remaining=max(0, int(remaining)),
            reset_seconds=max(1, math.ceil(int(reset_ms) / 1000)),
        )
