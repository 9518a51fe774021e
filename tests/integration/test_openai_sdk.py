"""The official `openai` SDK, unchanged, against mnemo served by a real uvicorn server."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import openai
import pytest
import uvicorn
from openai.types.chat import ChatCompletionMessageParam, ChatCompletionToolParam
from prometheus_client import REGISTRY

from app.http.auth import TokenCodec
from app.main import create_app
from app.settings import Settings
from harness.services import ServerProcess, free_port, start_redis
from memory import Embedder, keys
from tests.conftest import TEST_SECRET, make_settings, sync_redis_of
from tests.fake_llm import FakeUpstream

pytestmark = pytest.mark.integration


@contextmanager
def live_server(
    settings: Settings,
    embedder: Embedder,
    transport: httpx.AsyncBaseTransport | None = None,
) -> Iterator[str]:
    app = create_app(settings, embedder=embedder, llm_transport=transport)
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def token(sub: str = "alice") -> str:
    return TokenCodec(TEST_SECRET).mint(sub)


def session_state(base: str, session: str, sub: str = "alice") -> dict[str, object]:
    resp = httpx.get(f"{base}/v1/sessions/{sub}/{session}", headers={"Authorization": f"Bearer {token(sub)}"})
    resp.raise_for_status()
    return resp.json()  # type: ignore[no-any-return]


class TestOpenAISDK:
    def test_sync_and_streaming_with_the_offline_responder(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        with live_server(settings, embedder) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            completion = client.chat.completions.create(
                model="mnemo",
                messages=[{"role": "user", "content": "I live in Hangzhou, remember that"}],
                extra_body={"session_id": "sdk"},
            )
            assert completion.model == "mnemo-offline"
            assert "No language model is configured" in (completion.choices[0].message.content or "")
            assert completion.usage is not None
            assert completion.usage.total_tokens > 0

            stream = client.chat.completions.create(
                model="mnemo",
                messages=[{"role": "user", "content": "我住在哪个城市？"}],
                stream=True,
                extra_body={"session_id": "sdk"},
            )
            text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
            assert "未配置语言模型" in text
            state = session_state(base, "sdk")
            buffer = state["buffer"]
            assert isinstance(buffer, list)
            assert [m["role"] for m in buffer] == ["user", "assistant", "user", "assistant"]
            assert buffer[-1]["content"] == text

    def test_streaming_passes_the_upstream_through(self, settings: Settings, embedder: Embedder) -> None:
        upstream = FakeUpstream(reply="Hangzhou is where you said you live")
        configured = settings.model_copy(
            update={"llm_base_url": "http://upstream.test/v1", "llm_summary": False}
        )
        with live_server(configured, embedder, upstream.transport) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            stream = client.chat.completions.create(
                model="mnemo",
                messages=[{"role": "user", "content": "where do I live?"}],
                stream=True,
                extra_body={"session_id": "s1"},
            )
            chunks = list(stream)
            text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            assert text.strip() == upstream.reply
            assert chunks[-1].choices[0].finish_reason == "stop"
            assert upstream.requests[-1]["stream"] is True

    def test_upstream_failure_before_output_is_an_error_status(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        upstream = FakeUpstream(mode="down")
        configured = settings.model_copy(
            update={"llm_base_url": "http://upstream.test/v1", "llm_summary": False}
        )
        with live_server(configured, embedder, upstream.transport) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            with pytest.raises(openai.APIStatusError) as info:
                client.chat.completions.create(
                    model="mnemo", messages=[{"role": "user", "content": "hi"}], stream=True
                )
            assert info.value.status_code == 502
            assert session_state(base, "default")["buffer"] == []

    def test_client_disconnect_mid_stream_leaves_session_consistent(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        upstream = FakeUpstream(reply=" ".join(f"word{i}" for i in range(40)))
        upstream.stream_delay = 0.1
        configured = settings.model_copy(
            update={"llm_base_url": "http://upstream.test/v1", "llm_summary": False}
        )
        with live_server(configured, embedder, upstream.transport) as base:
            headers = {"Authorization": f"Bearer {token()}"}
            body = {"messages": [{"role": "user", "content": "tell me a long story"}], "stream": True}
            with httpx.stream("POST", f"{base}/v1/chat/completions", json=body, headers=headers) as resp:
                assert resp.status_code == 200
                lines = resp.iter_lines()
                seen = [next(lines) for _ in range(4)]
                assert any(line.startswith("data:") for line in seen)
            r = sync_redis_of(settings)
            deadline = time.monotonic() + 10
            while r.exists(keys.lock("alice", "default")) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert r.exists(keys.lock("alice", "default")) == 0
            state = session_state(base, "default")
            assert state["buffer"] == []  # nothing half-written
            assert state["summary"] is None
            upstream.stream_delay = 0.0
            done = httpx.post(
                f"{base}/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "again"}]},
                headers=headers,
                timeout=30,
            )
            assert done.status_code == 200
            assert len(session_state(base, "default")["buffer"]) == 2  # type: ignore[arg-type]


def upstream_settings(settings: Settings, **overrides: object) -> Settings:
    return settings.model_copy(
        update={"llm_base_url": "http://upstream.test/v1", "llm_summary": False, **overrides}
    )


class TestModels:
    """`client.models.list()` is what most front ends call first (issue 41: it was a 404)."""

    def test_offline_lists_the_configured_model(self, settings: Settings, embedder: Embedder) -> None:
        with live_server(settings, embedder) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            listed = client.models.list()
            assert [m.id for m in listed.data] == ["mnemo-offline"]
            assert listed.data[0].object == "model"
            assert listed.data[0].owned_by == "mnemo"
            assert client.models.retrieve("mnemo-offline").id == "mnemo-offline"
            with pytest.raises(openai.NotFoundError) as info:
                client.models.retrieve("gpt-没有")
            assert info.value.code == "model_not_found"
            with pytest.raises(openai.AuthenticationError) as denied:
                openai.OpenAI(base_url=f"{base}/v1", api_key="not-a-jwt", max_retries=0).models.list()
            assert denied.value.code == "invalid_token"

    def test_upstream_list_is_cached_and_ids_may_hold_slashes(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        upstream = FakeUpstream()
        upstream.models = ["qwen2.5:7b", "Qwen/Qwen2.5-7B-Instruct"]
        with live_server(upstream_settings(settings), embedder, upstream.transport) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            assert [m.id for m in client.models.list().data] == upstream.models
            assert [m.id for m in client.models.list().data] == upstream.models
            assert client.models.retrieve("Qwen/Qwen2.5-7B-Instruct").owned_by == "fake"
            assert upstream.model_list_reads == 1  # the second list and the retrieve read the cache
            # dot segments and other hostile ids never reach another resource: 422 in OpenAI's shape
            for hostile in ("..%2F..%2Fmemory%2Falice%2Flist", "%2E%2E/memory", "a//b", "a%0Ab", "a%20b"):
                resp = httpx.get(
                    f"{base}/v1/models/{hostile}", headers={"Authorization": f"Bearer {token()}"}
                )
                assert resp.status_code in {404, 422}, (hostile, resp.text)
                assert resp.json()["error"]["code"] in {"validation_error", "not_found"}, hostile

    def test_upstream_without_a_list_or_down_gives_the_configured_model(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        upstream = FakeUpstream()  # answers 404 to GET /models (llama.cpp builds without it)
        configured = upstream_settings(settings, llm_model="my-local-模型")
        with live_server(configured, embedder, upstream.transport) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            assert [m.id for m in client.models.list().data] == ["my-local-模型"]
        upstream.mode = "down"
        with live_server(configured, embedder, upstream.transport) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            assert [m.id for m in client.models.list().data] == ["my-local-模型"]


class TestOpenAIErrors:
    """Every /v1/chat/* and /v1/models answer that fails is OpenAI's `{"error": {...}}`, with the
    status the SDK maps to its exception class and mnemo's code in `code` (issue 41: `e.body` was the
    bare code and the SDK found no message)."""

    def test_each_failure_raises_the_sdk_class(self, settings: Settings, embedder: Embedder) -> None:
        hi: list[ChatCompletionMessageParam] = [{"role": "user", "content": "你好 hello"}]
        with live_server(settings.model_copy(update={"rate_limit_per_minute": 8}), embedder) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            with pytest.raises(openai.AuthenticationError) as auth_error:
                openai.OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0).chat.completions.create(
                    model="mnemo", messages=hi
                )
            assert auth_error.value.code == "invalid_token"
            assert auth_error.value.type == "authentication_error"
            assert isinstance(auth_error.value.body, dict)
            assert auth_error.value.body["message"]
            assert auth_error.value.response.headers["www-authenticate"] == "Bearer"

            with pytest.raises(openai.PermissionDeniedError) as forbidden:
                client.chat.completions.create(model="mnemo", messages=hi, extra_body={"user_id": "bob"})
            assert forbidden.value.code == "forbidden"

            with pytest.raises(openai.UnprocessableEntityError) as invalid:
                client.chat.completions.create(model="mnemo", messages=hi, temperature=5)
            assert invalid.value.code == "validation_error"
            assert invalid.value.param == "temperature"
            assert invalid.value.type == "invalid_request_error"

            with pytest.raises(openai.NotFoundError):
                client.models.retrieve("no-such-model")

            raw = httpx.post(
                f"{base}/v1/chat/completions",
                content=b"{not json",
                headers={"Authorization": f"Bearer {token()}", "content-type": "application/json"},
            )
            assert raw.status_code == 400
            assert raw.json()["error"]["code"] == "invalid_json"
            assert raw.json()["request_id"] == raw.headers["x-request-id"]

            for _ in range(8):  # what is left of the 8 a minute after the calls above
                with contextlib.suppress(openai.RateLimitError):
                    client.models.list()
            with pytest.raises(openai.RateLimitError) as limited:
                client.models.list()
            assert limited.value.code == "rate_limited"
            assert limited.value.type == "rate_limit_error"
            assert 1 <= int(limited.value.response.headers["retry-after"]) <= 60

            # the rest of the API keeps mnemo's envelope
            other = httpx.get(f"{base}/v1/memory/alice/list", headers={"Authorization": "Bearer x"})
            assert other.json()["error"] == "invalid_token"

    def test_upstream_failure_is_a_server_error_with_mnemo_code(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        upstream = FakeUpstream(mode="error500")
        with live_server(
            upstream_settings(settings, llm_max_attempts=1), embedder, upstream.transport
        ) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            with pytest.raises(openai.InternalServerError) as failed:
                client.chat.completions.create(model="mnemo", messages=[{"role": "user", "content": "hi"}])
            assert failed.value.status_code == 502
            assert failed.value.code == "upstream_error"
            assert failed.value.type == "server_error"

    @pytest.mark.standalone
    def test_redis_down_is_503_with_retry_after(
        self, chroma_server: ServerProcess, embedder: Embedder, tmp_path: Path
    ) -> None:
        redis = start_redis(tmp_path)
        try:
            own = make_settings(redis.url, chroma_server.url)
            with live_server(own, embedder) as base:
                client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
                redis.stop()
                with pytest.raises(openai.InternalServerError) as down:
                    client.chat.completions.create(
                        model="mnemo", messages=[{"role": "user", "content": "我住在哪？"}]
                    )
                assert down.value.status_code == 503
                assert down.value.code == "redis_unavailable"
                assert down.value.response.headers["retry-after"] == "2"
        finally:
            redis.stop()


WEATHER_TOOL: list[ChatCompletionToolParam] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "今天的天气 / today's weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": '{"city": "杭州 Hangzhou"}'},
}
TOOL_RESULT = "晴，25°C, sunny with a light breeze"


class TestTools:
    """Tools end to end through mnemo (issue 41: tools, tool_choice and tool_calls were dropped)."""

    def _round_trip(self, base: str, upstream: FakeUpstream, *, stream: bool) -> None:
        client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
        asked: list[ChatCompletionMessageParam] = [
            {"role": "user", "content": "我下周去杭州出差。What's the weather in Hangzhou?"}
        ]
        if stream:
            chunks = list(
                client.chat.completions.create(
                    model="mnemo",
                    messages=asked,
                    tools=WEATHER_TOOL,
                    tool_choice="auto",
                    stream=True,
                    parallel_tool_calls=False,
                    extra_body={"session_id": "tools"},
                )
            )
            pieces = [tc for c in chunks if c.choices for tc in c.choices[0].delta.tool_calls or []]
            assert len(pieces) > 2  # relayed piece by piece, as the upstream streamed them
            assert pieces[0].id == "call_1"
            assert pieces[0].function is not None
            assert pieces[0].function.name == "get_weather"
            arguments = "".join(p.function.arguments or "" for p in pieces if p.function)
            assert arguments == CALL["function"]["arguments"]  # type: ignore[index]
            assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
        else:
            first = client.chat.completions.create(
                model="mnemo",
                messages=asked,
                tools=WEATHER_TOOL,
                tool_choice="auto",
                parallel_tool_calls=False,
                extra_body={"session_id": "tools"},
            )
            assert first.choices[0].finish_reason == "tool_calls"
            calls = first.choices[0].message.tool_calls or []
            assert [c.model_dump() for c in calls] == [CALL]
        offered = upstream.requests[-1]
        assert offered["tools"] == WEATHER_TOOL
        assert offered["tool_choice"] == "auto"
        assert offered["parallel_tool_calls"] is False

        answered: list[ChatCompletionMessageParam] = [
            *asked,
            {"role": "assistant", "content": None, "tool_calls": [CALL]},  # type: ignore[list-item]
            {"role": "tool", "tool_call_id": "call_1", "content": TOOL_RESULT},
        ]
        if stream:
            text = "".join(
                c.choices[0].delta.content or ""
                for c in client.chat.completions.create(
                    model="mnemo",
                    messages=answered,
                    tools=WEATHER_TOOL,
                    stream=True,
                    extra_body={"session_id": "tools"},
                )
                if c.choices
            )
        else:
            final = client.chat.completions.create(
                model="mnemo", messages=answered, tools=WEATHER_TOOL, extra_body={"session_id": "tools"}
            )
            text = final.choices[0].message.content or ""
            assert final.choices[0].finish_reason == "stop"
        assert text.strip() == upstream.reply
        sent = upstream.chat_requests()[-1]["messages"]
        assert [m["role"] for m in sent][-3:] == ["user", "assistant", "tool"]
        assert [m["role"] for m in sent].count("user") == 1  # the resent user message is not doubled
        assert sent[-2]["tool_calls"] == [CALL]
        assert sent[-1] == {"role": "tool", "content": TOOL_RESULT, "tool_call_id": "call_1"}

        buffer = session_state(base, "tools")["buffer"]
        assert isinstance(buffer, list)
        assert [m["role"] for m in buffer] == ["user", "assistant", "tool", "assistant"]
        # a next turn's prompt carries the whole tool exchange from the buffer, coherent
        client.chat.completions.create(
            model="mnemo",
            messages=[{"role": "user", "content": "谢谢！Thanks"}],
            extra_body={"session_id": "tools"},
        )
        again = upstream.chat_requests()[-1]["messages"]
        assert [m["role"] for m in again][1:] == ["user", "assistant", "tool", "assistant", "user"]
        assert again[2]["tool_calls"] == [CALL]

        # the tool's result and the call are never long-term memories by themselves
        headers = {"Authorization": f"Bearer {token()}"}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = httpx.get(f"{base}/v1/memory/alice/list", headers=headers).json()
            if any("杭州" in m["content"] for m in listed["items"]):
                break
            time.sleep(0.2)
        contents = [m["content"] for m in listed["items"]]
        assert any("杭州" in c for c in contents), contents
        assert not any("light breeze" in c or "get_weather" in c or "call_1" in c for c in contents), contents

    def test_round_trip(self, settings: Settings, embedder: Embedder) -> None:
        upstream = FakeUpstream(reply="杭州今天晴，25°C。It is sunny in Hangzhou.")
        upstream.tool_calls = [CALL]
        with live_server(upstream_settings(settings), embedder, upstream.transport) as base:
            self._round_trip(base, upstream, stream=False)

    def test_streamed_round_trip(self, settings: Settings, embedder: Embedder) -> None:
        upstream = FakeUpstream(reply="杭州今天晴，25°C。It is sunny in Hangzhou.")
        upstream.tool_calls = [CALL]
        with live_server(upstream_settings(settings), embedder, upstream.transport) as base:
            self._round_trip(base, upstream, stream=True)

    def test_offline_answers_a_request_with_tools_in_plain_text(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        with live_server(settings, embedder) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            answer = client.chat.completions.create(
                model="mnemo",
                messages=[{"role": "user", "content": "杭州天气？weather?"}],
                tools=WEATHER_TOOL,
            )
            assert answer.choices[0].message.tool_calls is None
            assert answer.choices[0].finish_reason == "stop"
            assert "未配置语言模型" in (answer.choices[0].message.content or "")


class TestStreamUsage:
    def test_include_usage_gets_the_usage_chunk_and_asks_the_upstream(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        upstream = FakeUpstream(reply="好的 noted")
        with live_server(upstream_settings(settings), embedder, upstream.transport) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            chunks = list(
                client.chat.completions.create(
                    model="mnemo",
                    messages=[{"role": "user", "content": "你好 hi"}],
                    stream=True,
                    stream_options={"include_usage": True},
                )
            )
            assert chunks[-1].choices == []
            assert chunks[-1].usage is not None
            assert chunks[-1].usage.prompt_tokens == upstream.usage["prompt_tokens"]  # the upstream's count
            assert chunks[-1].usage.completion_tokens == upstream.usage["completion_tokens"]
            assert upstream.requests[-1]["stream_options"] == {"include_usage": True}


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


class TestModelUseLedger:
    """Calls, tokens, latency and outcome by purpose in Prometheus, and each user's tokens in Redis,
    readable by the user and an admin (issue 41)."""

    def test_chat_and_summary_are_counted_per_purpose_and_per_user(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        upstream = FakeUpstream(reply="好的，我记住了。OK, noted.")
        before = {
            (purpose, outcome): sample("mnemo_llm_calls_total", purpose=purpose, outcome=outcome)
            for purpose in ("chat", "summary")
            for outcome in ("ok", "error")
        }
        tokens_in = sample("mnemo_llm_tokens_total", purpose="chat", direction="in")
        latency = sample("mnemo_llm_call_duration_seconds_count", purpose="chat", outcome="ok")
        configured = upstream_settings(settings, llm_summary=True, llm_max_attempts=1)
        with live_server(configured, embedder, upstream.transport) as base:
            client = openai.OpenAI(base_url=f"{base}/v1", api_key=token(), max_retries=0)
            client.chat.completions.create(
                model="mnemo", messages=[{"role": "user", "content": "我住在杭州。I live in Hangzhou."}]
            )
            list(
                client.chat.completions.create(
                    model="mnemo",
                    messages=[{"role": "user", "content": "I work as a teacher. 我是老师。"}],
                    stream=True,
                )
            )
            mine = {"Authorization": f"Bearer {token()}"}
            deadline = time.monotonic() + 30
            usage = httpx.get(f"{base}/v1/usage", headers=mine).json()
            while "summary" not in usage["purposes"] and time.monotonic() < deadline:
                time.sleep(0.1)  # the summary is refined in the background, after the answer
                usage = httpx.get(f"{base}/v1/usage", headers=mine).json()
            chat = usage["purposes"]["chat"]
            # the upstream's own counts, for the plain and the streamed turn alike (include_usage)
            assert chat == {"calls": 2, "prompt_tokens": 22, "completion_tokens": 14, "total_tokens": 36}
            assert usage["purposes"]["summary"]["calls"] >= 1
            assert usage["total"]["calls"] == sum(p["calls"] for p in usage["purposes"].values())
            assert usage["since"].endswith("Z")

            admin = {"Authorization": f"Bearer {TokenCodec(TEST_SECRET).mint('ops', role='admin')}"}
            by_admin = httpx.get(f"{base}/v1/admin/users/alice/usage", headers=admin).json()
            assert by_admin["purposes"]["chat"] == chat
            bob = {"Authorization": f"Bearer {token('bob')}"}
            assert httpx.get(f"{base}/v1/usage", headers=bob).json()["total"]["calls"] == 0
            other = httpx.get(f"{base}/v1/usage", params={"user_id": "alice"}, headers=bob)
            assert other.status_code == 403
            assert other.json()["error"]["code"] == "forbidden"

            upstream.mode = "error500"
            with pytest.raises(openai.InternalServerError):
                client.chat.completions.create(
                    model="mnemo", messages=[{"role": "user", "content": "再说一次 again"}]
                )
            assert httpx.get(f"{base}/v1/usage", headers=mine).json()["purposes"]["chat"] == chat

        assert sample("mnemo_llm_calls_total", purpose="chat", outcome="ok") - before[("chat", "ok")] == 2
        assert (
            sample("mnemo_llm_calls_total", purpose="chat", outcome="error") - before[("chat", "error")] == 1
        )
        assert sample("mnemo_llm_calls_total", purpose="summary", outcome="ok") > before[("summary", "ok")]
        assert sample("mnemo_llm_tokens_total", purpose="chat", direction="in") - tokens_in == 22
        assert sample("mnemo_llm_call_duration_seconds_count", purpose="chat", outcome="ok") - latency == 2
        assert keys.model_usage("alice").startswith(keys.user_prefix("alice") + ":")  # one slot per user
