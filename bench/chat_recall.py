"""Which chat turns put long-term memories in the prompt: unrelated questions (none should) and
questions about what the user said (the right memory should), before and after the relevance floor.

    .venv/bin/python bench/chat_recall.py

The users and memories of `bench/data/relevance_pairs.json` (each memory its own earlier session),
then chat turns through `POST /v1/chat/completions` (no LLM configured: the offline responder; `debug`
names the memories recalled) in a new session:

- 30 unrelated questions (`UNRELATED`, 15 zh, 15 en: general knowledge, tasks, small talk), each asked
  of both users: *share of turns injecting any memory* (lower is better);
- every labelled question with a relevant memory: *share of turns injecting a relevant one*.

Two configurations in one run, each on its own fresh redis-server and `chroma run`: `before`
(RECALL_MIN_RELEVANCE=0: only the cosine floor RECALL_MIN_SIMILARITY=0.2, as before issue 24) and
`after` (the default RECALL_MIN_RELEVANCE).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.settings import Settings  # noqa: E402
from bench.common import machine, served_app  # noqa: E402
from bench.relevance import DATA, Client, store  # noqa: E402

UNRELATED = [
    "量子计算的原理是什么？",
    "帮我写一首关于春天的诗",
    "明天股市会涨吗？",
    "如何修理自行车链条？",
    "给我讲个笑话吧",
    "Python 里怎么反转一个列表？",
    "地球到月球有多远？",
    "推荐一部好看的科幻小说",
    "红烧肉怎么做比较好吃？",
    "帮我把这句话翻译成英文：今天天气不错",
    "世界上最高的山是哪座？",
    "怎么提高英语口语？",
    "光合作用是怎么回事？",
    "帮我想一个团队建设活动的点子",
    "二十四节气里哪个节气在夏天开始？",
    "What's the capital of Australia?",
    "How do I bake sourdough bread?",
    "Explain how a hash map works",
    "Write a haiku about autumn leaves",
    "Who painted the Mona Lisa?",
    "What's a good name for a sailing boat?",
    "How many bones are in the human body?",
    "Give me three tips for a job interview",
    "What is the speed of light?",
    "Summarize the plot of Hamlet",
    "How do vaccines work?",
    "Tell me a fun fact about octopuses",
    "What's the difference between TCP and UDP?",
    "Suggest a weekend workout routine",
    "xyzzy plugh",
]


async def turn(http: httpx.AsyncClient, client: Client, user: str, text: str) -> list[str]:
    resp = await http.post(
        "/v1/chat/completions",
        json={
            "model": "mnemo",
            "messages": [{"role": "user", "content": text}],
            "session_id": "bench-now",
            "debug": True,
        },
        headers=client.headers(user),
    )
    resp.raise_for_status()
    ids: list[str] = resp.json()["debug"]["memory_ids"]
    return ids


async def measure(data: dict[str, Any], **settings: Any) -> dict[str, Any]:
    now = time.time()
    async with served_app(bridge_embedding=True, **settings) as http:
        client = Client(http)
        source: dict[str, str] = {}  # memory id -> the labelled id of its message
        for user in data["users"]:
            await store(client, user, now)
            listed = await http.get(
                f"/v1/memory/{user['id']}/list?limit=100", headers=client.headers(user["id"])
            )
            source |= {m["id"]: m["source_message_ids"][0] for m in listed.json()["items"]}
        unrelated = injected = 0
        for user in data["users"]:
            for text in UNRELATED:
                unrelated += 1
                injected += bool(await turn(http, client, user["id"], text))
        related = found = 0
        for user in data["users"]:
            for q in user["queries"]:
                if q["relevant"]:
                    related += 1
                    ids = await turn(http, client, user["id"], q["q"])
                    found += bool({source.get(i) for i in ids} & set(q["relevant"]))
    return {
        "unrelated_turns": unrelated,
        "unrelated_turns_injecting_a_memory": round(injected / unrelated, 3),
        "related_turns": related,
        "related_turns_injecting_a_relevant_memory": round(found / related, 3),
    }


async def run() -> dict[str, Any]:
    data = json.loads(DATA.read_text())
    default = Settings.model_fields["recall_min_relevance"].default
    return {
        "machine": machine(),
        "before (RECALL_MIN_RELEVANCE=0)": await measure(data, recall_min_relevance=0.0),
        f"after (RECALL_MIN_RELEVANCE={default})": await measure(data),
    }


def main() -> None:
    report = asyncio.run(run())
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "chat_recall.json").write_text(json.dumps(report, ensure_ascii=False, indent=1))
    sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
