"""Records governance actions in the audit log on behalf of the calling principal."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Literal

from redis.exceptions import RedisError

from app.http.auth import Principal
from memory.governance.audit import AuditAction, AuditEvent, AuditLog
from memory.longterm.history import Actor
from monitoring import metrics

log = logging.getLogger(__name__)


class RequestAudit:
    """The audit log, bound to one request's caller and request id."""

    def __init__(self, audit_log: AuditLog, principal: Principal, request_id: str) -> None:
        self._log = audit_log
        self._principal = principal
        self._request_id = request_id

    @property
    def actor(self) -> Actor:
        """The caller as the memory history names them."""
        role: Literal["user", "admin"] = "admin" if self._principal.is_admin else "user"
        return Actor(self._principal.user_id, role, self._request_id)

    def for_another(self, subject: str) -> bool:
        """An admin acting on someone else's data: what the audit trail must show of reads."""
        return self._principal.is_admin and self._principal.user_id != subject

    async def record_access(
        self, action: AuditAction, subject: str, count: int, details: Mapping[str, str] | None = None
    ) -> None:
        """A read (list, search, session read, chat as the user): recorded when an admin does it for
        another user; a user's own page views are not governance actions."""
        if self.for_another(subject):
            await self.record(action, subject, count, details)

    async def record(
        self, action: AuditAction, subject: str, count: int, details: Mapping[str, str] | None = None
    ) -> None:
        """After the action succeeded. A failure to record is logged and counted, not raised: the
        action already happened, and an error answer would make the caller retry a finished delete."""
        event = AuditEvent(
            action=action,
            actor=self._principal.user_id,
            actor_role="admin" if self._principal.is_admin else "user",
            subject=subject,
            count=count,
            request_id=self._request_id,
            details=dict(details or {}),
        )
        try:
            await self._log.record(event)
        except (RedisError, OSError):
            metrics.AUDIT_WRITE_FAILURES.inc()
            log.error("audit record lost", extra={"action": action, "request_id": self._request_id})
