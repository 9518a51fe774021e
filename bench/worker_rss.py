"""What a searching worker's RSS grows by for one token-sized user (issue 45), and where it goes.

    # stores kept between runs (the import is the slow part): a redis-server and a `chroma run` of yours
    PYTHONPATH=. .venv/bin/python bench/worker_rss.py --redis redis://127.0.0.1:P/0 \
        --chroma http://127.0.0.1:Q import --tokens 1000000
    PYTHONPATH=. .venv/bin/python bench/worker_rss.py --redis ... --chroma ... measure --tokens 1000000
    MALLOC_ARENA_MAX=2 PYTHONPATH=. .venv/bin/python bench/worker_rss.py ... measure --tracemalloc 0

`import`: the set of `bench/make_token_history.py` (one bilingual user of long turns) through
`POST /v1/memory/{user}/messages` (12 turns a call) of an in-process app whose own outbox worker writes
it (real MiniLM and USE vectors, real Chroma), until the outbox is empty; then one search, so that a
snapshot is written.

`measure`: another process (`prime`) searches the user once and writes its snapshot (in this code's
format); then a fresh in-process app on those stores (as `bench/token_history.py` measures a worker: a
warm-up search of an empty user, then the user's first search, then every question `--rounds` times),
RSS (/proc/self/statm) at each step, and at the end after `gc.collect()` and after glibc's
`malloc_trim(0)` (what is then given back was freed memory the allocator kept: fragmentation, not
live data). `--warm-models`: the warm-up searches the empty user with every question first (the models'
runtimes then have met queries of these lengths before the user is measured). `--tracemalloc N`: Python
allocations traced (N frames) and the top growth by line printed after the first search and after the
warm ones (numpy's buffers are traced; onnxruntime's and glibc's own are not: RSS minus traced is
native). Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from redis.asyncio import Redis  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, app_on, machine  # noqa: E402
from bench.long_history import calls  # noqa: E402
from bench.make_token_history import load_or_build  # noqa: E402
from bench.procstat import rss_mib  # noqa: E402
from memory import keys  # noqa: E402
from memory.outbox.stream import Outbox  # noqa: E402

User = dict[str, Any]
# no writer here; a 100+ MB snapshot read under tracemalloc takes longer than the default 2 s timeout
SETTINGS: dict[str, Any] = {"outbox_worker": False, "redis_socket_timeout": 60.0}


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _headers(user_id: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TokenCodec(SECRET).mint(user_id, ttl_seconds=86_400)}"}


async def _search(client: httpx.AsyncClient, user_id: str, q: dict[str, Any]) -> None:
    resp = await client.post(
        f"/v1/memory/{user_id}/search",
        json={"query": q["question"], "top_k": 10, "as_of": q["question_date"]},
        headers=_headers(user_id),
    )
    resp.raise_for_status()


async def do_import(args: argparse.Namespace) -> dict[str, Any]:
    user: User = load_or_build(args.tokens)
    todo = calls(user, 12)
    started = time.perf_counter()
    redis = Redis.from_url(args.redis)
    async with app_on(args.redis, args.chroma) as client:
        for k, (session_id, messages) in enumerate(todo):
            resp = await client.post(
                f"/v1/memory/{user['user_id']}/messages",
                json={"session_id": session_id, "messages": messages},
                headers=_headers(user["user_id"]),
            )
            resp.raise_for_status()
            if k % 10 == 0:
                say(f"call {k}/{len(todo)} at {time.perf_counter() - started:.0f} s")
        outbox = Outbox(redis)
        while await outbox.pending() > 0:
            await asyncio.sleep(1)
        listed = await client.get(
            f"/v1/memory/{user['user_id']}/list?limit=1", headers=_headers(user["user_id"])
        )
        await _search(client, user["user_id"], user["questions"][0])
    for _ in range(60):
        if await redis.exists(keys.ltm_snapshot(user["user_id"])):
            break
        await asyncio.sleep(1)
    await redis.aclose()
    return {"memories": listed.json()["total"], "import_s": round(time.perf_counter() - started)}


async def prime(args: argparse.Namespace) -> dict[str, Any]:
    """The user's snapshot deleted, then written anew by one search (in this code's format)."""
    uid = load_or_build(args.tokens)["user_id"]
    redis = Redis.from_url(args.redis)
    await redis.delete(keys.ltm_snapshot(uid))
    async with app_on(args.redis, args.chroma, **SETTINGS) as client:
        await _search(client, uid, load_or_build(args.tokens)["questions"][0])
        for _ in range(240):
            if await redis.exists(keys.ltm_snapshot(uid)):
                break
            await asyncio.sleep(0.5)
        else:
            raise SystemExit("no snapshot written")
    await redis.aclose()
    return {"primed": uid}


def _top(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, n: int = 15) -> list[str]:
    stats = after.compare_to(before, "traceback")
    out = []
    for stat in stats[:n]:
        frames = [  # most recent first
            f"{Path(f.filename).name}:{f.lineno}"
            for f in reversed(stat.traceback)
            if "site-packages" not in f.filename and "/lib/python" not in f.filename
        ]
        out.append(f"{stat.size_diff / 2**20:+.1f} MiB ({stat.count_diff:+d}) {' < '.join(frames[:5])}")
    return out


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    user: User = load_or_build(args.tokens)
    uid = user["user_id"]
    questions = user["questions"]
    out: dict[str, Any] = {"machine": machine(), "arena_max": os.environ.get("MALLOC_ARENA_MAX", "")}
    # another process writes the snapshot (of this code's format): what it allocated is not this one's
    subprocess.run(
        [
            sys.executable,
            __file__,
            "--redis",
            args.redis,
            "--chroma",
            args.chroma,
            "prime",
            "--tokens",
            str(args.tokens),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    async with app_on(args.redis, args.chroma, **SETTINGS) as client:
        warmups = questions if args.warm_models else [{"question": "warm up 预热", "question_date": None}]
        for q in warmups:
            await _search(client, "nobody", q)
        gc.collect()
        if args.tracemalloc:
            tracemalloc.start(args.tracemalloc)
        base = tracemalloc.take_snapshot() if args.tracemalloc else None
        before = rss_mib()
        t0 = time.perf_counter()
        await _search(client, uid, questions[0])
        out["first_ms"] = round((time.perf_counter() - t0) * 1000)
        first = rss_mib()
        snap_first = tracemalloc.take_snapshot() if args.tracemalloc else None
        warm = []
        for _ in range(args.rounds):
            for q in questions:
                t0 = time.perf_counter()
                await _search(client, uid, q)
                warm.append(time.perf_counter() - t0)
        after = rss_mib()
        snap_warm = tracemalloc.take_snapshot() if args.tracemalloc else None
        gc.collect()
        collected = rss_mib()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        trimmed = rss_mib()
        warm.sort()
        out.update(
            {
                "rss_before_mib": round(before, 1),
                "grown_first_mib": round(first - before, 1),
                "grown_warm_mib": round(after - before, 1),
                "grown_after_gc_mib": round(collected - before, 1),
                "grown_after_malloc_trim_mib": round(trimmed - before, 1),
                "warm_p50_ms": round(warm[len(warm) // 2] * 1000),
                "warm_n": len(warm),
            }
        )
        if base is not None and snap_first is not None and snap_warm is not None:
            traced = tracemalloc.get_traced_memory()[0]
            out["traced_mib"] = round(traced / 2**20, 1)
            out["top_first"] = _top(base, snap_first)
            out["top_warm_vs_first"] = _top(snap_first, snap_warm)
            out["top_warm_vs_before"] = _top(base, snap_warm)
        listed = await client.get(f"/v1/memory/{uid}/list?limit=1", headers=_headers(uid))
        out["memories"] = listed.json()["total"]
    out["kib_per_memory"] = round(out["grown_warm_mib"] * 1024 / max(1, out["memories"]), 1)
    out["load"] = round(os.getloadavg()[0], 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", required=True)
    parser.add_argument("--chroma", required=True)
    sub = parser.add_subparsers(dest="mode", required=True)
    imp = sub.add_parser("import")
    imp.add_argument("--tokens", type=int, default=1_000_000)
    pri = sub.add_parser("prime")
    pri.add_argument("--tokens", type=int, default=1_000_000)
    mea = sub.add_parser("measure")
    mea.add_argument("--tokens", type=int, default=1_000_000)
    mea.add_argument("--rounds", type=int, default=3)
    mea.add_argument("--warm-models", action="store_true")
    mea.add_argument("--tracemalloc", type=int, default=0, help="frames traced (0: off)")
    args = parser.parse_args()
    modes = {"import": do_import, "prime": prime, "measure": measure}
    result = asyncio.run(modes[args.mode](args))
    say(json.dumps(result, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
