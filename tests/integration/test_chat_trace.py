"""`debug: true` on a chat turn: the memories recalled (with their calibrated relevance) and the prompt
sent upstream come back in `debug.recalled` / `debug.prompt`, streamed or not, without changing the
OpenAI shape; without it they are null; a replayed turn (Idempotency-Key) has neither."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from app.settings import Settings
from harness.outbox import drain
from memory import Embedder
from tests.conftest import AuthHeaders, app_client
from tests.fake_llm import FakeUpstream
from tests.integration.test_chat import chat, llm_settings

pytestmark = pytest.mark.integration


def final_chunk(resp: httpx.Response) -> dict[str, Any]:
    events = [line[5:].strip() for line in resp.text.splitlines() if line.startswith("data:")]
    assert events[-1] == "[DONE]"
    last: dict[str, Any] = json.loads(events[-2])
    assert last["object"] == "chat.completion.chunk"
    assert last["choices"][0]["finish_reason"] == "stop"
    return last


class TestChatTrace:
    @pytest.mark.parametrize("stream", [False, True])
    async def test_recalled_memories_and_the_prompt_sent_upstream(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, stream: bool
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            assert (await chat(client, auth, "我住在杭州，记住这个", session="A")).status_code == 200
            await drain(settings)
            resp = await chat(client, auth, "我住在哪个城市？", session="B", stream=stream, debug=True)
            assert resp.status_code == 200, resp.text
            debug = final_chunk(resp)["debug"] if stream else resp.json()["debug"]
            recalled = debug["recalled"]
            assert [r["id"] for r in recalled] == debug["memory_ids"]
            assert recalled, "the home city is recalled"
            home = recalled[0]
            assert "杭州" in home["content"]
            assert 0 < home["relevance"] <= 1
            assert home["in_prompt"] is True
            assert home["session_id"] == "A"
            assert home["created_at"].endswith("Z")
            # the prompt shown is exactly what the upstream model was sent
            sent = upstream.chat_requests()[-1]["messages"]
            assert [{k: v for k, v in m.items() if v is not None} for m in debug["prompt"]] == sent
            assert debug["prompt"][0]["role"] == "system"
            assert "杭州" in debug["prompt"][0]["content"]
            assert debug["prompt"][-1] == {"role": "user", "content": "我住在哪个城市？", "name": None}

            # without `debug: true` neither is sent; the OpenAI fields are there either way
            plain = await chat(client, auth, "我住在哪个城市？", session="B", stream=stream)
            body = final_chunk(plain) if stream else plain.json()
            assert body["debug"]["recalled"] is None
            assert body["debug"]["prompt"] is None
            assert body["debug"]["memory_ids"]

    async def test_a_replayed_turn_has_no_trace(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            key = {"Idempotency-Key": "turn-1"}
            body = {
                "model": "mnemo",
                "session_id": "A",
                "debug": True,
                "messages": [{"role": "user", "content": "I keep bees on my rooftop"}],
            }
            first = await client.post("/v1/chat/completions", json=body, headers={**auth("alice"), **key})
            assert first.json()["debug"]["prompt"]
            again = await client.post("/v1/chat/completions", json=body, headers={**auth("alice"), **key})
            assert again.headers["Idempotent-Replayed"] == "true"
            assert again.json()["debug"]["prompt"] == []
            assert again.json()["debug"]["recalled"] == []
