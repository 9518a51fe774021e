"""The per-user ledger of model use: upstream LLM calls and tokens in and out, by purpose.

One Redis hash per user under the user's key prefix (memory/keys.py `model_usage`, so one Cluster slot
and erased with the user): `<purpose>:calls`, `<purpose>:in`, `<purpose>:out`, and `since`, when the
first call was counted. The upstream client adds to it after each call made on a user's behalf (the
user of the request, `billed_user`); the user and an admin read it.
"""

from __future__ import annotations

import logging
import time
from contextvars import ContextVar
from dataclasses import dataclass, field

from memory import keys
from memory.errors import REDIS_UNAVAILABLE
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)
PURPOSES = ("chat", "summary", "judge", "translation", "compression")

billed_user: ContextVar[str | None] = ContextVar("billed_user", default=None)
"""The user whose request the running code serves: its model calls are counted to them. Set by the chat
route; tasks started from the request (the summary refinement) inherit it."""


@dataclass(frozen=True, slots=True)
class PurposeUsage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True, slots=True)
class UserUsage:
    user_id: str
    since: float | None
    purposes: dict[str, PurposeUsage] = field(default_factory=dict)

    @property
    def total(self) -> PurposeUsage:
        return PurposeUsage(
            sum(p.calls for p in self.purposes.values()),
            sum(p.prompt_tokens for p in self.purposes.values()),
            sum(p.completion_tokens for p in self.purposes.values()),
        )


class UsageLedger:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    async def add(self, user_id: str, purpose: str, prompt_tokens: int, completion_tokens: int) -> None:
        """Counts one call. A Redis failure is logged, never raised: the answer matters more than its
        count (the Prometheus counters still have it)."""
        key = keys.model_usage(user_id)
        try:
            async with self._redis.pipeline(transaction=False) as pipe:  # one key: one slot
                pipe.hincrby(key, f"{purpose}:calls", 1)
                pipe.hincrby(key, f"{purpose}:in", max(0, prompt_tokens))
                pipe.hincrby(key, f"{purpose}:out", max(0, completion_tokens))
                pipe.hsetnx(key, "since", repr(time.time()))
                await pipe.execute()
        except REDIS_UNAVAILABLE:
            log.warning("model use not counted: redis unavailable", extra={"purpose": purpose})

    async def read(self, user_id: str) -> UserUsage:
        raw = await self._redis.hgetall(keys.model_usage(user_id))
        values = {_text(k): _text(v) for k, v in raw.items()}
        purposes: dict[str, PurposeUsage] = {}
        for purpose in sorted({k.rsplit(":", 1)[0] for k in values if ":" in k}):
            purposes[purpose] = PurposeUsage(
                _int(values.get(f"{purpose}:calls")),
                _int(values.get(f"{purpose}:in")),
                _int(values.get(f"{purpose}:out")),
            )
        since = values.get("since")
        return UserUsage(user_id, float(since) if since else None, purposes)


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _int(value: str | None) -> int:
    try:
        return int(value or 0)
    except ValueError:
        return 0
