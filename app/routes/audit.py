"""The audit trail of governance actions, for admins."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.http.account_schemas import AuditEntryOut, AuditResponse
from app.http.body import StrictJSONRoute
from app.http.deps import AdminDep, AuditLogDep
from app.http.errors import ValidationFailed
from app.http.fields import Timestamp
from app.http.ids import ExclusiveStreamEnd, Id
from memory.governance.audit import AuditAction

router = APIRouter(prefix="/v1/audit", tags=["audit"], route_class=StrictJSONRoute)


@router.get("", response_model=AuditResponse)
async def read_audit(
    _admin: AdminDep,
    audit_log: AuditLogDep,
    user_id: Annotated[Id | None, Query()] = None,
    action: Annotated[AuditAction | None, Query()] = None,
    since: Annotated[Timestamp | None, Query(description="epoch seconds or ISO 8601")] = None,
    until: Annotated[Timestamp | None, Query(description="epoch seconds or ISO 8601")] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before: Annotated[ExclusiveStreamEnd | None, Query()] = None,
) -> AuditResponse:
    """Newest first; `user_id` keeps the entries about that user, `action` those of one action,
    `since` / `until` a time range (inclusive); pass `next_before` back as `before` for the next page."""
    if since is not None and until is not None and since > until:
        raise ValidationFailed("since must not be after until")
    records = await audit_log.read(
        subject=user_id, action=action, since=since, until=until, limit=limit, before=before
    )
    return AuditResponse(
        items=[AuditEntryOut.of(r) for r in records],
        next_before=records[-1].id if len(records) == limit else None,
    )
