"""mnemo's model steps run for real through a small local model (Gemma 3 270M, llama-cpp-python's
server): the chat turn plain and streamed with recall across sessions, the LLM summary, the supersession
judge, query translation and the compression of long recalled memories. What the model answers is not
fixed; what is checked is that each step used the model, and that every answer it could not use was
counted (`mnemo_llm_fallbacks_total`) and replaced by the step's offline behaviour (the rules, the
extractive summary, the untranslated search, the extractive compression); a chat answer is the model's,
an empty one counted (`mnemo_llm_calls_total{outcome="empty"}`)."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from app.settings import Settings
from harness.outbox import drain
from memory import Embedder
from memory.chat.compression import RULES as COMPRESSION_RULES
from memory.chat.context import MEMORY_MAX_CHARS, compress
from tests.conftest import AuthHeaders, app_client, until

pytestmark = pytest.mark.integration

DAY = 86400.0
SHORT = 48  # max_tokens of a chat answer: the lane measures the pipeline, not essays
RECALL = {
    "en": ("My dog is named Biscuit, remember that.", "What is my dog called?", "Biscuit"),
    "zh": ("我的狗叫饼干，记住这个。", "我的狗叫什么？", "饼干"),
}
# over MEMORY_MAX_CHARS (150): recalled, the memory is compressed for the prompt
LONG = {
    "en": (
        "My grandmother's apple cake recipe, which I bake every autumn for the whole family, needs six "
        "Bramley apples, two teaspoons of cinnamon, brown sugar, a pinch of nutmeg and exactly forty "
        "minutes at 180 degrees in the old blue tin.",
        "How long do I bake my grandmother's apple cake?",
    ),
    "zh": (
        "我奶奶传下来的红烧肉做法是这样的：五花肉先冷水下锅焯水，切成三厘米见方的块，再用冰糖小火炒出糖色，"
        "加生抽、老抽、料酒、葱段、姜片、八角和桂皮，最后加开水没过肉，盖上锅盖用小火慢慢炖一个半小时，"
        "大火收汁就可以出锅了。每年过年我都会照着做一大锅，全家人都说比饭店里的还好吃，"
        "孩子们每次都要多添一碗米饭，连平时不爱吃肉的姑姑也会夹好几块。",
        "奶奶的红烧肉要炖多久？",
    ),
}
NUMBERED = re.compile(r"^\s*1[.)、:：]\s*(.+?)\s*$")


class Recording(httpx.AsyncBaseTransport):
    """The real network transport to the model server, keeping each chat-completions answer's text
    by the system prompt it was asked with."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.answers: list[tuple[str, str]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        body = json.loads(request.content or b"{}")
        if request.url.path.endswith("/chat/completions") and not body.get("stream"):
            await response.aread()
            if response.status_code == 200:
                message = response.json()["choices"][0]["message"]
                self.answers.append((str(body["messages"][0]["content"]), message.get("content") or ""))
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def count(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def calls(purpose: str) -> float:
    """Upstream calls of one purpose, every outcome."""
    return sum(
        count("mnemo_llm_calls_total", purpose=purpose, outcome=o)
        for o in ("ok", "empty", "error", "timeout", "cancelled")
    )


def fallbacks(purpose: str) -> float:
    reasons = ("failed", "unparseable", "unusable", "lost_facts")
    return sum(count("mnemo_llm_fallbacks_total", purpose=purpose, reason=r) for r in reasons)


async def turn(
    client: httpx.AsyncClient, auth: AuthHeaders, text: str, session: str, **extra: Any
) -> dict[str, Any]:
    resp = await client.post(
        "/v1/chat/completions",
        json={
            "model": "mnemo",
            "messages": [{"role": "user", "content": text}],
            "session_id": session,
            "max_tokens": SHORT,
            "debug": True,
            **extra,
        },
        headers=auth("alice"),
    )
    assert resp.status_code == 200, resp.text
    body: dict[str, Any] = resp.json()
    return body


async def streamed(client: httpx.AsyncClient, auth: AuthHeaders, text: str, session: str) -> str:
    """The answer's text, from the content deltas of a streamed turn (which must end with [DONE])."""
    payload = {
        "model": "mnemo",
        "messages": [{"role": "user", "content": text}],
        "session_id": session,
        "max_tokens": SHORT,
        "stream": True,
    }
    parts: list[str] = []
    done = False
    async with client.stream("POST", "/v1/chat/completions", json=payload, headers=auth("alice")) as resp:
        assert resp.status_code == 200, await resp.aread()
        async for line in resp.aiter_lines():
            if not line.startswith("data: "):
                continue
            data = line.removeprefix("data: ")
            if data == "[DONE]":
                done = True
                continue
            chunk = json.loads(data)
            assert "error" not in chunk, chunk
            for choice in chunk.get("choices", []):
                parts.append((choice.get("delta") or {}).get("content") or "")
    assert done
    return "".join(parts)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_fact_told_in_one_session_is_recalled_in_another_plain(
    real_settings: Settings, embedder: Embedder, auth: AuthHeaders, lang: str
) -> None:
    fact, question, needle = RECALL[lang]
    chats = calls("chat")
    async with app_client(real_settings, embedder) as (client, _):
        await turn(client, auth, fact, "A")
        await drain(real_settings)
        empty = count("mnemo_llm_calls_total", purpose="chat", outcome="empty")
        body = await turn(client, auth, question, "B")
    assert calls("chat") == chats + 2  # both turns went to the model
    assert needle in body["debug"]["prompt"][0]["content"]
    answer = body["choices"][0]["message"]["content"]
    # what the model said; a 270M model sometimes says nothing: passed on as its answer (a 200, not an
    # error) and counted as an empty call
    assert count("mnemo_llm_calls_total", purpose="chat", outcome="empty") == empty + (not answer.strip())


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_fact_told_in_one_session_is_recalled_in_another_streamed(
    real_settings: Settings, embedder: Embedder, auth: AuthHeaders, lang: str
) -> None:
    fact, question, needle = RECALL[lang]
    chats = calls("chat")
    async with app_client(real_settings, embedder) as (client, _):
        await streamed(client, auth, fact, "A")
        await drain(real_settings)
        empty = count("mnemo_llm_calls_total", purpose="chat", outcome="empty")
        answer = await streamed(client, auth, question, "B")
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
    assert calls("chat") == chats + 2
    assert any(needle in m["content"] for m in listed["items"]), listed
    assert count("mnemo_llm_calls_total", purpose="chat", outcome="empty") == empty + (not answer.strip())


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_summary_asks_the_model_and_keeps_the_facts_or_falls_back_counted(
    real_settings: Settings, embedder: Embedder, auth: AuthHeaders, lang: str
) -> None:
    fact, _, needle = RECALL[lang]
    asked, fell_back = calls("summary"), fallbacks("summary")
    kept = count("mnemo_summary_fact_checks_total", outcome="kept")
    async with app_client(real_settings, embedder) as (client, _):
        await turn(client, auth, fact, "A")
        await until(lambda: calls("summary") > asked, timeout=300)  # refined off the request path
        await until(
            lambda: (
                count("mnemo_summary_fact_checks_total", outcome="kept") + fallbacks("summary")
                > kept + fell_back
            ),
            timeout=60,
        )
        state = (await client.get("/v1/sessions/alice/A", headers=auth("alice"))).json()
    # kept (the model's summary holds the fact) or replaced by the extractive one, counted: either way
    # the summary still says what the user told
    assert needle in state["summary"]["summary"], state["summary"]


async def test_the_judge_is_asked_and_an_answer_it_cannot_use_changes_nothing(
    real_settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    asked, fell_back = calls("judge"), fallbacks("judge")
    old = "I spend every weekend sailing on the lake."
    said = "These days I spend every weekend climbing instead of sailing on the lake."
    settings = real_settings.model_copy(update={"llm_summary": False, "llm_compress_memories": False})
    async with app_client(settings, embedder) as (client, _):
        resp = await client.post(
            "/v1/memory/alice/messages",
            json={
                "session_id": "s1",
                "messages": [
                    {"role": "user", "content": old, "id": "old", "timestamp": time.time() - 90 * DAY}
                ],
            },
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text
        await turn(client, auth, said, "B")
        await drain(real_settings)
        items = {
            m["content"]: m
            for m in (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()["items"]
        }
    assert calls("judge") == asked + 1
    if fallbacks("judge") > fell_back:  # no usable verdict: the rules' result (not superseded) stands
        assert items[old]["superseded_by"] is None
    else:  # a verdict, either way, applied as given
        assert items[old]["superseded_by"] in (None, items[said]["id"])


@pytest.mark.parametrize(
    ("stored", "question"),
    [("我的狗叫饼干。", "What is my dog called?"), ("My dog is named Biscuit.", "我的狗叫什么？")],
)
async def test_query_translation_asks_the_model_and_an_answer_it_cannot_use_is_counted(
    real_settings: Settings, embedder: Embedder, auth: AuthHeaders, stored: str, question: str
) -> None:
    asked, fell_back = calls("translation"), fallbacks("translation")
    used = count("mnemo_query_translations_total", outcome="translated")
    unused = count("mnemo_query_translations_total", outcome="none")
    async with app_client(real_settings, embedder) as (client, _):
        resp = await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": "s1", "messages": [{"role": "user", "content": stored, "id": "m1"}]},
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text
        await drain(real_settings)
        # asked straight after the write: the writer cached the user's index while it was empty, and
        # the retriever judges the gate again once its search has refreshed it
        found = await client.post("/v1/memory/alice/search", json={"query": question}, headers=auth("alice"))
    assert found.status_code == 200, found.text
    assert isinstance(found.json()["results"], list)
    assert calls("translation") == asked + 1  # the model was asked, once
    if fallbacks("translation") > fell_back:  # failed, slow or no translation: searched as asked, counted
        assert fallbacks("translation") == fell_back + 1
        assert count("mnemo_query_translations_total", outcome="none") == unused + 1
        assert count("mnemo_query_translations_total", outcome="translated") == used
    else:  # a translation in the memory's language: searched too
        assert count("mnemo_query_translations_total", outcome="translated") == used + 1
        assert count("mnemo_query_translations_total", outcome="none") == unused


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_a_long_recalled_memory_is_compressed_by_the_model_or_extractively_counted(
    real_settings: Settings, embedder: Embedder, auth: AuthHeaders, lang: str
) -> None:
    fact, question = LONG[lang]
    assert len(fact) > MEMORY_MAX_CHARS
    asked, fell_back = calls("compression"), fallbacks("compression")
    recording = Recording()
    settings = real_settings.model_copy(update={"llm_summary": False, "llm_supersession_judge": False})
    async with app_client(settings, embedder, recording) as (client, _):
        resp = await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": "s1", "messages": [{"role": "user", "content": fact, "id": "m1"}]},
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text
        await drain(settings)
        body = await turn(client, auth, question, "B")
    assert calls("compression") == asked + 1  # recalled, and too long: the model was asked
    prompt = body["debug"]["prompt"][0]["content"]
    rules = COMPRESSION_RULES[lang].format(n=MEMORY_MAX_CHARS)
    answers = [text for system, text in recording.answers if system == rules]
    lines = [
        m.group(1) for a in answers for m in map(NUMBERED.match, a.splitlines()) if m and m.group(1).strip()
    ]
    if fallbacks("compression") > fell_back:  # failed, slow or no line for it: extractive, counted once
        assert fallbacks("compression") == fell_back + 1
        assert not lines, answers
        assert compress(fact) in prompt, prompt
    else:  # the model's line, cut to the limit, is what the prompt shows
        assert lines, answers
        assert compress(lines[-1]) in prompt, (lines, prompt)  # the last line for it wins
