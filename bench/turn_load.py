"""Chat-turn load through the deployed service: memory overhead per turn, saturation, outbox drain.

    .venv/bin/python bench/turn_load.py                 # 1, 10, 50 users; paced and unpaced; 20 s each
    .venv/bin/python bench/turn_load.py --seconds 60 --users 10

uvicorn runs with 2 workers in a subprocess against its own redis-server and `chroma run`; the
upstream is the offline responder, which answers in microseconds, so a turn's latency as the client
sees it is the memory layer's overhead (session lock, Redis state, recall, prompt assembly, commit,
outbox append) plus HTTP, auth and rate limiting: an upper bound of the overhead. The load generator
runs on the same 2 cores as the service.

"paced": each user sends one turn per second (the issue's 10-users-at-1/s budget); "unpaced": each
user sends its next turn as soon as the last one answered (saturation). After every run the outbox
must drain: the long-term writes (embedding + Chroma) happen behind the turns; the script samples the
outbox length during the run (a writer that keeps up keeps it small) and reports how long the backlog
took to return to 0 after it. RSS per worker comes from `/metrics`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import redis.asyncio as aredis  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, TURNS, machine, percentile  # noqa: E402
from bench.served import served  # noqa: E402
from memory.outbox.stream import Outbox  # noqa: E402


async def user_loop(
    http: httpx.AsyncClient,
    user: str,
    token: str,
    deadline: float,
    paced: bool,
    out: list[float],
    errors: list[str],
) -> None:
    rng = random.Random(user)
    headers = {"Authorization": f"Bearer {token}"}
    turn = 0
    next_at = time.perf_counter() + rng.random()  # spread the paced users over the first second
    while True:
        if paced:
            await asyncio.sleep(max(0.0, next_at - time.perf_counter()))
            next_at += 1.0
        if time.perf_counter() >= deadline:
            return
        body = {
            "messages": [{"role": "user", "content": TURNS[(turn + rng.randrange(len(TURNS))) % len(TURNS)]}],
            "session_id": f"s{turn // 20}",
        }
        started = time.perf_counter()
        try:
            resp = await http.post("/v1/chat/completions", json=body, headers=headers)
            if resp.status_code != 200:
                errors.append(f"{resp.status_code} {resp.text[:120]}")
            else:
                out.append(time.perf_counter() - started)
        except httpx.HTTPError as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
        turn += 1


async def drain(redis_url: str, timeout: float = 300.0) -> tuple[float, int]:
    """Seconds until the outbox is empty, and the backlog it started from."""
    r = aredis.Redis.from_url(redis_url)
    try:
        backlog = await Outbox(r).pending()
        started = time.perf_counter()
        while time.perf_counter() - started < timeout:
            if await Outbox(r).pending() == 0:
                return time.perf_counter() - started, backlog
            await asyncio.sleep(0.1)
        return float("nan"), backlog
    finally:
        await r.aclose()


async def sample_backlog(redis_url: str, out: list[int], stop: asyncio.Event) -> None:
    """The outbox length twice a second while the load runs: a writer that keeps up keeps it small."""
    r = aredis.Redis.from_url(redis_url)
    try:
        while not stop.is_set():
            out.append(await Outbox(r).pending())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=0.5)
    finally:
        await r.aclose()


async def scenario(
    base: str, redis_url: str, users: int, paced: bool, seconds: float, tag: str, *, wait_drain: bool = True
) -> dict[str, Any]:
    codec = TokenCodec(SECRET)
    latencies: list[float] = []
    errors: list[str] = []
    limits = httpx.Limits(max_connections=users + 4, max_keepalive_connections=users + 4)
    backlog_samples: list[int] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_backlog(redis_url, backlog_samples, stop))
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(
            *(
                user_loop(http, f"{tag}-u{i}", codec.mint(f"{tag}-u{i}"), deadline, paced, latencies, errors)
                for i in range(users)
            )
        )
        elapsed = time.perf_counter() - started
    stop.set()
    await sampler
    drain_s, backlog = await drain(redis_url, timeout=300 if wait_drain else 0)
    return {
        "users": users,
        "mode": "paced 1/s" if paced else "unpaced",
        "turns": len(latencies),
        "errors": len(errors),
        "error_samples": errors[:3],
        "turns_per_s": round(len(latencies) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000, 1) if latencies else None,
        "p95_ms": round(percentile(latencies, 95) * 1000, 1) if latencies else None,
        "outbox_backlog_max": max(backlog_samples, default=0),
        "outbox_backlog": backlog,
        "outbox_drain_s": round(drain_s, 1),
    }


def worker_rss(base: str) -> list[float]:
    text = httpx.get(f"{base}/metrics").text
    return [
        s.value / 2**20
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "mnemo_process_resident_memory_bytes"
    ]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    env = {"EMBEDDING_BACKEND": args.backend, **dict(kv.split("=", 1) for kv in args.env)}
    results = []
    with served(workers=args.workers, writer=args.writer, **env) as svc:
        # warm-up: model caches, connection pools, Chroma collections
        await scenario(svc.base_url, f"{svc.redis.url}/0", 2, False, 3, "warm", wait_drain=False)
        for users in args.users:
            for paced in (True, False):
                tag = f"{'p' if paced else 'u'}{users}"
                row = await scenario(
                    svc.base_url,
                    f"{svc.redis.url}/0",
                    users,
                    paced,
                    args.seconds,
                    tag,
                    wait_drain=args.writer or env.get("OUTBOX_WORKER", "true").lower() != "false",
                )
                results.append(row)
                print(json.dumps(row, ensure_ascii=False), flush=True)  # noqa: T201
        rss = worker_rss(svc.base_url)
    return {
        "machine": machine(),
        "writer": "separate niced process" if args.writer else "in the API workers",
        "workers": args.workers,
        "backend": args.backend,
        "seconds": args.seconds,
        "results": results,
        "worker_rss_mib": [round(x) for x in rss],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--backend", choices=["onnx", "torch"], default="onnx")
    parser.add_argument(
        "--writer",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="long-term writes in a separate niced process (default, as make run) or in the API workers",
    )
    parser.add_argument(
        "--env", nargs="*", default=[], metavar="NAME=VALUE", help="extra settings for the service"
    )
    args = parser.parse_args()
    report = asyncio.run(run(args))
    lines = [
        "| users | mode | turns | errors | turns/s | p50 ms | p95 ms | outbox max during | outbox at end | drain s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        lines.append(
            f"| {r['users']} | {r['mode']} | {r['turns']} | {r['errors']} | {r['turns_per_s']} | {r['p50_ms']} "
            f"| {r['p95_ms']} | {r['outbox_backlog_max']} | {r['outbox_backlog']} | {r['outbox_drain_s']} |"
        )
    lines.append(
        f"\nlong-term writer: {report['writer']}; API workers: {report['workers']}, embedder: {report['backend']}, RSS per worker (MiB): {report['worker_rss_mib']}"
    )
    lines.append(f"machine: {report['machine']}")
    print("\n".join(lines))  # noqa: T201
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"turn_load_{'writer' if args.writer else 'inprocess'}.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False)
    )


if __name__ == "__main__":
    main()
