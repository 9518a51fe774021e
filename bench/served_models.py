"""What serving the models over HTTP costs (issue 44): the same writes and searches through the app
with the bundled models in process and with the same models served over the real `/v1/embeddings`
protocol (harness/model_server.py, a subprocess on loopback), in alternating rounds on fresh stores.

Prints JSON: per mode the write latency (one `/messages` call of `--batch` messages) and the search
latency (one `/search`), p50 and p95 in ms, the added latency served minus in-process, whether every
search's top 5 was the same in both modes (recall identical), and a model switch: the bridge of
`--reembed-users` users of `--reembed-memories` memories re-embedded into a new model over HTTP
(`Reembedder`) while an app answers searches on the new configuration (time per 1,000 memories, the
status of every search meanwhile); and a dense model switch (`dense_switch`): `--switch-users` users
of `--switch-memories` distinct memories written with the bundled MiniLM, moved to USE v3 served over
HTTP by the rebalance (`app.cli.rebalance.run`, as the CLI runs it) while both users are searched
without pause: the time per user and per 1,000 memories, how long each user's writes were held up, the
status of every search, and whether each search's top 10 is the one of the old model or of the new one
(never a mix).

    .venv/bin/python bench/served_models.py [--users 4] [--memories 100] [--queries 200] [--rounds 2]
    .venv/bin/python bench/served_models.py --reembed-only --reembed-users 2 --reembed-memories 2000
    .venv/bin/python bench/served_models.py --dense-switch-only --switch-users 2 --switch-memories 2000
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

from app.cli import rebalance as rebalance_cli
from app.clients.embeddings import HttpEmbedder, ServedModel
from app.clients.redis import build_redis
from app.composition import build_bridge, build_store
from app.composition.dense import dense_layout
from app.http.auth import TokenCodec
from app.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import SECRET, TURNS, app_on, bench_stores, machine, percentile  # noqa: E402
from harness.model_server import DIMENSIONS, MINILM, USE, start_model_server  # noqa: E402
from memory import keys  # noqa: E402
from memory.longterm.bridge import BridgedStore  # noqa: E402
from memory.longterm.reembed import Reembedder  # noqa: E402
from memory.redis_client import RedisClient, close  # noqa: E402

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


# --- a dense model switch (issue 44): bundled MiniLM -> USE v3 served, the users moved by the rebalance
EN_NAMES = ["Anna", "Bruno", "Clara", "Diego", "Elena", "Felix", "Greta", "Hugo"]
EN_NAMES += ["Ines", "Jonas", "Karin", "Leo", "Marta", "Nils", "Olga", "Pablo"]
ZH_NAMES = ["王芳", "李雷", "张伟", "刘洋", "陈静", "杨帆", "赵敏", "黄磊"]
ZH_NAMES += ["周婷", "吴昊", "徐丽", "孙杰", "马超", "朱琳", "胡军", "郭静"]
EN_CITIES = ["Porto", "Lisbon", "Osaka", "Berlin", "Madrid", "Vienna", "Prague", "Dublin", "Kyoto", "Milan"]
ZH_CITIES = ["杭州", "成都", "厦门", "西安", "苏州", "南京", "青岛", "大理", "昆明", "武汉"]
EN_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ZH_DAYS = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"]
EN_THINGS = ["hiking", "cycling", "swimming", "bouldering", "sailing", "kayaking", "fishing", "camping"]
ZH_THINGS = ["爬山", "骑车", "游泳", "攀岩", "划船", "钓鱼", "跑步", "露营"]
EN_TOPICS = ["jazz", "astronomy", "pottery", "chess", "photography", "gardening", "baking", "calligraphy"]
ZH_TOPICS = ["爵士乐", "天文", "陶艺", "象棋", "摄影", "园艺", "烘焙", "书法"]
EN_FOODS = ["hotpot", "ramen", "tapas", "dumplings", "pizza", "sushi", "curry", "paella"]
ZH_FOODS = ["火锅", "拉面", "饺子", "烤鸭", "小笼包", "米线", "串串", "披萨"]
EN_TEMPLATES = [
    "On {day} I went {thing} with {name} near {city}, {n} meters of trail.",
    "{name} lent me a book about {topic} in {city}; I gave it back on {day} with a note on page {n}.",
    "Last {day} {name} and I had {food} in {city} and the bill came to {n} euros.",
    "I bought a {topic} poster in {city} for {n} euros on {day} while {name} was {thing}.",
    "{name} showed me {n} photos of {food} from our {thing} trip to {city} on {day}.",
]
ZH_TEMPLATES = [
    "{day}我和{name}在{city}附近{thing}，一共走了{n}米。",
    "{name}在{city}借给我一本关于{topic}的书，{day}还书时我在第{n}页夹了张纸条。",
    "上个{day}我和{name}在{city}吃了{food}，一共花了{n}元。",
    "{day}我在{city}花{n}元买了一张{topic}海报，当时{name}在{thing}。",
    "{name}给我看了{n}张在{city}{thing}时拍的{food}照片，那天是{day}。",
]
# the fixed queries whose top 10 is compared before, during and after the switch: zh and en, both ways
SWITCH_QUERIES = [
    "我和谁在成都吃过火锅？",
    "关于陶艺的书",
    "在杭州爬山",
    "海报花了多少钱",
    "Who lent me a book about astronomy?",
    "hiking near Porto",
    "ramen in Osaka with Clara",
    "photos of dumplings",
    "周末在Lisbon骑车",
    "pottery poster 书法",
]


def switch_facts(user_index: int, n: int) -> list[str]:
    """`n` distinct facts, half Chinese, half English: each its own number (so no two are near
    duplicates: `memory/write/merging.py` merges only facts that name the same numbers), names, places,
    days and things drawn at random."""
    rng = random.Random(1000 + user_index)
    numbers = rng.sample(range(100, 100 + 20 * n), n)
    out: list[str] = []
    for i, number in enumerate(numbers):
        zh = i % 2 == 0
        template = rng.choice(ZH_TEMPLATES if zh else EN_TEMPLATES)
        out.append(
            template.format(
                n=number,
                name=rng.choice(ZH_NAMES if zh else EN_NAMES),
                city=rng.choice(ZH_CITIES if zh else EN_CITIES),
                day=rng.choice(ZH_DAYS if zh else EN_DAYS),
                thing=rng.choice(ZH_THINGS if zh else EN_THINGS),
                topic=rng.choice(ZH_TOPICS if zh else EN_TOPICS),
                food=rng.choice(ZH_FOODS if zh else EN_FOODS),
            )
        )
    return out


def switch_messages(user_index: int, n: int, t0: float) -> list[dict[str, Any]]:
    """The user's seeded messages, each with an id and a timestamp, so that sending one again is a no-op
    (the same memory id, text and time: the write probe during the move)."""
    return [
        {"role": "user", "content": text, "id": f"f{i}", "timestamp": t0 + i}
        for i, text in enumerate(switch_facts(user_index, n))
    ]


Tops = dict[str, dict[str, list[str]]]  # user -> query -> top-10 ids


async def top10(client: Any, user: str, query: str, headers: dict[str, str], as_of: float) -> Any:
    # a fixed `as_of`: recency is part of the score, and must not move between the recordings
    return await client.post(
        f"/v1/memory/{user}/search",
        json={"query": query, "top_k": 10, "as_of": as_of, "min_relevance": 0},
        headers=headers,
    )


async def all_tops(client: Any, headers: dict[str, dict[str, str]], as_of: float) -> Tops:
    out: Tops = {}
    for user, h in headers.items():
        out[user] = {}
        for query in SWITCH_QUERIES:
            resp = await top10(client, user, query, h, as_of)
            resp.raise_for_status()
            out[user][query] = [r["id"] for r in resp.json()["results"]]
    return out


async def stored_count(client: Any, user: str, headers: dict[str, str]) -> int:
    resp = await client.get(f"/v1/memory/{user}/list", params={"limit": 1}, headers=headers)
    resp.raise_for_status()
    return int(resp.json()["total"])


Span = tuple[float, float]  # (first, last) sight, seconds from the load's start


async def lock_holds(
    redis: RedisClient, users: list[str], done: asyncio.Event, started: float
) -> dict[str, list[Span]]:
    """Each user's write lock, polled every 50 ms: per user, one span per holder (its token), first to
    last sight (+/- 50 ms). The move is the rebalance's one long hold; write probes hold it briefly."""
    seen: dict[str, dict[str, list[float]]] = {u: {} for u in users}
    while not done.is_set():
        now = time.perf_counter() - started
        for user, token in zip(users, await redis.mget([keys.ltm_lock(u) for u in users]), strict=True):
            if token is not None:
                span = seen[user].setdefault(str(token), [now, now])
                span[1] = now
        await asyncio.sleep(0.05)
    return {u: [(a, b) for a, b in spans.values()] for u, spans in seen.items()}


async def where_users_are(settings: Settings, redis: RedisClient, users: list[str]) -> dict[str, Any]:
    """Each user's dense model (their placement's store) and the records each store holds."""
    layout = await dense_layout(settings, redis, record=False)
    store = build_store(settings, redis, layout=layout)
    records = {name: sum((await s.user_counts()).values()) for name, s in store.servers.items()}
    return {
        "model": {u: await store.dense_model_of(u, fresh=True) for u in users},
        "records_by_store": records,
    }


async def dense_switch(args: argparse.Namespace, stores: tuple[str, str], model_url: str) -> dict[str, Any]:
    """Seed `--switch-users` x `--switch-memories` with the bundled models, record each user's top 10 of
    SWITCH_QUERIES (old model), start an app on the new dense model (USE v3 served over HTTP, the bundled
    MiniLM as PREVIOUS_EMBEDDINGS_MODEL, the bridge as before), then run the rebalance as the CLI does
    while both users are searched without pause and each user's writes are probed: per search its
    status and whether its top 10 is the old one, the new one (recorded after the switch, unloaded) or
    neither."""
    prefix = f"dense{random.randrange(10**6)}"
    tokens = TokenCodec(SECRET)
    users = [f"d{i}" for i in range(args.switch_users)]
    headers = {u: {"Authorization": f"Bearer {tokens.mint(u, ttl_seconds=7200)}"} for u in users}
    t0 = time.time() - 3 * 86400
    seeds = {u: switch_messages(i, args.switch_memories, t0) for i, u in enumerate(users)}
    seeded: dict[str, dict[str, int]] = {}
    seed_started = time.perf_counter()
    async with app_on(*stores, chroma_collection_prefix=prefix) as client:
        for user in users:
            stored = skipped = 0
            for start in range(0, len(seeds[user]), 50):
                body = {"session_id": "s", "messages": seeds[user][start : start + 50]}
                resp = await client.post(f"/v1/memory/{user}/messages", json=body, headers=headers[user])
                resp.raise_for_status()
                stored += resp.json()["stored"]
                skipped += len(resp.json()["skipped"])
            seeded[user] = {
                "sent": len(seeds[user]),
                "stored_answers": stored,
                "skipped": skipped,
                "listed": await stored_count(client, user, headers[user]),
            }
        as_of = time.time()
        old = await all_tops(client, headers, as_of)
        # the write probe sends a seeded message again: it must change no ranking
        for user in users:
            probe = {"session_id": "s", "messages": [seeds[user][0]]}
            (
                await client.post(f"/v1/memory/{user}/messages", json=probe, headers=headers[user])
            ).raise_for_status()
        probe_noop = await all_tops(client, headers, as_of) == old
    seed_seconds = time.perf_counter() - seed_started
    new_dense: dict[str, Any] = {
        "embeddings_url": f"{model_url}/v1",
        "embeddings_model": USE,
        "embeddings_dimensions": DIMENSIONS[USE],
        "previous_embeddings_model": "bundled",
    }
    redis_url, chroma_url = stores
    settings = Settings(
        _env_file=None,
        redis_url=redis_url,
        chroma_url=chroma_url,
        auth_jwt_secret=SECRET,
        chroma_collection_prefix=prefix,
        log_level="WARNING",
        **new_dense,
    )
    # the CLI's defaults (`python -m app.cli.rebalance`), --max-per-second unset
    cli_args = argparse.Namespace(
        dry_run=False,
        batch_users=50,
        page_size=500,
        grace_seconds=5.0,
        lock_wait_seconds=60.0,
        wait_seconds=30.0,
        max_per_second=None,
    )
    redis = build_redis(settings, "bench")
    searches: list[dict[str, Any]] = []
    probes: list[dict[str, Any]] = []
    done = asyncio.Event()
    try:
        async with app_on(*stores, chroma_collection_prefix=prefix, **new_dense) as client:
            before = await all_tops(client, headers, as_of)  # the new app, before the switch
            started = time.perf_counter()

            async def search_load(user: str) -> None:
                i = 0
                while not done.is_set():
                    query = SWITCH_QUERIES[i % len(SWITCH_QUERIES)]
                    i += 1
                    t = time.perf_counter()
                    try:
                        resp = await top10(client, user, query, headers[user], as_of)
                        status = resp.status_code
                        body = resp.json() if status == 200 else {}
                    except Exception as exc:  # noqa: BLE001 - a failed search is counted, not raised
                        status, body = -1, {"error": type(exc).__name__}
                    searches.append(
                        {
                            "user": user,
                            "query": query,
                            "at": round(t - started, 2),
                            "ms": (time.perf_counter() - t) * 1000,
                            "status": status,
                            "ids": [r["id"] for r in body.get("results", [])],
                            "degraded": body.get("degraded"),
                        }
                    )

            async def write_probe(user: str) -> None:
                body = {"session_id": "s", "messages": [seeds[user][0]]}
                while not done.is_set():
                    t = time.perf_counter()
                    resp = await client.post(f"/v1/memory/{user}/messages", json=body, headers=headers[user])
                    probes.append(
                        {
                            "user": user,
                            "at": round(t - started, 2),
                            "s": round(time.perf_counter() - t, 2),
                            "status": resp.status_code,
                        }
                    )
                    await asyncio.sleep(1.0)

            tasks = [asyncio.create_task(search_load(u)) for u in users]
            tasks += [asyncio.create_task(write_probe(u)) for u in users]
            holding = asyncio.create_task(lock_holds(redis, users, done, started))
            await asyncio.sleep(3)  # the load runs before the switch starts too
            runs = [await rebalance_cli.run(settings, cli_args)]
            if runs[0].failures:  # exit status 1: the operator runs it again (docs/operations.md)
                runs.append(await rebalance_cli.run(settings, cli_args))
            await asyncio.sleep(3)
            done.set()
            await asyncio.gather(*tasks)
            holds = await holding
            new = await all_tops(client, headers, as_of)  # after the switch, no load
            listed = {u: await stored_count(client, u, headers[u]) for u in users}
            where = await where_users_are(settings, redis, users)
    finally:
        await close(redis)
    out: dict[str, Any] = {
        "seeded": seeded,
        "seed_seconds": round(seed_seconds, 1),
        "probe_changes_no_ranking": probe_noop,
        "new_app_before_switch_equals_old": before == old,
        # the queries whose top 10 is the same with either model (a search of them tells nothing)
        "same_top10_both_models": {u: [q for q in SWITCH_QUERIES if old[u][q] == new[u][q]] for u in users},
        "rebalance_runs": [r.as_dict() for r in runs],
        "listed_after": listed,
        **where,
    }
    reembedded = sum(r.records_reembedded for r in runs)
    out.update(switch_figures(users, old, new, searches, probes, holds, reembedded))
    return out


def switch_figures(
    users: list[str],
    old: Tops,
    new: Tops,
    searches: list[dict[str, Any]],
    probes: list[dict[str, Any]],
    holds: dict[str, list[Span]],
    reembedded: int,
) -> dict[str, Any]:
    """Per user: the move (the longest hold of their lock: their writes wait all of it), the write
    probes; per search: old / new / neither, before, during and after the user's move."""
    per_user: dict[str, Any] = {}
    moves: dict[str, Span] = {}
    for user in users:
        spans = holds.get(user) or [(0.0, -0.05)]
        move = max(spans, key=lambda s: s[1] - s[0])
        moves[user] = move
        mine = [p for p in probes if p["user"] == user]
        written: dict[int, int] = {}
        for p in mine:
            written[p["status"]] = written.get(p["status"], 0) + 1
        per_user[user] = {
            "move_from_s": round(move[0], 2),
            "move_seconds": round(move[1] - move[0] + 0.05, 2),  # +/- 0.05 s (polled)
            "write_probes": written,
            "write_probe_max_s": max((p["s"] for p in mine), default=None),
            "write_probes_over_1s": [p for p in mine if p["s"] > 1.0 or p["status"] != 200],
        }
    phases = ("before", "during", "after")
    counts = {phase: {"old": 0, "new": 0, "same_both": 0, "neither": 0, "failed": 0} for phase in phases}
    statuses: dict[int, int] = {}
    neither: list[dict[str, Any]] = []
    for s in searches:
        statuses[s["status"]] = statuses.get(s["status"], 0) + 1
        a, b = moves[s["user"]]
        phase = "before" if s["at"] < a else "during" if s["at"] <= b else "after"
        o, n = old[s["user"]][s["query"]], new[s["user"]][s["query"]]
        if s["status"] != 200:
            kind = "failed"
        elif s["ids"] == o == n:
            kind = "same_both"
        elif s["ids"] == o:
            kind = "old"
        elif s["ids"] == n:
            kind = "new"
        else:
            kind = "neither"
            neither.append(
                {
                    **{k: s[k] for k in ("user", "query", "at", "degraded")},
                    "phase": phase,
                    "in_old": len(set(s["ids"]) & set(o)),
                    "in_new": len(set(s["ids"]) & set(n)),
                    "n": len(s["ids"]),
                }
            )
        counts[phase][kind] += 1
    total_move = sum(b - a + 0.05 for a, b in moves.values())
    latencies = [s["ms"] for s in searches if s["status"] == 200]
    return {
        "users": per_user,
        "memories_reembedded": reembedded,
        "move_seconds_per_1000": round(total_move / reembedded * 1000, 2) if reembedded else None,
        "searches": len(searches),
        "search_statuses": statuses,
        "search_p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
        "search_p95_ms": round(percentile(latencies, 95), 1) if latencies else None,
        "top10": counts,
        "neither": neither[:20],
        "neither_total": len(neither),
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
            if args.dense_switch_only:
                out["dense_switch"] = await dense_switch(args, stores, server.url)
                return out
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
            if not args.reembed_only:
                out["dense_switch"] = await dense_switch(args, stores, server.url)
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
    parser.add_argument("--switch-users", type=int, default=2, help="users of the dense model switch")
    parser.add_argument("--switch-memories", type=int, default=2000, help="memories per user of the switch")
    parser.add_argument("--dense-switch-only", action="store_true", help="only the dense model switch")
    parser.add_argument("--single-calls", type=int, default=0, help="only N one-text embedding calls")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    json.dump(result, sys.stdout, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()
