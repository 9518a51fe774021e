"""Which chat turns put long-term memories in the prompt: questions about the world (none should), and
questions about what the user said (the right memory should), through the recall gate of issue 24
(memory/chat/recall_gate.py).

    .venv/bin/python bench/chat_recall.py                                # every set, the server's defaults
    .venv/bin/python bench/chat_recall.py --general-floor 0              # the relevance floor alone (no gate)
    .venv/bin/python bench/chat_recall.py --floor 0 --general-floor 0    # the cosine floor alone
    .venv/bin/python bench/chat_recall.py --sets labelled held_out       # only the short sets

Chat turns go through `POST /v1/chat/completions` (no LLM configured: the offline responder; `debug`
names the memories in the prompt, within MEMORY_CONTEXT_TOKENS, and what their lines cost), all turns of a
user in one session. Since issue 40 chat recall searches the current session too: a world question's
"injecting a memory" counts the seeded memories only, and the bench's own earlier turns that the write
policy kept are counted apart. `--budget` sets MEMORY_CONTEXT_TOKENS, `--top-k` RECALL_TOP_K. Sets:

- `labelled`: the users and memories of `bench/data/relevance_pairs.json` (each memory its own earlier
  session); 30 questions about the world (`UNRELATED`, 15 zh, 15 en: general knowledge, tasks, small
  talk, one gibberish) asked of both users: *share of turns injecting any memory* (lower is better);
  every labelled question with a relevant memory: *share of turns injecting a relevant one*. The gate
  was chosen on this set.
- `held_out`: `bench/data/chat_gate_held_out.json`, written after the gate was chosen: 30 other
  questions about the world (imperatives with "me"/"我", a generic "how do I") asked of both users, and
  36 new questions about the same memories, first person and not.
- `conversations`: the LoCoMo development slice (`../shared/data/locomo_dev.json`), its Chinese
  translation (`locomo_dev_zh.json`), both cross-language directions (English turns asked in Chinese,
  Chinese turns asked in English, question for question) and mnemo's Chinese conversation
  (`bench/data/zh_conversation.json`),
  ingested as `bench/locomo.py` does; every category 1-4 question is then a chat turn: *share of turns
  injecting an evidence turn* and the mean characters injected. Their questions are in the third person
  ("When did Caroline…", "周明的吉他老师是谁"): what a higher floor for questions about the world costs.

Each set on its own fresh redis-server and `chroma run`. `--floor` sets RECALL_MIN_RELEVANCE and
`--general-floor` RECALL_GENERAL_MIN_RELEVANCE (without them: the server's defaults).
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
from bench.locomo import DEFAULT_DATA, asked_from, evidence_ids, ingest, user_of  # noqa: E402

DATA = ROOT / "bench" / "data" / "relevance_pairs.json"
HELD_OUT = ROOT / "bench" / "data" / "chat_gate_held_out.json"
ZH_DATA = DEFAULT_DATA.with_name("locomo_dev_zh.json")
# (report key, the conversation ingested, the file whose questions are asked or None for its own)
CONVERSATIONS: list[tuple[str, Path, Path | None]] = [
    ("locomo_dev", DEFAULT_DATA, None),
    ("locomo_dev_zh", ZH_DATA, None),
    ("locomo_dev_en_turns_zh_questions", DEFAULT_DATA, ZH_DATA),
    ("locomo_dev_zh_turns_en_questions", ZH_DATA, DEFAULT_DATA),
    ("zh_conversation", ROOT / "bench" / "data" / "zh_conversation.json", None),
]
GATE = ("recall_min_relevance", "recall_general_min_relevance", "memory_context_tokens", "recall_top_k")
DAY = 86_400.0


class Client:
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


TOKENS: list[int] = []  # memory tokens of every turn asked (the prompt's memory lines, estimated)


async def turn(http: httpx.AsyncClient, client: Client, user: str, text: str, session: str) -> list[str]:
    """The ids of the memories the turn's prompt holds (those the memory budget left out do not count)."""
    resp = await http.post(
        "/v1/chat/completions",
        json={
            "model": "mnemo",
            "messages": [{"role": "user", "content": text}],
            "session_id": session,
            "debug": True,
        },
        headers=client.headers(user),
    )
    resp.raise_for_status()
    debug = resp.json()["debug"]
    TOKENS.append(int(debug.get("memory_tokens", 0)))
    return [r["id"] for r in debug["recalled"] if r["in_prompt"]]


async def listed(http: httpx.AsyncClient, client: Client, user: str) -> dict[str, dict[str, Any]]:
    """Every memory of the user by id (paged)."""
    out: dict[str, dict[str, Any]] = {}
    offset = 0
    while True:
        resp = await http.get(
            f"/v1/memory/{user}/list?limit=100&offset={offset}", headers=client.headers(user)
        )
        resp.raise_for_status()
        items = resp.json()["items"]
        out |= {m["id"]: m for m in items}
        if len(items) < 100:
            return out
        offset += 100


async def short_sets(http: httpx.AsyncClient, sets: list[str]) -> dict[str, Any]:
    """The labelled and held-out questions on the users of relevance_pairs.json."""
    data = json.loads(DATA.read_text())
    held = json.loads(HELD_OUT.read_text())
    client = Client(http)
    now = time.time()
    source: dict[str, str] = {}  # memory id -> the labelled id of its message
    texts: dict[str, str] = {}
    for user in data["users"]:
        await store(client, user, now)
        for mid, m in (await listed(http, client, user["id"])).items():
            source[mid] = m["source_message_ids"][0]
            texts[mid] = m["content"]
    plans = {
        "labelled": (
            UNRELATED,
            [(u["id"], q["q"], q["relevant"]) for u in data["users"] for q in u["queries"] if q["relevant"]],
        ),
        "held_out": (held["unrelated"], [(r["user"], r["q"], r["relevant"]) for r in held["related"]]),
    }
    out: dict[str, Any] = {}
    for name in sets:
        world, about = plans[name]
        injecting: list[dict[str, Any]] = []
        any_memory = 0
        turns = 0
        for user in data["users"]:
            for text in world:
                turns += 1
                ids = await turn(http, client, user["id"], text, "bench-now")
                any_memory += bool(ids)
                # the user's seeded memories; the bench's own earlier turns that the write policy kept
                # (a question that names something) are recalled in this session too now, counted apart
                if seeded := [i for i in ids if i in texts]:
                    injecting.append({"question": text, "memories": [texts[i] for i in seeded]})
        found = 0
        missed: list[str] = []
        for user_id, text, relevant in about:
            ids = await turn(http, client, user_id, text, "bench-now")
            hit = bool({source.get(m) for m in ids} & set(relevant))
            found += hit
            if not hit:
                missed.append(text)
        out[name] = {
            "world_turns": turns,
            "world_turns_injecting_a_memory": round(len(injecting) / turns, 3),
            "world_turns_injecting_any_memory_incl_earlier_bench_turns": round(any_memory / turns, 3),
            "about_turns": len(about),
            "about_turns_injecting_a_relevant_memory": round(found / len(about), 3),
            "world_turns_that_injected": injecting,
            "about_turns_that_missed": missed,
        }
    return out


async def conversation(http: httpx.AsyncClient, path: Path, questions: Path | None) -> dict[str, Any]:
    """A LoCoMo-format conversation, ingested; every category 1-4 question is a chat turn (the questions
    of `questions`, the same conversation in the other language, when given: turns in one language,
    questions in the other)."""
    client = Client(http)
    samples = json.loads(path.read_text())
    if questions is not None:
        samples = asked_from(samples, json.loads(questions.read_text()))
    found = chars = n = 0
    TOKENS.clear()
    for sample in samples:
        user = user_of(sample, "chat")
        end = await ingest(http, sample, user, client.headers(user))
        del end  # the chat turn is "now"; the conversation's dates are in the past either way
        memories = await listed(http, client, user)
        for qa in sample["qa"]:
            relevant = evidence_ids(qa.get("evidence", []))
            if qa.get("category") not in (1, 2, 3, 4) or not relevant:
                continue
            ids = await turn(http, client, user, str(qa["question"]), "now")
            n += 1
            sources = {s for m in ids if m in memories for s in memories[m]["source_message_ids"]}
            found += bool(sources & relevant)
            chars += sum(len(memories[m]["content"]) for m in ids if m in memories)
    return {
        "questions": n,
        "turns_injecting_an_evidence_turn": round(found / max(1, n), 3),
        "mean_chars_injected": round(chars / max(1, n)),
        "mean_memory_tokens": round(sum(TOKENS) / max(1, len(TOKENS))),
        "p95_memory_tokens": sorted(TOKENS)[int(0.95 * (len(TOKENS) - 1))] if TOKENS else 0,
    }


async def run(sets: list[str], settings: dict[str, Any], only: list[str] | None = None) -> dict[str, Any]:
    defaults = {k: Settings.model_fields[k].default for k in GATE if k in Settings.model_fields}
    report: dict[str, Any] = {"machine": machine(), **defaults, **settings}
    options = {"bridge_embedding": True, **settings}
    if short := [s for s in sets if s in ("labelled", "held_out")]:
        async with served_app(**options) as http:
            report |= await short_sets(http, short)
    if "conversations" in sets:
        for name, path, questions in CONVERSATIONS:
            if only and name not in only:
                continue
            async with served_app(**options) as http:
                report[name] = await conversation(http, path, questions)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--floor", type=float, default=None, help="RECALL_MIN_RELEVANCE")
    parser.add_argument("--general-floor", type=float, default=None, help="RECALL_GENERAL_MIN_RELEVANCE")
    parser.add_argument("--budget", type=int, default=None, help="MEMORY_CONTEXT_TOKENS")
    parser.add_argument("--top-k", type=int, default=None, help="RECALL_TOP_K (candidates for the budget)")
    parser.add_argument(
        "--sets",
        nargs="+",
        choices=["labelled", "held_out", "conversations"],
        default=["labelled", "held_out", "conversations"],
    )
    parser.add_argument(
        "--conversations",
        nargs="+",
        choices=[name for name, _, _ in CONVERSATIONS],
        default=None,
        help="only these conversations of the `conversations` set",
    )
    args = parser.parse_args()
    settings = {
        key: value
        for key, value in (
            ("recall_min_relevance", args.floor),
            ("recall_general_min_relevance", args.general_floor),
            ("memory_context_tokens", args.budget),
            ("recall_top_k", args.top_k),
        )
        if value is not None
    }
    report = asyncio.run(run(args.sets, settings, args.conversations))
    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    variant = "".join(f"_{k.split('_')[1]}{v}" for k, v in settings.items())
    (out / f"chat_recall{variant}.json").write_text(json.dumps(report, ensure_ascii=False, indent=1))
    sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
