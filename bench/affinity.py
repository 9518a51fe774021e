"""Search latency through nginx with 2 API replicas, with and without user affinity, against a single
warm worker, in one run of the cluster stack (docker-compose.cluster.yml) on a Docker engine.

    .venv/bin/python bench/affinity.py                      # 200 users x 10 searches per mode
    .venv/bin/python bench/affinity.py --workers 1          # API replicas of one worker each
    .venv/bin/python bench/affinity.py --image mnemo-deploy-suite:latest   # reuse a built image

Needs a Docker engine and the stand-in base images on a machine without a registry (`make test-deploy`
prepares both: scripts/ensure_docker.sh, tests/deploy/standins/build.sh). The stack runs from a copy of
the tracked files with bench/affinity.compose.yml on top, which adds two things the benchmark needs and
production does not: nginx also listens on 8001 with the balancing it had before affinity (fewest open
requests first: bench/affinity-nginx.conf), and `app-single`, one API container of one worker,
published directly.

Each mode has its own users, so each starts cold: `--users` users (A) are searched through nginx's
affinity port, `--users` others (B) through the spread port, `--searches` rounds of one search per user
in a shuffled order, one client, sequential. Every user holds `--memories` memories, written through
the API and moved to Chroma by the writers before the API containers are restarted (no index in any
worker). The single warm worker then searches users A on `app-single` after one warm-up search per
user. p95 is over every search of a mode (the first ones included); `after_first` leaves out each
user's first search. Prints the result and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import machine, percentile  # noqa: E402
from bench.search_latency import EN_QUERIES, ZH_QUERIES, fact  # noqa: E402
from harness.compose import SECRET, Stack, build_image, copy_tracked_tree, docker  # noqa: E402
from harness.services import free_port  # noqa: E402

log = logging.getLogger("bench.affinity")
BUILT = ("app-1", "app-2", "writer-1", "writer-2", "app-single")
OVERRIDE = "bench/affinity.compose.yml"


def headers(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TokenCodec(SECRET).mint(user, ttl_seconds=86_400)}"}


def seed(base_url: str, users: list[str], per_user: int, rng: random.Random) -> None:
    with httpx.Client(base_url=base_url, timeout=120) as client:
        for user in users:
            messages = [
                {"role": "user", "content": fact(rng), "id": f"{user}-{i}", "timestamp": 1_700_000_000 + i}
                for i in range(per_user)
            ]
            resp = client.post(
                f"/v1/memory/{user}/messages",
                json={"session_id": "seed", "messages": messages},
                headers=headers(user),
            )
            resp.raise_for_status()


def wait_written(metrics_url: str, timeout: float) -> float:
    """Until the writers drained the outbox: `mnemo_outbox_pending` (sampled every 5 s by every API
    process) at 0 on two reads 6 s apart. Not a count of each user's memories: the write policy may keep
    fewer memories than messages."""
    started = time.monotonic()
    zeros = 0
    while zeros < 2:
        body = httpx.get(f"{metrics_url}/metrics", timeout=30).text
        pending = [
            sample.value
            for family in text_string_to_metric_families(body)
            for sample in family.samples
            if sample.name == "mnemo_outbox_pending"
        ]
        zeros = zeros + 1 if pending and max(pending) == 0 else 0
        if time.monotonic() - started > timeout:
            raise SystemExit(f"the outbox was not drained within {timeout}s: {pending}")
        time.sleep(6)
    return time.monotonic() - started


def rounds(
    base_url: str, users: list[str], searches: int, rng: random.Random, warm_up: bool = False
) -> tuple[list[float], list[float]]:
    """`searches` rounds, one search per user each, shuffled; (every latency, those after each user's
    first search) in ms. With `warm_up`, one unmeasured search per user first."""
    every: list[float] = []
    after_first: list[float] = []
    with httpx.Client(base_url=base_url, timeout=120) as client:
        auth = {u: headers(u) for u in users}
        if warm_up:
            for user in users:
                client.post(f"/v1/memory/{user}/search", json={"query": "warm up"}, headers=auth[user])
        for round_ in range(searches):
            order = users[:]
            rng.shuffle(order)
            for user in order:
                query = rng.choice(EN_QUERIES + ZH_QUERIES)
                t0 = time.perf_counter()
                resp = client.post(
                    f"/v1/memory/{user}/search", json={"query": query, "top_k": 10}, headers=auth[user]
                )
                ms = (time.perf_counter() - t0) * 1000
                resp.raise_for_status()
                every.append(ms)
                if round_ > 0:
                    after_first.append(ms)
    return every, after_first


def summary(every: list[float], after_first: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(every, 50), 1),
        "p95_ms": round(percentile(every, 95), 1),
        "mean_ms": round(statistics.fmean(every), 1),
        "after_first_p95_ms": round(percentile(after_first, 95), 1),
    }


def run(args: argparse.Namespace) -> dict[str, object]:
    rng = random.Random(args.seed)
    directory = copy_tracked_tree(Path(tempfile.mkdtemp(prefix="mnemo-affinity-")))
    stack = Stack(
        directory,
        project="mnemo-bench-affinity",
        compose_file="docker-compose.cluster.yml",
        overrides=(OVERRIDE,),
        env_file={
            "AUTH_JWT_SECRET": SECRET,
            "PORT": str(free_port()),
            "BENCH_SPREAD_PORT": str(free_port()),
            "BENCH_SINGLE_PORT": str(free_port()),
            "MNEMO_CLUSTER_NET": args.net,
            "WORKERS": str(args.workers),
            "RATE_LIMIT_PER_MINUTE": "1000000",
        },
    )
    stack.write_env()
    image = args.image or build_image(directory, "mnemo-bench-affinity:latest").tag
    stack.use_image(image, BUILT)
    affinity_url = stack.base_url
    spread_url = f"http://127.0.0.1:{stack.env_file['BENCH_SPREAD_PORT']}"
    single_url = f"http://127.0.0.1:{stack.env_file['BENCH_SINGLE_PORT']}"
    users_a = [f"aff-{i:04d}" for i in range(args.users)]
    users_b = [f"spr-{i:04d}" for i in range(args.users)]
    try:
        stack.compose("up", "--wait", "--wait-timeout", "900", "-d", timeout=1200)
        log.info("seeding %d users x %d memories", 2 * args.users, args.memories)
        seeding = time.monotonic()
        seed(affinity_url, users_a + users_b, args.memories, rng)
        seeded_seconds = time.monotonic() - seeding
        written_seconds = wait_written(single_url, timeout=1800)
        log.info("written; restarting the API containers")
        # no worker holds any user's index: every mode starts cold
        stack.compose("restart", "app-1", "app-2", "app-single", timeout=600)
        stack.compose("up", "--wait", "--wait-timeout", "900", "-d", timeout=1200)
        log.info("measuring: affinity, spread, single warm worker")
        affinity = summary(*rounds(affinity_url, users_a, args.searches, random.Random(args.seed + 1)))
        spread = summary(*rounds(spread_url, users_b, args.searches, random.Random(args.seed + 2)))
        single = summary(
            *rounds(single_url, users_a, args.searches, random.Random(args.seed + 3), warm_up=True)
        )
    finally:
        stack.compose("down", "-v", "--remove-orphans", "--rmi", "local", timeout=600)
        if not args.image:
            docker("rmi", image)
    return {
        "users_per_mode": args.users,
        "searches_per_user": args.searches,
        "memories_per_user": args.memories,
        "api_replicas": 2,
        "workers_per_replica": args.workers,
        "affinity": affinity,
        "spread": spread,
        "single_warm_worker": single,
        "affinity_p95_over_single_warm_p95": round(affinity["p95_ms"] / single["p95_ms"], 2),
        "spread_p95_over_single_warm_p95": round(spread["p95_ms"] / single["p95_ms"], 2),
        "seeded_seconds": round(seeded_seconds, 1),
        "written_after_seeding_seconds": round(written_seconds, 1),
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200, help="users per mode")
    parser.add_argument("--searches", type=int, default=10, help="searches per user")
    parser.add_argument("--memories", type=int, default=20, help="memories per user")
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers per API replica")
    parser.add_argument("--image", default="", help="a built mnemo image to use (default: build one)")
    parser.add_argument("--net", default="172.29.214", help="MNEMO_CLUSTER_NET for the bench's stack")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    result = run(args)
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"affinity_w{args.workers}.json").write_text(json.dumps(result, indent=2))
    sys.stdout.write(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
