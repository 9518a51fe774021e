"""Issue #12, input validation and contract: one id rule everywhere, well-formed Unicode in every body,
stream ids, strict JSON bodies and token claims, and streams that always end. Real Redis, real Chroma,
the real embedding model; the upstream LLM is the fake one."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import jwt
import pytest

from app.http.auth import TokenCodec
from app.settings import Settings
from harness.services import ServerProcess, free_port
from memory import Embedder, keys
from memory.outbox.stream import Outbox
from tests.conftest import (
    TEST_SECRET,
    AuthHeaders,
    app_client,
    error_code,
    error_detail,
    make_settings,
    redis_of,
)
from tests.fake_llm import FakeUpstream

pytestmark = pytest.mark.integration

JSON = {"content-type": "application/json"}


def raw(body: object) -> bytes:
    """The body as a client library that escapes non-ASCII would send it: lone surrogates become
    `\\udfff` escapes (httpx's own encoder would refuse them)."""
    return json.dumps(body, ensure_ascii=True).encode()


def llm_settings(settings: Settings) -> Settings:
    return settings.model_copy(
        update={"llm_base_url": "http://upstream.test/v1", "llm_model": "fake-model", "llm_summary": False}
    )


async def user_keys(settings: Settings, user: str) -> list[str]:
    """Every Redis key under ids starting with `user` (so `t6nl` finds `t6nl\n`), but the rate limiter's,
    and the outbox entries about them."""
    r = redis_of(settings)
    try:
        pattern = f"{keys.PREFIX}:{{p*}}:u:{{{user}*"
        found = [k async for k in r.scan_iter(pattern) if not k.endswith(":rl")]
        pending: list[Any] = []
        for stream in Outbox.streams():
            entries: Any = await r.xrange(stream)
            pending += entries
        return sorted(found) + [entry_id for entry_id, fields in pending if user in str(fields)]
    finally:
        await r.aclose()


def sse_events(text: str) -> list[str]:
    return [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]


class TestOneIdRule:
    """#12.3: `re.match` with `$` let a trailing newline through in the token's `sub`; the path rule
    refused the same id, so its owner could neither read nor erase what it had written."""

    async def test_token_sub_with_a_trailing_newline_is_refused_and_writes_nothing(
        self, client: httpx.AsyncClient, tokens: TokenCodec, settings: Settings
    ) -> None:
        token = tokens.mint("t6nl\n")
        resp = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "我住在杭州 I live in Hangzhou"}]},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert resp.status_code == 401, resp.text
        assert error_code(resp) == "invalid_token"
        assert await user_keys(settings, "t6nl") == []

    @pytest.mark.parametrize("sub", ["alice\n", "\nalice", "张三", "ali ce", "a{b}", "x" * 129, ""])
    async def test_bad_subjects_are_refused(
        self, client: httpx.AsyncClient, tokens: TokenCodec, sub: str
    ) -> None:
        resp = await client.get(
            "/v1/memory/alice/list", headers={"Authorization": f"Bearer {tokens.mint(sub)}"}
        )
        assert resp.status_code == 401, resp.text
        assert resp.json()["error"] == "invalid_token"

    @pytest.mark.parametrize(
        ("method", "path"),
        [
            ("GET", "/v1/memory/t6nl%0A/list"),
            ("GET", "/v1/memory/t6nl%0A/export"),
            ("DELETE", "/v1/memory/t6nl%0A"),
            ("DELETE", "/v1/memory/alice/mem%0A"),
            ("GET", "/v1/sessions/alice/s%0A"),
            ("GET", "/v1/memory/alice/list?session_id=s%0A"),
            ("GET", "/v1/audit?user_id=t6nl%0A"),
        ],
    )
    async def test_the_same_ids_are_refused_in_paths(
        self, client: httpx.AsyncClient, auth: AuthHeaders, method: str, path: str
    ) -> None:
        resp = await client.request(method, path, headers=auth("root", role="admin"))
        assert resp.status_code == 422, resp.text
        assert resp.json()["error"] == "validation_error"

    @pytest.mark.parametrize(
        "session", ["A\n", "bad{id}", "a b", "x" * 129, "会话一".encode(), "session/1"], ids=repr
    )
    async def test_bad_session_header_is_422_and_writes_nothing(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings, session: str | bytes
    ) -> None:
        resp = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "你好 hello"}]},
            headers=[
                *((k.encode(), v.encode()) for k, v in auth("alice").items()),
                (b"X-Session-ID", session if isinstance(session, bytes) else session.encode()),
            ],
        )
        assert resp.status_code == 422, resp.text
        assert error_code(resp) == "validation_error"
        assert "x-session-id" in error_detail(resp).lower()
        assert await user_keys(settings, "alice") == []

    async def test_good_session_header_still_works(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        resp = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "你好 hello"}]},
            headers={**auth("alice"), "X-Session-ID": "s-1.a@b:c|d+e_f"},
        )
        assert resp.status_code == 200, resp.text
        assert resp.json()["debug"]["session_id"] == "s-1.a@b:c|d+e_f"

    @pytest.mark.parametrize("field", ["session_id", "user_id"])
    async def test_chat_body_ids_with_a_newline_are_refused(
        self, client: httpx.AsyncClient, auth: AuthHeaders, field: str
    ) -> None:
        resp = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "你好 hello"}], field: "alice\n"},
            headers=auth("alice"),
        )
        assert resp.status_code == 422, resp.text

    async def test_message_ids_follow_the_id_rule(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        for mid in ("m1\n", "消息1", "a b"):
            resp = await client.post(
                "/v1/memory/alice/messages",
                json={"session_id": "s1", "messages": [{"role": "user", "content": "我住在杭州", "id": mid}]},
                headers=auth("alice"),
            )
            assert resp.status_code == 422, (mid, resp.text)

    async def test_request_id_with_a_newline_is_replaced(self, client: httpx.AsyncClient) -> None:
        resp = await client.get("/healthz", headers={"X-Request-ID": "trace-1\n"})
        assert resp.headers["x-request-id"] != "trace-1\n"
        assert len(resp.headers["x-request-id"]) == 32


# (route, body) pairs: a lone surrogate in each text field a client can send
SURROGATES: list[tuple[str, dict[str, Any]]] = [
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi \udfff"}]}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "你好 \udfff"}], "stream": True}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "我住在 \ud800 杭州"}]}),
    (
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": [{"type": "text", "text": "你好\udc00"}]}]},
    ),
    (
        "/v1/chat/completions",
        {"messages": [{"role": "system", "content": "be brief \ud83d"}, {"role": "user", "content": "hi"}]},
    ),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi", "name": "Al\udfffice"}]}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "user": "end-user \udfff"}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "stop": ["\udfff"]}),
    (
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "hi"}], "metadata": {"note": "备注\udfff"}},
    ),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "metadata": {"\udfff": "x"}}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "\ude00\ud83d reversed pair"}]}),
    (
        "/v1/memory/alice/messages",
        {"session_id": "s1", "messages": [{"role": "user", "content": "我住在杭州\udfff"}]},
    ),
    (
        "/v1/memory/alice/messages",
        {
            "session_id": "s1",
            "messages": [{"role": "user", "content": "I live in Hangzhou", "name": "\ud800"}],
        },
    ),
    ("/v1/memory/alice/search", {"query": "where do I live \udfff"}),
    ("/v1/memory/alice/search", {"query": "我住在哪", "topic": "旅行\udc00"}),
    ("/v1/memory/alice/forget", {"query": "杭州 \udfff", "dry_run": True}),
    ("/v1/memory/alice/forget", {"topic": "travel\ud800"}),
]


class TestWellFormedUnicode:
    """#12.4: a lone surrogate reached the tokenizer or `content_hash` and answered 500 after the LLM
    call; every text of every body is now checked before anything is done."""

    @pytest.mark.parametrize(
        ("path", "body"), SURROGATES, ids=[f"{p}-{i}" for i, (p, _) in enumerate(SURROGATES)]
    )
    async def test_lone_surrogates_are_422_before_any_work(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        path: str,
        body: dict[str, Any],
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            resp = await client.post(path, content=raw(body), headers={**auth("alice"), **JSON})
            assert resp.status_code == 422, resp.text
            assert error_code(resp) == "validation_error"
            assert "surrogate" in error_detail(resp)
            listed = await client.get("/v1/memory/alice/list", headers=auth("alice"))
        assert upstream.requests == []  # the LLM was never called
        assert listed.json()["total"] == 0
        assert await user_keys(settings, "alice") == []

    @pytest.mark.parametrize("stream", [False, True])
    async def test_a_well_formed_pair_is_accepted(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, stream: bool
    ) -> None:
        upstream = FakeUpstream()
        body = {
            "messages": [{"role": "user", "content": "我喜欢 \U0001f600 I like smileys"}],
            "stream": stream,
        }
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            resp = await client.post(
                "/v1/chat/completions", content=raw(body), headers={**auth("alice"), **JSON}
            )
            assert resp.status_code == 200, resp.text
        assert upstream.chat_requests()[-1]["messages"][-1]["content"] == "我喜欢 \U0001f600 I like smileys"

    @pytest.mark.parametrize("stream", [False, True])
    async def test_a_lone_surrogate_from_the_model_is_replaced(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, stream: bool
    ) -> None:
        """The model is an input too: its text reaches the client, the hash and the store."""
        upstream = FakeUpstream(reply="好的 \udfff noted")
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            resp = await client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "记住我住在杭州 remember"}], "stream": stream},
                headers=auth("alice"),
            )
            assert resp.status_code == 200, resp.text
            if stream:
                events = sse_events(resp.text)
                assert events[-1] == "[DONE]"
                reply = json.loads(events[-2])["response"]
            else:
                reply = resp.json()["response"]
            assert reply.replace(" ", "") == "好的\ufffdnoted"
            state = (await client.get("/v1/sessions/alice/default", headers=auth("alice"))).json()
        assert [m["role"] for m in state["buffer"]] == ["user", "assistant"]

    async def test_anonymous_caller_gets_401_not_the_unicode_error(self, client: httpx.AsyncClient) -> None:
        resp = await client.post(
            "/v1/chat/completions",
            content=raw({"messages": [{"role": "user", "content": "\udfff"}]}),
            headers=JSON,
        )
        assert resp.status_code == 401


class TestStreamsAlwaysEnd:
    """#12.4: a stream that fails after it started ends with an in-band error event and `[DONE]`,
    whatever failed, and the session lock is released."""

    async def _stream(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, upstream: FakeUpstream
    ) -> list[str]:
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            resp = await client.post(
                "/v1/chat/completions",
                json={
                    "messages": [{"role": "user", "content": "我住在杭州 I live in Hangzhou"}],
                    "stream": True,
                },
                headers={**auth("alice"), "X-Session-ID": "S"},
            )
            assert resp.status_code == 200, resp.text
            return sse_events(resp.text)

    async def test_commit_failing_after_the_first_chunk(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        r = redis_of(settings)
        upstream = FakeUpstream()

        async def break_the_session() -> None:
            # the summary's compare-and-set then fails with WRONGTYPE inside the commit transaction
            await r.hset(keys.summary("alice", "S"), "x", "1")

        upstream.after_first_chunk = break_the_session
        try:
            events = await self._stream(settings, embedder, auth, upstream)
            assert events[-1] == "[DONE]"
            error = json.loads(events[-2])["error"]
            assert error["code"] == "internal_error"
            assert "Traceback" not in error["message"]
            assert json.loads(events[1])["choices"][0]["delta"]["content"]  # output had started
            assert await r.exists(keys.lock("alice", "S")) == 0
        finally:
            await r.aclose()

    async def test_upstream_breaking_after_the_first_chunk(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        upstream = FakeUpstream(mode="break_stream")
        events = await self._stream(settings, embedder, auth, upstream)
        assert events[-1] == "[DONE]"
        assert json.loads(events[-2])["error"]["code"] == "upstream_error"
        r = redis_of(settings)
        try:
            assert await r.exists(keys.lock("alice", "S")) == 0
            assert await r.exists(keys.buffer("alice", "S")) == 0  # nothing recorded
        finally:
            await r.aclose()


class TestAuditStreamIds:
    """#12.5: `before` went to XREVRANGE as it came; Redis refused some ids and the answer was 500."""

    @pytest.mark.parametrize(
        "before",
        [
            "0-0",
            "0-00",
            "00-0",
            "99999999999999999999-0",
            "18446744073709551616-0",
            "0-18446744073709551616",
            "01-5",
            "-1-0",
            "1-",
            "1",
            "1-0\n",
            "１-0",  # a full-width digit: \d would take it
        ],
    )
    async def test_invalid_exclusive_ends_are_422(
        self, client: httpx.AsyncClient, auth: AuthHeaders, before: str
    ) -> None:
        resp = await client.get("/v1/audit", params={"before": before}, headers=auth("root", role="admin"))
        assert resp.status_code == 422, resp.text
        assert resp.json()["error"] == "validation_error"

    @pytest.mark.parametrize("before", ["0-1", "1-0", "18446744073709551615-18446744073709551615"])
    async def test_extreme_valid_ends(
        self, client: httpx.AsyncClient, auth: AuthHeaders, before: str
    ) -> None:
        resp = await client.get("/v1/audit", params={"before": before}, headers=auth("root", role="admin"))
        assert resp.status_code == 200, resp.text
        assert resp.json() == {"items": [], "next_before": None}


class TestJsonBodies:
    """#12.7: the body is UTF-8 JSON of bounded depth; everything else is 400 `invalid_json`."""

    @pytest.mark.parametrize(
        "body",
        [
            b'{"query": "\xff\xfe \xe6\x88"}',  # not UTF-8
            json.dumps({"query": "我住在哪 where do I live"}).encode("utf-16"),
            json.dumps({"query": "我住在哪 where do I live"}, ensure_ascii=False).encode("utf-16-le"),
            json.dumps({"query": "我住在哪 where do I live"}, ensure_ascii=False).encode("utf-32"),
            b'{"query": "x", "top_k": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",  # too deep for the parser
            b'{"query": "x", "deep": ' + b"[" * 65 + b"]" * 65 + b"}",  # deeper than the limit
            b"{not json",
        ],
        ids=["latin", "utf16", "utf16le", "utf32", "very-deep", "deep", "broken"],
    )
    async def test_unreadable_bodies(self, client: httpx.AsyncClient, auth: AuthHeaders, body: bytes) -> None:
        resp = await client.post("/v1/memory/alice/search", content=body, headers={**auth("alice"), **JSON})
        assert resp.status_code == 400, resp.text
        assert error_code(resp) == "invalid_json"

    async def test_deep_chat_extras_are_refused(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        deep: Any = "底"
        for _ in range(80):
            deep = {"k": deep}
        resp = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}], "metadata": deep},
            headers=auth("alice"),
        )
        assert resp.status_code == 400, resp.text
        assert error_code(resp) == "invalid_json"

    async def test_utf8_with_and_without_bom_is_read(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        body = json.dumps({"query": "我住在哪 where do I live"}, ensure_ascii=False).encode()
        for content in (body, b"\xef\xbb\xbf" + body):
            resp = await client.post(
                "/v1/memory/alice/search", content=content, headers={**auth("alice"), **JSON}
            )
            assert resp.status_code == 200, resp.text

    async def test_nesting_within_the_limit_is_accepted(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        deep: Any = "ok"
        for _ in range(20):
            deep = {"k": deep}
        resp = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}], "metadata": deep},
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text


class TestTokenClaims:
    """#12.7: PyJWT takes `"exp": "9999999999"` (it calls int()); a NumericDate is a JSON number."""

    @pytest.mark.parametrize(
        "claims",
        [
            {"exp": str(int(time.time()) + 600)},
            {"exp": int(time.time()) + 600, "iat": str(int(time.time()))},
            {"exp": int(time.time()) + 600, "nbf": str(int(time.time()) - 10)},
            {"exp": True},
        ],
        ids=["exp", "iat", "nbf", "bool"],
    )
    async def test_non_numeric_dates_are_401(
        self, client: httpx.AsyncClient, claims: dict[str, object]
    ) -> None:
        token = jwt.encode({"sub": "alice", **claims}, TEST_SECRET, algorithm="HS256")
        resp = await client.get("/v1/memory/alice/list", headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 401, resp.text
        assert resp.json()["error"] in {"invalid_token", "token_expired"}
        assert resp.headers["www-authenticate"] == "Bearer"

    async def test_float_exp_is_a_number_and_accepted(self, client: httpx.AsyncClient) -> None:
        token = jwt.encode({"sub": "alice", "exp": time.time() + 600.5}, TEST_SECRET, algorithm="HS256")
        resp = await client.get("/v1/memory/alice/list", headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 200, resp.text


class TestReadiness:
    @pytest.mark.standalone
    async def test_not_ready_says_when_to_retry(
        self, chroma_server: ServerProcess, embedder: Embedder
    ) -> None:
        settings = make_settings(
            f"redis://127.0.0.1:{free_port()}", chroma_server.url, redis_socket_timeout=0.5
        )
        async with app_client(settings, embedder) as (client, _):
            resp = await client.get("/readyz")
        assert resp.status_code == 503
        assert resp.json()["error"] == "not_ready"
        assert int(resp.headers["retry-after"]) > 0


class TestChatNeedsAUserMessage:
    @pytest.mark.parametrize(
        "messages",
        [
            [{"role": "system", "content": "简短回答 be brief"}],
            [{"role": "assistant", "content": "你好 hello"}],
            [{"role": "user", "content": "\u200b"}],  # zero-width space
            [{"role": "user", "content": "\x00\x07"}],
            [{"role": "user", "content": "\ufeff\u3000"}],  # BOM + ideographic space
            [{"role": "user", "content": [{"type": "text", "text": "\u200d\u2060"}]}],
            [{"role": "user", "content": "hi"}, {"role": "user", "content": "\u200b"}],
        ],
    )
    async def test_no_visible_user_text_is_422(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings, messages: list[dict[str, Any]]
    ) -> None:
        resp = await client.post("/v1/chat/completions", json={"messages": messages}, headers=auth("alice"))
        assert resp.status_code == 422, resp.text
        assert error_code(resp) == "validation_error"
        assert await user_keys(settings, "alice") == []

    async def test_the_published_schema_says_so(self, client: httpx.AsyncClient) -> None:
        schema = (await client.get("/openapi.json")).json()
        messages = schema["components"]["schemas"]["ChatCompletionRequest"]["properties"]["messages"]
        assert messages["contains"]["properties"]["role"] == {"const": "user"}
        assert "user" in messages["description"]

    @pytest.mark.parametrize("content", ["\u200b", "\u3000 \t", ""])
    async def test_blank_messages_are_skipped_and_blank_queries_are_422(
        self, client: httpx.AsyncClient, auth: AuthHeaders, content: str
    ) -> None:
        ingest = await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": "s1", "messages": [{"role": "user", "content": content}]},
            headers=auth("alice"),
        )
        assert ingest.status_code == 200, ingest.text
        assert ingest.json() == {"stored": 0, "memories": [], "skipped": [{"index": 0, "reason": "blank"}]}
        for path, body in (("search", {"query": content}), ("forget", {"query": content})):
            resp = await client.post(f"/v1/memory/alice/{path}", json=body, headers=auth("alice"))
            assert resp.status_code == 422, (path, resp.text)


class TestRealTranscripts:
    async def test_one_invisible_message_does_not_fail_a_batch_of_64(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        """A LongMemEval transcript holds an assistant message that is only U+200B: the other 63 are
        stored, and the answer names the one skipped."""
        messages = [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"第{i}条消息：我养了{i}只猫 / I have {i} cats",
            }
            for i in range(64)
        ]
        messages[17] = {"role": "assistant", "content": "\u200b"}
        messages[40] = {"role": "user", "content": "\u3000\ufeff"}
        resp = await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": "lme", "messages": messages},
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text
        assert resp.json()["skipped"] == [{"index": 17, "reason": "blank"}, {"index": 40, "reason": "blank"}]
        assert resp.json()["stored"] > 0

    async def test_malformed_messages_are_named_all_at_once(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        messages = [{"role": "user", "content": "ok 好"}] * 3
        messages = [*messages, {"role": "robot", "content": "x"}, {"role": "user", "content": "y" * 40_000}]
        resp = await client.post(
            "/v1/memory/alice/messages", json={"session_id": "s", "messages": messages}, headers=auth("alice")
        )
        assert resp.status_code == 422
        detail = resp.json()["detail"]
        assert "messages.3.role" in detail, detail
        assert "messages.4.content" in detail, detail


class TestForgetCriteriaThatCannotBeMeant:
    @pytest.mark.parametrize(
        "body",
        [
            {"query": "我的工作 my job", "min_similarity": -1},
            {"query": "我的工作 my job", "min_similarity": 0},
            {"query": "我的工作 my job", "min_similarity": 0.29},
            {"query": "我的工作 my job", "min_similarity": 1.01},
            {"query": "a", "min_similarity": 0.5},
            {"query": "7"},
            {"query": "?!"},
            {"before": "9999-01-01T00:00:00Z"},
            {"after": "9999-01-01"},
            {"before": 253402300799},
            {"after": "2026-03-01", "before": "2026-02-01"},
            # issue 39: a count is a JSON number, never a string or a boolean (true confirmed a count of 1)
            {"topic": "ids", "dry_run": False, "expected_count": True},
            {"topic": "ids", "dry_run": False, "expected_count": "1"},
            {"topic": "ids", "dry_run": "false", "expected_count": 1},
            {"query": "车牌", "min_relevance": "0.9"},
        ],
    )
    async def test_out_of_range_is_422_and_nothing_goes(
        self, client: httpx.AsyncClient, auth: AuthHeaders, body: dict[str, Any]
    ) -> None:
        stored = await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": "s", "messages": [{"role": "user", "content": "我的车牌号是浙A12345"}]},
            headers=auth("alice"),
        )
        assert stored.status_code == 200
        resp = await client.post("/v1/memory/alice/forget", json=body, headers=auth("alice"))
        assert resp.status_code == 422, resp.text
        assert resp.json()["error"] == "validation_error"
        assert (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()["total"] == 1

    @pytest.mark.parametrize("query", ["猫", "ab", "车牌"])
    async def test_short_queries_that_say_something_are_taken(
        self, client: httpx.AsyncClient, auth: AuthHeaders, query: str
    ) -> None:
        resp = await client.post(
            "/v1/memory/alice/forget", json={"query": query, "dry_run": True}, headers=auth("alice")
        )
        assert resp.status_code == 200, resp.text


class TestStrictNumbers:
    """Issue 39: lax coercion read "5" as 5 and true as 1 where a person must have written a number."""

    @pytest.mark.parametrize(
        "body",
        [{"query": "车", "top_k": "5"}, {"query": "car", "top_k": True}, {"query": "car", "explain": "yes"}],
    )
    async def test_search_numbers_and_flags_are_json_types(
        self, client: httpx.AsyncClient, auth: AuthHeaders, body: dict[str, Any]
    ) -> None:
        resp = await client.post("/v1/memory/alice/search", json=body, headers=auth("alice"))
        assert resp.status_code == 422, resp.text
        assert resp.json()["error"] == "validation_error"

    async def test_a_whole_number_is_still_a_relevance(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        resp = await client.post(
            "/v1/memory/alice/search",
            json={"query": "car", "min_relevance": 0, "top_k": 3},
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text


class TestHugeDateClaims:
    @pytest.mark.parametrize("claim", ["exp", "iat", "nbf"])
    async def test_a_signed_token_with_a_date_of_10_to_the_400_is_401(
        self, client: httpx.AsyncClient, claim: str
    ) -> None:
        now = int(time.time())
        claims: dict[str, object] = {"sub": "alice", "exp": now + 600, "iat": now}
        claims[claim] = 10**400
        token = jwt.encode(claims, TEST_SECRET, algorithm="HS256")
        for method, path in (
            ("GET", "/v1/memory/alice/list"),
            ("GET", "/v1/sessions/alice"),
            ("GET", "/v1/audit"),
        ):
            resp = await client.request(method, path, headers={"Authorization": f"Bearer {token}"})
            assert resp.status_code == 401, (path, resp.text)
            assert resp.json()["error"] == "invalid_token"
