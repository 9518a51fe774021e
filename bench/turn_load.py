"""Chat-turn load through the deployed service: memory overhead per turn, saturation, outbox drain.

    .venv/bin/python bench/turn_load.py                 # 1, 10, 50 users; paced and unpaced; 20 s each
    .venv/bin/python bench/turn_load.py --seconds 60 --users 10
    .venv/bin/python bench/turn_load.py --users 10 --modes paced --seconds 60 --redis standalone cluster

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

`--redis standalone cluster` runs the same rows against one redis-server, then against a local Redis
Cluster (3 masters + 3 replicas, `harness/cluster.py`, through `REDIS_CLUSTER_NODES`), each with fresh
stores, in one command. `--llm fake` puts the fake OpenAI-compatible upstream (`bench/fake_llm.py`, real
conversational replies) in front instead of the offline responder, so turns carry model replies to the
writer. Every row also reports the CPU seconds per turn of each process group (from /proc: the API
master and workers, the writer, every redis-server, chroma, the fake upstream, this load generator):
API over the load itself, the others over the load and the drain after it. After the rows of a Redis
mode, `MEMORY USAGE` of every key gives the bytes per key kind, per user and per session.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from app.clients.redis import build_redis, connect  # noqa: E402
from app.http.auth import TokenCodec  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, TURNS, machine, percentile  # noqa: E402
from bench.key_memory import key_memory  # noqa: E402
from bench.procstat import Group, delta, snapshot  # noqa: E402
from bench.served import FakeLLM, Served, served  # noqa: E402
from memory.outbox.stream import Outbox  # noqa: E402
from memory.redis_client import RedisClient  # noqa: E402

CPU_ORDER = ["api", "writer", "redis", "redis masters", "chroma", "llm", "load generator"]
LOAD_AT_START = ", ".join(f"{x:.2f}" for x in os.getloadavg())


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


async def redis_of(svc: Served) -> RedisClient:
    """A client of the service's Redis, one server or the cluster, as the service builds it."""
    settings = Settings(
        _env_file=None,
        auth_jwt_secret=SECRET,
        redis_url=svc.redis_env.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        redis_cluster_nodes=svc.redis_env.get("REDIS_CLUSTER_NODES"),
    )
    client = build_redis(settings, "bench")
    await connect(client)
    return client


async def drain(r: RedisClient, timeout: float = 300.0) -> tuple[float, int]:
    """Seconds until the outbox is empty, and the backlog it started from."""
    backlog = await Outbox(r).pending()
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if await Outbox(r).pending() == 0:
            return time.perf_counter() - started, backlog
        await asyncio.sleep(0.1)
    return float("nan"), backlog


async def sample_backlog(r: RedisClient, out: list[int], stop: asyncio.Event) -> None:
    """The outbox length twice a second while the load runs: a writer that keeps up keeps it small."""
    while not stop.is_set():
        out.append(await Outbox(r).pending())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=0.5)


async def idle_cpu(svc: Served, seconds: float) -> dict[str, float]:
    """CPU per second of each process group with no load (heartbeats, lease refreshes, idle polls,
    cluster gossip and replication pings): the fixed part of the per-turn figures."""
    groups = svc.cpu_groups()
    before = snapshot(groups)
    await asyncio.sleep(seconds)
    return {name: round(1000 * s / seconds, 2) for name, s in delta(before, snapshot(groups)).items()}


def cpu_ms_per_turn(used: dict[str, float], turns: int) -> dict[str, float]:
    return {name: round(1000 * seconds / turns, 3) for name, seconds in used.items()} if turns else {}


async def scenario(
    svc: Served, users: int, paced: bool, seconds: float, tag: str, *, wait_drain: bool = True
) -> dict[str, Any]:
    base = svc.base_url
    r = await redis_of(svc)
    groups = [*svc.cpu_groups(), Group("load generator", (os.getpid(),), tree=False)]
    codec = TokenCodec(SECRET)
    latencies: list[float] = []
    errors: list[str] = []
    limits = httpx.Limits(max_connections=users + 4, max_keepalive_connections=users + 4)
    backlog_samples: list[int] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_backlog(r, backlog_samples, stop))
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        before = snapshot(groups)
        started = time.perf_counter()
        deadline = started + seconds
        await asyncio.gather(
            *(
                user_loop(http, f"{tag}-u{i}", codec.mint(f"{tag}-u{i}"), deadline, paced, latencies, errors)
                for i in range(users)
            )
        )
        elapsed = time.perf_counter() - started
        at_end = snapshot(groups)
    stop.set()
    await sampler
    drain_s, backlog = await drain(r, timeout=300 if wait_drain else 0)
    drained = snapshot(groups)
    await r.aclose()
    # the API's CPU over the load; the writer's, Redis' and Chroma's include the drain after it
    used = {"api": delta(before, at_end).get("api", 0.0)} | {
        name: seconds for name, seconds in delta(before, drained).items() if name != "api"
    }
    return {
        "redis": svc.redis_mode,
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
        "elapsed_s": round(elapsed, 1),
        "cpu_s": {name: round(seconds, 2) for name, seconds in used.items()},
        "cpu_ms_per_turn": cpu_ms_per_turn(used, len(latencies)),
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
    llm = FakeLLM(args.llm_first_token_ms, args.llm_tokens_per_second) if args.llm == "fake" else None
    results = []
    memory: dict[str, Any] = {}
    rss: dict[str, list[float]] = {}
    idle: dict[str, dict[str, float]] = {}
    for mode in args.redis:
        with served(
            workers=args.workers, writer=args.writer, cluster=mode == "cluster", llm=llm, **env
        ) as svc:
            # warm-up: model caches, connection pools, Chroma collections
            await scenario(svc, 2, False, 3, "warm", wait_drain=False)
            r = await redis_of(svc)
            await drain(r)
            await r.aclose()
            idle[mode] = await idle_cpu(svc, args.idle_seconds)
            print(json.dumps({"idle_cpu_ms_per_s": idle[mode], "redis": mode}), flush=True)  # noqa: T201
            for users in args.users:
                for paced in (m == "paced" for m in args.modes):
                    tag = f"{'p' if paced else 'u'}{users}"
                    row = await scenario(
                        svc,
                        users,
                        paced,
                        args.seconds,
                        tag,
                        wait_drain=args.writer or env.get("OUTBOX_WORKER", "true").lower() != "false",
                    )
                    results.append(row)
                    print(json.dumps(row, ensure_ascii=False), flush=True)  # noqa: T201
            rss[mode] = worker_rss(svc.base_url)
            memory[mode] = await key_memory(svc)
    return {
        "machine": machine(),
        "load_average_at_start": LOAD_AT_START,
        "writer": "separate niced process" if args.writer else "in the API workers",
        "workers": args.workers,
        "backend": args.backend,
        "llm": "offline responder" if llm is None else f"fake upstream ({llm})",
        "seconds": args.seconds,
        "results": results,
        "worker_rss_mib": {mode: [round(x) for x in v] for mode, v in rss.items()},
        "redis_memory": memory,
        "idle_cpu_ms_per_s": idle,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--modes", nargs="+", choices=["paced", "unpaced"], default=["paced", "unpaced"])
    parser.add_argument(
        "--redis",
        nargs="+",
        choices=["standalone", "cluster"],
        default=["standalone"],
        help="one redis-server, a local 6-node Redis Cluster, or both in turn (fresh stores each)",
    )
    parser.add_argument(
        "--llm",
        choices=["offline", "fake"],
        default="offline",
        help="the offline responder (default), or bench/fake_llm.py as the upstream (real replies)",
    )
    parser.add_argument(
        "--idle-seconds", type=float, default=10.0, help="idle CPU measured this long after the warm-up"
    )
    parser.add_argument("--llm-first-token-ms", type=float, default=0.0)
    parser.add_argument("--llm-tokens-per-second", type=float, default=0.0, help="0: the whole reply at once")
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
        "| redis | users | mode | turns | errors | turns/s | p50 ms | p95 ms | outbox max during | outbox at end "
        "| drain s |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["results"]:
        lines.append(
            f"| {r['redis']} | {r['users']} | {r['mode']} | {r['turns']} | {r['errors']} | {r['turns_per_s']} "
            f"| {r['p50_ms']} | {r['p95_ms']} | {r['outbox_backlog_max']} | {r['outbox_backlog']} "
            f"| {r['outbox_drain_s']} |"
        )
    names = sorted({n for r in report["results"] for n in r["cpu_ms_per_turn"]}, key=CPU_ORDER.index)
    lines += ["", "CPU ms per turn (API over the load; the others over the load and the drain):", ""]
    lines.append("| redis | users | mode | " + " | ".join(names) + " |")
    lines.append("|---|---|---|" + "---|" * len(names))
    for r in report["results"]:
        cells = " | ".join(str(r["cpu_ms_per_turn"].get(n, "")) for n in names)
        lines.append(f"| {r['redis']} | {r['users']} | {r['mode']} | {cells} |")
    lines += ["", "Idle CPU ms per second (no load, before the rows):", ""]
    lines.append("| redis | " + " | ".join(names[:-1]) + " |")
    lines.append("|---|" + "---|" * (len(names) - 1))
    for mode, idle in report["idle_cpu_ms_per_s"].items():
        lines.append(f"| {mode} | " + " | ".join(str(idle.get(n, "")) for n in names[:-1]) + " |")
    for mode, mem in report["redis_memory"].items():
        lines += ["", f"Redis memory ({mode}), MEMORY USAGE of every key after the rows:", ""]
        lines += mem["table"]
        lines.append(f"\n{mem['summary']}")
    lines.append(
        f"\nlong-term writer: {report['writer']}; API workers: {report['workers']}, embedder: {report['backend']}, "
        f"upstream: {report['llm']}; RSS per worker (MiB): {report['worker_rss_mib']}"
    )
    lines.append(f"machine: {report['machine']}; load average at start: {report['load_average_at_start']}")
    print("\n".join(lines))  # noqa: T201
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    name = "_".join(["turn_load", "writer" if args.writer else "inprocess", *args.redis, args.llm])
    (out / f"{name}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
