"""Admin tools: find a user by id prefix, preview what erasing a user would delete (both audited), and
read a user's ledger of model use."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from app.http.account_schemas import ErasePreviewOut, FoundUsersOut
from app.http.body import StrictJSONRoute
from app.http.chat_schemas import UsageOut
from app.http.deps import AdminDep, AuditDep, EraserDep, UsageDep, UserDirectoryDep
from app.http.ids import Id

router = APIRouter(prefix="/v1/admin", tags=["admin"], route_class=StrictJSONRoute)


@router.get("/users", response_model=FoundUsersOut)
async def find_users(
    _admin: AdminDep,
    directory: UserDirectoryDep,
    audit: AuditDep,
    prefix: Annotated[Id, Query(description="the start of a user id (the id rule applies)")],
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> FoundUsersOut:
    """Users whose id starts with `prefix` (case-sensitive), in id order: every user mnemo holds
    anything for in Redis (session state, long-term bookkeeping). One SCAN, on every cluster master."""
    found = await directory.find(prefix, limit)
    await audit.record("find", prefix, len(found.users), {"users": ",".join(found.users)})
    return FoundUsersOut(prefix=prefix, users=found.users, more=found.more)


@router.get("/users/{user_id}/erase-preview", response_model=ErasePreviewOut)
async def erase_preview(
    _admin: AdminDep,
    eraser: EraserDep,
    audit: AuditDep,
    user_id: Annotated[Id, Path(description="the user an erase would delete")],
) -> ErasePreviewOut:
    """What `DELETE /v1/memory/{user_id}?confirm={user_id}` would delete now, counted per store."""
    preview = await eraser.preview(user_id)
    out = ErasePreviewOut.of(user_id, preview)
    await audit.record("erase_preview", user_id, out.memories_total, {"held": str(out.held).lower()})
    return out


@router.get("/users/{user_id}/usage", response_model=UsageOut)
async def user_usage(
    _admin: AdminDep,
    ledger: UsageDep,
    user_id: Annotated[Id, Path(description="the user whose model use to read")],
) -> UsageOut:
    """The user's ledger of model use, as `GET /v1/usage` gives it to them."""
    return UsageOut.of(await ledger.read(user_id))
