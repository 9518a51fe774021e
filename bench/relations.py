"""Relation memory (issue 26): recall of two memories joined by an entity, with the links off and on in
the same run, plus what extraction costs at write time and what a user's graph costs in memory.

    .venv/bin/python bench/relations.py

- **trace set** (`bench/data/relation_traces.json`, `bench/make_relation_traces.py`): per language one
  user with 225 memories and 45 questions whose answer needs both evidence memories (all@10: both in the
  top 10 of `POST /search`), distractors sharing the question's words but not the entity. The memories
  are written once through the API with relation memory on (`RELATION_MEMORY=true`, records indexed at
  write time), asked; then the same stores are opened by an app with `RELATION_MEMORY=false` (no links)
  and asked again. Also any@10, mean characters of the top 10, search p50/p95 of each pass.
- **ingest cost**: extraction (`records_of`) per memory over the trace messages, in process.
- **graph budget**: a synthetic user of 10,000 memories (the trace messages repeated with other ids and
  numbers): the records' bytes at rest, the time to build the graph, and its size in process
  (tracemalloc).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, app_on, bench_stores, machine, percentile  # noqa: E402
from memory.models import Memory  # noqa: E402
from memory.relations.graph import Graph  # noqa: E402
from memory.relations.store import records_of  # noqa: E402

DATA = ROOT / "bench" / "data" / "relation_traces.json"
TOKENS = TokenCodec(SECRET)


def headers(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS.mint(user, ttl_seconds=86400)}"}


async def ingest(client: httpx.AsyncClient, user: str, messages: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    for i in range(0, len(messages), 25):
        resp = await client.post(
            f"/v1/memory/{user}/messages",
            json={"session_id": "s1", "messages": messages[i : i + 25]},
            headers=headers(user),
        )
        resp.raise_for_status()
    return time.perf_counter() - started


async def ask(
    client: httpx.AsyncClient,
    user: str,
    questions: list[dict[str, Any]],
    as_of: float,
    misses: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """all@10, any@10, characters and latency of `questions`; with `misses`, each question without all
    its evidence in the top 10 is appended to it with its hits (content, score breakdown, link path)."""
    all10, any10, chars, latencies = [], [], [], []
    by_kind: dict[str, list[bool]] = {}
    for q in questions:
        started = time.perf_counter()
        resp = await client.post(
            f"/v1/memory/{user}/search",
            json={"query": q["question"], "top_k": 10, "as_of": as_of, "explain": misses is not None},
            headers=headers(user),
        )
        latencies.append((time.perf_counter() - started) * 1e3)
        resp.raise_for_status()
        hits = resp.json()["results"]
        found = {mid for h in hits for mid in h["source_message_ids"]}
        evidence = set(q["evidence"])
        all10.append(evidence <= found)
        any10.append(bool(evidence & found))
        chars.append(sum(len(h["content"]) for h in hits))
        by_kind.setdefault(q["kind"], []).append(evidence <= found)
        if misses is not None and not evidence <= found:
            misses.append({
                "question": q["question"],
                "missing": sorted(evidence - found),
                "hits": [
                    {
                        "ids": h["source_message_ids"],
                        "content": h["content"],
                        "score": round(h["score"], 3),
                        "boosts": (h.get("explain") or {}).get("boosts"),
                        "links": (h.get("explain") or {}).get("links"),
                    }
                    for h in hits
                ],
            })  # fmt: skip
    return {
        "all@10": round(statistics.mean(all10), 3),
        "any@10": round(statistics.mean(any10), 3),
        "chars_top10": round(statistics.mean(chars)),
        "p50_ms": round(percentile(latencies, 50), 1),
        "p95_ms": round(percentile(latencies, 95), 1),
        "all@10_by_kind": {k: round(statistics.mean(v), 3) for k, v in by_kind.items()},
    }


def memories_of(messages: list[dict[str, Any]], user: str, copies: int = 1) -> list[Memory]:
    out = []
    for c in range(copies):
        for m in messages:
            text = (
                m["content"] if c == 0 else m["content"].replace("2025", f"{2100 + c}").replace("88", f"{c}8")
            )
            out.append(
                Memory(
                    id=f"{m['id']}-{c}",
                    user_id=user,
                    content=text,
                    created_at=m["timestamp"] + c,
                    session_id="s1",
                    source="user",
                    content_hash="",
                )
            )
    return out


def extraction_cost(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lang, part in data.items():
        mems = memories_of(part["messages"], lang)
        started = time.perf_counter()
        for _ in range(5):
            records_of(mems)
        out[lang] = {"us_per_memory": round((time.perf_counter() - started) / (5 * len(mems)) * 1e6, 1)}
    return out


def graph_budget(data: dict[str, Any], n: int = 10_000) -> dict[str, Any]:
    messages = data["zh"]["messages"] + data["en"]["messages"]
    mems = memories_of(messages, "u", copies=n // len(messages) + 1)[:n]
    records = records_of(mems)
    at_rest = sum(len(mid) + len(r.dumps().encode()) for mid, r in records.items())
    tracemalloc.start()
    started = time.perf_counter()
    graph = Graph(records)
    built = time.perf_counter() - started
    size, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    seeds = [m.id for m in mems[:3]]
    started = time.perf_counter()
    for _ in range(100):
        graph.linked(seeds, graph.entities_in("我3月提交的报价单审批到哪了？", said_at=mems[-1].created_at))
    linked_ms = (time.perf_counter() - started) / 100 * 1e3
    return {
        "memories": n,
        "records": len(records),
        "entities": len(graph),
        "facts": len(graph.facts),
        "bytes_at_rest": at_rest,
        "graph_build_ms": round(built * 1e3),
        "graph_bytes_in_process": size,  # the records plus the graph (what a worker caches per user)
        "link_lookup_ms": round(linked_ms, 2),
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(DATA.read_text())
    as_of = max(m["timestamp"] for part in data.values() for m in part["messages"]) + 86400
    results: dict[str, Any] = {"machine": machine(), "trace": {}}
    with bench_stores() as (redis_url, chroma_url):
        async with app_on(redis_url, chroma_url, relation_memory=True) as client:
            for lang, part in data.items():
                seconds = await ingest(client, f"rel-{lang}", part["messages"])
                results["trace"].setdefault(lang, {})["ingest_ms_per_memory"] = round(
                    seconds / len(part["messages"]) * 1e3, 1
                )
                misses: list[dict[str, Any]] | None = [] if args.show_misses else None
                results["trace"][lang]["links_on"] = await ask(
                    client, f"rel-{lang}", part["questions"], as_of, misses
                )
                if misses is not None:
                    results["trace"][lang]["misses_on"] = misses
        async with app_on(redis_url, chroma_url, relation_memory=False) as client:
            for lang, part in data.items():
                results["trace"][lang]["links_off"] = await ask(
                    client, f"rel-{lang}", part["questions"], as_of
                )
    if args.trace_only:
        return results
    results["extraction"] = extraction_cost(data)
    results["graph_10k"] = graph_budget(data)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "relations.json")
    parser.add_argument(
        "--show-misses", action="store_true", help="list the links-on misses with their top 10 (explained)"
    )
    parser.add_argument(
        "--trace-only", action="store_true", help="the trace set alone (no ingest cost, no 10k graph)"
    )
    args = parser.parse_args()
    results = asyncio.run(run(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, ensure_ascii=False, indent=1) + "\n")
    sys.stdout.write(json.dumps(results, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
