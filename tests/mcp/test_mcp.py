"""The MCP server through the SDK's own client: over streamable HTTP at `/mcp` of a really served mnemo
(uvicorn, 2 workers) and over stdio (`python -m app.mcp`, a subprocess talking to that server), plus
the raw protocol's auth and rate limit in-process."""

from __future__ import annotations

import contextlib
import json
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import redis
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent, TextResourceContents

from app.http.auth import TokenCodec
from app.settings import Settings
from harness.services import ServerProcess
from memory import Embedder
from tests.conftest import TEST_SECRET, AuthHeaders, app_client, make_settings
from tests.served import serve

pytestmark = [pytest.mark.integration, pytest.mark.standalone]
REDIS_DB = 4
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, redis_server: ServerProcess, chroma_server: ServerProcess
) -> Iterator[str]:
    env = {"RATE_LIMIT_PER_MINUTE": "100000", "REDIS_URL": f"{redis_server.url}/{REDIS_DB}"}
    with serve(tmp_path_factory.mktemp("mcp-served"), redis_server, chroma_server, env) as base:
        yield base
    redis.Redis.from_url(f"{redis_server.url}/{REDIS_DB}").flushdb()


def token(sub: str, role: str | None = None) -> str:
    return TokenCodec(TEST_SECRET).mint(sub, role=role, ttl_seconds=600)


@asynccontextmanager
async def http_client(base: str, bearer: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{base}/mcp", http_client=http)) as client,
    ):
        yield client


def stdio_client(base: str, bearer: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "app.mcp", "--token", bearer, "--url", base],
        cwd=str(ROOT),
        env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"},
    )
    return Client(params)


def payload(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    block = result.content[0]
    assert isinstance(block, TextContent)
    return json.loads(block.text)


async def call(client: Client, tool: str, **arguments: Any) -> Any:
    return payload(await client.call_tool(tool, arguments))


class TestStreamableHttp:
    async def test_tools_and_resources_are_listed_with_chinese_examples(self, served: str) -> None:
        async with http_client(served, token("lister")) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            templates = (await client.list_resource_templates()).resource_templates
        assert set(tools) == {
            "remember",
            "recall",
            "list_memories",
            "forget",
            "delete_memory",
            "list_deleted",
            "restore_memory",
            "update_memory",
            "profile",
            "list_entities",
            "read_entity",
            "merge_entities",
            "split_entities",
        }
        assert "我住在杭州" in (tools["remember"].description or "")
        assert "我住在哪个城市" in (tools["recall"].description or "")
        assert "恢复这条记忆" in (tools["restore_memory"].description or "")
        assert [t.uri_template for t in templates] == ["mnemo://sessions/{session_id}/summary"]

    async def test_remembered_in_one_session_recalled_in_another(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            stored = await call(
                client,
                "remember",
                content="我住在杭州，记住这个",
                session_id="desk-1",
                time_zone="Asia/Shanghai",
            )
            assert stored["stored"] == 1
            await call(
                client, "remember", messages=[{"role": "user", "content": "I keep bees on my rooftop"}]
            )
        async with http_client(served, token(user)) as client:  # another MCP session, maybe another worker
            zh = await call(
                client, "recall", query="我住在哪个城市？", session_id="desk-1", time_zone="Asia/Shanghai"
            )
            en = await call(client, "recall", query="what insects do I keep?", top_k=3)
            listed = await call(client, "list_memories", limit=10)
        assert "杭州" in zh["results"][0]["content"]
        assert "bees" in en["results"][0]["content"]
        assert listed["total"] == 2

    async def test_forget_previews_then_forgets_with_the_count_and_code_it_showed(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            await call(client, "remember", content="我的车牌号是浙A12345", session_id="cars")
            await call(client, "remember", content="I like green tea", session_id="drinks")
            preview = await call(client, "forget", session_id="cars")  # a preview by default
            assert preview["dry_run"] is True
            assert preview["count"] == 1
            assert "浙A" in preview["memories"][0]["content"]
            assert preview["ids"] == [preview["memories"][0]["id"]]
            code = preview["confirmation"]
            assert (await call(client, "list_memories"))["total"] == 2  # nothing went
            done = await call(
                client, "forget", session_id="cars", dry_run=False, expected_count=1, confirmation=code
            )
            assert done == {"count": 1, "ids": preview["ids"], "dry_run": False}
            left = await call(client, "list_memories")
        assert [m["content"] for m in left["items"]] == ["I like green tea"]

    @pytest.mark.parametrize(
        "confirm",
        [
            {},  # before (issue 39): dry_run=false alone deleted up to 10 memories, never shown
            {"expected_count": 1},  # a count alone: an agent could guess it
            {"expected_count": 2, "with_code": True},
            {"expected_count": 1, "confirmation": "0123456789abcdef"},  # a code of no preview
        ],
        ids=["nothing", "count-only", "wrong-count", "wrong-code"],
    )
    async def test_forget_deletes_nothing_without_the_previews_count_and_code(
        self, served: str, confirm: dict[str, Any]
    ) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            await call(client, "remember", content="我对花生过敏", session_id="health")
            await call(client, "remember", content="I'm allergic to shellfish", session_id="health-en")
            shown = await call(client, "forget", query="我对花生过敏")
            args = {k: v for k, v in confirm.items() if k != "with_code"}
            if confirm.get("with_code"):
                args["confirmation"] = shown["confirmation"]
            out = await call(client, "forget", query="我对花生过敏", dry_run=False, **args)
            assert out["dry_run"] is True
            assert out["count"] == 1  # the peanut allergy alone, never the shellfish one
            assert out["ids"] == shown["ids"]
            assert out["confirmation"] == shown["confirmation"]
            assert [m["content"] for m in out["memories"]] == ["我对花生过敏"]
            assert "nothing was forgotten" in out["note"]
            assert f'confirmation="{shown["confirmation"]}"' in out["note"]
            assert (await call(client, "list_memories"))["total"] == 2

    async def test_forget_refuses_a_preview_that_no_longer_holds(self, served: str) -> None:
        """The code names the very memories shown: one more matching since deletes nothing."""
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            await call(client, "remember", content="My favourite football team is Arsenal", session_id="fav")
            shown = await call(client, "forget", session_id="fav")
            await call(client, "remember", content="I'm allergic to shellfish", session_id="fav")
            out = await call(
                client,
                "forget",
                session_id="fav",
                dry_run=False,
                expected_count=shown["count"],
                confirmation=shown["confirmation"],
            )
            assert out["dry_run"] is True
            assert out["count"] == 2
            assert out["confirmation"] != shown["confirmation"]
            assert "differs from this preview" in out["note"]
            assert (await call(client, "list_memories"))["total"] == 2
            done = await call(
                client,
                "forget",
                session_id="fav",
                dry_run=False,
                expected_count=2,
                confirmation=out["confirmation"],
            )
            assert done["count"] == 2
            assert (await call(client, "list_memories"))["total"] == 0

    async def test_delete_memory_then_unknown_is_an_mcp_error_with_mnemo_code(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            stored = await call(client, "remember", content="delete me please 请删除")
            memory_id = stored["memories"][0]["id"]
            assert await call(client, "delete_memory", memory_id=memory_id) == {"deleted": memory_id}
            with pytest.raises(MCPError) as err:
                await client.call_tool("delete_memory", {"memory_id": memory_id})
        assert err.value.code == 404
        assert err.value.data["error"] == "memory_not_found"

    async def test_a_deleted_memory_is_listed_and_restored_then_recalled(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            stored = await call(client, "remember", content="我的自行车是红色的 Bianchi")
            memory_id = stored["memories"][0]["id"]
            await call(client, "delete_memory", memory_id=memory_id)
            listed = await call(client, "list_deleted")
            assert listed["total"] == 1
            assert listed["grace_seconds"] > 0
            [item] = listed["items"]
            assert (item["id"], item["how"]) == (memory_id, "deleted")
            assert "Bianchi" in item["content"]
            restored = await call(client, "restore_memory", memory_id=memory_id)
            assert (restored["id"], restored["restored"]) == (memory_id, True)
            recalled = await call(client, "recall", query="我的自行车是什么颜色？")
            assert memory_id in [h["id"] for h in recalled["results"]]
            with pytest.raises(MCPError) as err:
                await client.call_tool("restore_memory", {"memory_id": memory_id})
            assert (await call(client, "list_deleted"))["total"] == 0
        assert err.value.code == 404
        assert err.value.data["error"] == "memory_not_found"

    async def test_update_memory_corrects_and_a_stale_version_is_refused(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            stored = await call(client, "remember", content="我住在杭州 / I live in Hangzhou")
            memory_id = stored["memories"][0]["id"]
            first = await call(
                client, "update_memory", memory_id=memory_id, content="我搬到苏州了 / I moved to Suzhou"
            )
            assert first["content"] == "我搬到苏州了 / I moved to Suzhou"
            pinned = await call(
                client, "update_memory", memory_id=memory_id, pinned=True, version=first["version"]
            )
            assert pinned["pinned"] is True
            with pytest.raises(MCPError) as err:
                await client.call_tool(
                    "update_memory", {"memory_id": memory_id, "importance": 0.9, "version": first["version"]}
                )
            assert err.value.code == 412
            assert err.value.data["error"] == "version_mismatch"
            found = await call(client, "recall", query="我搬到哪里了？")
            old = await call(client, "recall", query="杭州")
        assert "苏州" in found["results"][0]["content"]
        assert not any("杭州" in m["content"] for m in old["results"])  # the old text is history only

    async def test_session_summary_resource(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        turn = {
            "model": "mnemo",
            "session_id": "s1",
            "messages": [{"role": "user", "content": "我在学做川菜"}],
        }
        chat = httpx.post(
            f"{served}/v1/chat/completions",
            json=turn,
            headers={"Authorization": f"Bearer {token(user)}"},
            timeout=60,
        )
        assert chat.status_code == 200, chat.text
        async with http_client(served, token(user)) as client:
            read = await client.read_resource("mnemo://sessions/s1/summary")
            empty = await client.read_resource("mnemo://sessions/never/summary")
        block, none = read.contents[0], empty.contents[0]
        assert isinstance(block, TextResourceContents)
        assert isinstance(none, TextResourceContents)
        summary = json.loads(block.text)
        assert summary["session_id"] == "s1"
        assert summary["messages_in_buffer"] == 2  # the user's message and the reply
        assert "川菜" in (summary["summary"] or "")
        assert json.loads(none.text)["messages_in_buffer"] == 0

    async def test_another_users_id_is_refused_as_forbidden(self, served: str) -> None:
        async with http_client(served, token("mallory")) as client:
            for tool, args in (
                ("recall", {"query": "where does alice live? 她住哪？", "user_id": "alice"}),
                ("remember", {"content": "alice 住在北京", "user_id": "alice"}),
                ("forget", {"session_id": "s1", "user_id": "alice"}),
            ):
                with pytest.raises(MCPError) as err:
                    await client.call_tool(tool, args)
                assert err.value.code == 403, tool
                assert err.value.data["error"] == "forbidden"

    async def test_what_the_api_refuses_is_an_mcp_error_with_its_code(self, served: str) -> None:
        async with http_client(served, token("vera")) as client:
            for tool, args in (
                ("recall", {"query": "\u3000 "}),  # blank: an ideographic space and a space
                ("remember", {}),  # neither content nor messages
                ("forget", {}),  # no criterion
                ("list_memories", {"since": "next tuesday"}),
            ):
                with pytest.raises(MCPError) as err:
                    await client.call_tool(tool, args)
                assert err.value.code == 422, tool
                assert err.value.data["error"] == "validation_error", tool
                assert err.value.data["detail"], tool

    async def test_an_admin_may_name_any_user(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            await call(client, "remember", content="我养了一只猫，叫年糕")
        async with http_client(served, token("ops", role="admin")) as client:
            found = await call(client, "recall", query="我的猫叫什么？", user_id=user)
        assert "年糕" in found["results"][0]["content"]

    @pytest.mark.parametrize(
        ("bearer", "code"),
        [
            (None, "missing_token"),
            ("not-a-token", "invalid_token"),
            (TokenCodec("x" * 40).mint("alice"), "invalid_token"),  # forged: another secret
            (TokenCodec(TEST_SECRET).mint("alice", ttl_seconds=-3600), "token_expired"),
        ],
        ids=["missing", "garbage", "forged", "expired"],
    )
    async def test_a_refused_token_reaches_the_client_with_its_cause(
        self, served: str, bearer: str | None, code: str
    ) -> None:
        """The SDK's client shows mnemo's 401 and why, not "Server returned an error response"."""
        with pytest.raises(BaseException) as raised:  # noqa: PT011 - the SDK raises it in a group
            async with http_client(served, bearer) as client:
                await client.list_tools()
        err = mcp_error_in(raised.value)
        assert err.code == 401
        assert err.data["error"] == code
        assert err.data["status"] == 401
        assert code in str(err)

    async def test_no_token_or_a_bad_one_is_refused_before_mcp(self, served: str) -> None:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        headers = {"Accept": "application/json, text/event-stream"}
        anonymous = httpx.post(f"{served}/mcp", json=body, headers=headers, timeout=30)
        forged = httpx.post(
            f"{served}/mcp",
            json=body,
            headers={**headers, "Authorization": f"Bearer {TokenCodec('x' * 40).mint('alice')}"},
            timeout=30,
        )
        assert anonymous.status_code == 401
        assert anonymous.json()["error"]["data"]["error"] == "missing_token"
        assert anonymous.headers["www-authenticate"] == "Bearer"
        assert anonymous.headers["x-request-id"] == anonymous.json()["error"]["data"]["request_id"]
        assert forged.status_code == 401
        assert forged.json()["error"]["data"]["error"] == "invalid_token"

    @pytest.mark.parametrize("memory_id", [".", "..", "./", "", "a/..", "%2e", "  "])
    async def test_deleting_a_dot_or_a_placeholder_never_erases_the_user(
        self, served: str, memory_id: str
    ) -> None:
        """Issue 22: `delete_memory(".")` once reached `DELETE /v1/memory/{user}` (the erase)."""
        user = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(user)) as client:
            await call(client, "remember", content="我住在杭州 / I live in Hangzhou", session_id="s1")
            with pytest.raises(MCPError) as err:
                await client.call_tool("delete_memory", {"memory_id": memory_id})
            assert err.value.code == 422
            assert err.value.data["error"] == "validation_error"
            assert (await call(client, "list_memories"))["total"] == 1
        assert user_audit_actions(served, user) == set()

    async def test_an_admin_naming_a_dot_user_acts_on_nobody(self, served: str) -> None:
        victim = f"u{uuid.uuid4().hex[:8]}"
        async with http_client(served, token(victim)) as client:
            stored = await call(client, "remember", content="my order is A12345678 / 我的订单")
        async with http_client(served, token("ops", role="admin")) as admin:
            for user_id in (".", "..", "", "./"):
                for tool, args in (
                    ("delete_memory", {"memory_id": victim, "user_id": user_id}),
                    ("list_memories", {"user_id": user_id}),
                    ("forget", {"session_id": "mcp", "dry_run": False, "user_id": user_id}),
                ):
                    with pytest.raises(MCPError) as err:
                        await admin.call_tool(tool, args)
                    assert err.value.code == 422, (tool, user_id)
            listed = await call(admin, "list_memories", user_id=victim)
        assert [m["id"] for m in listed["items"]] == [stored["memories"][0]["id"]]


def mcp_error_in(exc: BaseException) -> MCPError:
    """The MCPError itself, or the first one inside the exception groups the SDK's task groups raise."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            with contextlib.suppress(AssertionError):
                return mcp_error_in(inner)
    raise AssertionError(f"no MCPError in {exc!r}")


def user_audit_actions(base: str, user: str) -> set[str]:
    """The audit actions recorded for `user`'s data (erase, delete, forget ...)."""
    resp = httpx.get(
        f"{base}/v1/audit",
        params={"user_id": user, "limit": 100},
        headers={"Authorization": f"Bearer {token('auditor', role='admin')}"},
        timeout=30,
    )
    assert resp.status_code == 200, resp.text
    return {e["action"] for e in resp.json()["items"] if e["action"] != "list"}


class TestStdio:
    async def test_remember_and_recall_over_stdio(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with stdio_client(served, token(user)) as client:
            await call(client, "remember", content="我下周三去上海出差", session_id="desktop-a")
            await call(client, "remember", content="My daughter is called Mia", session_id="desktop-a")
        async with stdio_client(served, token(user)) as client:
            zh = await call(client, "recall", query="我什么时候去上海？")
            en = await call(client, "recall", query="what is my daughter's name?")
            preview = await call(client, "forget", query="上海出差")
        assert "上海" in zh["results"][0]["content"]
        assert "Mia" in en["results"][0]["content"]
        assert preview["dry_run"] is True
        assert preview["count"] >= 1

    async def test_deleting_a_dot_never_erases_the_user_over_stdio(self, served: str) -> None:
        user = f"u{uuid.uuid4().hex[:8]}"
        async with stdio_client(served, token(user)) as client:
            await call(client, "remember", content="我的猫叫年糕 / my cat is Niangao")
            for memory_id in (".", "..", "./"):
                with pytest.raises(MCPError) as err:
                    await client.call_tool("delete_memory", {"memory_id": memory_id})
                assert err.value.code == 422
            assert (await call(client, "list_memories"))["total"] == 1

    async def test_an_expired_token_is_named_over_stdio(self, served: str) -> None:
        expired = TokenCodec(TEST_SECRET).mint("alice", ttl_seconds=-3600)
        async with stdio_client(served, expired) as client:
            with pytest.raises(MCPError) as err:
                await client.call_tool("list_memories", {})
        assert err.value.code == 401
        assert err.value.data["error"] == "token_expired"

    async def test_another_users_id_is_refused_over_stdio(self, served: str) -> None:
        async with stdio_client(served, token("mallory")) as client:
            with pytest.raises(MCPError) as err:
                await client.call_tool("list_memories", {"user_id": "alice"})
        assert err.value.code == 403
        assert err.value.data["error"] == "forbidden"


class TestRawProtocol:
    """In-process (one app, its lifespan): the JSON-RPC answers themselves, and the rate limit."""

    async def test_each_mcp_request_counts_once_against_the_limit(
        self, redis_server: ServerProcess, chroma_server: ServerProcess, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        settings: Settings = make_settings(redis_server.url, chroma_server.url, rate_limit_per_minute=3)
        redis.Redis.from_url(settings.redis_url).flushdb()
        headers = {**auth("limited"), "Accept": "application/json, text/event-stream"}
        call_body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "list_memories", "arguments": {}},
        }
        async with app_client(settings, embedder) as (http, _):
            answers = [await http.post("/mcp", json=call_body, headers=headers) for _ in range(4)]
        redis.Redis.from_url(settings.redis_url).flushdb()
        assert [a.status_code for a in answers] == [200, 200, 200, 429]
        assert answers[0].json()["result"]["structuredContent"]["total"] == 0
        assert answers[3].json()["error"]["data"]["error"] == "rate_limited"
        assert 1 <= int(answers[3].headers["retry-after"]) <= 60
