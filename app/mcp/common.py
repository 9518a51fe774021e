"""What every MCP tool shares: the parameter types, the API call that turns mnemo's refusal into an MCP
error (`code` the HTTP status, `data.error` mnemo's error code), whose memory a call is about, and a
memory as a tool shows it. Imports only the API client and the rules (no server module)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from app.mcp.api import ApiError, MnemoApi, token_problem
from app.mcp.rules import ID_RULE, TAG_RULE, TAGS_MAX

ApiOf = Callable[[Context], MnemoApi]
T = TypeVar("T")
DEFAULT_SESSION = "mcp"

UserId = Annotated[
    str | None,
    Field(description="whose memory; default: the token's own user (only admins may name another)"),
]


TimeZone = Annotated[
    str | None,
    Field(
        max_length=64,
        description="the user's IANA time zone (Asia/Shanghai, Europe/Berlin): their 昨天, last Friday and "
        "3月 are read in it; default: the server's TIME_ZONE",
    ),
]
Tags = Annotated[
    list[str] | None,
    Field(max_length=TAGS_MAX, description=f"profile tags, every one must hold; {TAG_RULE}"),
]
EntityId = Annotated[
    str, Field(description=f"an entity's id as list_entities gave it, e.g. person:anna ({ID_RULE})")
]


class MessageArg(BaseModel):
    role: Literal["user", "assistant"] = "user"
    content: str = Field(min_length=1, max_length=32_000)


def mcp_error(err: ApiError) -> MCPError:
    data = {"error": err.code, "status": err.status, "detail": err.detail}
    if err.request_id:
        data["request_id"] = err.request_id
    return MCPError(code=err.status, message=f"{err.code}: {err.detail}", data=data)


def refused(detail: str) -> MCPError:
    """A call the tool itself refuses, as mnemo would: 422 validation_error."""
    return mcp_error(ApiError(422, "validation_error", detail))


async def call(fn: Awaitable[T]) -> T:
    try:
        return await fn
    except ApiError as err:
        raise mcp_error(err) from err


def subject(api: MnemoApi, user_id: str | None) -> str:
    # only an absent user_id means "the token's user": an empty or malformed one is refused by the
    # API client, never silently turned into another target
    if user_id is None:
        if (problem := token_problem(api.user_id)) is not None:
            raise mcp_error(ApiError(401, "invalid_token", problem))
        return api.user_id
    return user_id


def brief(m: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "content", "created_at", "session_id", "source", "topic", "tier", "importance")
    out = {k: m.get(k) for k in keep}
    for extra in ("relevance", "score", "why"):  # search hits; a forget preview's reason
        if extra in m:
            out[extra] = m[extra]
    return out
