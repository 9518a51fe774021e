"""What the way back costs (issue 42): delete latency with restorable copies kept (RESTORE_GRACE_SECONDS,
7 days) against deletes that keep nothing (0), restore latency, and the Redis bytes per copy.

    .venv/bin/python bench/restore_cost.py            # 60 memories per run
    .venv/bin/python bench/restore_cost.py --n 200

Each run: a fresh redis-server and `chroma run` with the app's real lifespan and models; `--n`
one-message memories (Chinese and English alternating) stored through `POST /messages`, each deleted
through `DELETE /v1/memory/{user}/{id}` (timed, as a client sees it), then, with copies kept, each
restored through `POST .../{id}/restore` (timed). The two delete runs are compared in the same
invocation (the machine is shared: compare the two, not across invocations).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import redis.asyncio as aredis  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, app_on, bench_stores, machine  # noqa: E402
from memory import keys  # noqa: E402

USER = "bench-undo"


def text(i: int) -> str:
    return (
        f"我的第{i}个储物柜在三楼，密码是{1000 + i}" if i % 2 else f"My locker number {i} is on floor {i % 7}"
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run(n: int, grace: int) -> dict[str, float]:
    auth = {"Authorization": f"Bearer {TokenCodec(SECRET).mint(USER, ttl_seconds=3600)}"}
    out: dict[str, float] = {}
    with bench_stores() as (redis_url, chroma_url):
        async with app_on(redis_url, chroma_url, restore_grace_seconds=grace) as client:
            out |= await measure(client, auth, redis_url, n, grace)
    return out


async def measure(
    client: httpx.AsyncClient, auth: dict[str, str], redis_url: str, n: int, grace: int
) -> dict[str, float]:
    out: dict[str, float] = {}
    if n > 0:
        for start in range(0, n, 20):
            body = {
                "session_id": "s1",
                "messages": [
                    {"role": "user", "content": text(i), "id": f"m{i}"}
                    for i in range(start, min(n, start + 20))
                ],
            }
            assert (
                await client.post(f"/v1/memory/{USER}/messages", json=body, headers=auth)
            ).status_code == 200
        listed = (await client.get(f"/v1/memory/{USER}/list?limit=100", headers=auth)).json()
        ids = [m["id"] for m in listed["items"]]
        while len(ids) < listed["total"]:
            more = await client.get(f"/v1/memory/{USER}/list?limit=100&offset={len(ids)}", headers=auth)
            ids += [m["id"] for m in more.json()["items"]]
        deletes = []
        for mid in ids:
            t0 = time.perf_counter()
            assert (await client.delete(f"/v1/memory/{USER}/{mid}", headers=auth)).status_code == 204
            deletes.append((time.perf_counter() - t0) * 1000)
        out |= {"delete_p50_ms": statistics.median(deletes), "delete_p95_ms": pct(deletes, 0.95)}
        if grace:
            r = aredis.Redis.from_url(redis_url)
            used = await r.memory_usage(keys.ltm_restorable(USER), samples=0) or 0
            out["bytes_per_copy"] = used / len(ids)
            await r.aclose()
            restores = []
            for mid in ids:
                t0 = time.perf_counter()
                resp = await client.post(f"/v1/memory/{USER}/{mid}/restore", headers=auth)
                assert resp.status_code == 200, resp.text
                restores.append((time.perf_counter() - t0) * 1000)
            out |= {"restore_p50_ms": statistics.median(restores), "restore_p95_ms": pct(restores, 0.95)}
            found = await client.post(f"/v1/memory/{USER}/search", json={"query": "储物柜密码"}, headers=auth)
            assert found.json()["results"], "restored memories are searchable"
    return out


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=60)
    args = parser.parse_args()
    kept = await run(args.n, 7 * 86_400)
    final = await run(args.n, 0)
    report = {
        "machine": machine(),
        "memories": args.n,
        "copies_kept_7d": {k: round(v, 1) for k, v in kept.items()},
        "nothing_kept_0": {k: round(v, 1) for k, v in final.items()},
    }
    sys.stdout.write(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    asyncio.run(main())
