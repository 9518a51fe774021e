"""GET /v1/usage: the caller's ledger of model use (an admin may name any user)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.http.auth import ensure_can_act_for
from app.http.body import StrictJSONRoute
from app.http.chat_schemas import UsageOut
from app.http.deps import PrincipalDep, UsageDep
from app.http.errors import OpenAIErrorResponses
from app.http.ids import Id

router = APIRouter(tags=["chat"], route_class=StrictJSONRoute, responses=OpenAIErrorResponses)


@router.get("/v1/usage", response_model=UsageOut)
async def my_usage(
    principal: PrincipalDep,
    ledger: UsageDep,
    user_id: Annotated[
        Id | None, Query(description="another user's (admins only); default: the caller")
    ] = None,
) -> UsageOut:
    """The upstream LLM calls made for the user's requests and their tokens (the upstream's counts,
    else estimates), by purpose: the chat turns and what they caused (summary, translation,
    compression)."""
    user = user_id or principal.user_id
    ensure_can_act_for(principal, user)
    return UsageOut.of(await ledger.read(user))
