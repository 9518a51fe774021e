"""POST /v1/chat/completions end to end: real Redis, real Chroma, real model, fake upstream LLM."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.composition import build_memory_service, build_store
from app.settings import Settings
from harness.outbox import drain
from harness.services import ServerProcess, start_chroma
from memory import Embedder, keys
from memory.models import Message
from memory.outbox.stream import Outbox, OutboxEntry
from tests.conftest import AuthHeaders, app_client, error_code, flush, make_settings, redis_of
from tests.fake_llm import FakeUpstream

pytestmark = pytest.mark.integration


def llm_settings(settings: Settings, **overrides: Any) -> Settings:
    return settings.model_copy(
        update={"llm_base_url": "http://upstream.test/v1", "llm_model": "fake-model", **overrides}
    )


async def chat(
    client: httpx.AsyncClient,
    auth: AuthHeaders,
    text: str,
    *,
    user: str = "alice",
    session: str = "A",
    **extra: Any,
) -> httpx.Response:
    return await client.post(
        "/v1/chat/completions",
        json={
            "model": "mnemo",
            "messages": [{"role": "user", "content": text}],
            "session_id": session,
            **extra,
        },
        headers=auth(user),
    )


class TestOfflineResponder:
    async def test_reply_shape_and_session_state(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await chat(client, auth, "I live in Hangzhou, remember that", debug=True)
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["object"] == "chat.completion"
        assert body["model"] == "mnemo-offline"
        assert body["id"].startswith("chatcmpl-")
        text = body["choices"][0]["message"]["content"]
        assert "No language model is configured" in text
        assert body["response"] == text
        assert (
            body["usage"]["total_tokens"]
            == body["usage"]["prompt_tokens"] + body["usage"]["completion_tokens"]
        )
        debug = body["debug"]
        assert set(debug) >= {
            "redis_summary_used",
            "chroma_retrieved_count",
            "context_length",
            "total_tokens",
            "memory_ids",
        }
        assert debug["redis_summary_used"] is False

        state = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
        assert [m["role"] for m in state["buffer"]] == ["user", "assistant"]
        assert state["summary"]["version"] == 1
        assert state["summary"]["summary"].startswith("The user said: I live in Hangzhou")
        assert len(state["summary"]["summary"]) <= 200  # SUMMARY_MAX_CHARS
        assert state["slots"]["place"]["value"] == "Hangzhou"
        assert state["actions"][0]["action_type"] in {"set_preference", "chit_chat"}

        second = (await chat(client, auth, "what's the weather like?")).json()
        assert second["debug"]["redis_summary_used"] is True

    async def test_chinese_reply_in_chinese(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        body = (await chat(client, auth, "帮我订明天下午3点去浦东机场的车")).json()
        assert "未配置语言模型" in body["response"]
        state = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
        assert state["slots"]["place"]["value"] == "浦东机场"
        assert state["slots"]["time"]["value"] == "15:00"
        assert "date" in state["slots"]
        assert state["summary"]["summary"].startswith("用户请求：订明天下午3点")


class TestWhatReachesLongTermMemory:
    @pytest.mark.parametrize("stream", [False, True])
    async def test_offline_replies_stay_in_the_session_only(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings, stream: bool
    ) -> None:
        """The offline responder's replies only list what was recalled: stored, they would come back
        as memories of memories. They stay in the session buffer, never in long-term memory, not
        even through a confirmation ("好的" / "ok") that would make the reply before it a fact."""
        said = ["我住在杭州，记住这个", "好的，谢谢", "I live in Hangzhou, remember that", "ok, thanks"]
        for text in said:
            resp = await chat(client, auth, text, stream=stream)
            assert resp.status_code == 200, resp.text
        await drain(settings)
        listed = (await client.get("/v1/memory/alice/list?limit=100", headers=auth("alice"))).json()
        # the statements, without their anchors ("记住这个" / "remember that" pin a memory, issue 40); "好的，
        # 谢谢" / "ok, thanks" are small talk (the write policy's gate, issue 24)
        assert sorted(m["content"] for m in listed["items"]) == sorted(["我住在杭州", "I live in Hangzhou"])
        assert {m["source"] for m in listed["items"]} == {"user"}
        everything = " ".join(m["content"] for m in listed["items"])
        assert "未配置语言模型" not in everything
        assert "No language model" not in everything
        state = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
        assert [m["role"] for m in state["buffer"]] == ["user", "assistant"] * len(said)

    async def test_model_replies_are_remembered(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        upstream = FakeUpstream(reply="杭州的西湖很美。Hangzhou's West Lake is lovely.")
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            assert (await chat(client, auth, "我住在杭州 / I live in Hangzhou")).status_code == 200
            await drain(settings)
            listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert sorted(m["source"] for m in listed["items"]) == ["assistant", "user"]


def backpressure_count(body: str) -> float:
    found = re.search(r"^mnemo_outbox_backpressure_seconds_count (\S+)$", body, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


class TestBackpressure:
    async def test_turns_wait_for_a_writer_that_is_behind_and_lose_nothing(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        """No writer runs: past the backlog limit every turn waits its maximum, then goes on. The limit
        is split evenly over the partitions, and all of alice's turns are in hers: a share of 2."""
        slow = settings.model_copy(
            update={
                "outbox_worker": False,
                "outbox_max_backlog": 2 * keys.partitions(),
                "outbox_max_wait_seconds": 0.2,
            }
        )
        async with app_client(slow, embedder) as (client, _):
            before = backpressure_count((await client.get("/metrics")).text)
            for text in ("我住在杭州", "I live in Hangzhou", "我对花生过敏"):  # backlog 0, 1, 2: no wait
                assert (await chat(client, auth, text)).status_code == 200
            assert backpressure_count((await client.get("/metrics")).text) == before
            for text in ("My sister is a nurse", "提醒我周五打电话"):  # backlog 3, 4: both wait
                resp = await chat(client, auth, text, stream=text.startswith("提醒"))
                assert resp.status_code == 200, resp.text
            assert backpressure_count((await client.get("/metrics")).text) == before + 2
            r = redis_of(slow)
            assert await Outbox(r).pending() == 5  # every turn is in the outbox
            await r.aclose()

    async def test_the_wait_ends_when_the_writer_catches_up(self, settings: Settings) -> None:
        r = redis_of(settings)
        outbox = Outbox(r)
        try:
            ids = [
                await outbox.append(OutboxEntry("ann", "s", (Message("user", f"第{i}条 turn {i}"),)))
                for i in range(5)
            ]

            async def writer() -> None:
                await asyncio.sleep(0.2)
                await r.xdel(outbox.stream_of("ann"), *ids)

            task = asyncio.create_task(writer())
            waited = await outbox.wait_for_room("ann", 3, max_wait=30)
            await task
            assert 0.1 <= waited < 30  # it waited for the delete (at 0.2 s, polled every 0.05 s), no longer
            assert await outbox.wait_for_room("ann", 0, max_wait=30) == 0.0  # 0: never waits
        finally:
            await r.aclose()


class TestMemoryAcrossSessions:
    @pytest.mark.parametrize(
        ("fact", "question", "needle"),
        [
            ("我住在杭州，记住这个", "我住在哪个城市？", "杭州"),
            ("I live in Hangzhou, remember that", "Which city do I live in?", "Hangzhou"),
        ],
    )
    async def test_recall_in_new_session_reaches_upstream_with_age(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        fact: str,
        question: str,
        needle: str,
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, app):
            assert (await chat(client, auth, fact, session="A")).status_code == 200
            await drain(settings)
            resp = await chat(client, auth, question, session="B")
            assert resp.status_code == 200, resp.text
            assert resp.json()["response"] == upstream.reply
            assert resp.json()["debug"]["chroma_retrieved_count"] >= 1
            turn_request = upstream.chat_requests()[-1]
            system = turn_request["messages"][0]
            assert system["role"] == "system"
            memory_lines = [line for line in system["content"].splitlines() if needle in line]
            assert memory_lines, system["content"]
            # the memory with its age (relation memory's profile line "居住地：杭州" may name it too)
            assert any(
                re.search(r"\((刚才|\d+分钟前|just now|\d+ minutes? ago)", line) for line in memory_lines
            ), system["content"]
            assert turn_request["model"] == "fake-model"
            assert turn_request["messages"][-1] == {"role": "user", "content": question}
            summaries = [r for r in upstream.requests if r not in upstream.chat_requests()]
            assert summaries, "an LLM is configured, so the summary is refined by it"

    async def test_nothing_recalled_is_said_explicitly(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            await chat(client, auth, "hello there")
            assert "(no long-term memories were recalled for this message)" in upstream.system_prompts()[-1]
            await chat(client, auth, "你好", user="carol", session="C")
            assert "（本轮没有检索到相关的长期记忆）" in upstream.system_prompts()[-1]


class TestConcurrency:
    async def test_twenty_concurrent_turns_on_one_session(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        results = await asyncio.gather(*(chat(client, auth, f"message number {i}") for i in range(20)))
        assert [r.status_code for r in results] == [200] * 20
        state = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
        buffer = state["buffer"]
        assert len(buffer) == 10
        stamps = [m["timestamp"] for m in buffer]
        assert stamps == sorted(stamps)
        assert [m["role"] for m in buffer] == ["user", "assistant"] * 5
        assert state["summary"]["version"] == 20  # every turn's compare-and-set won exactly once
        r = redis_of(settings)
        assert await r.exists(keys.lock("alice", "A")) == 0
        assert await r.hlen(keys.actions("alice", "A")) == 5 + 1  # five actions + the sequence counter

    async def test_sessions_and_users_are_isolated(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await chat(client, auth, "I live in Hangzhou", user="alice", session="A")
        await chat(client, auth, "I live in Berlin", user="alice", session="B")
        await chat(client, auth, "I live in Lima", user="bob", session="A")
        a = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
        b = (await client.get("/v1/sessions/alice/B", headers=auth("alice"))).json()
        bob = (await client.get("/v1/sessions/bob/A", headers=auth("bob"))).json()
        assert [m["content"] for m in a["buffer"] if m["role"] == "user"] == ["I live in Hangzhou"]
        assert [m["content"] for m in b["buffer"] if m["role"] == "user"] == ["I live in Berlin"]
        assert [m["content"] for m in bob["buffer"] if m["role"] == "user"] == ["I live in Lima"]
        assert (await client.get("/v1/sessions/alice/A", headers=auth("bob"))).status_code == 403


class TestUpstreamFailures:
    @pytest.mark.parametrize(
        ("mode", "status", "code"),
        [
            ("down", 502, "upstream_error"),
            ("error500", 502, "upstream_error"),
            ("timeout", 504, "upstream_timeout"),
        ],
    )
    async def test_failure_leaves_session_unchanged(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        mode: str,
        status: int,
        code: str,
    ) -> None:
        upstream = FakeUpstream()
        no_refine = llm_settings(settings, llm_summary=False)
        async with app_client(no_refine, embedder, upstream.transport) as (client, _):
            assert (await chat(client, auth, "first turn works")).status_code == 200
            before = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
            r = redis_of(settings)
            outbox_before = await Outbox(r).pending()
            upstream.mode = mode
            resp = await chat(client, auth, "second turn fails")
            assert resp.status_code == status, resp.text
            assert error_code(resp) == code
            assert resp.json()["request_id"] == resp.headers["x-request-id"]
            after = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
            assert after == before
            assert await Outbox(r).pending() <= outbox_before
            assert await r.exists(keys.lock("alice", "A")) == 0
            if mode != "timeout":
                assert len(upstream.requests) == 1 + 3  # retried with backoff, then gave up


class TestChromaOutage:
    async def test_turns_answer_while_chroma_is_down_and_reach_long_term_memory_later(
        self,
        tmp_path: Path,
        redis_server: ServerProcess,
        embedder: Embedder,
        auth: AuthHeaders,
    ) -> None:
        chroma = start_chroma(tmp_path / "chroma")
        try:
            settings = make_settings(redis_server.url, chroma.url)
            # bob's memory is written by another worker: this one never holds his index
            other = redis_of(settings)
            elsewhere = build_memory_service(settings, build_store(settings, other), embedder, other)
            await elsewhere.ingest("bob", "b", [Message("user", "bob likes green tea", id="b1")])
            await other.aclose()
            async with app_client(settings, embedder) as (client, app):
                assert (await chat(client, auth, "warm up", session="W")).status_code == 200
                await drain(settings)
                # alice's keyword index (with her vectors) is now cached in this worker; bob's is not
                assert (await chat(client, auth, "what did I warm up?", session="X")).status_code == 200
                chroma.stop()
                for i in range(5):
                    resp = await chat(client, auth, f"outage fact number {i}", session="S")
                    assert resp.status_code == 200, resp.text
                    # recall is served from the worker's index: Chroma is not on the read path
                    assert resp.json()["debug"]["recall_degraded"] is None
                cold = await chat(
                    client, auth, "我喜欢喝什么茶？ what tea do I like?", user="bob", session="S"
                )
                assert cold.status_code == 200, cold.text
                # bob's index would have to be read from Chroma: the turn answers without recall
                assert cold.json()["debug"]["recall_degraded"] == "chroma_unavailable"
                r = redis_of(settings)
                assert await Outbox(r).pending() >= 5
                chroma = start_chroma(tmp_path / "chroma", port=chroma.port)
                await drain(settings)
                listed = (await client.get("/v1/memory/alice/list?limit=100", headers=auth("alice"))).json()
                contents = {m["content"] for m in listed["items"]}
                assert {f"outage fact number {i}" for i in range(5)} <= contents
                # every user message of every turn is in long-term memory, none twice, but for the
                # question that only asks ("what did I warm up?": the write policy's gate, issue 24);
                # the offline responder's replies are not (they only list what was recalled)
                provenance = [mid for m in listed["items"] for mid in m["source_message_ids"]]
                assert len(provenance) == len(set(provenance)) == 6
                assert "what did I warm up?" not in contents
                assert all(m["source"] == "user" for m in listed["items"])
        finally:
            chroma.stop()
            flush(settings)  # its users' placements name this server


class TestTTLs:
    async def test_every_ttl(self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings) -> None:
        await chat(client, auth, "订单号：A12345678，明天下午3点送到浦东机场")
        r = redis_of(settings)
        for key in (keys.buffer("alice", "A"), keys.actions("alice", "A"), keys.summary("alice", "A")):
            assert 7190 <= await r.ttl(key) <= 7200, key
        for slot in ("order_number", "date", "time", "place"):
            assert 1790 <= await r.ttl(keys.slot("alice", "A", slot)) <= 1800, slot
        assert await r.exists(keys.lock("alice", "A")) == 0

    async def test_delete_session(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        await chat(client, auth, "明天下午3点去机场")
        assert (await client.delete("/v1/sessions/alice/A", headers=auth("alice"))).status_code == 204
        state = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
        assert state["buffer"] == []
        assert state["summary"] is None
        assert state["slots"] == {}
        r = redis_of(settings)
        assert [k async for k in r.scan_iter(keys.session_pattern("alice", "A"))] == []


class TestChatValidation:
    @pytest.mark.parametrize(
        "body",
        [
            {"messages": []},
            {"messages": [{"role": "assistant", "content": "hi"}]},
            {"messages": [{"role": "user", "content": "   "}]},
            {"messages": [{"role": "user", "content": "x" * 32_001}]},
            {"messages": [{"role": "user", "content": "hi"}], "n": 2},
            {"messages": [{"role": "user", "content": "hi"}], "temperature": 5},
            {"messages": [{"role": "user", "content": "hi"}], "session_id": "bad id"},
            {"messages": [{"role": "wizard", "content": "hi"}]},
        ],
    )
    async def test_bad_bodies(
        self, client: httpx.AsyncClient, auth: AuthHeaders, body: dict[str, Any]
    ) -> None:
        resp = await client.post("/v1/chat/completions", json=body, headers=auth("alice"))
        assert resp.status_code == 422, resp.text
        assert error_code(resp) == "validation_error"

    async def test_user_id_must_match_token(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await chat(client, auth, "hi", user_id="bob")
        assert resp.status_code == 403
        admin = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}], "user_id": "bob"},
            headers=auth("ops", role="admin"),
        )
        assert admin.status_code == 200
        assert (await client.get("/v1/sessions/bob/default", headers=auth("bob"))).json()["buffer"]

    async def test_session_header(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}]},
            headers={**auth("alice"), "X-Session-ID": "from-header"},
        )
        assert resp.json()["debug"]["session_id"] == "from-header"
        bad = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": "hi"}]},
            headers={**auth("alice"), "X-Session-ID": "bad{id}"},
        )
        assert bad.status_code == 422  # as documented (it was a 400 with code validation_error)
        assert error_code(bad) == "validation_error"

    async def test_no_token(self, client: httpx.AsyncClient) -> None:
        resp = await client.post(
            "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}
        )
        assert resp.status_code == 401
