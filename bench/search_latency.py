"""Search latency through the HTTP API at N memories across M users.

    .venv/bin/python bench/search_latency.py                      # 10k memories, 100 users
    .venv/bin/python bench/search_latency.py --memories 100000 --users 1000
    .venv/bin/python bench/search_latency.py --chroma-servers 2        # users spread over 2 servers
    .venv/bin/python bench/search_latency.py --in-process-max 0        # every search asks Chroma
    .venv/bin/python bench/search_latency.py --bridge both             # with and without the bridge
    .venv/bin/python bench/search_latency.py --relations both          # with and without relation links
    .venv/bin/python bench/search_latency.py --lexicon both            # with and without the bilingual lexicon
    .venv/bin/python bench/search_latency.py --pipeline both           # against the bare pipeline (on = hybrid,
                                                                       # off = embed + one Chroma query)
    .venv/bin/python bench/search_latency.py --anchors                 # a time named by an event ("before I
                                                                       # moved") against the same question without it

Starts its own redis-server and `chroma run` on free loopback ports (data in a temp dir), serves the
app in-process (ASGI, real lifespan, real embedding model), ingests synthetic zh+en memories through
`POST /v1/memory/{user}/messages`, then, from a fresh app on the same stores (an API worker that did not
write these users, as in production where the writer is its own process), times sequential
`POST .../search` calls from one client: each user's first search (which builds that user's index in
the worker) is reported separately as "cold".
Prints a table and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, app_on, bench_stores, machine, percentile  # noqa: E402

EN_FACTS = [
    "I moved to {city} last {month} for a new job as a {job}.",
    "My favourite food is {food}, I eat it every weekend.",
    "Remind me to call {name} about the {thing} on {day}.",
    "I am learning to play the {instrument} with my friend {name}.",
    "We are planning a trip to {city} in {month} with the kids.",
    "My order number for the {thing} is {num}.",
]
ZH_FACTS = [
    "我上个{month_zh}搬到了{city_zh}，新工作是{job_zh}。",
    "我最喜欢吃{food_zh}，每个周末都吃。",
    "提醒我{day_zh}给{name_zh}打电话说{thing_zh}的事。",
    "我在和朋友{name_zh}一起学{instrument_zh}。",
    "我们打算{month_zh}带孩子去{city_zh}旅行。",
    "我买的{thing_zh}订单号是{num}。",
]
EN_QUERIES = [
    "Where did I move to?",
    "What food do I like?",
    "Who should I call?",
    "Which instrument am I learning?",
]
ZH_QUERIES = ["我搬到哪里了？", "我喜欢吃什么？", "我要给谁打电话？", "我在学什么乐器？"]
# `--anchors`: each question names a time by an event the users told of (a move), and its twin without it
ANCHORED = [
    ("What food did I like before I moved?", "What food did I like?"),
    ("Which instrument did I learn after I moved?", "Which instrument did I learn?"),
    ("我搬到新城市之前喜欢吃什么？", "我喜欢吃什么？"),
    ("我搬家以后在学什么乐器？", "我在学什么乐器？"),
]
VOCAB = {
    "city": ["Lisbon", "Osaka", "Denver", "Nairobi", "Oslo"],
    "month": ["March", "June", "October", "January"],
    "job": ["nurse", "teacher", "data engineer", "chef"],
    "food": ["ramen", "tacos", "dumplings", "paella"],
    "name": ["Maria", "Tom", "Aiko", "Sam"],
    "thing": ["laptop", "insurance", "contract", "sofa"],
    "day": ["Monday", "Friday", "Sunday"],
    "instrument": ["piano", "violin", "guitar"],
    "city_zh": ["杭州", "成都", "大连", "厦门", "西安"],
    "month_zh": ["三月", "六月", "十月", "一月"],
    "job_zh": ["护士", "老师", "数据工程师", "厨师"],
    "food_zh": ["火锅", "饺子", "小笼包", "烤鸭"],
    "name_zh": ["王芳", "李雷", "张伟", "刘洋"],
    "thing_zh": ["电脑", "保险", "合同", "沙发"],
    "day_zh": ["周一", "周五", "周日"],
    "instrument_zh": ["钢琴", "小提琴", "吉他"],
}


def fact(rng: random.Random) -> str:
    template = rng.choice(EN_FACTS + ZH_FACTS)
    values = {k: rng.choice(v) for k, v in VOCAB.items()}
    values["num"] = str(rng.randrange(10**9, 10**10))
    return template.format(**values)


async def ingest(
    args: argparse.Namespace,
    rng: random.Random,
    users: list[str],
    headers: dict[str, dict[str, str]],
    per_user: int,
    stores: tuple[str, str],
) -> float:
    """Store every user's memories through the API; returns the seconds it took."""
    base_ts = 1_700_000_000
    async with app_on(*stores, **app_settings(args)) as client:
        start = time.perf_counter()
        for u in users:
            for offset in range(0, per_user, args.batch):
                n = min(args.batch, per_user - offset)
                messages = [
                    {
                        "role": "user",
                        "content": fact(rng),
                        "id": f"{u}-{offset + i}",
                        "timestamp": base_ts + offset + i,
                    }
                    for i in range(n)
                ]
                resp = await client.post(
                    f"/v1/memory/{u}/messages",
                    json={"session_id": f"s{offset // args.batch}", "messages": messages},
                    headers=headers[u],
                )
                resp.raise_for_status()
        return time.perf_counter() - start


async def searches(
    args: argparse.Namespace,
    rng: random.Random,
    users: list[str],
    headers: dict[str, dict[str, str]],
    client: httpx.AsyncClient,
) -> tuple[list[float], list[float]]:
    """Each user's first search (which builds its index in this worker: "cold"), then random ones."""
    cold: list[float] = []
    for u in users:
        t0 = time.perf_counter()
        resp = await client.post(f"/v1/memory/{u}/search", json={"query": "warm up"}, headers=headers[u])
        cold.append((time.perf_counter() - t0) * 1000)
        resp.raise_for_status()
    latencies: list[float] = []
    for _ in range(args.queries):
        u = rng.choice(users)
        query = rng.choice(EN_QUERIES + ZH_QUERIES)
        t0 = time.perf_counter()
        resp = await client.post(
            f"/v1/memory/{u}/search", json={"query": query, "top_k": 10}, headers=headers[u]
        )
        latencies.append((time.perf_counter() - t0) * 1000)
        resp.raise_for_status()
    return cold, latencies


async def anchored(
    args: argparse.Namespace,
    users: list[str],
    headers: dict[str, dict[str, str]],
    stores: tuple[str, str],
) -> dict[str, object]:
    """`--anchors`: from one fresh app (every user's first search done first), each question that names
    a time by an event and its twin without the event, asked in turn for the same user, so both see the
    same load; the anchored one also ranks the event's words (top 1) to date it."""
    rng = random.Random(args.seed)
    timed: dict[str, list[float]] = {"anchored": [], "plain": []}
    async with app_on(*stores, **app_settings(args)) as client:
        for u in users:
            resp = await client.post(f"/v1/memory/{u}/search", json={"query": "warm up"}, headers=headers[u])
            resp.raise_for_status()
        for i in range(args.queries):
            u = rng.choice(users)
            pair = dict(zip(("anchored", "plain"), rng.choice(ANCHORED), strict=True))
            for kind in ("anchored", "plain") if i % 2 == 0 else ("plain", "anchored"):
                t0 = time.perf_counter()
                resp = await client.post(
                    f"/v1/memory/{u}/search", json={"query": pair[kind], "top_k": 10}, headers=headers[u]
                )
                timed[kind].append((time.perf_counter() - t0) * 1000)
                resp.raise_for_status()
    out: dict[str, object] = {}
    for kind, latencies in timed.items():
        out[f"{kind}_p50_ms"] = round(percentile(latencies, 50), 1)
        out[f"{kind}_p95_ms"] = round(percentile(latencies, 95), 1)
    out["anchored_over_plain_p95"] = round(
        percentile(timed["anchored"], 95) / percentile(timed["plain"], 95), 2
    )
    return out


def app_settings(
    args: argparse.Namespace,
    bridge: str | None = None,
    relations: str | None = None,
    lexicon: str | None = None,
    pipeline: str | None = None,
) -> dict[str, Any]:
    return {
        # the bare pipeline (RETRIEVAL_PIPELINE=naive): embed the query, one Chroma query, cosine only
        "retrieval_pipeline": "naive" if (pipeline or args.pipeline) == "off" else "hybrid",
        "memory_shards": args.shards,
        "in_process_index_max": args.in_process_max,
        "in_process_dense_max": args.in_process_max,
        "bridge_embedding": (bridge or args.bridge) in ("on", "both"),
        "relation_memory": (relations or args.relations) in ("on", "both"),
        "keyword_lexicon": (lexicon or args.lexicon) in ("on", "both"),
    }


async def compared(
    args: argparse.Namespace,
    users: list[str],
    headers: dict[str, dict[str, str]],
    stores: tuple[str, str],
    switch: str = "bridge",
) -> dict[str, object]:
    """`--bridge both` (or `--relations both`, `--lexicon both`): the same stored memories searched by
    fresh apps with and without the bridge (relation links, the bilingual lexicon), in two rounds of opposite order (the same queries for both
    modes of a round)."""
    timed: dict[str, dict[str, list[float]]] = {
        m: {"p50": [], "p95": [], "cold_p95": []} for m in ("on", "off")
    }
    for round_, order in enumerate((("on", "off"), ("off", "on"))):
        for mode in order:
            flipped = {switch: mode}
            async with app_on(*stores, **app_settings(args, **flipped)) as client:
                cold, latencies = await searches(
                    args, random.Random(args.seed + round_), users, headers, client
                )
            timed[mode]["p50"].append(round(percentile(latencies, 50), 1))
            timed[mode]["p95"].append(round(percentile(latencies, 95), 1))
            timed[mode]["cold_p95"].append(round(percentile(cold, 95), 1))
    return {
        f"{switch}_{mode}_{stat}_ms": values
        for mode, stats in timed.items()
        for stat, values in stats.items()
    }


async def run(args: argparse.Namespace) -> dict[str, object]:
    rng = random.Random(args.seed)
    tokens = TokenCodec(SECRET)
    with bench_stores(args.chroma_servers) as stores:
        users = [f"user-{i:05d}" for i in range(args.users)]
        headers = {u: {"Authorization": f"Bearer {tokens.mint(u, ttl_seconds=86400)}"} for u in users}
        per_user = args.memories // args.users
        ingest_seconds = await ingest(args, rng, users, headers, per_user, stores)
        stored = per_user * len(users)
        switch = next(
            (s for s in ("bridge", "relations", "lexicon", "pipeline") if getattr(args, s) == "both"), None
        )
        if args.anchors:
            return {
                "memories": stored,
                "users": args.users,
                "queries": args.queries,
                **await anchored(args, users, headers, stores),
                "machine": machine(),
            }
        if switch is not None:
            both = await compared(args, users, headers, stores, switch)
            return {
                "memories": stored,
                "users": args.users,
                "queries": args.queries,
                **both,
                "ingest_memories_per_s": round(stored / ingest_seconds, 1),
                "machine": machine(),
            }
        # searched by a fresh app: like an API worker, it holds no index of these users until their
        # first search (the writer, which built them while writing, is another process in production)
        async with app_on(*stores, **app_settings(args)) as client:
            cold, latencies = await searches(args, rng, users, headers, client)
    return {
        "memories": stored,
        "users": args.users,
        "shards": args.shards,
        "chroma_servers": args.chroma_servers,
        "in_process_index_max": args.in_process_max,
        "queries": args.queries,
        "cold_first_search_p50_ms": round(percentile(cold, 50), 1),
        "cold_first_search_p95_ms": round(percentile(cold, 95), 1),
        "search_p50_ms": round(percentile(latencies, 50), 1),
        "search_p95_ms": round(percentile(latencies, 95), 1),
        "search_mean_ms": round(statistics.fmean(latencies), 1),
        "ingest_memories_per_s": round(stored / ingest_seconds, 1),
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--shards", type=int, default=16)
    parser.add_argument("--batch", type=int, default=100, help="messages per /messages call")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--chroma-servers", type=int, default=1, help="Chroma servers the users spread over")
    parser.add_argument(
        "--in-process-max",
        type=int,
        default=20_000,
        help="IN_PROCESS_INDEX_MAX and IN_PROCESS_DENSE_MAX (0: every search asks Chroma)",
    )
    parser.add_argument(
        "--bridge",
        choices=["on", "off", "both"],
        default="on",
        help="BRIDGE_EMBEDDING (off: the pipeline before it; both: stored with it, searched both ways)",
    )
    parser.add_argument(
        "--relations",
        choices=["on", "off", "both"],
        default="on",
        help="RELATION_MEMORY (both: stored with it, searched with and without the links)",
    )
    parser.add_argument(
        "--lexicon",
        choices=["on", "off", "both"],
        default="on",
        help="KEYWORD_LEXICON (both: searched with and without the bilingual lexicon)",
    )
    parser.add_argument(
        "--pipeline",
        choices=["on", "off", "both"],
        default="on",
        help="on: the hybrid pipeline; off: the bare one (embed + one Chroma query, RETRIEVAL_PIPELINE="
        "naive); both: the same stored memories searched both ways",
    )
    parser.add_argument(
        "--anchors",
        action="store_true",
        help="time questions named by an event against the same questions without it, in one run",
    )
    args = parser.parse_args()
    result = asyncio.run(run(args))
    result["bridge"] = args.bridge
    result["relations"] = args.relations
    result["lexicon"] = args.lexicon
    result["pipeline"] = args.pipeline
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    name = f"search_latency_{result['memories']}_s{args.chroma_servers}_ip{args.in_process_max}_bridge-{args.bridge}{'' if args.relations == 'on' else '_rel-' + args.relations}{'' if args.lexicon == 'on' else '_lex-' + args.lexicon}{'' if args.pipeline == 'on' else '_pipeline-' + args.pipeline}{'_anchors' if args.anchors else ''}.json"
    (out / name).write_text(json.dumps(result, indent=2))
    width = max(len(k) for k in result)
    sys.stdout.write("\n".join(f"{k:<{width}}  {v}" for k, v in result.items()) + "\n")


if __name__ == "__main__":
    main()
