"""What serving the models over HTTP costs (issue 44): the same writes and searches through the app
with the bundled models in process and with the same models served over the real `/v1/embeddings`
protocol (harness/model_server.py, a subprocess on loopback), in alternating rounds on fresh stores.

Prints JSON: per mode the write latency (one `/messages` call of `--batch` messages) and the search
latency (one `/search`), p50 and p95 in ms, the added latency served minus in-process, whether every
search's top 5 was the same in both modes (recall identical), and a model switch: the bridge of
`--reembed-users` users of `--reembed-memories` memories re-embedded into a new model over HTTP
(`Reembedder`) while an app answers searches on the new configuration (time per 1,000 memories, the
status of every search meanwhile).

    .venv/bin/python bench/served_models.py [--users 4] [--memories 100] [--queries 200] [--rounds 2]
    .venv/bin/python bench/served_models.py --reembed-only --reembed-users 2 --reembed-memories 2000
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from app.clients.embeddings import HttpEmbedder, ServedModel
from app.clients.redis import build_redis
from app.composition import build_bridge, build_store
from app.http.auth import TokenCodec
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import SECRET, TURNS, app_on, bench_stores, machine, percentile  # noqa: E402
from harness.model_server import DIMENSIONS, MINILM, USE, start_model_server  # noqa: E402
from memory.longterm.bridge import BridgedStore  # noqa: E402
from memory.longterm.reembed import Reembedder  # noqa: E402
from memory.redis_client import close  # noqa: E402

QUERIES = [t for t in TURNS if t.endswith(("?", "？"))] + [
    "花生",
    "guitar lessons",
    "王老师的电话",
    "sofa order",
]
FACTS = [t for t in TURNS if not t.endswith(("?", "？"))]


def served_settings(url: str) -> dict[str, Any]:
    return {
        "embeddings_url": f"{url}/v1",
        "embeddings_model": MINILM,
        "embeddings_dimensions": DIMENSIONS[MINILM],
        "bridge_embeddings_url": f"{url}/v1",
        "bridge_embeddings_model": USE,
        "bridge_embeddings_dimensions": DIMENSIONS[USE],
    }


def messages(rng: random.Random, n: int, start: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": f"{rng.choice(FACTS)} ({start + i})", "id": f"m{start + i}"}
        for i in range(n)
    ]


async def one_mode(
    args: argparse.Namespace, stores: tuple[str, str], prefix: str, extra: dict[str, Any]
) -> dict[str, Any]:
    tokens = TokenCodec(SECRET)
    users = [f"u{i}" for i in range(args.users)]
    headers = {u: {"Authorization": f"Bearer {tokens.mint(u, ttl_seconds=7200)}"} for u in users}
    writes: list[float] = []
    searches: list[float] = []
    tops: list[list[str]] = []
    rng = random.Random(args.seed)
    async with app_on(*stores, chroma_collection_prefix=prefix, **extra) as client:
        for user in users:
            for start in range(0, args.memories, args.batch):
                body = {
                    "session_id": "s",
                    "messages": messages(rng, min(args.batch, args.memories - start), start),
                }
                t0 = time.perf_counter()
                resp = await client.post(f"/v1/memory/{user}/messages", json=body, headers=headers[user])
                writes.append((time.perf_counter() - t0) * 1000)
                resp.raise_for_status()
        qrng = random.Random(args.seed)
        for _ in range(args.queries):
            user, query = qrng.choice(users), qrng.choice(QUERIES)
            t0 = time.perf_counter()
            resp = await client.post(
                f"/v1/memory/{user}/search", json={"query": query, "top_k": 5}, headers=headers[user]
            )
            searches.append((time.perf_counter() - t0) * 1000)
            resp.raise_for_status()
            tops.append([r["content"] for r in resp.json()["results"]])
    return {"writes": writes, "searches": searches, "tops": tops}


async def reembed_per_1000(
    args: argparse.Namespace, stores: tuple[str, str], model_url: str
) -> dict[str, Any]:
    """Seed `--reembed-users` x `--reembed-memories` with the bundled models, then switch the bridge to a
    new model (USE served over HTTP: another name) and fill it while an app on the new configuration
    answers searches: the time per 1,000 memories, and the searches that failed meanwhile."""
    prefix = f"reembed{random.randrange(10**6)}"
    seeded = {
        **vars(args),
        "queries": 0,
        "users": args.reembed_users,
        "memories": args.reembed_memories,
        "batch": 50,
    }
    await one_mode(argparse.Namespace(**seeded), stores, prefix, {})
    redis_url, chroma_url = stores
    settings = Settings(
        _env_file=None,
        redis_url=redis_url,
        chroma_url=chroma_url,
        auth_jwt_secret=SECRET,
        chroma_collection_prefix=prefix,
        bridge_embeddings_url=f"{model_url}/v1",
        bridge_embeddings_model=USE,
        bridge_embeddings_dimensions=DIMENSIONS[USE],
    )
    redis = build_redis(settings, "bench")
    tokens = TokenCodec(SECRET)
    users = [f"u{i}" for i in range(args.reembed_users)]
    headers = {u: {"Authorization": f"Bearer {tokens.mint(u, ttl_seconds=7200)}"} for u in users}
    statuses: dict[int, int] = {}
    latencies: list[float] = []
    done = asyncio.Event()
    served_bridge = {k: v for k, v in served_settings(model_url).items() if k.startswith("bridge_")}
    try:
        async with app_on(*stores, chroma_collection_prefix=prefix, **served_bridge) as client:

            async def load() -> None:
                rng = random.Random(args.seed)
                while not done.is_set():
                    user = rng.choice(users)
                    t0 = time.perf_counter()
                    resp = await client.post(
                        f"/v1/memory/{user}/search",
                        json={"query": rng.choice(QUERIES)},
                        headers=headers[user],
                    )
                    latencies.append((time.perf_counter() - t0) * 1000)
                    statuses[resp.status_code] = statuses.get(resp.status_code, 0) + 1

            searching = asyncio.create_task(load())
            bridge = build_bridge(settings)  # the served model: BRIDGE_EMBEDDINGS_URL is set
            assert bridge is not None
            store = build_store(settings, redis, bridge)
            assert isinstance(store, BridgedStore)
            report = await Reembedder(store, bridge.for_caller("reembed"), redis, batch_size=64).run()
            done.set()
            await searching
            # complete means every record of the user has a vector of the new model (none left over)
            complete = 0
            for user in users:
                records = {m.id for m in await store.get(user, include_content=False)}
                complete += records == await store.bridge.ids(user)
    finally:
        await close(redis)
    return {
        "memories": report.vectors_written,
        "users_filled": report.users_filled,
        "users_complete": f"{complete}/{len(users)}",
        "failed_users": report.failed_users,  # a user left to a re-run: the switch did not go through
        "batches_retried": report.batches_retried,
        "seconds": round(report.seconds, 2),
        "seconds_per_1000": round(report.seconds_per_1000 or 0, 2),
        "searches_meanwhile": statuses,
        "search_p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
        "search_p95_ms": round(percentile(latencies, 95), 1) if latencies else None,
    }


async def single_calls(url: str, n: int) -> dict[str, dict[str, float]]:
    """One short text per call, `n` calls of each kind interleaved: the in-process MiniLM against the
    same model over HTTP (what one embedding round trip adds)."""
    from memory.embedding.onnx import OnnxEmbedder

    local = OnnxEmbedder(None, threads=1, max_tokens=128)
    served = HttpEmbedder(ServedModel(url=f"{url}/v1", model=MINILM, dimension=DIMENSIONS[MINILM]))
    took: dict[str, list[float]] = {"in_process": [], "served": []}
    for i in range(n + 1):
        for mode, model in (("in_process", local), ("served", served)):
            t0 = time.perf_counter()
            await model.embed([f"where do I live {i}"])
            if i:  # the first call of each warms up
                took[mode].append((time.perf_counter() - t0) * 1000)
    await served.aclose()
    return {
        mode: {"p50_ms": round(percentile(t, 50), 1), "p95_ms": round(percentile(t, 95), 1)}
        for mode, t in took.items()
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-served-models-"))
    server = start_model_server(workdir)
    out: dict[str, Any] = {"machine": machine(), "args": vars(args)}
    try:
        if args.single_calls:
            out["single_calls"] = await single_calls(server.url, args.single_calls)
            return out
        with bench_stores() as stores:
            got: dict[str, dict[str, list[Any]]] = {"in_process": {}, "served": {}}
            for round_ in range(0 if args.reembed_only else args.rounds):
                order = ("in_process", "served") if round_ % 2 == 0 else ("served", "in_process")
                for mode in order:
                    extra = served_settings(server.url) if mode == "served" else {}
                    r = await one_mode(args, stores, f"{mode.replace('_', '')}{round_}", extra)
                    for key, values in r.items():
                        got[mode].setdefault(key, []).extend(values)
            for mode, r in got.items() if not args.reembed_only else ():
                out[mode] = {
                    f"{what}_{stat}_ms": round(percentile(r[what], q), 1)
                    for what in ("writes", "searches")
                    for stat, q in (("p50", 50), ("p95", 95))
                }
            if not args.reembed_only:
                served, local = out["served"], out["in_process"]
                out["added_ms"] = {k: round(served[k] - local[k], 1) for k in served}
                tops = zip(got["in_process"]["tops"], got["served"]["tops"], strict=True)
                out["identical_top5"] = f"{sum(a == b for a, b in tops)}/{len(got['served']['tops'])}"
            out["reembed_over_http"] = await reembed_per_1000(args, stores, server.url)
    finally:
        server.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--memories", type=int, default=100, help="memories per user")
    parser.add_argument("--batch", type=int, default=10, help="messages per /messages call")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reembed-users", type=int, default=2, help="users of the model switch")
    parser.add_argument("--reembed-memories", type=int, default=200, help="memories per user of the switch")
    parser.add_argument("--reembed-only", action="store_true", help="only the model switch")
    parser.add_argument("--single-calls", type=int, default=0, help="only N one-text embedding calls")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    json.dump(result, sys.stdout, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
