"""Which of a user's memories state each claim, kept in Redis: where the writer finds a new statement's
predecessors once the user is past the in-process index (issue 45).

Under `in_process_max` memories the writer's supersession reads the user's in-process index, which
holds every memory by claim key. Past it the candidates were the 20 memories nearest the new statement's
vector in Chroma, and a restatement inside a long turn is seldom near the last one, inside another: in
a 10M-token history 11 of 12 statements of where the user lives were left current. Here every stored
memory's claims are recorded as it is written (under the user's write lock, after the upsert), the
newest `KEPT` memories per claim key, so the candidates are looked up by key. A memory deleted since is
not found when read back from the store; an erase removes the hash with the user's other keys.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from memory import keys
from memory.models import Memory
from memory.redis_client import RedisClient

__all__ = ["KEPT", "ClaimIndex"]

KEPT = 20  # newest memories kept per claim key: a chain's last statements, not its whole history


class ClaimIndex:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    async def add(self, user_id: str, memories: Sequence[Memory]) -> None:
        """Record the claims these stored memories of the user state (the user's own statements)."""
        said: dict[str, list[tuple[float, str]]] = {}
        for m in memories:
            if m.source == "user":
                for key, _ in m.facts:
                    said.setdefault(key, []).append((m.created_at, m.id))
        if not said:
            return
        name, fields = keys.ltm_claims(user_id), sorted(said)
        held = await self._redis.hmget(name, fields)
        update: dict[Any, Any] = {}  # redis-py's mapping type is invariant in its keys
        for field, raw in zip(fields, held, strict=True):
            known = {mid: at for at, mid in _entries(raw)}
            known.update((mid, at) for at, mid in said[field])
            newest = sorted(((at, mid) for mid, at in known.items()), reverse=True)[:KEPT]
            update[field] = json.dumps(newest, ensure_ascii=False)
        await self._redis.hset(name, mapping=update)

    async def ids(self, user_id: str, claim_keys: Iterable[str]) -> list[str]:
        """The ids recorded for these claim keys, newest first per key."""
        fields = sorted(set(claim_keys))
        if not fields:
            return []
        held = await self._redis.hmget(keys.ltm_claims(user_id), fields)
        return list(dict.fromkeys(mid for raw in held for _, mid in _entries(raw)))


def _entries(raw: bytes | str | None) -> list[tuple[float, str]]:
    if raw is None:
        return []
    try:
        value = json.loads(raw)
        return [(float(at), str(mid)) for at, mid in value]
    except (ValueError, TypeError):
        return []  # damaged: the claims are recorded again by the next statements
