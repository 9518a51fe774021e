"""The MCP tools over relation memory: the profile, entities (list, read), merges (merge, list, split)."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from app.mcp.common import ApiOf, EntityId, UserId, brief, call, refused, subject
from app.mcp.rules import ID_RULE


def register(server: MCPServer, api_of: ApiOf) -> None:
    """The tools, in the order a client lists them."""
    _profile(server, api_of)
    _list_entities(server, api_of)
    _read_entity(server, api_of)
    _merge_entities(server, api_of)
    _split_entities(server, api_of)


def _profile(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="The user's profile: what they said of themself (occupation, employer, home, family, "
        "goals, preferences, devices, diet, pets), current and past, each with tags in Chinese and English "
        "(#职业_教师 / #occupation_teacher) that recall and list_memories filter on, and a one-line summary "
        "in both languages. Example: before answering 我适合什么工作？ / what should I cook tonight?."
    )
    async def profile(ctx: Context, user_id: UserId = None) -> dict[str, Any]:
        api = api_of(ctx)
        out: dict[str, Any] = await call(api.profile(subject(api, user_id)))
        return out


def _list_entities(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="List or search the user's entities (people, places, organisations, products, "
        "documents, events), most mentioned first; `prefix` matches names and aliases in either language. "
        'Examples: prefix="杭" or "Hang" (finds place:hangzhou), kind="person", prefix="doc:q-".'
    )
    async def list_entities(
        ctx: Context,
        prefix: Annotated[str, Field(max_length=64)] = "",
        kind: Annotated[str | None, Field(min_length=1, max_length=32)] = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        params = {"prefix": prefix or None, "kind": kind, "limit": limit}
        out: dict[str, Any] = await call(api.entities(subject(api, user_id), params))
        return out


def _read_entity(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="One entity: its aliases, its relations current and past (each with the memory it came "
        'from) and the memories behind it. Examples: entity_id="kin:sister" (我妹妹 / my sister: answers '
        'with the person once named), entity_id="doc:q-2024-031".'
    )
    async def read_entity(ctx: Context, entity_id: EntityId, user_id: UserId = None) -> dict[str, Any]:
        api = api_of(ctx)
        out = await call(api.entity(subject(api, user_id), entity_id))
        out["memory_items"] = [brief(m) for m in out.get("memory_items", [])]
        return dict(out)


def _merge_entities(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="Merge two entities the user says are one (Mel = Melanie; 小李 = 李雷): the source's "
        "names, memories and relations become the target's, for what was said before and after. Both ids "
        "exactly as list_entities gave them (an alias is refused); returns the merge with its id, which "
        "split_entities needs to undo it. Also lists the merges in force when source and target are omitted."
    )
    async def merge_entities(
        ctx: Context,
        source: Annotated[
            str | None, Field(description=f"the entity that is the other one ({ID_RULE})")
        ] = None,
        target: Annotated[str | None, Field(description=f"the entity it is ({ID_RULE})")] = None,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        who = subject(api, user_id)
        if source is None and target is None:
            listed: dict[str, Any] = await call(api.merges(who))
            return listed
        if source is None or target is None:
            raise refused("give both source and target (请同时给出两个实体)")
        merged: dict[str, Any] = await call(api.merge(who, source, target))
        return merged


def _split_entities(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="Split a wrong merge: undoes exactly the merge named by its id (mg-…, from "
        "merge_entities), so its source is an entity of its own again (拆分错误的合并 / undo a merge)."
    )
    async def split_entities(
        ctx: Context,
        merge_id: Annotated[
            str, Field(description="the merge's id as merge_entities answered it (mg-<16 hex>)")
        ],
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        out: dict[str, Any] = await call(api.split(subject(api, user_id), merge_id))
        return out
