"""Writer throughput with 1 and 2 writer processes, on chat turns that carry a model's reply.

    python bench/writers_scaling.py                          # 50 users x 20 turns; 1 and 2 writers
    python bench/writers_scaling.py --writers 1 2 --payload reply message
    python bench/writers_scaling.py --redis cluster                # a local 6-node Redis Cluster

For every (payload, N) pair, from scratch: a fresh redis-server (or, with `--redis cluster`, a local
Redis Cluster of 3 masters + 3 replicas, `harness/cluster.py`) and `chroma run`, N writer processes
(`python -m app.cli.writer --nice 0`, exactly as deployed) started on the empty outbox and left until
they have split the 32 partition leases between them (memory/outbox/leases.py), then the same backlog of
chat turns is put in the outbox in one pipeline and the clock runs until the outbox is empty again.

- payload `reply`: each turn is a user message and a real assistant reply (the second speaker's lines
  of the Chinese set and the LoCoMo dev slice, `bench.fake_llm.assistant_turns`, as the fake upstream
  answers), so the writer embeds replies of a real model's length; `message`: the user's message only,
  as with the offline responder.
- user messages are the first speaker's lines of the same conversations; their vectors are published
  in Redis first, as the chat turn's recall does (the writer takes them instead of embedding again).

Reported per run: turns/s to drain, and CPU seconds per turn of every writer process (utime + stime
from /proc before the backlog and when it is empty), of redis-server and of chroma. The writers, Redis,
Chroma and this script share the machine's cores: with 2 writers on 2 cores they compete for CPU, so
turns/s shows what this machine gives, and CPU per turn is what a writer costs wherever it runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.clients.redis import build_redis, check_layout, connect  # noqa: E402
from app.composition import build_embedder  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, machine  # noqa: E402
from bench.fake_llm import LOCOMO_SET, ZH_SET, assistant_turns  # noqa: E402
from bench.procstat import Group, cpu_seconds, delta, snapshot  # noqa: E402
from harness.cluster import RedisCluster, start_redis_cluster  # noqa: E402
from harness.services import ServerProcess, start_chroma, start_redis  # noqa: E402
from memory import keys  # noqa: E402
from memory.embedding.base import Embedder, Vectors  # noqa: E402
from memory.longterm.shared_vectors import SharedVectors  # noqa: E402
from memory.models import Message  # noqa: E402
from memory.outbox.stream import Outbox, OutboxEntry  # noqa: E402
from memory.redis_client import RedisClient  # noqa: E402


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def user_turns(*paths: Path) -> list[str]:
    """The first speaker's lines of every conversation in the given LoCoMo-format files that exist."""
    lines: list[str] = []
    for path in paths:
        if not path.exists():
            continue
        for sample in json.loads(path.read_text()):
            conv = sample["conversation"]
            first = conv["speaker_a"]
            for key, turns in conv.items():
                if key.startswith("session_") and isinstance(turns, list):
                    lines += [t["text"] for t in turns if t.get("speaker") == first and t.get("text")]
    return lines


@dataclass(frozen=True)
class Backlog:
    entries: list[OutboxEntry]
    vectors: dict[tuple[str, str], Vectors]  # (user, message) -> recall's vector of it


async def make_backlog(users: int, turns: int, replies: bool, embedder: Embedder) -> Backlog:
    said, answered = user_turns(ZH_SET, LOCOMO_SET), assistant_turns(ZH_SET, LOCOMO_SET)
    entries: list[OutboxEntry] = []
    now = time.time()
    for turn in range(turns):
        for user in range(users):
            n = user * turns + turn
            message = Message("user", said[n % len(said)], None, f"m-u{user}-{turn}-q", now)
            reply = Message("assistant", answered[n % len(answered)], None, f"m-u{user}-{turn}-a", now)
            entries.append(
                OutboxEntry(f"u{user}", f"s{turn // 20}", (message, reply) if replies else (message,))
            )
    texts = sorted({(e.user_id, e.messages[0].content) for e in entries})
    unique = sorted({t for _, t in texts})
    matrix = await embedder.embed(unique)
    row = {text: i for i, text in enumerate(unique)}
    return Backlog(entries, {(user, text): matrix[row[text]] for user, text in texts})


async def lease_owners(redis: RedisClient) -> dict[str, int]:
    owners: dict[str, int] = {}
    for p in range(keys.partitions()):
        owner = await redis.get(keys.partition_lease(p))
        if owner:
            owners[str(owner)] = owners.get(str(owner), 0) + 1
    return owners


async def wait_balanced(
    redis: RedisClient, writers: int, procs: list[subprocess.Popen[bytes]], log: Path
) -> float:
    """Until every partition is leased and the N writers hold shares that differ by at most one."""
    started = time.monotonic()
    while time.monotonic() - started < 120:
        for p in procs:
            if p.poll() is not None:
                raise RuntimeError(f"a writer exited: {log.read_text()[-2000:]}")
        owners = await lease_owners(redis)
        shares = sorted(owners.values())
        if len(owners) == writers and sum(shares) == keys.partitions() and shares[-1] - shares[0] <= 1:
            return time.monotonic() - started
        await asyncio.sleep(0.2)
    raise RuntimeError(f"leases not balanced after 120 s: {await lease_owners(redis)}")


async def one_run(
    args: argparse.Namespace, writers: int, backlog: Backlog, payload: str, model: str
) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-writers-"))
    redis_server: ServerProcess | None = None
    cluster: RedisCluster | None = None
    if args.redis == "cluster":
        cluster = start_redis_cluster(workdir / "cluster")
        redis_env = {"REDIS_CLUSTER_NODES": cluster.startup_nodes}
        redis_pids = tuple(n.proc.pid for n in cluster.nodes if n.proc is not None)
    else:
        redis_server = start_redis(workdir / "redis")
        redis_env = {"REDIS_URL": f"{redis_server.url}/0"}
        redis_pids = (redis_server.proc.pid,)
    chroma_server: ServerProcess = start_chroma(workdir / "chroma")
    metrics_dir = workdir / "metrics"
    metrics_dir.mkdir()
    log = workdir / "writers.log"
    procs: list[subprocess.Popen[bytes]] = []
    settings = Settings(
        _env_file=None,
        redis_url=redis_env.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        redis_cluster_nodes=redis_env.get("REDIS_CLUSTER_NODES"),
        chroma_url=chroma_server.url,
        auth_jwt_secret=SECRET,
        log_level="WARNING",
    )
    redis = build_redis(settings, "bench")
    try:
        await connect(redis)
        await check_layout(redis, settings.outbox_partitions)
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            **redis_env,
            "CHROMA_URL": chroma_server.url,
            "AUTH_JWT_SECRET": SECRET,
            "LOG_LEVEL": "WARNING",
            "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
            **dict(kv.split("=", 1) for kv in args.env),
        }
        with log.open("wb") as out:
            for _ in range(writers):
                procs.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "app.cli.writer", "--nice", "0"],
                        env=env,
                        cwd=workdir,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                )
        balanced_s = await wait_balanced(redis, writers, procs, log)
        shared = SharedVectors(redis, model)  # as recall publishes them, before the turns are appended
        for (user, text), vector in backlog.vectors.items():
            await shared.publish(user, text, vector)
        groups = [Group(f"writer{i + 1}", (p.pid,)) for i, p in enumerate(procs)]
        groups += [Group("redis", redis_pids), Group("chroma", (chroma_server.proc.pid,))]
        outbox = Outbox(redis)
        before = snapshot(groups)
        self_before = cpu_seconds(os.getpid())
        started = time.perf_counter()
        async with redis.pipeline(transaction=False) as pipe:
            for e in backlog.entries:
                pipe.xadd(Outbox.stream_of(e.user_id), e.to_fields())  # type: ignore[arg-type]
            await pipe.execute()
        appended = time.perf_counter() - started
        while await outbox.pending() > 0:
            if time.perf_counter() - started > args.timeout:
                raise RuntimeError(f"outbox not empty after {args.timeout} s: {await outbox.pending()} left")
            if any(p.poll() is not None for p in procs):
                raise RuntimeError(f"a writer exited: {log.read_text()[-2000:]}")
            await asyncio.sleep(0.05)
        elapsed = time.perf_counter() - started
        used = delta(before, snapshot(groups))
        used["bench"] = cpu_seconds(os.getpid()) - self_before
        total = len(backlog.entries)
        writer_cpu = [used[f"writer{i + 1}"] for i in range(writers)]
        return {
            "payload": payload,
            "redis": args.redis,
            "writers": writers,
            "turns": total,
            "users": args.users,
            "balanced_after_s": round(balanced_s, 1),
            "append_s": round(appended, 2),
            "drain_s": round(elapsed, 1),
            "turns_per_s": round(total / elapsed, 1),
            "writer_cpu_s": [round(s, 2) for s in writer_cpu],
            "writer_cpu_ms_per_turn": round(1000 * sum(writer_cpu) / total, 2),
            "writer_cpu_utilisation": [round(s / elapsed, 2) for s in writer_cpu],
            "redis_cpu_ms_per_turn": round(1000 * used["redis"] / total, 3),
            "chroma_cpu_ms_per_turn": round(1000 * used["chroma"] / total, 2),
            "bench_cpu_s": round(used["bench"], 2),
        }
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        await redis.aclose()
        chroma_server.stop()
        if redis_server is not None:
            redis_server.stop()
        if cluster is not None:
            cluster.stop()


async def main(args: argparse.Namespace) -> None:
    settings = Settings(_env_file=None, auth_jwt_secret=SECRET, log_level="WARNING")
    embedder = build_embedder(settings)
    model = f"{type(embedder).__name__}:{settings.embedding_model}:{embedder.dimension}"
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = []
    for payload in args.payload:
        backlog = await make_backlog(args.users, args.turns_per_user, payload == "reply", embedder)
        for writers in args.writers:
            row = await one_run(args, writers, backlog, payload, model)
            rows.append(row)
            say(json.dumps(row))
    say("")
    say(
        "| redis | each turn carries | writers | turns | drain s | turns/s | writer CPU s (each) | writer CPU ms/turn "
        "| each writer's CPU use | redis CPU ms/turn | chroma CPU ms/turn |"
    )
    say("|---|---|---:|---:|---:|---:|---|---:|---|---:|---:|")
    for r in rows:
        carries = "message + model reply" if r["payload"] == "reply" else "user message only"
        say(
            f"| {r['redis']} | {carries} | {r['writers']} | {r['turns']} | {r['drain_s']} | {r['turns_per_s']} "
            f"| {' + '.join(str(s) for s in r['writer_cpu_s'])} | {r['writer_cpu_ms_per_turn']} "
            f"| {', '.join(f'{u:.0%}' for u in r['writer_cpu_utilisation'])} | {r['redis_cpu_ms_per_turn']} "
            f"| {r['chroma_cpu_ms_per_turn']} |"
        )
    say(f"\nmachine: {machine()}; load average before the runs: {load}")
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"writers_scaling_{args.redis}.json").write_text(
        json.dumps({"machine": machine(), "rows": rows}, indent=2)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--turns-per-user", type=int, default=20)
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 2])
    parser.add_argument(
        "--payload",
        nargs="+",
        choices=["reply", "message"],
        default=["reply"],
        help="reply: user message + model reply per turn (default); message: the user's message only",
    )
    parser.add_argument(
        "--redis",
        choices=["standalone", "cluster"],
        default="standalone",
        help="one redis-server, or a local 6-node Redis Cluster (harness/cluster.py) via REDIS_CLUSTER_NODES",
    )
    parser.add_argument("--timeout", type=float, default=170.0, help="seconds a drain may take")
    parser.add_argument(
        "--env", nargs="*", default=[], metavar="NAME=VALUE", help="extra settings for the writers"
    )
    asyncio.run(main(parser.parse_args()))
