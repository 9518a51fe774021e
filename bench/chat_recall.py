"""Which chat turns put long-term memories in the prompt: unrelated questions (none should) and
questions about what the user said (the right memory should), before and after the relevance floor.

    .venv/bin/python bench/chat_recall.py                 # the server's default floor
    .venv/bin/python bench/chat_recall.py --floor 0       # RECALL_MIN_RELEVANCE=0: the cosine floor alone

The users and memories of `bench/data/relevance_pairs.json` (each memory its own earlier session),
then chat turns through `POST /v1/chat/completions` (no LLM configured: the offline responder; `debug`
names the memories recalled) in a new session:

- 30 unrelated questions (`UNRELATED`, 15 zh, 15 en: general knowledge, tasks, small talk), each asked
  of both users: *share of turns injecting any memory* (lower is better);
- every labelled question with a relevant memory: *share of turns injecting a relevant one*.

Each run on its own fresh redis-server and `chroma run`. `--floor` sets RECALL_MIN_RELEVANCE (without
it: the server's default); the code before issue 24 had only the cosine floor RECALL_MIN_SIMILARITY=0.2
(docs/benchmarks.md runs this script against that code too, from a copy of its commit).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, machine, served_app  # noqa: E402

DATA = ROOT / "bench" / "data" / "relevance_pairs.json"
DAY = 86_400.0


class Client:
    """(self-contained: the script also runs against the code before issue 24, from a copy of it)"""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.tokens = TokenCodec(SECRET)

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens.mint(user, ttl_seconds=86400)}"}


async def store(client: Client, user: dict[str, Any], now: float) -> None:
    """Each memory its own session, two days apart (as bench/relevance.py stores them)."""
    for i, (mid, text) in enumerate(user["memories"].items()):
        message = {"role": "user", "content": text, "id": mid, "timestamp": now - (i + 1) * 2 * DAY}
        resp = await client.http.post(
            f"/v1/memory/{user['id']}/messages",
            json={"session_id": f"s-{mid}", "messages": [message]},
            headers=client.headers(user["id"]),
        )
        resp.raise_for_status()


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


async def run(floor: float | None) -> dict[str, Any]:
    data = json.loads(DATA.read_text())
    settings = {} if floor is None else {"recall_min_relevance": floor}
    default = (
        Settings.model_fields["recall_min_relevance"].default
        if "recall_min_relevance" in Settings.model_fields
        else None
    )
    return {
        "machine": machine(),
        "recall_min_relevance": floor if floor is not None else default,
        **await measure(data, **settings),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--floor", type=float, default=None, help="RECALL_MIN_RELEVANCE (default: the server's)"
    )
    args = parser.parse_args()
    report = asyncio.run(run(args.floor))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / f"chat_recall{'' if args.floor is None else f'_{args.floor}'}.json").write_text(
        json.dumps(report, ensure_ascii=False, indent=1)
    )
    sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
