"""How long a rebalance holds a moving user's write lock: the copy, verification and switch of one user.

    .venv/bin/python bench/rebalance_copy.py                       # 4 users x 5,000 records
    .venv/bin/python bench/rebalance_copy.py --users 20 --records 500

Starts its own redis-server and two `chroma run`s (temp dirs), stores every user's records (384-dim
unit vectors, zh+en text, through the routing store: placed on the first server), then drains the first
server and times `python -m app.cli.rebalance`'s core (memory/longterm/rebalance.py) moving everyone to
the second: per user, the time under the lock. Prints a table and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import redis.asyncio as aredis  # noqa: E402

from bench.common import machine, percentile  # noqa: E402
from harness.services import start_chroma, start_redis  # noqa: E402
from memory import ChromaLongTermStore, RoutingLongTermStore  # noqa: E402
from memory.longterm.placement import Placements  # noqa: E402
from memory.longterm.rebalance import Rebalancer, Report, UserState  # noqa: E402
from memory.models import Memory  # noqa: E402


def client_factory(url: str) -> Callable[[], Any]:
    def factory() -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        host, port = url.removeprefix("http://").split(":")
        return chromadb.HttpClient(
            host=host, port=int(port), settings=ChromaSettings(anonymized_telemetry=False)
        )

    return factory


class TimedRebalancer(Rebalancer):
    held: list[float]

    async def _settle(self, state: UserState, report: Report) -> str | None:
        start = time.perf_counter()
        try:
            return await super()._settle(state, report)
        finally:
            self.held.append(time.perf_counter() - start)


async def run(args: argparse.Namespace) -> dict[str, object]:
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-rebalance-"))
    redis_server = start_redis(workdir / "redis")
    chromas = [start_chroma(workdir / f"chroma{i}") for i in range(2)]
    redis = aredis.Redis.from_url(f"{redis_server.url}/0", decode_responses=True)
    try:
        stores = {
            f"c{i}": ChromaLongTermStore(client_factory(c.url), shards=16, collection_prefix="bench")
            for i, c in enumerate(chromas)
        }
        first = RoutingLongTermStore({"c0": stores["c0"]}, Placements(redis))
        rng = np.random.default_rng(11)
        users = [f"user-{i:03d}" for i in range(args.users)]
        for user in users:
            for start in range(0, args.records, 500):
                n = min(500, args.records - start)
                memories = [
                    Memory(
                        id=f"{user}-{start + k:06d}",
                        user_id=user,
                        content=f"记忆 {start + k}：我住在杭州 / memory {start + k}: I live in Hangzhou",
                        created_at=1_790_000_000.0 + start + k,
                        session_id="s",
                        source="user",
                        content_hash=f"h{start + k}",
                        importance=0.5,
                    )
                    for k in range(n)
                ]
                vectors = rng.standard_normal((n, 384)).astype(np.float32)
                await first.upsert(memories, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
        both = RoutingLongTermStore(stores, Placements(redis), draining=["c0"])
        rebalancer = TimedRebalancer(both, redis, page_size=args.page_size, grace_seconds=1.0)
        rebalancer.held = []
        started = time.perf_counter()
        report = await rebalancer.run()
        total = time.perf_counter() - started
        if report.failures or report.users_moved != len(users):
            raise RuntimeError(f"the rebalance did not move everyone: {report}")
        held_ms = [h * 1000 for h in rebalancer.held]
        return {
            "users": len(users),
            "records_per_user": args.records,
            "page_size": args.page_size,
            "lock_held_per_user_p50_ms": round(percentile(held_ms, 50), 1),
            "lock_held_per_user_max_ms": round(max(held_ms), 1),
            "records_per_s_under_lock": round(report.records_moved / (sum(rebalancer.held) or 1e-9)),
            "run_seconds_incl_scan_and_grace": round(total, 1),
            "lock_held_mean_ms": round(statistics.fmean(held_ms), 1),
            "machine": machine(),
        }
    finally:
        await redis.aclose()
        for c in chromas:
            c.stop()
        redis_server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--records", type=int, default=5000, help="records per user")
    parser.add_argument("--page-size", type=int, default=500)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"rebalance_copy_{args.users}x{args.records}.json").write_text(json.dumps(result, indent=2))
    width = max(len(k) for k in result)
    sys.stdout.write("\n".join(f"{k:<{width}}  {v}" for k, v in result.items()) + "\n")


if __name__ == "__main__":
    main()
