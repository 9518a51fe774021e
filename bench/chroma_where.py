"""What Chroma's `user_id` filter costs a dense query as one user fills their collection, and what the
unfiltered query of a large user (memory/longterm/wide_query.py) costs instead (issue 45).

    .venv/bin/python bench/chroma_where.py                        # user A at 5,000, 20,000 and 58,000 records
    .venv/bin/python bench/chroma_where.py --sizes 2000 10000 --queries 30

Starts its own `chroma run` and fills one collection through mnemo's own store
(`ChromaLongTermStore`, one shard): user B with 500 memories, user A grown to each size (384-dimension
unit vectors around 400 topics; the metadata `memory/longterm/records.py` writes for a memory, with no
context, so the collection fills in minutes). At each size, `--queries` random queries of the 15
nearest (the dense channel's `dense_candidates`), wall time per query:

- A filtered: the query every search sent before (`user_rows` not given);
- A as mnemo queries now: `user_rows` = A's count, so a user holding a quarter of the collection or more
  is searched without the filter (falls back to it when too few of theirs come back);
- B filtered (a small user beside a large one: always filtered);
- recall@15 of A's two answers against the exact 15 nearest (numpy over every vector).

Then, at each size, reads and deletes of A's records by id (what a large user's provisional index, a
clustering boost, a forget and an erase send): `--by-id` ids read with vectors, filtered by `user_id`
beside the ids (what `ChromaLongTermStore` sent before) against by id alone, the user's rows kept in
Python (now); and `--by-id` / 4 ids deleted each way (A is that much smaller after each size).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import chromadb  # noqa: E402
import numpy as np  # noqa: E402

from bench.common import machine  # noqa: E402
from harness.services import start_chroma  # noqa: E402
from memory.longterm.chroma import ChromaLongTermStore  # noqa: E402
from memory.models import Memory, SearchFilters  # noqa: E402

BATCH = 500
N_RESULTS = 15


def say(text: str) -> None:
    sys.stdout.write(text + "\n")


def _memories(user: str, start: int, n: int) -> list[Memory]:
    texts = ("我们的发布窗口改到周五上午了", "Our deploy window is now Friday mornings")
    return [
        Memory(
            id=f"mem_{user}_{i:06d}",
            user_id=user,
            content=f"{texts[i % 2]} ({i})",
            created_at=1_700_000_000.0 + i,
            session_id=f"s{i // 40}",
            source="user" if i % 2 else "assistant",
            content_hash=f"{user}{i}",
            importance=0.5,
        )
        for i in range(start, start + n)
    ]


_CENTRES = np.random.default_rng(11).standard_normal((400, 384)).astype(np.float32)


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    """Unit vectors around 400 topics (text embeddings cluster; uniform random ones in 384 dimensions,
    every distance alike, are HNSW's worst case and no text's)."""
    rows = _CENTRES[rng.integers(0, len(_CENTRES), n)] + 0.6 * rng.standard_normal((n, 384)).astype(
        np.float32
    )
    out: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return out


async def _fill(
    store: ChromaLongTermStore, user: str, start: int, n: int, rng: np.random.Generator
) -> np.ndarray:
    rows = []
    for at in range(start, start + n, BATCH):
        k = min(BATCH, start + n - at)
        rows.append(_unit(rng, k))
        await store.upsert(_memories(user, at, k), rows[-1])
    return np.concatenate(rows)


def p95(values: list[float]) -> float:
    return float(np.percentile(values, 95))


def _exact(vectors: np.ndarray, q: np.ndarray) -> set[str]:
    """A's true 15 nearest (numpy, every vector): what both answers are scored against."""
    best = np.argsort(-(vectors @ q))[:N_RESULTS]
    return {f"mem_A_{int(i):06d}" for i in best}


async def _timed(
    store: ChromaLongTermStore, user: str, q: list[float], rows: int | None
) -> tuple[float, list[str]]:
    started = time.perf_counter()
    hits = await store.query(user, q, n_results=N_RESULTS, filters=SearchFilters(), user_rows=rows)
    return (time.perf_counter() - started) * 1000, [m.id for m, _ in hits]


async def _by_id(store: ChromaLongTermStore, size: int, n: int, rng: np.random.Generator) -> list[str]:
    """Read `n` of A's ids with vectors and delete `n // 4`, each way: with the `user_id` filter beside
    the ids (the calls sent before), and as the store sends them now."""
    picked = [f"mem_A_{i:06d}" for i in rng.choice(size, size=n + n // 2, replace=False)]
    reads, deletes = picked[:n], picked[n:]
    where = {"user_id": "A"}
    include = ["metadatas", "documents", "embeddings"]
    started = time.perf_counter()
    await store.on_collection("A", lambda c: c.get(ids=reads, where=where, include=include))
    filtered = time.perf_counter()
    held, _ = await store.get_with_vectors("A", reads)
    now = time.perf_counter()
    assert len(held) == n, "every id read is A's"
    gone = deletes[: n // 4]
    await store.on_collection("A", lambda c: c.delete(ids=gone, where=where))
    deleted = time.perf_counter()
    await store.delete("A", deletes[n // 4 :])
    done = time.perf_counter()
    return [
        f"{size:,}",
        f"{(filtered - started) * 1000:.1f}",
        f"{(now - filtered) * 1000:.1f}",
        f"{(deleted - now) * 1000:.1f}",
        f"{(done - deleted) * 1000:.1f}",
    ]


async def run(args: argparse.Namespace) -> None:
    server = start_chroma(Path(tempfile.mkdtemp(prefix="mnemo-bench-")) / "chroma")
    try:
        host, port = server.url.removeprefix("http://").split(":")
        store = ChromaLongTermStore(
            lambda: chromadb.HttpClient(host=host, port=int(port)), shards=1, collection_prefix="where"
        )
        rng = np.random.default_rng(3)
        await _fill(store, "B", 0, 500, rng)
        say(
            "| A's records | collection | A filtered p50 / p95 ms | A as queried now p50 / p95 ms "
            "| B filtered p50 ms | recall@15 filtered / now |"
        )
        say("|---:|---:|---:|---:|---:|---:|")
        have, vectors = 0, np.zeros((0, 384), dtype=np.float32)
        by_id: list[list[str]] = []
        for size in args.sizes:
            vectors = np.concatenate([vectors, await _fill(store, "A", have, size - have, rng)])
            have = size
            old, new, small, found_old, found_new = [], [], [], 0, 0
            for q in _unit(rng, args.queries):
                t_old, ids_old = await _timed(store, "A", q.tolist(), None)
                t_new, ids_new = await _timed(store, "A", q.tolist(), size)
                t_small, _ = await _timed(store, "B", q.tolist(), 500)
                old.append(t_old)
                new.append(t_new)
                small.append(t_small)
                exact = _exact(vectors, q)
                found_old += len(exact & set(ids_old))
                found_new += len(exact & set(ids_new))
            asked = N_RESULTS * args.queries
            say(
                f"| {size:,} | {size + 500:,} | {statistics.median(old):.1f} / {p95(old):.1f} "
                f"| {statistics.median(new):.1f} / {p95(new):.1f} | {statistics.median(small):.1f} "
                f"| {found_old / asked:.3f} / {found_new / asked:.3f} |"
            )
            by_id.append(await _by_id(store, size, args.by_id, rng))
        say(
            f"\n| A's records | read {args.by_id} by id, filtered ms | now ms | delete {args.by_id // 4}, filtered ms | now ms |"
        )
        say("|---:|---:|---:|---:|---:|")
        for row in by_id:
            say("| " + " | ".join(row) + " |")
        say(f"\n{machine()}")
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[5_000, 20_000, 58_000])
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument("--by-id", type=int, default=200, help="ids read (and a quarter deleted) each way")
    asyncio.run(run(parser.parse_args()))
