"""The MCP server: tools and resources over mnemo's API (`MnemoApi`). Descriptions are English with
Chinese examples; a refused call is an MCP error whose `code` is the HTTP status mnemo answered with
and whose `data.error` is mnemo's error code (`forbidden`, `validation_error`, `rate_limited`, ...)."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from app import __version__
from app.mcp.api import ApiError, MnemoApi, token_problem
from app.mcp.rules import (
    FORGET_LOWEST_RELEVANCE,
    FORGET_MIN_RELEVANCE,
    FORGET_MIN_SIMILARITY,
    ID_RULE,
    TAG_RULE,
    TAGS_MAX,
)

ApiOf = Callable[[Context], MnemoApi]
T = TypeVar("T")
DEFAULT_SESSION = "mcp"

INSTRUCTIONS = """mnemo is the user's long-term memory. Call `recall` before answering anything that may
depend on what the user said before (where they live, their preferences, their projects), and
`remember` when they tell you something worth keeping. Both work in Chinese and English:
recall("我住在哪个城市？") finds "I live in Hangzhou" and the other way round when the words overlap.
`forget` previews first: show the user what it lists, and forget for good only when they agree, with the
count and the confirmation code that preview gave."""

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


def _mcp_error(err: ApiError) -> MCPError:
    data = {"error": err.code, "status": err.status, "detail": err.detail}
    if err.request_id:
        data["request_id"] = err.request_id
    return MCPError(code=err.status, message=f"{err.code}: {err.detail}", data=data)


async def _call(fn: Awaitable[T]) -> T:
    try:
        return await fn
    except ApiError as err:
        raise _mcp_error(err) from err


def _brief(m: dict[str, Any]) -> dict[str, Any]:
    keep = ("id", "content", "created_at", "session_id", "source", "topic", "tier", "importance")
    out = {k: m.get(k) for k in keep}
    for extra in ("relevance", "score", "why"):  # search hits; a forget preview's reason
        if extra in m:
            out[extra] = m[extra]
    return out


def forget_confirmation(user_id: str, ids: list[str]) -> str:
    """The code a forget preview shows and its delete must name: a digest of whose memories and which
    (sorted) ids. Not a secret: an agent has it only from a preview, so it cannot delete unseen."""
    digest = hashlib.sha256("\n".join([user_id, *sorted(ids)]).encode()).hexdigest()
    return digest[:16]


def build_server(api_of: ApiOf) -> MCPServer:
    """The tools and resources; `api_of` gives the API client of the call's caller (per HTTP request,
    or the one stdio client)."""
    server: MCPServer = MCPServer("mnemo", instructions=INSTRUCTIONS, version=__version__)

    def subject(api: MnemoApi, user_id: str | None) -> str:
        # only an absent user_id means "the token's user": an empty or malformed one is refused by the
        # API client, never silently turned into another target
        if user_id is None:
            if (problem := token_problem(api.user_id)) is not None:
                raise _mcp_error(ApiError(401, "invalid_token", problem))
            return api.user_id
        return user_id

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
            detail = "give content or messages"
            raise _mcp_error(ApiError(422, "validation_error", detail))
        out = await _call(api.ingest(subject(api, user_id), session_id, batch, time_zone))
        return {"stored": out["stored"], "memories": [_brief(m) for m in out["memories"]]}

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
        out = await _call(api.search(subject(api, user_id), body))
        return {"results": [_brief(m) for m in out["results"]]}

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
        out = await _call(api.list(subject(api, user_id), params))
        return {"total": out["total"], "items": [_brief(m) for m in out["items"]]}

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
        shown = await _call(api.forget(user, {**criteria, "dry_run": True}))
        ids: list[str] = shown["ids"]
        code = forget_confirmation(user, ids)
        confirmed = expected_count == len(ids) and confirmation == code
        if dry_run or not ids or not confirmed:
            preview: dict[str, Any] = {
                "count": len(ids),
                "ids": ids,
                "dry_run": True,
                "memories": [_brief(m) for m in shown.get("memories") or []],
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
        out = await _call(api.forget(user, {**criteria, "dry_run": False, "expected_count": len(ids)}))
        return {"count": out["count"], "ids": out["ids"], "dry_run": False}

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
        await _call(api.delete(subject(api, user_id), memory_id))
        return {"deleted": memory_id}

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
        out = await _call(api.deleted(subject(api, user_id), {"limit": limit, "offset": offset}))
        keep = ("deleted_at", "restorable_until", "how")
        return {
            "total": out["total"],
            "grace_seconds": out["grace_seconds"],
            "items": [{**_brief(m), **{k: m[k] for k in keep}} for m in out["items"]],
        }

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
        out = await _call(api.restore(subject(api, user_id), memory_id))
        return {**_brief(out), "restored": True}

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
            raise _mcp_error(
                ApiError(422, "validation_error", "give content, importance, pinned, topic or valid_to")
            )
        if version is None:
            version = (await _call(api.memory(who, memory_id)))["version"]
        out = await _call(api.edit(who, memory_id, body, version))
        return {**_brief(out), "version": out["version"], "pinned": out.get("pinned")}

    @server.tool(
        description="The user's profile: what they said of themself (occupation, employer, home, family, "
        "goals, preferences, devices, diet, pets), current and past, each with tags in Chinese and English "
        "(#职业_教师 / #occupation_teacher) that recall and list_memories filter on, and a one-line summary "
        "in both languages. Example: before answering 我适合什么工作？ / what should I cook tonight?."
    )
    async def profile(ctx: Context, user_id: UserId = None) -> dict[str, Any]:
        api = api_of(ctx)
        out: dict[str, Any] = await _call(api.profile(subject(api, user_id)))
        return out

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
        out: dict[str, Any] = await _call(api.entities(subject(api, user_id), params))
        return out

    @server.tool(
        description="One entity: its aliases, its relations current and past (each with the memory it came "
        'from) and the memories behind it. Examples: entity_id="kin:sister" (我妹妹 / my sister: answers '
        'with the person once named), entity_id="doc:q-2024-031".'
    )
    async def read_entity(ctx: Context, entity_id: EntityId, user_id: UserId = None) -> dict[str, Any]:
        api = api_of(ctx)
        out = await _call(api.entity(subject(api, user_id), entity_id))
        out["memory_items"] = [_brief(m) for m in out.get("memory_items", [])]
        return dict(out)

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
            listed: dict[str, Any] = await _call(api.merges(who))
            return listed
        if source is None or target is None:
            raise _mcp_error(
                ApiError(422, "validation_error", "give both source and target (请同时给出两个实体)")
            )
        merged: dict[str, Any] = await _call(api.merge(who, source, target))
        return merged

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
        out: dict[str, Any] = await _call(api.split(subject(api, user_id), merge_id))
        return out

    @server.resource(
        "mnemo://sessions/{session_id}/summary",
        name="session_summary",
        description="One session's rolling summary and mode, e.g. mnemo://sessions/s1/summary (会话摘要).",
        mime_type="application/json",
    )
    async def session_summary(session_id: str, ctx: Context) -> dict[str, Any]:
        api = api_of(ctx)
        state = await _call(api.session(api.user_id, session_id))
        summary = state.get("summary") or {}
        return {
            "session_id": session_id,
            "summary": summary.get("summary"),
            "last_update": summary.get("last_update"),
            "mode": state.get("mode"),
            "messages_in_buffer": len(state.get("buffer", [])),
        }

    return server
