"""docker-compose.yml's profile `llm` for real: the stack up with the model service built from
deploy/llm and the app pointed at it as the compose file's header says (`LLM_BASE_URL=http://llm:8080/v1`,
`LLM_MODEL=gemma-3-270m`), then, through mnemo's published port only: the model listed, a memory written
in Chinese and in English, and per language one plain and one streamed chat turn that recalls it, each
answered by the model (its name in the answer, one more chat call in `mnemo_llm_calls_total`: `ok`, or
`empty` when the 270M model said nothing, which mnemo passes on as the model's answer)."""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from harness.compose import Stack, docker
from tests.deploy.api import http
from tests.llm_compose.conftest import MODEL

# the first test's setup builds both images (llama.cpp compiled: 8 min cold on 2 cores) and starts the stack
pytestmark = pytest.mark.timeout(3600)
log = logging.getLogger("tests.llm_compose")
USER = "llm-compose-user"
# max_tokens of a chat answer, as the real-model lane (tests/llm): without it a base model may write until
# its context (4096 tokens) is full, minutes on 2 busy cores (a first run's turn hit the 180 s bound)
SHORT = 48
FACTS = {
    "zh": ("我的猫叫年糕，它最喜欢在窗台上晒太阳", "我的猫叫什么名字？", "年糕"),
    "en": ("My cat is called Mochi and she sleeps on the windowsill", "What is my cat called?", "Mochi"),
}


def chat_calls(stack: Stack) -> dict[str, float]:
    """mnemo_llm_calls_total{purpose="chat"} by outcome, summed over the workers (one scrape)."""
    text = httpx.get(f"{stack.base_url}/metrics", timeout=30).text
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "mnemo_llm_calls_total" and sample.labels.get("purpose") == "chat":
                outcome = sample.labels["outcome"]
                out[outcome] = out.get(outcome, 0.0) + sample.value
    return out


def turn_body(question: str, *, stream: bool) -> dict[str, Any]:
    """A question in the session `ask`, with its debug, the answer bounded (the base model rambles)."""
    return {
        "model": MODEL,
        "messages": [{"role": "user", "content": question}],
        "session_id": "ask",
        "debug": True,
        "max_tokens": SHORT,
        "stream": stream,
    }


def plain_turn(stack: Stack, question: str) -> tuple[str, str, dict[str, Any]]:
    with http(stack, USER) as h:
        resp = h.post("/v1/chat/completions", json=turn_body(question, stream=False), timeout=300)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    return str(body["model"]), body["choices"][0]["message"]["content"] or "", body["debug"]


def streamed_turn(stack: Stack, question: str) -> tuple[str, str, dict[str, Any]]:
    parts: list[str] = []
    models: set[str] = set()
    debug: dict[str, Any] = {}
    done = False
    body = turn_body(question, stream=True)
    with http(stack, USER) as h, h.stream("POST", "/v1/chat/completions", json=body, timeout=300) as resp:
        assert resp.status_code == 200, resp.read()
        for line in resp.iter_lines():
            if not line.startswith("data: "):
                continue
            data = line.removeprefix("data: ")
            if data == "[DONE]":
                done = True
                continue
            chunk = json.loads(data)
            assert "error" not in chunk, chunk
            models.add(chunk["model"])
            debug = chunk.get("debug") or debug
            for choice in chunk.get("choices", []):
                parts.append((choice.get("delta") or {}).get("content") or "")
    assert done, "the stream ended without [DONE]"
    assert len(models) == 1, models
    return models.pop(), "".join(parts), debug


def test_the_model_service_is_built_private_and_not_root(llm_stack: Stack) -> None:
    cid = llm_stack.containers()["llm"]
    info = json.loads(docker("inspect", cid))[0]
    assert info["Config"]["User"] == "1001:1001"
    assert not info["HostConfig"].get("PortBindings"), "the model is for the app only: no published port"
    assert not info["NetworkSettings"].get("Ports", {}).get("8080/tcp"), info["NetworkSettings"]["Ports"]
    assert llm_stack.health()["llm"] == "healthy"


def test_mnemo_lists_the_local_model(llm_stack: Stack) -> None:
    with http(llm_stack, USER) as h:
        resp = h.get("/v1/models")
    assert resp.status_code == 200, resp.text
    assert MODEL in [m["id"] for m in resp.json()["data"]], resp.json()


@pytest.fixture(scope="module")
def told(llm_stack: Stack) -> dict[str, Any]:
    """The two facts, written as memories in session `tell` (searchable once answered)."""
    with http(llm_stack, USER) as h:
        resp = h.post(
            f"/v1/memory/{USER}/messages",
            json={
                "session_id": "tell",
                "messages": [{"role": "user", "content": fact} for fact, _, _ in FACTS.values()],
            },
        )
    assert resp.status_code == 200, resp.text
    written: dict[str, Any] = resp.json()
    return written


def test_memories_written_in_both_languages(told: dict[str, Any]) -> None:
    assert told["stored"] == 2, told
    contents = [m["content"] for m in told["memories"]]
    for fact, _, needle in FACTS.values():
        assert any(needle in c for c in contents), (fact, contents)


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_chat_turn_is_answered_by_the_model(
    llm_stack: Stack, told: dict[str, Any], lang: str, stream: bool
) -> None:
    _, question, needle = FACTS[lang]
    before = chat_calls(llm_stack)
    started = time.monotonic()
    model, answer, debug = (streamed_turn if stream else plain_turn)(llm_stack, question)
    seconds = time.monotonic() - started
    after = chat_calls(llm_stack)
    log.info(
        "turn %s",
        json.dumps(
            {
                "lang": lang,
                "stream": stream,
                "seconds": round(seconds, 2),
                "chars": len(answer),
                "model": model,
            },
            ensure_ascii=False,
        ),
    )
    assert model == MODEL, "the answer did not come from the local model"
    # the memory written in the other session was in the prompt the model got
    assert needle in debug["prompt"][0]["content"], debug["prompt"][0]["content"][-2000:]
    # exactly one more chat call, answered: `ok`, or `empty` when the model said nothing (legal, counted)
    grew = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in set(after) | set(before)}
    assert {k: v for k, v in grew.items() if v} == {"empty" if not answer.strip() else "ok": 1.0}, grew
