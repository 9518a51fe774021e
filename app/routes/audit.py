"""The audit trail of governance actions, for admins."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.http.auth import USER_ID_PATTERN
from app.http.deps import AdminDep, AuditLogDep
from app.http.schemas import AuditEntryOut, AuditResponse

router = APIRouter(prefix="/v1/audit", tags=["audit"])
ENTRY_ID_PATTERN = r"^\d{1,20}-\d{1,20}$"


@router.get("", response_model=AuditResponse)
async def read_audit(
    _admin: AdminDep,
    audit_log: AuditLogDep,
    user_id: Annotated[str | None, Query(pattern=USER_ID_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    before: Annotated[str | None, Query(pattern=ENTRY_ID_PATTERN)] = None,
) -> AuditResponse:
    """Newest first; `user_id` keeps the entries about that user; pass `next_before` back as
    `before` for the next page."""
    records = await audit_log.read(subject=user_id, limit=limit, before=before)
    return AuditResponse(
        items=[AuditEntryOut.of(r) for r in records],
        next_before=records[-1].id if len(records) == limit else None,
    )
