"""Which Chroma server holds a user: rendezvous hashing over the servers, and the placement recorded in
Redis, which wins until a rebalance has actually moved the user.

Rendezvous (highest random weight) hashing: every server gets a weight per user,
`blake2b(server name, user id)`, and the user belongs to the heaviest. Adding a server moves only the
users whose new heaviest server is the new one (about 1/n of them); removing one moves only its users.
Names, not URLs, are hashed, so a server can change address without moving anyone.

The placement is a small hash per user (`keys.ltm_placement`): `at` is the server holding the user's
records (written by the user's first write, under the long-term write lock); while a rebalance moves
the user, `to` names the server being copied to (reads and writes stay at `at`), and after the switch
`from` names the old server until its copy is deleted. A user without a placement has no records yet
(or only records from before placements existed: a rebalance adopts those) and goes to rendezvous.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory import keys
from memory.longterm.versions import LtmVersions
from memory.redis_client import RedisClient

AT, TO, FROM = "at", "to", "from"

_CLEAR_IF = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
"""


def weight(server: str, user_id: str) -> int:
    """Stable across processes and releases: blake2b of the server name and the user id."""
    digest = hashlib.blake2b(f"{server}\x00{user_id}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def rendezvous(user_id: str, servers: Collection[str], physical: Callable[[str], str] = str) -> str:
    """The server with the highest weight for this user (ties, never seen with 64 bits, by name).
    `physical`: the name hashed for a server's name (a dense model's virtual server is weighed as the
    server it is on: memory/longterm/dense_models.py)."""
    if not servers:
        raise ValueError("at least one server is required")
    return max(servers, key=lambda s: (weight(physical(s), user_id), s))


@dataclass(frozen=True, slots=True)
class Placement:
    at: str | None = None  # the server holding the user's records; None: never recorded
    to: str | None = None  # a move in progress copies to this server
    from_: str | None = None  # a finished move's source, whose copy is still to be deleted

    @property
    def copies(self) -> set[str]:
        """Servers other than `at` that may hold (part of) a copy of this user's records."""
        return {s for s in (self.to, self.from_) if s is not None and s != self.at}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _placement(fields: Mapping[Any, Any]) -> Placement:
    values = {_text(k): _text(v) for k, v in fields.items()}
    return Placement(at=values.get(AT), to=values.get(TO), from_=values.get(FROM))


class Placements:
    """The per-user placement hashes in Redis."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._clear_if = redis.register_script(_CLEAR_IF)

    async def read(self, user_id: str) -> tuple[Placement, int]:
        """The placement and the user's long-term version, read together (one transaction): a
        placement cached with this version stays current while the version does."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(keys.ltm_placement(user_id))
            pipe.get(keys.ltm_version(user_id))
            fields, version = await pipe.execute()
        return _placement(fields or {}), int(version) if version is not None else 0

    async def read_many(self, user_ids: Sequence[str]) -> dict[str, Placement]:
        """Placements of many users in one round trip (a rebalance's plan)."""
        if not user_ids:
            return {}
        async with self._redis.pipeline(transaction=False) as pipe:
            for user_id in user_ids:
                pipe.hgetall(keys.ltm_placement(user_id))
            rows = await pipe.execute()
        return {u: _placement(f or {}) for u, f in zip(user_ids, rows, strict=True)}

    async def claim(self, wanted: Mapping[str, str]) -> dict[str, str]:
        """For each user, the server in force: the recorded one, or (first write) `wanted[user]`, now
        recorded. One round trip. Callers hold the users' long-term write locks."""
        users = sorted(wanted)
        if not users:
            return {}
        async with self._redis.pipeline(transaction=False) as pipe:
            for user_id in users:
                pipe.hsetnx(keys.ltm_placement(user_id), AT, wanted[user_id])
                pipe.hget(keys.ltm_placement(user_id), AT)
            rows = await pipe.execute()
        return {u: _text(rows[2 * i + 1]) for i, u in enumerate(users)}

    async def adopt(self, user_id: str, server: str, versions: LtmVersions) -> None:
        """Record where an unplaced user's records are (data from before placements), bumping the
        version so no worker keeps routing by a placement it cached as absent."""
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hsetnx(keys.ltm_placement(user_id), AT, server)
            await versions.queue_bump(pipe, user_id)
            await pipe.execute()

    async def begin_move(self, user_id: str, target: str) -> None:
        await self._redis.hset(keys.ltm_placement(user_id), TO, target)

    async def switch(
        self, user_id: str, *, source: str, target: str, versions: LtmVersions, new_vectors: bool = False
    ) -> int:
        """`at` becomes `target`, `from` the source (its copy is deleted later), `to` goes; the
        version moves on in the same transaction. Returns the new version. `new_vectors`: the target
        holds the records embedded by another dense model, so the user's change log (which names the
        versions a worker may follow instead of rebuilding) and index snapshot go too, after the bump:
        every worker rebuilds the user's index from the target's vectors."""
        key = keys.ltm_placement(user_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, mapping={AT: target, FROM: source})
            pipe.hdel(key, TO)
            await versions.queue_bump(pipe, user_id)
            if new_vectors:
                pipe.delete(keys.ltm_changes(user_id), keys.ltm_snapshot(user_id))
            results = await pipe.execute()
        return int(results[-2 if new_vectors else -1])

    async def clear(self, user_id: str, field: str, expected: str) -> bool:
        """Drop `to` or `from` if it still names `expected` (a no-op once the user is erased)."""
        if field not in (TO, FROM):
            raise ValueError(f"only {TO!r} and {FROM!r} are cleared, not {field!r}")
        return bool(await self._clear_if(keys=[keys.ltm_placement(user_id)], args=[field, expected]))
