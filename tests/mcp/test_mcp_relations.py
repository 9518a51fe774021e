"""Relation memory's MCP tools (profile, list_entities, read_entity, merge_entities, split_entities, and
tags on recall and list_memories), in-process over the raw protocol at `/mcp` with relation memory on;
in Chinese and English. A refused call carries mnemo's error code."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from app.settings import Settings
from memory import Embedder
from tests.conftest import AuthHeaders, app_client

pytestmark = pytest.mark.integration


@pytest.fixture
async def mcp(settings: Settings, embedder: Embedder) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings.model_copy(update={"relation_memory": True}), embedder) as (http, _):
        yield http


async def tool(http: httpx.AsyncClient, headers: dict[str, str], name: str, **arguments: Any) -> Any:
    """The tool's structured answer, or its JSON-RPC error."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    resp = await http.post(
        "/mcp", json=body, headers={**headers, "Accept": "application/json, text/event-stream"}
    )
    assert resp.status_code == 200, resp.text
    answer = resp.json()
    if "error" in answer:
        return answer
    result = answer["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]


async def test_profile_entities_merge_and_split_through_mcp(
    mcp: httpx.AsyncClient, auth: AuthHeaders
) -> None:
    me = auth("alice")
    for text in (
        "我是一名小学老师，正在备考雅思",
        "I'm a teacher at a middle school",
        "I had lunch with Kit yesterday",
        "Katherine called about the contract",
    ):
        await tool(mcp, me, "remember", content=text)
    profile = await tool(mcp, me, "profile")
    assert {"#职业_教师", "#occupation_teacher", "#目标_备考雅思", "#goal_ielts"} <= set(profile["tags"])
    listed = await tool(mcp, me, "list_memories", tags=["#职业_教师", "#goal_ielts"])
    assert [m["content"] for m in listed["items"]] == ["我是一名小学老师，正在备考雅思"]
    recalled = await tool(mcp, me, "recall", query="teacher", min_relevance=0, tags=["#occupation_teacher"])
    assert {m["content"] for m in recalled["results"]} == {
        "我是一名小学老师，正在备考雅思",
        "I'm a teacher at a middle school",
    }
    people = await tool(mcp, me, "list_entities", kind="person")
    assert {"person:kit", "person:katherine"} <= {e["id"] for e in people["items"]}
    merge = await tool(mcp, me, "merge_entities", source="person:kit", target="person:katherine")
    assert merge["id"].startswith("mg-")
    one = await tool(mcp, me, "read_entity", entity_id="person:kit")
    assert one["id"] == "person:katherine"
    assert len(one["memory_items"]) == 2
    assert [m["id"] for m in (await tool(mcp, me, "merge_entities"))["items"]] == [merge["id"]]
    split = await tool(mcp, me, "split_entities", merge_id=merge["id"])
    assert split["source"] == "person:kit"
    assert (await tool(mcp, me, "read_entity", entity_id="person:kit"))["id"] == "person:kit"


@pytest.mark.parametrize(
    ("name", "arguments", "status", "code"),
    [
        ("split_entities", {"merge_id": "mg-0123456789abcdef"}, 404, "not_found"),
        ("split_entities", {"merge_id": "mg-nothex"}, 422, "validation_error"),
        ("split_entities", {"merge_id": ".."}, 422, "validation_error"),
        ("read_entity", {"entity_id": "a{b}"}, 422, "validation_error"),
        ("read_entity", {"entity_id": "person:nobody"}, 404, "not_found"),
        ("merge_entities", {"source": "person:kit"}, 422, "validation_error"),
        ("merge_entities", {"source": "person:kit", "target": "person:kit"}, 422, "validation_error"),
        ("list_memories", {"tags": ["#爱好_下棋"]}, 422, "validation_error"),
        ("profile", {"user_id": "bob"}, 403, "forbidden"),
    ],
)
async def test_what_the_api_refuses_is_an_mcp_error_with_its_code(
    mcp: httpx.AsyncClient, auth: AuthHeaders, name: str, arguments: dict[str, Any], status: int, code: str
) -> None:
    me = auth("alice")
    await tool(mcp, me, "remember", content="I had lunch with Kit yesterday")
    answer = await tool(mcp, me, name, **arguments)
    assert answer["error"]["code"] == status, answer
    assert answer["error"]["data"]["error"] == code
