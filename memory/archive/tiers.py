"""Tiers by age, and the per-user archive state in Redis that readers use to see each id once.

A move takes a bounded batch of one user's ids from one tier to the next in four steps, recorded in the
user's archive hash (`keys.archive_state`, field `move`):

1. `copying`: the ids are being copied to the target tier; readers ignore them there (the source
   answers for them);
2. copied and verified; then one HSET flips the phase to `switched`: from that instant readers ignore
   the ids in the source and the target answers;
3. the source copies are deleted;
4. the move record is removed.

A crash leaves the record: a re-run rolls a `copying` move back (deletes the target copies, which no
reader sees) and completes a `switched` one (deletes the source copies, which no reader sees). So an id
is answered by exactly one tier at every moment, never lost, never twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from memory import keys
from memory.models import ArchiveTier
from memory.redis_client import RedisClient

DAY = 86_400.0
Phase = Literal["copying", "switched"]
TIERS: tuple[ArchiveTier, ...] = ("hot", "warm", "cold")


@dataclass(frozen=True, slots=True)
class TierPolicy:
    """Ages (days since `created_at`) at which memories leave hot for warm, and warm for cold."""

    warm_after_days: float = 30.0
    cold_after_days: float = 365.0

    def __post_init__(self) -> None:
        if not 0 < self.warm_after_days < self.cold_after_days:
            raise ValueError("0 < warm_after_days < cold_after_days is required")

    def warm_cutoff(self, now: float) -> float:
        return now - self.warm_after_days * DAY

    def cold_cutoff(self, now: float) -> float:
        return now - self.cold_after_days * DAY

    def tier_of(self, created_at: float, now: float) -> ArchiveTier:
        """The tier a memory of this age belongs in (the job moves it there on its next run)."""
        if created_at < self.cold_cutoff(now):
            return "cold"
        if created_at < self.warm_cutoff(now):
            return "warm"
        return "hot"


@dataclass(frozen=True, slots=True)
class Move:
    src: ArchiveTier
    dst: ArchiveTier
    phase: Phase
    ids: frozenset[str]
    files: tuple[str, ...] = ()  # cold targets: the Parquet files this move writes (named before)
    started_at: float = 0.0

    def to_json(self) -> str:
        return json.dumps(
            {
                "src": self.src,
                "dst": self.dst,
                "phase": self.phase,
                "ids": sorted(self.ids),
                "files": list(self.files),
                "started_at": self.started_at,
            }
        )

    @classmethod
    def from_json(cls, raw: str) -> Move:
        d = json.loads(raw)
        return cls(
            src=d["src"],
            dst=d["dst"],
            phase=d["phase"],
            ids=frozenset(d["ids"]),
            files=tuple(d.get("files", ())),
            started_at=float(d.get("started_at", 0.0)),
        )


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One user's archive state as a reader sees it, read in one round trip."""

    version: int = 0
    has_cold: bool = False
    move: Move | None = None
    hidden_in: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def archived(self) -> bool:
        """Whether this user has ever had anything moved out of hot (else warm and cold are skipped)."""
        return self.version > 0

    def hidden(self, tier: ArchiveTier) -> frozenset[str]:
        """Ids that tier must not answer for now (a move in progress answers them from the other)."""
        return self.hidden_in.get(tier, frozenset())


def snapshot_of(fields: dict[str, str]) -> Snapshot:
    move = Move.from_json(fields["move"]) if fields.get("move") else None
    hidden: dict[str, frozenset[str]] = {}
    if move is not None:
        # copying: the source still answers; switched: the target does
        hidden[move.dst if move.phase == "copying" else move.src] = move.ids
    return Snapshot(int(fields.get("v", 0) or 0), fields.get("cold") == "1", move, hidden)


class ArchiveState:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    async def read(self, user_id: str) -> Snapshot:
        raw = await self._redis.hgetall(keys.archive_state(user_id))
        return snapshot_of({_s(k): _s(v) for k, v in raw.items()})

    async def begin(self, user_id: str, move: Move) -> None:
        """Record a move before anything is copied (phase `copying`); counts as archived from here."""
        key = keys.archive_state(user_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, "move", move.to_json())
            pipe.hincrby(key, "v", 1)
            await pipe.execute()

    async def switch(self, user_id: str, move: Move) -> Move:
        """The one step that changes which tier answers for the move's ids."""
        switched = Move(move.src, move.dst, "switched", move.ids, move.files, move.started_at)
        key = keys.archive_state(user_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(key, "move", switched.to_json())
            if move.dst == "cold":
                pipe.hset(key, "cold", "1")
            pipe.hincrby(key, "v", 1)
            await pipe.execute()
        return switched

    async def finish(self, user_id: str) -> None:
        key = keys.archive_state(user_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(key, "move")
            pipe.hincrby(key, "v", 1)
            await pipe.execute()

    async def bump(self, user_id: str) -> None:
        """Warm or cold records changed (a delete): cached warm/cold indexes are stale."""
        await self._redis.hincrby(keys.archive_state(user_id), "v", 1)

    async def mark_archived(self, user_id: str, *, cold: bool) -> None:
        """A user found holding warm or cold records without a state (Redis lost it): readers must
        look there again."""
        key = keys.archive_state(user_id)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hincrby(key, "v", 1)
            if cold:
                pipe.hset(key, "cold", "1")
            await pipe.execute()


def _s(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
