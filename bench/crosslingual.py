"""Cross-lingual recall through the HTTP API: facts said in one language, asked in the other.

    .venv/bin/python bench/crosslingual.py                  # the bridge channel on (default)
    .venv/bin/python bench/crosslingual.py --bridge off     # the pipeline before it (MiniLM + BM25)

Two parts, each on its own fresh redis-server + `chroma run` with the app's real lifespan and models:

- **facts** (`bench/data/crosslingual_facts.json`): one user stores 24 personal facts (12 said in
  English, 12 in Chinese) among 24 small-talk turns (12 each); every fact is asked in English and in
  Chinese, 10 in mixed-language questions ("我上次说的那个 project deadline 是哪天？"). recall@k = the
  fact's message is among the top k results.
- **conversations** (`bench/data/crosslingual_questions.json`): the Chinese set (`zh_conversation`,
  67 questions) asked in English, and LoCoMo conv-26 (first 60 category 1-4 questions) asked in
  Chinese, each next to the same questions in their original language; any@k = one evidence turn among
  the top k (as `bench/locomo.py` scores it).

Every row reports recall@3, recall@10 and the context cost (mean characters of the top 10).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, machine, percentile, served_app  # noqa: E402
from bench.locomo import DEFAULT_DATA, evidence_ids, session_messages, sessions_of  # noqa: E402

DATA = ROOT / "bench" / "data"
FACTS = DATA / "crosslingual_facts.json"
QUESTIONS = DATA / "crosslingual_questions.json"
ZH_SET = DATA / "zh_conversation.json"


class Asker:
    def __init__(self, client: httpx.AsyncClient) -> None:
        self.client = client
        self.tokens = TokenCodec(SECRET)
        self.latencies: list[float] = []

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens.mint(user, ttl_seconds=86400)}"}

    async def store(self, user: str, session: str, messages: list[dict[str, Any]]) -> None:
        resp = await self.client.post(
            f"/v1/memory/{user}/messages",
            json={"session_id": session, "messages": messages},
            headers=self.headers(user),
        )
        resp.raise_for_status()

    async def ask(self, user: str, question: str, as_of: float | None = None) -> list[dict[str, Any]]:
        body: dict[str, Any] = {"query": question, "top_k": 10}
        if as_of is not None:
            body["as_of"] = as_of
        t0 = time.perf_counter()
        resp = await self.client.post(f"/v1/memory/{user}/search", json=body, headers=self.headers(user))
        self.latencies.append((time.perf_counter() - t0) * 1000)
        resp.raise_for_status()
        return list(resp.json()["results"])


def hits(results: list[dict[str, Any]], relevant: set[str], k: int) -> bool:
    return bool(relevant & {mid for r in results[:k] for mid in r["source_message_ids"]})


def row(scored: list[tuple[bool, bool, int]]) -> dict[str, Any]:
    if not scored:
        return {"n": 0}
    return {
        "n": len(scored),
        "recall@3": round(statistics.fmean(a for a, _, _ in scored), 3),
        "recall@10": round(statistics.fmean(b for _, b, _ in scored), 3),
        "mean_chars_top10": round(statistics.fmean(c for _, _, c in scored)),
    }


def score(results: list[dict[str, Any]], relevant: set[str]) -> tuple[bool, bool, int]:
    return (
        hits(results, relevant, 3),
        hits(results, relevant, 10),
        sum(len(r["content"]) for r in results[:10]),
    )


async def facts_part(asker: Asker) -> dict[str, Any]:
    data = json.loads(FACTS.read_text())
    user = "xl-facts"
    messages = [
        {"role": "user", "content": f["text"], "id": f"f-{f['id']}", "timestamp": 1_790_000_000 + i * 60}
        for i, f in enumerate(data["facts"])
    ] + [
        {"role": "user", "content": d["text"], "id": f"d-{i}", "timestamp": 1_790_000_030 + i * 60}
        for i, d in enumerate(data["distractors"])
    ]
    messages.sort(key=lambda m: m["timestamp"])
    await asker.store(user, "s1", messages)
    groups: dict[str, list[tuple[bool, bool, int]]] = {}
    misses: list[dict[str, str]] = []
    for f in data["facts"]:
        for asked in ("en", "zh"):
            results = await asker.ask(user, f[f"question_{asked}"])
            key = f"{f['language']}->{asked}"
            s = score(results, {f"f-{f['id']}"})
            groups.setdefault(key, []).append(s)
            if not s[0]:
                misses.append({"group": key, "question": f[f"question_{asked}"], "fact": f["text"]})
    by_id = {f["id"]: f for f in data["facts"]}
    for m in data["mixed"]:
        results = await asker.ask(user, m["question"])
        s = score(results, {f"f-{m['fact']}"})
        groups.setdefault("mixed", []).append(s)
        if not s[0]:
            misses.append({"group": "mixed", "question": m["question"], "fact": by_id[m["fact"]]["text"]})
    cross = groups["en->zh"] + groups["zh->en"]
    same = groups["en->en"] + groups["zh->zh"]
    out = {k: row(v) for k, v in sorted(groups.items())}
    out["cross-lingual (both)"] = row(cross)
    out["same language (both)"] = row(same)
    return {"rows": out, "misses": misses}


async def conversation_part(
    asker: Asker, data_path: Path, key: str, translated: list[dict[str, Any]]
) -> dict[str, Any]:
    sample = json.loads(data_path.read_text())[0]
    user = re.sub(r"[^A-Za-z0-9_.-]", "-", f"xl-{sample['sample_id']}")
    end = 0.0
    for number, started, turns in sessions_of(sample["conversation"]):
        end = max(end, started + len(turns))
        await asker.store(user, f"session-{number}", session_messages(started, turns))
    questions = [q for q in sample["qa"] if q.get("category") in (1, 2, 3, 4)]
    original: list[tuple[bool, bool, int]] = []
    other: list[tuple[bool, bool, int]] = []
    for t in translated:
        qa = questions[t["index"]]
        if qa["question"] != t["original"]:
            raise ValueError(f"{key}: question {t['index']} does not match its translation's original")
        relevant = evidence_ids(qa.get("evidence", []))
        if not relevant:
            continue
        original.append(score(await asker.ask(user, t["original"], end), relevant))
        other.append(score(await asker.ask(user, t["translated"], end), relevant))
    return {"original language": row(original), "translated": row(other)}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    options = {"bridge_embedding": args.bridge == "on"}
    questions = json.loads(QUESTIONS.read_text())
    result: dict[str, Any] = {"bridge": args.bridge, "machine": machine()}
    async with served_app(**options) as client:
        asker = Asker(client)
        result["facts"] = await facts_part(asker)
    async with served_app(**options) as client:
        asker2 = Asker(client)
        result["zh_conversation asked in English"] = await conversation_part(
            asker2, ZH_SET, "zh", questions["zh_conversation"]
        )
        result["locomo conv-26 asked in Chinese"] = await conversation_part(
            asker2, Path(args.locomo), "locomo", questions["locomo_conv-26"]
        )
    lat = asker.latencies + asker2.latencies
    result["search_p50_ms"] = round(percentile(lat, 50), 1)
    result["search_p95_ms"] = round(percentile(lat, 95), 1)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bridge", choices=["on", "off"], default="on", help="BRIDGE_EMBEDDING")
    parser.add_argument("--locomo", default=str(DEFAULT_DATA))
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"crosslingual_bridge-{args.bridge}.json").write_text(
        json.dumps(result, indent=2, ensure_ascii=False)
    )
    misses = result["facts"].pop("misses")
    lines = [f"bridge {result['bridge']}  ({result['machine']})"]
    for part in ("facts", "zh_conversation asked in English", "locomo conv-26 asked in Chinese"):
        rows = result[part]["rows"] if part == "facts" else result[part]
        lines.append(f"{part}:")
        lines += [f"  {name:<24} {json.dumps(r)}" for name, r in rows.items()]
    lines.append(f"search p50 {result['search_p50_ms']} ms, p95 {result['search_p95_ms']} ms")
    if args.show_misses:
        lines += [json.dumps(m, ensure_ascii=False) for m in misses]
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
