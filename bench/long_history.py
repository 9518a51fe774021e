"""Long histories (issue 29): ingest speed, first-search latency and recall on the long-history set.

    PYTHONPATH=. .venv/bin/python bench/long_history.py                  # 32 users, ~11,800 turns
    PYTHONPATH=. .venv/bin/python bench/long_history.py --users 4        # a quick look (ingest speed)
    PYTHONPATH=. .venv/bin/python bench/long_history.py --relations on   # with relation memory

The set is `bench/make_long_history.py`'s, built in memory (its sha256 is printed). Starts its own
redis-server and `chroma run` (temp dir) and serves the app in-process with its real lifespan and models.

1. **Ingest** through `POST /v1/memory/{user}/messages`, one call per session (its turns in order, the
   turn id as message id, the session's start + a minute per turn as timestamp; `--batch N`: N turns per
   call instead). Turns/s over every user.
2. **Bare pipeline** (what the service is compared with): the first `--bare-users` users' turns, each
   user just before the service ingests the same user (same stores, same moment's load), one session per
   step: split into the service's 400-character segments, embedded by both models side by side (MiniLM
   and the USE bridge, every segment, no gate), added to two Chroma collections. Turns/s of both over
   those users.
3. **Search** from a fresh app on the same stores (an API worker that did not write these users): each
   user's first question is its first search in that worker ("first search", which loads what the
   worker needs of the user); then the user's other questions. `top_k` 10, `as_of` the question's date.
4. **Recall**: any@10 (an evidence turn among the top 10's `source_message_ids`), all@10 (every evidence
   turn), and the mean characters of the top 10, per question type; against **plain BM25 over whole
   turns** in the same run (mnemo's tokenizer, k1 1.2, b 0.75, every turn of the user one document, the
   10 best turns whole).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import chromadb  # noqa: E402
import httpx  # noqa: E402

from app.composition import build_embedder  # noqa: E402
from app.http.auth import TokenCodec  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, app_on, bench_stores, machine, percentile  # noqa: E402
from bench.make_long_history import TYPES, build, describe  # noqa: E402
from memory.embedding.multilingual import MultilingualEmbedder  # noqa: E402
from memory.models import Memory  # noqa: E402
from memory.recall.keyword_index import BM25Index  # noqa: E402
from memory.text.cleaning import segment  # noqa: E402
from memory.text.privacy import sanitize  # noqa: E402

User = dict[str, Any]


def _headers(tokens: TokenCodec, user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {tokens.mint(user, ttl_seconds=86400)}"}


def calls(user: User, batch: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """The user's turns as `POST /messages` bodies: one per session (`batch` 0), or `batch` consecutive
    turns per call across sessions (an importer's batches; the call takes its first turn's session)."""
    turns = [
        (
            s["session_id"],
            {"role": t["role"], "content": t["content"], "id": t["id"], "timestamp": s["started"] + 60 * i},
        )
        for s in user["sessions"]
        for i, t in enumerate(s["turns"])
    ]
    if not batch:
        return [
            (s["session_id"], [m for sid, m in turns if sid == s["session_id"]]) for s in user["sessions"]
        ]
    return [(turns[i][0], [m for _, m in turns[i : i + batch]]) for i in range(0, len(turns), batch)]


class BarePipeline:
    """Segments embedded by both models (side by side) and added to Chroma, one session at a time: no
    write policy, no index, no version. Its own model instances and collections on the same server."""

    def __init__(self, chroma_url: str) -> None:
        self._minilm = build_embedder(Settings(_env_file=None, auth_jwt_secret=SECRET))
        self._bridge = MultilingualEmbedder(threads=1)
        host, port = chroma_url.removeprefix("http://").rsplit(":", 1)
        client = chromadb.HttpClient(host=host, port=int(port))
        self._records = client.get_or_create_collection("bare-minilm", metadata={"hnsw:space": "cosine"})
        self._bridged = client.get_or_create_collection("bare-bridge", metadata={"hnsw:space": "cosine"})

    async def user(self, user: User) -> float:
        """Seconds to store the user's turns."""
        start = time.perf_counter()
        for session in user["sessions"]:
            texts: list[str] = []
            ids: list[str] = []
            for t in session["turns"]:
                for n, part in enumerate(segment(sanitize(t["content"]))):
                    texts.append(part)
                    ids.append(f"{t['id']}-{n}")
            vectors, bvectors = await asyncio.gather(self._minilm.embed(texts), self._bridge.embed(texts))
            metas: list[Any] = [{"user_id": user["user_id"]} for _ in ids]
            await asyncio.to_thread(
                self._records.add, ids=ids, embeddings=vectors, documents=texts, metadatas=metas
            )
            await asyncio.to_thread(self._bridged.add, ids=ids, embeddings=bvectors, metadatas=metas)
        return time.perf_counter() - start


def _turns(user: User) -> int:
    return sum(len(s["turns"]) for s in user["sessions"])


async def ingest(
    client: httpx.AsyncClient,
    tokens: TokenCodec,
    users: Sequence[User],
    batch: int,
    bare: BarePipeline | None,
    bare_users: int,
) -> dict[str, Any]:
    """Every user through the API; the first `bare_users` also through the bare pipeline, each just
    before the service takes the same user (so the two share the machine's load of that moment)."""
    service: list[float] = []
    floor: list[float] = []
    for k, user in enumerate(users):
        if bare is not None and k < bare_users:
            floor.append(await bare.user(user))
        headers = _headers(tokens, user["user_id"])
        t0 = time.perf_counter()
        for session_id, messages in calls(user, batch):
            resp = await client.post(
                f"/v1/memory/{user['user_id']}/messages",
                json={"session_id": session_id, "messages": messages},
                headers=headers,
            )
            resp.raise_for_status()
        service.append(time.perf_counter() - t0)
    turns = sum(_turns(u) for u in users)
    stored = 0
    for user in users:
        listed = await client.get(
            f"/v1/memory/{user['user_id']}/list?limit=1", headers=_headers(tokens, user["user_id"])
        )
        stored += int(listed.json()["total"])
    out: dict[str, Any] = {
        "turns": turns,
        "seconds": round(sum(service), 1),
        "turns_per_s": round(turns / sum(service), 1),
        "memories": stored,
        "memories_per_turn": round(stored / turns, 2),
    }
    if floor:
        head = sum(_turns(u) for u in users[: len(floor)])
        out["same_users_as_bare"] = {
            "users": len(floor),
            "turns": head,
            "service_turns_per_s": round(head / sum(service[: len(floor)]), 1),
            "bare_turns_per_s": round(head / sum(floor), 1),
        }
    return out


async def ask(
    client: httpx.AsyncClient, tokens: TokenCodec, users: Sequence[User]
) -> tuple[list[dict[str, Any]], list[float], list[float]]:
    rows: list[dict[str, Any]] = []
    first: list[float] = []
    later: list[float] = []
    for user in users:
        headers = _headers(tokens, user["user_id"])
        for k, q in enumerate(user["questions"]):
            t0 = time.perf_counter()
            resp = await client.post(
                f"/v1/memory/{user['user_id']}/search",
                json={"query": q["question"], "top_k": 10, "as_of": q["question_date"]},
                headers=headers,
            )
            (first if k == 0 else later).append((time.perf_counter() - t0) * 1000)
            resp.raise_for_status()
            results = resp.json()["results"][:10]
            found = {mid for r in results for mid in r["source_message_ids"]}
            rows.append(
                _scored(q, user["language"], found, sum(len(r["content"]) for r in results), len(results))
            )
    return rows, first, later


def _scored(q: dict[str, Any], language: str, found: set[str], chars: int, hits: int) -> dict[str, Any]:
    evidence = set(q["evidence"])
    return {
        "type": q["question_type"],
        "language": language,
        "any10": bool(evidence & found),
        "all10": evidence <= found,
        "chars10": chars,
        "hits": hits,
        "question": q["question"],
    }


def bm25_turns(users: Sequence[User]) -> list[dict[str, Any]]:
    """Plain BM25 over whole turns: each turn one document, the 10 best turns whole."""
    rows = []
    from memory.text.tokens import tokenize

    for user in users:
        turns = [t for s in user["sessions"] for t in s["turns"]]
        docs = [
            Memory(
                id=t["id"],
                user_id=user["user_id"],
                content=t["content"],
                created_at=0.0,
                session_id="",
                source=t["role"],
                content_hash="",
            )
            for t in turns
        ]
        index = BM25Index(docs)
        text = {t["id"]: t["content"] for t in turns}
        for q in user["questions"]:
            top = [mid for mid, _ in index.search(tokenize(q["question"]), limit=10)]
            rows.append(_scored(q, user["language"], set(top), sum(len(text[m]) for m in top), len(top)))
    return rows


def table(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def stats(part: Sequence[dict[str, Any]]) -> dict[str, float]:
        return {
            "n": len(part),
            "any10": round(statistics.fmean(r["any10"] for r in part), 3),
            "all10": round(statistics.fmean(r["all10"] for r in part), 3),
            "chars10": round(statistics.fmean(r["chars10"] for r in part)),
        }

    out: dict[str, Any] = {"all": stats(rows)}
    for language in ("en", "zh"):
        part = [r for r in rows if r["language"] == language]
        if part:
            out[language] = stats(part)
    for t in TYPES:
        part = [r for r in rows if r["type"] == t]
        if part:
            out[t] = stats(part)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    data = build(args.users)
    tokens = TokenCodec(SECRET)
    settings: dict[str, Any] = {"relation_memory": args.relations == "on"}
    result: dict[str, Any] = {"set": describe(data)}
    with bench_stores() as (redis_url, chroma_url):
        bare = BarePipeline(chroma_url) if args.bare_users else None
        async with app_on(redis_url, chroma_url, **settings) as client:
            result["ingest"] = await ingest(client, tokens, data, args.batch, bare, args.bare_users)
        async with app_on(redis_url, chroma_url, **settings) as client:  # a worker that wrote nothing
            rows, first, later = await ask(client, tokens, data)
        if args.compare_segments:  # the same memories ranked as before issue 29 (every segment a hit)
            async with app_on(redis_url, chroma_url, **settings, retrieval_one_per_turn=False) as client:
                result["mnemo_every_segment"] = table((await ask(client, tokens, data))[0])
    result["first_search_ms"] = {
        "p50": round(percentile(first, 50), 1),
        "p95": round(percentile(first, 95), 1),
    }
    result["later_search_ms"] = {
        "p50": round(percentile(later, 50), 1),
        "p95": round(percentile(later, 95), 1),
    }
    result["max_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    result["mnemo"] = table(rows)
    result["bm25_turns"] = table(bm25_turns(data))
    result["machine"] = machine()
    result["misses"] = [r for r in rows if not r["all10"]][: args.show_misses]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument("--bare-users", type=int, default=4, help="users the bare pipeline ingests (0: none)")
    parser.add_argument("--batch", type=int, default=0, help="turns per /messages call (0: one session)")
    parser.add_argument("--relations", choices=["on", "off"], default="off")
    parser.add_argument(
        "--compare-segments",
        action="store_true",
        help="also rank with RETRIEVAL_ONE_PER_TURN=false (every segment its own hit) on the same memories",
    )
    parser.add_argument("--show-misses", type=int, default=0)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"long_history_{args.users}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    misses = result.pop("misses")
    for key, value in result.items():
        if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
            sys.stdout.write(f"{key}\n" + "".join(f"  {k:<27} {v}\n" for k, v in value.items()))
        else:
            sys.stdout.write(f"{key:<29} {value}\n")
    for miss in misses:
        sys.stdout.write(json.dumps(miss, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
