"""Where a worker's first search of one user goes, at N memories (issue 29).

    PYTHONPATH=. .venv/bin/python bench/first_search_parts.py              # one user, 2,000 memories
    PYTHONPATH=. .venv/bin/python bench/first_search_parts.py --memories 500
    PYTHONPATH=. .venv/bin/python bench/first_search_parts.py --compare-snapshots --users 3 --rounds 5

Own redis-server and `chroma run`; stores `--memories` synthetic zh+en facts (`bench/search_latency.py`'s)
for one user through `POST /messages` (batches of 100), then times, from a fresh app, the user's first
search and a second one, and then, three times each, the parts of a first search: reading the records
with their vectors from Chroma, building the BM25 index from them, reading the bridge vectors, turning
those into bridge rows, and reading the records without vectors.

`--compare-snapshots`: `--users` users of `--memories` each; then `--rounds` rounds, each a fresh app
without index snapshots (INDEX_SNAPSHOTS=false: the full build, as before) and a fresh app with them
(the snapshots written by one warm-up app first), one after the other, timing every user's first search
and three later ones in each; p50/p95 of both, the host load average before and after, and the growth of
the process's RSS over the first searches of one app per memory loaded. `--warm-models`: each fresh app
first searches a 20-memory user, untimed, so that the models' first inferences in the process are not
counted in the first user's first search.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import statistics
import sys
import time
from pathlib import Path

import httpx
from redis.asyncio import Redis

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.clients.redis import build_redis  # noqa: E402
from app.composition import build_bridge, build_store  # noqa: E402
from app.http.auth import TokenCodec  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import (  # noqa: E402
    SECRET,
    app_on,
    bench_stores,
    machine,
    percentile,  # noqa: E402
)
from bench.search_latency import (  # noqa: E402
    EN_QUERIES,
    ZH_QUERIES,
    fact,  # noqa: E402
)
from memory.recall.crosslingual import rows_from  # noqa: E402
from memory.recall.keyword_index import BM25Index  # noqa: E402
from memory.recall.snapshot import IndexSnapshots, decode, fingerprint_of  # noqa: E402


def _ms(seconds: float) -> int:
    return round(seconds * 1000)


async def run(memories: int) -> None:
    rng = random.Random(3)
    headers = {"Authorization": f"Bearer {TokenCodec(SECRET).mint('u1', ttl_seconds=86400)}"}
    with bench_stores() as (redis_url, chroma_url):
        async with app_on(redis_url, chroma_url) as client:
            for offset in range(0, memories, 100):
                messages = [
                    {"role": "user", "content": f"{fact(rng)} ({offset + i})", "id": f"m{offset + i}"}
                    for i in range(min(100, memories - offset))
                ]
                body = {"session_id": f"s{offset}", "messages": messages}
                (await client.post("/v1/memory/u1/messages", json=body, headers=headers)).raise_for_status()
        async with app_on(redis_url, chroma_url) as client:
            for name in ("first search", "second search"):
                t0 = time.perf_counter()
                query = {"query": "where did I move"}
                (await client.post("/v1/memory/u1/search", json=query, headers=headers)).raise_for_status()
                sys.stdout.write(f"{name}: {_ms(time.perf_counter() - t0)} ms\n")
        settings = Settings(
            _env_file=None, redis_url=redis_url, chroma_url=chroma_url, auth_jwt_secret=SECRET
        )
        store = build_store(settings, build_redis(settings, "bench"), build_bridge(settings))
        for _ in range(3):
            t0 = time.perf_counter()
            records, vectors = await store.get_with_vectors("u1")
            t1 = time.perf_counter()
            index = BM25Index(records, vectors)
            t2 = time.perf_counter()
            bridged = await store.bridge.get("u1") if hasattr(store, "bridge") else {}
            t3 = time.perf_counter()
            rows_from(index.memories, bridged, None)
            t4 = time.perf_counter()
            await store.get("u1", include_content=True)
            t5 = time.perf_counter()
            sys.stdout.write(
                f"n={len(records)}: records with vectors {_ms(t1 - t0)} ms, BM25 index {_ms(t2 - t1)} ms, "
                f"bridge vectors {_ms(t3 - t2)} ms, bridge rows {_ms(t4 - t3)} ms, "
                f"records without vectors {_ms(t5 - t4)} ms\n"
            )
    sys.stdout.write(machine() + "\n")


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


async def _ingest(client: httpx.AsyncClient, user: str, memories: int, rng: random.Random) -> None:
    headers = {"Authorization": f"Bearer {TokenCodec(SECRET).mint(user, ttl_seconds=86400)}"}
    for offset in range(0, memories, 100):
        messages = [
            {"role": "user", "content": f"{fact(rng)} ({offset + i})", "id": f"m{offset + i}"}
            for i in range(min(100, memories - offset))
        ]
        body = {"session_id": f"s{offset}", "messages": messages}
        (await client.post(f"/v1/memory/{user}/messages", json=body, headers=headers)).raise_for_status()


WARM = "warm-up"


async def _searches(
    redis_url: str, chroma_url: str, users: list[str], snapshots: bool, rng: random.Random, warm: bool
) -> tuple[list[float], list[float], int]:
    """A fresh app: each user's first search, then three later searches each; (first ms, later ms,
    RSS growth in bytes over the first searches)."""
    first: list[float] = []
    later: list[float] = []
    async with app_on(redis_url, chroma_url, index_snapshots=snapshots) as client:
        if warm:  # the worker's own first queries (model warm-up) on another user, not timed
            headers = {"Authorization": f"Bearer {TokenCodec(SECRET).mint(WARM, ttl_seconds=86400)}"}
            for text in (EN_QUERIES[0], ZH_QUERIES[0]):
                response = await client.post(
                    f"/v1/memory/{WARM}/search", json={"query": text}, headers=headers
                )
                response.raise_for_status()
        gc.collect()
        rss = _rss_bytes()
        for user in users:
            headers = {"Authorization": f"Bearer {TokenCodec(SECRET).mint(user, ttl_seconds=86400)}"}
            t0 = time.perf_counter()
            query = {"query": rng.choice(EN_QUERIES + ZH_QUERIES)}
            (await client.post(f"/v1/memory/{user}/search", json=query, headers=headers)).raise_for_status()
            first.append((time.perf_counter() - t0) * 1000)
        grown = _rss_bytes() - rss
        for user in users:
            headers = {"Authorization": f"Bearer {TokenCodec(SECRET).mint(user, ttl_seconds=86400)}"}
            for _ in range(3):
                t0 = time.perf_counter()
                query = {"query": rng.choice(EN_QUERIES + ZH_QUERIES)}
                response = await client.post(f"/v1/memory/{user}/search", json=query, headers=headers)
                response.raise_for_status()
                later.append((time.perf_counter() - t0) * 1000)
        await asyncio.sleep(2)  # let a snapshot being saved finish before the app stops
    return first, later, grown


def _row(name: str, values: list[float]) -> str:
    return (
        f"{name}: n={len(values)} p50 {percentile(values, 50):.0f} ms, p95 {percentile(values, 95):.0f} ms, "
        f"max {max(values):.0f} ms"
    )


async def compare(memories: int, users: int, rounds: int, warm: bool) -> None:
    rng = random.Random(3)
    names = [f"u{i}" for i in range(users)]
    with bench_stores() as (redis_url, chroma_url):
        async with app_on(redis_url, chroma_url, index_snapshots=False) as client:
            for user in names:
                await _ingest(client, user, memories, rng)
            await _ingest(client, WARM, 20, rng)
        sys.stdout.write(f"ingested {users} x {memories} memories; load {_load()}\n")
        await _searches(
            redis_url, chroma_url, names, True, rng, warm
        )  # warm-up: builds, writes the snapshots
        redis = Redis.from_url(redis_url, decode_responses=True)
        stored = IndexSnapshots(redis, fingerprint="")
        held = [len(await stored.read(u) or b"") for u in names]
        sys.stdout.write(f"snapshots: {held} bytes\n")
        raw = await stored.read(names[0]) or b""
        await redis.aclose()
        fingerprint = fingerprint_of(raw) or ""
        for _ in range(3):
            t0 = time.perf_counter()
            snap = decode(raw, fingerprint)
            sys.stdout.write(
                f"decode of one snapshot ({len(snap.index) if snap else 0} memories): {(time.perf_counter() - t0) * 1000:.0f} ms\n"
            )
        results: dict[bool, tuple[list[float], list[float], list[int]]] = {
            False: ([], [], []),
            True: ([], [], []),
        }
        loads = [_load()]
        for _ in range(rounds):
            for snapshots in (False, True):
                first, later, growth = await _searches(redis_url, chroma_url, names, snapshots, rng, warm)
                results[snapshots][0].extend(first)
                results[snapshots][1].extend(later)
                results[snapshots][2].append(growth)
            loads.append(_load())
        for snapshots in (False, True):
            first, later, grown_all = results[snapshots]
            label = "snapshots" if snapshots else "full build (before)"
            sys.stdout.write(_row(f"{label} first search", first) + "\n")
            sys.stdout.write(_row(f"{label} later searches", later) + "\n")
            per = statistics.median(grown_all) / (users * memories)
            sys.stdout.write(
                f"{label} RSS growth over the first searches: median {per / 1024:.1f} KiB per memory\n"
            )
        sys.stdout.write(f"load average (1, 5, 15 min) at each round: {loads}\n")
    sys.stdout.write(machine() + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--compare-snapshots", action="store_true")
    parser.add_argument("--users", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--warm-models",
        action="store_true",
        help="each fresh app first searches a small other user (its models' first inferences untimed)",
    )
    args = parser.parse_args()
    if args.compare_snapshots:
        asyncio.run(compare(args.memories, args.users, args.rounds, args.warm_models))
    else:
        asyncio.run(run(args.memories))


if __name__ == "__main__":
    main()
