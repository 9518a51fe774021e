"""A stack used as a client uses it, through its published port only: tokens, the official openai SDK,
the memory API. Shared by every stack's tests (the one node, and the cluster through nginx)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx
import openai

from app.http.auth import TokenCodec
from harness.compose import SECRET, Stack

T = TypeVar("T")

ZH = "我在杭州养了三只蜜蜂箱，蜂蜜叫做桂花蜜"
EN = "My rooftop garden in Lisbon grows purple basil"


def token(sub: str, role: str | None = None) -> str:
    return TokenCodec(SECRET).mint(sub, role=role)


def client(stack: Stack, sub: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{stack.base_url}/v1", api_key=token(sub), max_retries=0, timeout=120)


def http(stack: Stack, sub: str, role: str | None = None) -> httpx.Client:
    return httpx.Client(
        base_url=stack.base_url, headers={"Authorization": f"Bearer {token(sub, role)}"}, timeout=120
    )


def search(stack: Stack, query: str, sub: str) -> list[dict[str, Any]]:
    with http(stack, sub) as h:
        resp = h.post(f"/v1/memory/{sub}/search", json={"query": query})
        assert resp.status_code == 200, resp.text
        results: list[dict[str, Any]] = resp.json()["results"]
        return results


def wait_for(what: str, check: Callable[[], T], timeout: float = 120) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        time.sleep(1)


def rank(results: list[dict[str, Any]], needle: str) -> int:
    return next((i for i, r in enumerate(results) if needle in r["content"]), len(results))


def chat_and_recall(stack: Stack, user: str) -> None:
    """The openai SDK chats plain (zh) and streamed (en) in session `first`; once the writers moved both
    turns to long-term memory, a turn of session `second` recalls each (the offline responder lists what
    it recalled)."""
    sdk = client(stack, user)
    plain = sdk.chat.completions.create(
        model="mnemo",
        messages=[{"role": "user", "content": f"请记住：{ZH}"}],
        extra_body={"session_id": "first"},
    )
    assert plain.model == "mnemo-offline"
    assert "未配置语言模型" in (plain.choices[0].message.content or "")
    stream = sdk.chat.completions.create(
        model="mnemo",
        messages=[{"role": "user", "content": f"Please remember: {EN}"}],
        stream=True,
        extra_body={"session_id": "first"},
    )
    streamed = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert "No language model is configured" in streamed

    wait_for(
        "the zh turn in long-term memory",
        lambda: any("桂花蜜" in r["content"] for r in search(stack, "蜂蜜", user)),
    )
    wait_for(
        "the en turn in long-term memory",
        lambda: any("basil" in r["content"] for r in search(stack, "basil", user)),
    )

    zh = sdk.chat.completions.create(
        model="mnemo",
        messages=[{"role": "user", "content": "我养的蜜蜂产什么蜂蜜？"}],
        extra_body={"session_id": "second"},
    )
    recalled = zh.choices[0].message.content or ""
    assert "桂花蜜" in recalled, explain(stack, user, "我养的蜜蜂产什么蜂蜜？", recalled)
    en_stream = sdk.chat.completions.create(
        model="mnemo",
        messages=[{"role": "user", "content": "What grows in my rooftop garden?"}],
        stream=True,
        extra_body={"session_id": "second"},
    )
    en = "".join(chunk.choices[0].delta.content or "" for chunk in en_stream if chunk.choices)
    assert "basil" in en, explain(stack, user, "What grows in my rooftop garden?", en)


def explain(stack: Stack, user: str, question: str, reply: str) -> str:
    """What a failed recall is read with (it failed once in CI, never here): the search's answer to the
    same question without the floor (asked three times: both workers may answer), the recall counters,
    and the services' last log lines."""
    lines = [f"reply: {reply!r}"]
    with http(stack, user) as h:
        for _ in range(3):
            resp = h.post(f"/v1/memory/{user}/search", json={"query": question, "min_relevance": 0})
            hits = resp.json().get("results", []) if resp.status_code == 200 else resp.text
            lines.append(
                "search: "
                + repr(
                    [(r["content"][:24], r.get("relevance"), r.get("similarity")) for r in hits]
                    if isinstance(hits, list)
                    else hits
                )
            )
    metrics = httpx.get(f"{stack.base_url}/metrics", timeout=30).text
    lines += [
        line
        for line in metrics.splitlines()
        if line.startswith(("mnemo_recall_below_floor_total", "mnemo_bridge_searches_total"))
    ]
    return "\n".join([*lines, stack.logs()])


def search_both_languages(stack: Stack, user: str) -> None:
    """After `chat_and_recall`: each fact ranks above the other language's (the second session's
    questions are memories too)."""
    zh = search(stack, "我的蜂蜜叫什么？", user)
    en = search(stack, "which herb grows on my roof?", user)
    assert rank(zh, "桂花蜜") < min(rank(zh, "basil"), len(zh)), zh
    assert rank(en, "basil") < min(rank(en, "桂花蜜"), len(en)), en
