"""The MCP tools over memories: remember, recall, list, forget (preview, then confirmed), delete, list the
deleted, restore, correct."""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from app.mcp.common import (
    DEFAULT_SESSION,
    ApiOf,
    MessageArg,
    Tags,
    TimeZone,
    UserId,
    brief,
    call,
    refused,
    subject,
)
from app.mcp.rules import FORGET_LOWEST_RELEVANCE, FORGET_MIN_RELEVANCE, FORGET_MIN_SIMILARITY, ID_RULE


def forget_confirmation(user_id: str, ids: list[str]) -> str:
    """The code a forget preview shows and its delete must name: a digest of whose memories and which
    (sorted) ids. Not a secret: an agent has it only from a preview, so it cannot delete unseen."""
    digest = hashlib.sha256("\n".join([user_id, *sorted(ids)]).encode()).hexdigest()
    return digest[:16]


def register(server: MCPServer, api_of: ApiOf) -> None:
    """The tools, in the order a client lists them."""
    _remember(server, api_of)
    _recall(server, api_of)
    _list_memories(server, api_of)
    _forget(server, api_of)
    _delete_memory(server, api_of)
    _list_deleted(server, api_of)
    _restore_memory(server, api_of)
    _update_memory(server, api_of)


def _remember(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="Store messages or a fact in the user's long-term memory; returns the memories written "
        "(once they are searchable). Give `content` for one fact, or `messages` for a conversation excerpt. "
        'Examples: content="我住在杭州"; content="I keep bees on my rooftop"; '
        'messages=[{"role": "user", "content": "记住：我对花生过敏"}].'
    )
    async def remember(
        ctx: Context,
        content: Annotated[
            str | None, Field(description="one fact, e.g. 我下周三去上海出差 / my daughter is called Mia")
        ] = None,
        messages: Annotated[
            list[MessageArg] | None, Field(description="messages to store, oldest first")
        ] = None,
        session_id: Annotated[str, Field(description="the conversation these come from")] = DEFAULT_SESSION,
        time_zone: TimeZone = None,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        batch = [m.model_dump() for m in messages or []]
        if content is not None:
            batch.append({"role": "user", "content": content})
        if not batch:
            raise refused("give content or messages")
        out = await call(api.ingest(subject(api, user_id), session_id, batch, time_zone))
        return {"stored": out["stored"], "memories": [brief(m) for m in out["memories"]]}


def _recall(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="Search the user's long-term memory, best first. Each memory has `relevance`, the "
        "probability (0-1) that it is relevant to the query; memories below min_relevance (default: the "
        "server's floor) are left out, so an empty result means nothing relevant is remembered. Filters: "
        "session_id, exclude_session_id, topic, since/until (ISO 8601 or epoch seconds), tags (profile "
        "tags, every one must hold: #职业_教师, #goal_ielts). "
        'Examples: query="我住在哪个城市？"; query="what insects do I keep?"; '
        'query="我3月提交的报价单", since="2026-03-01".'
    )
    async def recall(
        ctx: Context,
        query: Annotated[str, Field(description="what to look for, in Chinese or English")],
        top_k: Annotated[int, Field(ge=1, le=100)] = 5,
        session_id: str | None = None,
        exclude_session_id: str | None = None,
        topic: str | None = None,
        since: str | None = None,
        until: str | None = None,
        min_relevance: Annotated[float | None, Field(ge=0, le=1)] = None,
        tags: Tags = None,
        time_zone: TimeZone = None,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        body: dict[str, Any] = {"query": query, "top_k": top_k}
        for key, value in (
            ("time_zone", time_zone),
            ("min_relevance", min_relevance),
            ("tags", tags),
            ("session_id", session_id),
            ("exclude_session_id", exclude_session_id),
            ("topic", topic),
            ("since", since),
            ("until", until),
        ):
            if value is not None:
                body[key] = value
        out = await call(api.search(subject(api, user_id), body))
        return {"results": [brief(m) for m in out["results"]]}


def _list_memories(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="List the user's memories, newest first (or by importance), optionally filtered by "
        "topic, session, source (user/assistant), tier (fact/episodic), time and profile tags (every one "
        'must hold). Examples: tier="fact", since="2026-11-01" (那些是我这个月说过的重要事实？); '
        'tags=["#职业_教师", "#goal_ielts"].'
    )
    async def list_memories(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        offset: Annotated[int, Field(ge=0)] = 0,
        sort: Literal["recent", "importance"] = "recent",
        topic: str | None = None,
        session_id: str | None = None,
        source: Literal["user", "assistant"] | None = None,
        tier: Literal["fact", "episodic"] | None = None,
        since: str | None = None,
        until: str | None = None,
        tags: Tags = None,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        params: dict[str, Any] = {
            "limit": limit,
            "offset": offset,
            "sort": sort,
            "topic": topic,
            "session_id": session_id,
        }
        params |= {"source": source, "tier": tier, "since": since, "until": until, "tags": tags}
        out = await call(api.list(subject(api, user_id), params))
        return {"total": out["total"], "items": [brief(m) for m in out["items"]]}


def _forget(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="Forget every memory matching all the given criteria (query by meaning, topic, "
        "session_id, before/after). It always previews first: a call lists what would go (count, ids, "
        "each memory's content and why it matched) and deletes nothing, with a `confirmation` code. Show "
        "that list to the user; only when they agree, call again with the same criteria, dry_run=false, "
        "expected_count = the count shown and confirmation = the code shown. Without them, or when what "
        "matches has changed since, nothing is deleted and the new preview comes back. By query, a "
        f"memory goes only when it says the query's words (or their translation) and its relevance "
        f"reaches min_relevance (default {FORGET_MIN_RELEVANCE}). "
        'Examples: query="我对花生过敏"; then query="我对花生过敏", dry_run=false, expected_count=1, '
        'confirmation="…"; session_id="s1".'
    )
    async def forget(
        ctx: Context,
        query: str | None = None,
        min_relevance: Annotated[float | None, Field(ge=FORGET_LOWEST_RELEVANCE, le=1)] = None,
        min_similarity: Annotated[
            float | None, Field(ge=FORGET_MIN_SIMILARITY, le=1, description="deprecated: use min_relevance")
        ] = None,
        topic: str | None = None,
        session_id: str | None = None,
        before: str | None = None,
        after: str | None = None,
        dry_run: Annotated[
            bool, Field(description="false: delete, with expected_count and confirmation from the preview")
        ] = True,
        expected_count: Annotated[int | None, Field(ge=0, description="the count the preview showed")] = None,
        confirmation: Annotated[
            str | None, Field(max_length=64, description="the confirmation code the preview showed")
        ] = None,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        user = subject(api, user_id)
        criteria: dict[str, Any] = {}
        if (
            min_similarity is not None and min_relevance is None
        ):  # the deprecated name, as the server reads it
            min_relevance = max(FORGET_MIN_RELEVANCE, min_similarity)
        for key, value in (
            ("query", query),
            ("min_relevance", min_relevance),
            ("topic", topic),
            ("session_id", session_id),
            ("before", before),
            ("after", after),
        ):
            if value is not None:
                criteria[key] = value
        # the preview first, always: a delete goes ahead only for the very memories a preview showed
        shown = await call(api.forget(user, {**criteria, "dry_run": True}))
        ids: list[str] = shown["ids"]
        code = forget_confirmation(user, ids)
        confirmed = expected_count == len(ids) and confirmation == code
        if dry_run or not ids or not confirmed:
            preview: dict[str, Any] = {
                "count": len(ids),
                "ids": ids,
                "dry_run": True,
                "memories": [brief(m) for m in shown.get("memories") or []],
                "confirmation": code,
            }
            if not dry_run and ids:
                why = (
                    "a delete needs the count and the confirmation code of a preview"
                    if confirmation is None or expected_count is None
                    else "expected_count or confirmation differs from this preview (what matches may have "
                    "changed since)"
                )
                preview["note"] = (
                    f"nothing was forgotten: {why}. Show these {len(ids)} memories to the user, and if "
                    "they agree call forget again with the same criteria, dry_run=false, "
                    f'expected_count={len(ids)}, confirmation="{code}"'
                )
            return preview
        # the service deletes only while the count is still the one previewed (else a 422 error)
        out = await call(api.forget(user, {**criteria, "dry_run": False, "expected_count": len(ids)}))
        return {"count": out["count"], "ids": out["ids"], "dry_run": False}


def _delete_memory(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="Delete one memory by id. It stays restorable for a grace period (list_deleted, "
        "restore_memory), then is gone for good. Example: memory_id from a recall result (删除这条记忆 / "
        "delete this memory)."
    )
    async def delete_memory(
        ctx: Context,
        memory_id: Annotated[
            str, Field(description=f"the id of one memory, as a recall or list result gave it ({ID_RULE})")
        ],
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        await call(api.delete(subject(api, user_id), memory_id))
        return {"deleted": memory_id}


def _list_deleted(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="List the user's deleted and forgotten memories that can still be restored, most "
        "recently deleted first, each with deleted_at, restorable_until and how (deleted or forgotten). "
        "Example: after 我刚才删错了 / I deleted that by mistake, find it here, then restore_memory."
    )
    async def list_deleted(
        ctx: Context,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        offset: Annotated[int, Field(ge=0, le=1_000_000)] = 0,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        out = await call(api.deleted(subject(api, user_id), {"limit": limit, "offset": offset}))
        keep = ("deleted_at", "restorable_until", "how")
        return {
            "total": out["total"],
            "grace_seconds": out["grace_seconds"],
            "items": [{**brief(m), **{k: m[k] for k in keep}} for m in out["items"]],
        }


def _restore_memory(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="Restore one deleted or forgotten memory by id (same id), recalled again at once. "
        "Only while list_deleted shows it; otherwise a not-found error. Example: memory_id from "
        "list_deleted (恢复这条记忆 / restore this memory)."
    )
    async def restore_memory(
        ctx: Context,
        memory_id: Annotated[str, Field(description=f"the id list_deleted gave ({ID_RULE})")],
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        out = await call(api.restore(subject(api, user_id), memory_id))
        return {**brief(out), "restored": True}


def _update_memory(server: MCPServer, api_of: ApiOf) -> None:
    @server.tool(
        description="Correct one memory: new content (the old text stays in its history and is no longer "
        "recalled), importance (0-1), pinned (never archived), topic, or valid_to (no longer true since, "
        'ISO 8601). Example: memory_id from recall, content="我搬到苏州了 / I moved to Suzhou". Pass '
        "`version` from an earlier read to refuse the edit if the memory changed since (412); without it "
        "the current version is read first."
    )
    async def update_memory(
        ctx: Context,
        memory_id: Annotated[str, Field(description=f"the memory to correct ({ID_RULE})")],
        content: Annotated[str | None, Field(min_length=1, max_length=32_000)] = None,
        importance: Annotated[float | None, Field(ge=0, le=1)] = None,
        pinned: bool | None = None,
        topic: Annotated[str | None, Field(min_length=1, max_length=64)] = None,
        valid_to: Annotated[str | None, Field(description="no longer true since (ISO 8601)")] = None,
        version: Annotated[str | None, Field(description="the version read (GET's ETag)")] = None,
        user_id: UserId = None,
    ) -> dict[str, Any]:
        api = api_of(ctx)
        who = subject(api, user_id)
        given = {"content": content, "importance": importance, "pinned": pinned, "topic": topic}
        body = {k: v for k, v in (given | {"valid_to": valid_to}).items() if v is not None}
        if not body:
            raise refused("give content, importance, pinned, topic or valid_to")
        if version is None:
            version = (await call(api.memory(who, memory_id)))["version"]
        out = await call(api.edit(who, memory_id, body, version))
        return {**brief(out), "version": out["version"], "pinned": out.get("pinned")}
