"""How the model-use ledger counts a call its caller stopped waiting for (app/clients/upstream.py): a
step's own time limit (the query translation's, the summary's) cancels the call; that is `cancelled`,
neither an upstream `error` nor billed to the user. The upstream is an in-process httpx double."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
from prometheus_client import REGISTRY

from app.clients.upstream import OpenAICompatibleLLM
from memory.chat.llm import GenerationParams, PromptMessage, TurnFacts

FACTS = TurnFacts(language="en", recalled=[], now=0.0)
PROMPT = [PromptMessage(role="user", content="我的狗叫什么？ What is my dog called?")]


def calls(purpose: str, outcome: str) -> float:
    value = REGISTRY.get_sample_value("mnemo_llm_calls_total", {"purpose": purpose, "outcome": outcome})
    return value or 0.0


async def slow(request: httpx.Request) -> httpx.Response:
    await asyncio.sleep(30)
    return httpx.Response(200, json={"choices": [{"message": {"content": "Biscuit"}}]})


def model() -> OpenAICompatibleLLM:
    client = httpx.AsyncClient(transport=httpx.MockTransport(slow), base_url="http://upstream.test/v1")
    return OpenAICompatibleLLM(client, model="m", max_attempts=1)


async def test_a_completion_the_caller_gave_up_on_is_cancelled_not_an_error() -> None:
    before = {o: calls("translation", o) for o in ("cancelled", "error", "timeout")}
    params = GenerationParams(purpose="translation")
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(model().complete(PROMPT, params, FACTS), 0.05)
    assert calls("translation", "cancelled") == before["cancelled"] + 1
    assert calls("translation", "error") == before["error"]
    assert calls("translation", "timeout") == before["timeout"]


async def test_a_stream_the_caller_gave_up_on_is_cancelled_not_an_error() -> None:
    before = {o: calls("summary", o) for o in ("cancelled", "error")}

    async def consume() -> None:
        async for _ in model().stream(PROMPT, GenerationParams(purpose="summary"), FACTS):
            pass

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(consume(), 0.05)
    assert calls("summary", "cancelled") == before["cancelled"] + 1
    assert calls("summary", "error") == before["error"]
