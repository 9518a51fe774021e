"""Where a worker's first search of one user goes, at N memories (issue 29).

    PYTHONPATH=. .venv/bin/python bench/first_search_parts.py              # one user, 2,000 memories
    PYTHONPATH=. .venv/bin/python bench/first_search_parts.py --memories 500

Own redis-server and `chroma run`; stores `--memories` synthetic zh+en facts (`bench/search_latency.py`'s)
for one user through `POST /messages` (batches of 100), then times, from a fresh app, the user's first
search and a second one, and then, three times each, the parts of a first search: reading the records
with their vectors from Chroma, building the BM25 index from them, reading the bridge vectors, turning
those into bridge rows, and reading the records without vectors.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.clients.redis import build_redis  # noqa: E402
from app.http.auth import TokenCodec  # noqa: E402
from app.lifespan import build_bridge, build_store  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, app_on, bench_stores, machine  # noqa: E402
from bench.search_latency import fact  # noqa: E402
from memory.recall.crosslingual import rows_from  # noqa: E402
from memory.recall.keyword_index import BM25Index  # noqa: E402


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    asyncio.run(run(parser.parse_args().memories))


if __name__ == "__main__":
    main()
