"""Search latency and worker memory before and after archival, measured in one run.

    .venv/bin/python bench/archive_tiers.py                          # 100k memories, 1,000 users
    .venv/bin/python bench/archive_tiers.py --users 100 --per-user 98 # 10k, quick

Starts its own redis-server and `chroma run` (temp dir), bulk-loads `users x (per_user + 2)` memories
spread over 600 days (bench/archive_data.py: zh+en filler, a 6-month and an 18-month fact per user)
straight through the store with a deterministic embedder (HashEmbedder, 384 dimensions), then:

1. before: a fresh worker process (the domain service as an API worker builds it) searches every user
   once (each first search builds that user's in-process index, timed as "first"), then `--searches`
   searches of random users (timed: p50/p95); it reports its RSS and the memories its indexes hold;
2. runs the archival job (`Archiver`, as `python -m app.cli.archive` does) at the simulated "now";
3. after: the same worker run again, searching by default (hot + warm, cold when nothing relevant),
   then with `tiers` hot + warm (no cold fallback), then hot only.

Prints a table and writes JSON to bench/results/archive_tiers.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.clients.redis import build_redis  # noqa: E402
from app.composition import build_archive, build_memory_service, build_store, tier_policy  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.archive_data import NOW, memories_over, user_ids  # noqa: E402
from bench.common import SECRET, bench_stores, machine, percentile  # noqa: E402
from bench.procstat import rss_mib  # noqa: E402
from harness.fakes import HashEmbedder  # noqa: E402
from memory.archive.mover import Archiver  # noqa: E402
from memory.models import ArchiveTier, RecallRequest  # noqa: E402
from memory.redis_client import close  # noqa: E402

DIM = 384


def settings_for(redis_url: str, chroma_url: str, cold_url: str, prefix: str) -> Settings:
    return Settings(
        _env_file=None,
        redis_url=redis_url,
        chroma_url=chroma_url,
        auth_jwt_secret=SECRET,
        chroma_collection_prefix=prefix,
        archive_cold_url=cold_url,
        log_level="WARNING",
    )


async def load(settings: Settings, users: list[str], per_user: int) -> dict[str, Any]:
    memories, _ = memories_over(users, per_user, 600.0)
    redis = build_redis(settings, "bench-archive")
    store = build_store(settings, redis)
    embedder = HashEmbedder(DIM)
    started = time.perf_counter()
    for start in range(0, len(memories), 2000):
        batch = memories[start : start + 2000]
        await store.upsert(batch, embedder.embed_sync([m.embed_text for m in batch]))
    seconds = time.perf_counter() - started
    await close(redis)
    return {"memories": len(memories), "load_seconds": round(seconds, 1)}


async def archive(settings: Settings) -> dict[str, Any]:
    redis = build_redis(settings, "bench-archive")
    archiver = Archiver(
        build_store(settings, redis),
        build_archive(settings, redis),
        redis,
        tier_policy(settings),
        batch_users=settings.archive_batch_users,
        batch_size=settings.archive_batch_size,
        grace_seconds=0.2,
    )
    report = await archiver.run(now=NOW)
    await close(redis)
    return report.as_dict()


async def worker(
    settings: Settings, users: list[str], searches: int, tiers: list[ArchiveTier] | None
) -> dict[str, Any]:
    """One API worker's view: first searches (index builds), then timed searches; RSS at the end."""
    redis = build_redis(settings, "bench-worker")
    store = build_store(settings, redis)
    service = build_memory_service(
        settings, store, HashEmbedder(DIM), redis, None, build_archive(settings, redis)
    )
    rss_start = rss_mib()
    rng = random.Random(11)
    queries = [
        "what is my gym locker code?",
        "我的护照放在哪个箱子里？",
        "Note walked to the park with Anna",
        "在图书馆买了新的茶叶",
    ]
    first: list[float] = []
    for user_id in users:
        t = time.perf_counter()
        await service.recall(user_id, RecallRequest(rng.choice(queries), top_k=5, as_of=NOW, tiers=tiers))
        first.append(time.perf_counter() - t)
    timed: list[float] = []
    for _ in range(searches):
        user_id = rng.choice(users)
        t = time.perf_counter()
        await service.recall(user_id, RecallRequest(rng.choice(queries), top_k=5, as_of=NOW, tiers=tiers))
        timed.append(time.perf_counter() - t)
    retriever = service._retriever
    tiered = service._tiered
    assert retriever is not None
    assert tiered is not None
    held = {
        "hot": retriever.cache._size,
        "warm": tiered.warm_cache._size,
        "cold": tiered.cold_cache._size,
    }
    await close(redis)
    return {
        "first_p50_ms": round(percentile(first, 50) * 1000, 2),
        "first_p95_ms": round(percentile(first, 95) * 1000, 2),
        "p50_ms": round(percentile(timed, 50) * 1000, 2),
        "p95_ms": round(percentile(timed, 95) * 1000, 2),
        "rss_start_mib": round(rss_start, 1),
        "rss_mib": round(rss_mib(), 1),
        "index_memories": held,
    }


def run_worker(config: dict[str, Any], tiers: list[str] | None) -> dict[str, Any]:
    args = [sys.executable, str(Path(__file__)), "--worker", json.dumps({**config, "tiers": tiers})]
    out = subprocess.run(args, capture_output=True, text=True, check=True, cwd=ROOT)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--per-user", type=int, default=98, help="filler memories per user (+2 facts)")
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        config = json.loads(args.worker)
        s = settings_for(config["redis"], config["chroma"], config["cold"], config["prefix"])
        result = asyncio.run(worker(s, user_ids(config["users"]), config["searches"], config["tiers"]))
        sys.stdout.write(json.dumps(result) + "\n")
        return
    users = user_ids(args.users)
    with bench_stores() as (redis_url, chroma_url), tempfile.TemporaryDirectory() as cold:
        config = {
            "redis": redis_url,
            "chroma": chroma_url,
            "cold": cold,
            "prefix": "bench",
            "users": args.users,
            "searches": args.searches,
        }
        s = settings_for(redis_url, chroma_url, cold, "bench")
        loaded = asyncio.run(load(s, users, args.per_user))
        before = run_worker(config, None)
        started = time.perf_counter()
        report = asyncio.run(archive(s))
        archive_seconds = time.perf_counter() - started
        after = run_worker(config, None)
        after_warm = run_worker(config, ["hot", "warm"])
        after_hot = run_worker(config, ["hot"])
    rows = [
        ("before archival (all hot)", before),
        ("after, default (hot + warm, cold as fallback)", after),
        ("after, tiers hot + warm (no fallback)", after_warm),
        ("after, tiers hot", after_hot),
    ]
    sys.stdout.write(
        f"\n{loaded['memories']:,} memories, {args.users:,} users, 600 days; loaded in {loaded['load_seconds']} s; "
        f"archival {archive_seconds:.1f} s: {report['tiers']} (moved {report['moved']})\n\n"
        "| worker | first search p50 / p95 ms | search p50 / p95 ms | RSS MiB (start -> end) | index memories hot / warm / cold |\n"
        "|---|---|---|---|---|\n"
    )
    for name, r in rows:
        held = r["index_memories"]
        sys.stdout.write(
            f"| {name} | {r['first_p50_ms']} / {r['first_p95_ms']} | {r['p50_ms']} / {r['p95_ms']} | "
            f"{r['rss_start_mib']} -> {r['rss_mib']} | {held['hot']:,} / {held['warm']:,} / {held['cold']:,} |\n"
        )
    sys.stdout.write(f"\n{machine()}\n")
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    (results / "archive_tiers.json").write_text(
        json.dumps(
            {
                "memories": loaded,
                "users": args.users,
                "archive": report,
                "archive_seconds": archive_seconds,
                "workers": dict(rows),
                "machine": machine(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
