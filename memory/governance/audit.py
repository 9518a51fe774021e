"""An append-only record of governance actions: who listed, exported, forgot, deleted or erased what.

One Redis Stream for the whole service (`mnemo:audit`). Entries carry the actor, the subject user,
the action, how many records it touched and the request id, never any memory content: an erase log
that kept the erased text would defeat the erase. Nothing in mnemo trims or deletes the stream.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from memory import keys
from memory.redis_client import RedisClient

# list/search/read/chat: an admin reading or acting as another user (never a user's own page views);
# find: an admin looking users up by id prefix; erase_preview: an admin counting what an erase would delete;
# list_deleted: an admin reading another user's restorable memories; restore: a deleted memory brought back
AuditAction = Literal[
    "list",
    "search",
    "read",
    "chat",
    "export",
    "forget",
    "delete",
    "erase",
    "edit",
    "find",
    "erase_preview",
    "merge",
    "split",
    "restore",
    "list_deleted",
]


@dataclass(frozen=True, slots=True)
class AuditEvent:
    action: AuditAction
    actor: str
    subject: str
    count: int
    actor_role: str = "user"
    request_id: str = ""
    details: Mapping[str, str] = field(default_factory=dict)  # ids, flags and criteria names; no content


@dataclass(frozen=True, slots=True)
class AuditRecord:
    id: str
    at: float
    event: AuditEvent


class AuditLog:
    def __init__(self, redis: RedisClient, *, stream: str = keys.AUDIT_STREAM) -> None:
        self._redis = redis
        self._stream = stream

    async def record(self, event: AuditEvent) -> str:
        fields: dict[Any, Any] = {
            "action": event.action,
            "actor": event.actor,
            "actor_role": event.actor_role,
            "subject": event.subject,
            "count": str(event.count),
            "request_id": event.request_id,
            **{f"d.{k}": v for k, v in event.details.items()},
        }
        return str(await self._redis.xadd(self._stream, fields))

    async def read(
        self,
        *,
        subject: str | None = None,
        action: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int = 50,
        before: str | None = None,
        page: int = 500,
    ) -> list[AuditRecord]:
        """Newest first; `before` is an entry id to continue after (exclusive); `since` / `until` bound
        the time (epoch seconds, inclusive) through the entry ids, which are milliseconds."""
        out: list[AuditRecord] = []
        end = f"({before}" if before else "+"
        if until is not None and (before is None or int(before.split("-", 1)[0]) > until * 1000):
            end = f"{math.floor(until * 1000)}-{2**64 - 1}"
        start = f"{max(0, math.ceil(since * 1000))}-0" if since is not None else "-"
        while len(out) < limit:
            batch: Any = await self._redis.xrevrange(self._stream, max=end, min=start, count=page)
            for entry_id, fields in batch:
                if (subject is None or fields.get("subject") == subject) and (
                    action is None or fields.get("action") == action
                ):
                    out.append(_record(str(entry_id), fields))
                    if len(out) == limit:
                        break
            if len(batch) < page:
                break
            end = f"({batch[-1][0]}"
        return out


def _record(entry_id: str, fields: dict[str, str]) -> AuditRecord:
    return AuditRecord(
        id=entry_id,
        at=int(entry_id.split("-", 1)[0]) / 1000,
        event=AuditEvent(
            action=fields.get("action", "list"),  # type: ignore[arg-type]
            actor=fields.get("actor", ""),
            actor_role=fields.get("actor_role", "user"),
            subject=fields.get("subject", ""),
            count=int(fields.get("count", "0")),
            request_id=fields.get("request_id", ""),
            details={k[2:]: v for k, v in fields.items() if k.startswith("d.")},
        ),
    )
