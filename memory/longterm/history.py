"""What happened to each long-term memory: its history, recorded in Redis beside the user's other keys.

Two sources make one history (`MemoryHistory.of`):
- what the record itself says, read from it: `created` (when, in which session, from which messages),
  `merged` (the messages a duplicate added), `superseded` (by which newer memory, since when);
- what only an action can say, recorded as it happens in a short per-memory stream: `edited` (before
  and after of each changed field), `restored` (an edit brought it back from an archive tier),
  `deleted`. Each recorded event names its actor, their role and the request id.

Privacy: the stream is under the user's prefix, so an erase deletes it; a deleted memory's stream is
replaced by one `deleted` event without any content (the memory's text must not outlive its delete in
an edit's "before"), which expires with the delete's tombstone.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from memory import keys
from memory.longterm.tombstones import TOMBSTONE_TTL_SECONDS
from memory.models import Memory
from memory.redis_client import RedisClient

EventKind = Literal["created", "merged", "superseded", "edited", "restored", "archived", "deleted"]
_KINDS: frozenset[EventKind] = frozenset(
    ("created", "merged", "superseded", "edited", "restored", "archived", "deleted")
)
EVENTS_KEPT = 200  # per memory; older events go (approximately: MAXLEN ~)


@dataclass(frozen=True, slots=True)
class Actor:
    """Who acted: a token's subject and role, and the request it came with."""

    user_id: str
    role: Literal["user", "admin", "system"]
    request_id: str = ""


SYSTEM = Actor("mnemo", "system")


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    kind: EventKind
    at: float
    actor: str = "mnemo"
    role: str = "system"
    request_id: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)


class MemoryHistory:
    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis

    async def record(
        self, user_id: str, memory_id: str, kind: EventKind, actor: Actor, detail: Mapping[str, Any]
    ) -> None:
        await self._redis.xadd(
            keys.ltm_history(user_id, memory_id),
            _entry(kind, actor, detail),
            maxlen=EVENTS_KEPT,
            approximate=True,
        )

    async def recorded(self, user_id: str, memory_id: str) -> list[HistoryEvent]:
        raw: Any = await self._redis.xrange(keys.ltm_history(user_id, memory_id))
        return [_event(fields) for _, fields in raw]

    async def deleted(self, user_id: str, memory_ids: Sequence[str], actor: Actor) -> None:
        """Each memory's stream becomes one content-free `deleted` event (module docstring)."""
        if not memory_ids:
            return
        entry = _entry("deleted", actor, {})
        async with self._redis.pipeline(transaction=False) as pipe:
            for memory_id in memory_ids:
                key = keys.ltm_history(user_id, memory_id)
                pipe.delete(key)
                pipe.xadd(key, entry)
                pipe.expire(key, TOMBSTONE_TTL_SECONDS)
            await pipe.execute()

    async def of(self, memory: Memory) -> list[HistoryEvent]:
        """The whole history of a memory that exists: read from its record, then recorded; by time."""
        recorded = await self.recorded(memory.user_id, memory.id)
        return sorted([*from_record(memory), *recorded], key=lambda e: e.at)

    async def users_histories(self, user_id: str) -> dict[str, list[HistoryEvent]]:
        """Every recorded stream of the user (export): memory id -> events."""
        prefix = keys.ltm_history(user_id, "")
        out: dict[str, list[HistoryEvent]] = {}
        async for key in self._redis.scan_iter(match=f"{prefix}*", count=500):
            name = key.decode() if isinstance(key, bytes) else str(key)
            memory_id = name[len(prefix) :]
            out[memory_id] = await self.recorded(user_id, memory_id)
        return out


def from_record(m: Memory) -> list[HistoryEvent]:
    """The events a record says by itself."""
    events = [
        HistoryEvent(
            "created",
            m.created_at,
            detail={
                "session_id": m.session_id,
                "source": m.source,
                "source_message_ids": list(m.source_message_ids[:1]),
            },
        )
    ]
    if len(m.source_message_ids) > 1:
        events.append(
            HistoryEvent(
                "merged", m.created_at, detail={"source_message_ids": list(m.source_message_ids[1:])}
            )
        )
    if m.superseded_by:
        events.append(
            HistoryEvent(
                "superseded",
                m.valid_to if m.valid_to is not None else m.created_at,
                detail={"by": m.superseded_by},
            )
        )
    return events


def _entry(kind: EventKind, actor: Actor, detail: Mapping[str, Any]) -> dict[Any, Any]:
    """One stream entry as recorded (`_event` reads it back)."""
    return {
        "kind": kind,
        "at": f"{time.time():.6f}",
        "actor": actor.user_id,
        "role": actor.role,
        "request_id": actor.request_id,
        "detail": json.dumps(dict(detail), ensure_ascii=False),
    }


def _event(fields: Mapping[Any, Any]) -> HistoryEvent:
    f = {
        (k.decode() if isinstance(k, bytes) else k): (v.decode() if isinstance(v, bytes) else v)
        for k, v in fields.items()
    }
    try:
        detail = json.loads(f.get("detail") or "{}")
    except ValueError:
        detail = {}
    kind = f.get("kind", "")
    return HistoryEvent(
        kind=kind if kind in _KINDS else "edited",
        at=float(f.get("at", 0.0)),
        actor=f.get("actor", ""),
        role=f.get("role", ""),
        request_id=f.get("request_id", ""),
        detail=detail if isinstance(detail, dict) else {},
    )
