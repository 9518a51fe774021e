"""The official `openai` SDK, unchanged, against mnemo served by a real uvicorn server."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import openai
import pytest
import uvicorn

from app.http.auth import TokenCodec
from app.main import create_app
from app.settings import Settings
from memory import Embedder, keys
from tests.conftest import TEST_SECRET, sync_redis_of
from tests.fake_llm import FakeUpstream
from tests.services import free_port

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
