"""Token-sized users (issue 45): import, chat during import, first/warm search, RSS and recall vs BM25.

    PYTHONPATH=. .venv/bin/python bench/token_history.py --tokens 100000
    PYTHONPATH=. .venv/bin/python bench/token_history.py --tokens 1000000 --concurrency 2
    PYTHONPATH=. .venv/bin/python bench/token_history.py --tokens 1000000 --import-turns 300  # a slice

The set is `bench/make_token_history.py`'s (one bilingual user of about `--tokens` tokens, cached in
`bench/results/`). The service runs as deployed (`bench/served.py`): uvicorn with `--workers` API
workers and the separate writer, its own redis-server and `chroma run`.

1. **Idle chat**: 10 paced users (one chat turn a second each, `bench/turn_load.py`'s loop) for
   `--chat-seconds`: p50/p95 of their turns.
2. **Import** of the whole history through `POST /v1/memory/{user}/messages`, `--batch` turns a call
   (the turn id as message id, the session's start + a minute a turn as timestamp), `--concurrency`
   calls in flight (0 of them wait for another), while the same 10 users keep chatting: turns/s,
   seconds per 1M tokens, CPU seconds per turn of every process group (API workers, writer, Redis,
   Chroma: a figure the shared host's load does not inflate), and the chat p50/p95 during the import
   (same run as the idle figures).
   `--import-turns N` imports the first N turns only (a measured slice of a set too big for the time).
   `--import-via imports` sends the history to the import lane instead (`POST /imports`, 202; the writer
   writes it when no chat turn waits): the import's seconds then run until every import's status says
   done, and the chat users chat until then.
3. **RSS** of every API worker after the import (`/metrics`).
4. **Search** from a fresh in-process app on the same stores (a worker that never saw the user): its
   first search (reads the store and writes the snapshot); then a second fresh app: its first search
   (from the snapshot), then every question `--rounds` times (warm p50/p95). The second app's RSS before
   and after the user's first search gives the bytes the user costs a worker, and per memory.
5. **Recall**: any@10 (the question's evidence turn among the top 10's `source_message_ids`) and the
   mean characters of the top 10, per question type and part (early, middle, late), against plain BM25
   over whole turns (the project's `BM25Index` alone, every turn one document, the 10 best turns whole)
   in the same run, and the same BM25 at mnemo's context cost (its best turns whole while they fit in
   mnemo's mean characters of the top 10: `bm25_turns_at_mnemo_chars`). For facts that changed: `stale_first`, how often an older statement ranks above the
   latest (or the latest is missing while an older one is there).

`--keep-stores` keeps the run's stores on disk (Redis with an AOF; the directory is printed), so that a
`redis-server --dir D/redis --appendonly yes` and a `chroma run --path D/chroma` serve them again.
`--redis URL --chroma URL --import-turns N`: steps 4 and 5 only, on stores that already hold the first
N turns of the set (a run's import stopped there; its stores kept). `--profile DIR`: the second app's
first search and its warm ones under cProfile (the event loop's thread), written to DIR and summed up;
`--profile-clock cpu` times them in that thread's CPU seconds (`time.thread_time`: what a search
computes, not what it waits for, and not stretched by a busy host: for before/after on a shared one).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import pstats
import statistics
import sys
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, app_on, machine, percentile  # noqa: E402
from bench.long_history import calls  # noqa: E402
from bench.make_token_history import PARTS, describe, load_or_build, tokens  # noqa: E402
from bench.procstat import delta, rss_mib  # noqa: E402
from bench.procstat import snapshot as cpu_snapshot  # noqa: E402
from bench.served import served  # noqa: E402
from bench.turn_load import user_loop, worker_rss  # noqa: E402
from memory import keys  # noqa: E402
from memory.models import Memory  # noqa: E402
from memory.recall.keyword_index import BM25Index  # noqa: E402
from memory.recall.user_index import UserIndexes  # noqa: E402
from memory.text.tokens import tokenize  # noqa: E402

User = dict[str, Any]
KINDS = ("fact", "assistant", "changed", "preference")


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def sliced(user: User, turns: int) -> User:
    """The user with its first `turns` turns only (whole sessions), and the questions whose evidence
    is among them."""
    if not turns:
        return user
    sessions = []
    count = 0
    for s in user["sessions"]:
        if count >= turns:
            break
        sessions.append(s)
        count += len(s["turns"])
    kept = {t["id"] for s in sessions for t in s["turns"]}
    questions = [q for q in user["questions"] if set(q["evidence"]) <= kept]
    size = sum(tokens(t["content"]) for s in sessions for t in s["turns"])
    return {**user, "sessions": sessions, "questions": questions, "tokens": size}


async def chat(base: str, users: int, stop: asyncio.Event, out: list[float], errors: list[str]) -> None:
    """`users` paced chat users until `stop` is set (none: returns at once)."""
    if not users:
        return
    codec = TokenCodec(SECRET)
    limits = httpx.Limits(max_connections=users + 2, max_keepalive_connections=users + 2)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        while not stop.is_set():
            deadline = time.perf_counter() + 5.0
            tag = f"chat{int(time.time() * 1000) % 10**8}"
            await asyncio.gather(
                *(
                    user_loop(http, f"{tag}-u{i}", codec.mint(f"chat-u{i}"), deadline, True, out, errors)
                    for i in range(users)
                )
            )


async def import_history(
    base: str, user: User, batch: int, concurrency: int, via: str = "messages"
) -> tuple[float, list[str]]:
    """Seconds to import every turn, `concurrency` calls in flight; the errors met. `via` "imports":
    through the import lane (`POST /imports`, 202), until every import's status says done."""
    codec = TokenCodec(SECRET)
    headers = {"Authorization": f"Bearer {codec.mint(user['user_id'], ttl_seconds=86400)}"}
    todo = calls(user, batch)
    queue: asyncio.Queue[tuple[str, list[dict[str, Any]]]] = asyncio.Queue()
    for item in todo:
        queue.put_nowait(item)
    errors: list[str] = []
    statuses: list[str] = []

    async def one(http: httpx.AsyncClient) -> None:
        while not queue.empty():
            session_id, messages = queue.get_nowait()
            for _ in range(5):
                resp = await http.post(
                    f"/v1/memory/{user['user_id']}/{via}",
                    json={"session_id": session_id, "messages": messages},
                    headers=headers,
                )
                if resp.status_code in (200, 202):
                    if resp.status_code == 202:
                        statuses.append(resp.headers["location"])
                    break
                errors.append(f"{resp.status_code} {resp.text[:160]}")
                await asyncio.sleep(float(resp.headers.get("retry-after", 1.0)))

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    started = time.perf_counter()
    async with httpx.AsyncClient(base_url=base, timeout=600, limits=limits) as http:
        await asyncio.gather(*(one(http) for _ in range(concurrency)))
        while statuses:  # the import lane: written once every import's status says done
            resp = await http.get(statuses[0], headers=headers)
            if resp.status_code == 200 and resp.json()["done"]:
                statuses.pop(0)
            else:
                await asyncio.sleep(0.5)
    return time.perf_counter() - started, errors


def _latencies(values: list[float]) -> dict[str, Any]:
    return {
        "turns": len(values),
        "p50_ms": round(percentile(values, 50) * 1000, 1) if values else None,
        "p95_ms": round(percentile(values, 95) * 1000, 1) if values else None,
    }


def scored(q: dict[str, Any], ranked: list[tuple[str, ...]], chars: int) -> dict[str, Any]:
    """One question's row; `ranked`: each hit's source turn ids, best first."""
    evidence = set(q["evidence"])
    stale = set(q.get("stale", ()))
    found = {tid for ids in ranked for tid in ids}
    first_latest = next((k for k, ids in enumerate(ranked) if evidence & set(ids)), None)
    first_stale = next((k for k, ids in enumerate(ranked) if stale & set(ids)), None)
    stale_first = first_stale is not None and (first_latest is None or first_stale < first_latest)
    return {
        "type": q["question_type"],
        "part": q["part"],
        "language": q["language"],
        "any10": bool(evidence & found),
        "stale_first": stale_first,
        "latest_rank": first_latest,  # the first hit from the evidence turn (0 = first), None: not in the top 10
        "stale_rank": first_stale,  # the first hit from an older statement (facts that changed)
        "chars10": chars,
        "question": q["question"],
    }


def table(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    def stats(part: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {
            "n": len(part),
            "any10": round(statistics.fmean(r["any10"] for r in part), 3),
            "chars10": round(statistics.fmean(r["chars10"] for r in part)),
        }

    out: dict[str, Any] = {"all": stats(rows)}
    for key, values in (("language", ("en", "zh")), ("type", KINDS), ("part", PARTS)):
        for v in values:
            part = [r for r in rows if r[key] == v]
            if part:
                out[v] = stats(part)
    changed = [r for r in rows if r["type"] == "changed"]
    if changed:
        out["changed"]["stale_first"] = round(statistics.fmean(r["stale_first"] for r in changed), 3)
    return out


def bm25_rows(user: User, budget: float = 0.0) -> list[dict[str, Any]]:
    """Plain BM25 over whole turns: the 10 best turns; with a `budget` (characters), the best turns
    whole while they fit in it (at least one): BM25 at mnemo's context cost."""
    turns = [t for s in user["sessions"] for t in s["turns"]]
    docs = [
        Memory(
            id=t["id"],
            user_id=user["user_id"],
            content=t["content"],
            created_at=0.0,
            session_id="",
            source=t["role"],
            content_hash="",
        )
        for t in turns
    ]
    index = BM25Index(docs)
    text = {t["id"]: t["content"] for t in turns}
    rows = []
    for q in user["questions"]:
        top = [mid for mid, _ in index.search(tokenize(q["question"]), limit=10)]
        if budget:
            fit = top[:1]
            for mid in top[1:]:
                if sum(len(text[m]) for m in fit) + len(text[mid]) > budget:
                    break
                fit.append(mid)
            top = fit
        rows.append(scored(q, [(m,) for m in top], sum(len(text[m]) for m in top)))
    return rows


async def search(client: httpx.AsyncClient, user: User, q: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    codec = TokenCodec(SECRET)
    headers = {"Authorization": f"Bearer {codec.mint(user['user_id'])}"}
    t0 = time.perf_counter()
    resp = await client.post(
        f"/v1/memory/{user['user_id']}/search",
        json={"query": q["question"], "top_k": 10, "as_of": q["question_date"]},
        headers=headers,
    )
    elapsed = time.perf_counter() - t0
    resp.raise_for_status()
    results = resp.json()["results"][:10]
    ranked = [tuple(r["source_message_ids"]) for r in results]
    return elapsed, scored(q, ranked, sum(len(r["content"]) for r in results))


async def measured(args: argparse.Namespace) -> dict[str, Any]:
    """Steps 4 and 5 only, on `--redis` and `--chroma` that hold the first `--import-turns` turns of
    the set (an import stopped there: whole sessions, and the questions whose evidence is among them)."""
    user = sliced(load_or_build(args.tokens), args.import_turns)
    result: dict[str, Any] = {"imported": describe(user), "machine": machine(), "stores": "given"}
    say(f"measuring {result['imported']}")
    await searches(args.redis, args.chroma, user, args, result)
    return result


async def run(args: argparse.Namespace) -> dict[str, Any]:
    full = load_or_build(args.tokens)
    user = sliced(full, args.import_turns)
    imported = describe(user)
    result: dict[str, Any] = {"set": describe(full), "imported": imported, "machine": machine()}
    say(f"set {result['set']}\nimporting {imported}")
    env: dict[str, Any] = {"EMBEDDING_THREADS": str(args.embedding_threads)} if args.embedding_threads else {}
    redis_args: tuple[str, ...] = (
        ("--proto-max-bulk-len", args.redis_proto_max_bulk_len) if args.redis_proto_max_bulk_len else ()
    )
    if args.keep_stores:  # Redis writes an AOF into the run's directory, which outlives the run
        redis_args += ("--appendonly", "yes")
    with served(workers=args.workers, writer=True, redis_args=redis_args, **env) as svc:
        redis_url = svc.redis_env["REDIS_URL"]
        if args.keep_stores:
            result["stores_kept_in"] = str(svc.log_path.parent)
            say(f"stores kept in {result['stores_kept_in']} (redis/, chroma/)")
        idle: list[float] = []
        errors: list[str] = []
        stop = asyncio.Event()
        task = asyncio.create_task(chat(svc.base_url, args.chat_users, stop, idle, errors))
        await asyncio.sleep(args.chat_seconds if args.chat_users else 0)
        stop.set()
        await task
        result["chat_idle"] = _latencies(idle)
        say(f"chat idle {result['chat_idle']}")
        during: list[float] = []
        stop = asyncio.Event()
        task = asyncio.create_task(chat(svc.base_url, args.chat_users, stop, during, errors))
        groups = svc.cpu_groups()
        cpu_before = cpu_snapshot(groups)
        seconds, import_errors = await import_history(
            svc.base_url, user, args.batch, args.concurrency, args.import_via
        )
        used = delta(cpu_before, cpu_snapshot(groups))
        stop.set()
        await task
        result["chat_during_import"] = _latencies(during)
        result["chat_errors"] = errors[:3]
        result["import"] = {
            "seconds": round(seconds, 1),
            "turns_per_s": round(imported["turns"] / seconds, 2),
            "s_per_1m_tokens": round(seconds * 1_000_000 / imported["tokens"]),
            "via": args.import_via,
            "batch": args.batch,
            "concurrency": args.concurrency,
            "workers": args.workers,
            "errors": import_errors[:3],
            # CPU seconds per turn of each process group over the import (chat users' turns included):
            # what a turn costs whatever the load of the shared host; 2 / the sum bounds turns/s on 2 cores
            "cpu_s_per_turn": {k: round(v / imported["turns"], 3) for k, v in used.items()},
        }
        say(f"import {result['import']}\nchat during import {result['chat_during_import']}")
        result["api_worker_rss_mib"] = [round(x) for x in worker_rss(svc.base_url)]
        if args.import_only:
            if svc.writer is not None:
                svc.writer.kill()
                svc.writer.wait()
            return result
        await searches(redis_url, svc.chroma.url, user, args, result)
        if svc.writer is not None:  # it may still drain the chat users' backlog: not measured here
            svc.writer.kill()
            svc.writer.wait()
    return result


async def searches(
    redis_url: str, chroma_url: str, user: User, args: argparse.Namespace, result: dict[str, Any]
) -> None:
    """Steps 4 and 5 on stores that hold the user: fresh in-process apps' first and warm searches, RSS,
    recall against BM25 over the same turns; into `result`."""
    settings: dict[str, Any] = {"outbox_worker": False, "redis_socket_timeout": 60.0}
    codec = TokenCodec(SECRET)
    async with app_on(redis_url, chroma_url, **settings) as client:
        listed = await client.get(
            f"/v1/memory/{user['user_id']}/list?limit=1",
            headers={"Authorization": f"Bearer {codec.mint(user['user_id'])}"},
        )
        memories = int(listed.json()["total"])
        result["memories"] = memories
        first_store, _ = await search(client, user, user["questions"][0])
        result["first_search_from_store_ms"] = round(first_store * 1000, 1)
        say(f"memories {memories}; first search from the store {result['first_search_from_store_ms']} ms")
        # inside the app: its snapshot is saved in the background after that search, by this app's
        # Redis client (a 10M-token user's takes tens of seconds to encode)
        result["snapshot_written"] = await _wait_snapshot(redis_url, user["user_id"])
    async with app_on(redis_url, chroma_url, **settings) as client, background_loads() as loads:
        await _warm_up(client, codec)
        before = rss_mib()
        with profiled(args.profile, "first", args.profile_clock):
            first, _ = await search(client, user, user["questions"][0])
        # a user past IN_PROCESS_INDEX_MAX is loaded in the background meanwhile (searches answered over
        # provisional indexes: memory/recall/cold_start.py); the warm figures start once it is loaded
        during: list[float] = []  # the searches answered while the load runs (provisional indexes)
        while loads.started and not loads.done.is_set():
            elapsed, _ = await search(client, user, user["questions"][len(during) % len(user["questions"])])
            during.append(elapsed)
        result["background_load_s"] = round(await loads.finished(), 1) if loads.started else None
        if during:
            result["searches_during_load_ms"] = {
                "n": len(during),
                "p50": round(percentile(during, 50) * 1000, 1),
                "max": round(max(during) * 1000, 1),
            }
        after = rss_mib()
        warm: list[float] = []
        rows: list[dict[str, Any]] = []
        with profiled(args.profile, "warm", args.profile_clock):
            for k in range(args.rounds):
                for q in user["questions"]:
                    elapsed, row = await search(client, user, q)
                    warm.append(elapsed)
                    if k == 0:
                        rows.append(row)
        after_all = rss_mib()
    # every question asked of a worker that has not loaded the user yet (its load held back): what the
    # searches of those seconds answer, against the loaded index's answers above
    async with app_on(redis_url, chroma_url, **settings) as client, background_loads(held=True) as loads:
        await _warm_up(client, codec)
        with profiled(args.profile, "provisional", args.profile_clock):
            cold = [await search(client, user, q) for q in user["questions"]]
        provisional = loads.started
        loads.release.set()
        if provisional:  # the load runs to its end before the app stops
            await loads.finished()
    if provisional:
        result["provisional"] = {
            "p50_ms": round(percentile([t for t, _ in cold], 50) * 1000, 1),
            "p95_ms": round(percentile([t for t, _ in cold], 95) * 1000, 1),
            **table([r for _, r in cold]),
        }
    result["first_search_from_snapshot_ms"] = round(first * 1000, 1)
    result["warm_search_ms"] = {
        "n": len(warm),
        "p50": round(percentile(warm, 50) * 1000, 1),
        "p95": round(percentile(warm, 95) * 1000, 1),
    }
    grown = max(after, after_all) - before
    result["worker_rss_for_user_mib"] = round(grown, 1)
    result["worker_rss_per_memory_kib"] = round(grown * 1024 / max(1, result["memories"]), 2)
    result["mnemo"] = table(rows)
    result["bm25_turns"] = table(bm25_rows(user))
    result["bm25_turns_at_mnemo_chars"] = table(bm25_rows(user, result["mnemo"]["all"]["chars10"]))
    result["misses"] = [r for r in rows if not r["any10"]][: args.show_misses]
    result["questions"] = rows  # every question's row, in the set's order (kept in the result file)


async def _warm_up(client: httpx.AsyncClient, codec: TokenCodec) -> None:
    """Warm the app itself (models, routes) on another, empty user."""
    await client.post(
        "/v1/memory/nobody/search",
        json={"query": "warm up 预热", "top_k": 10},
        headers={"Authorization": f"Bearer {codec.mint('nobody')}"},
    )


class Loads:
    """The background loads of large users (`UserIndexes._load`) in this process while watched."""

    def __init__(self, held: bool) -> None:
        self.started = 0
        self.release = asyncio.Event()
        if not held:
            self.release.set()
        self.done = asyncio.Event()
        self.released_at = 0.0

    async def finished(self, timeout: float = 900.0) -> float:
        """Seconds from the first load's start (or its release) until it is done."""
        await asyncio.wait_for(self.done.wait(), timeout)
        return time.monotonic() - self.released_at


@contextlib.asynccontextmanager
async def background_loads(*, held: bool = False) -> AsyncIterator[Loads]:
    """Watch the background loads of large users; `held`: none runs until the block ends (a worker's
    searches before it has loaded the user, measured on purpose)."""
    loads = Loads(held)
    original = UserIndexes._load  # noqa: SLF001 - the bench watches the worker's load

    async def watched(self: UserIndexes, user_id: str) -> None:
        loads.started += 1
        await loads.release.wait()
        loads.released_at = loads.released_at or time.monotonic()
        try:
            await original(self, user_id)
        finally:
            loads.done.set()

    UserIndexes._load = watched  # type: ignore[method-assign]
    try:
        yield loads
    finally:
        loads.release.set()
        UserIndexes._load = original  # type: ignore[method-assign]


@contextlib.contextmanager
def profiled(into: str, name: str, clock: str = "wall") -> Iterator[None]:
    """With `--profile DIR`: cProfile of what runs inside (the event loop's thread only: not the thread
    pool's model inference or Chroma client calls, whose time shows as waiting), written to
    DIR/NAME.pstats, its 15 costliest functions by own time printed. `clock`: "wall", or "cpu" (the
    thread's CPU time: waits cost nothing)."""
    if not into:
        yield
        return
    profile = cProfile.Profile(time.thread_time) if clock == "cpu" else cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        Path(into).mkdir(parents=True, exist_ok=True)
        profile.dump_stats(str(Path(into) / f"{name}.pstats"))
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(15)
        say(f"profile of the {name} search(es):\n{out.getvalue()}")


async def _wait_snapshot(redis_url: str, user_id: str, timeout: float = 900.0) -> bool:
    from redis.asyncio import Redis

    r = Redis.from_url(redis_url)
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if await r.exists(keys.ltm_snapshot(user_id)):
                return True
            await asyncio.sleep(0.5)
        return False
    finally:
        await r.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--import-turns", type=int, default=0, help="import the first N turns only")
    parser.add_argument("--batch", type=int, default=12, help="turns per /messages call")
    parser.add_argument("--concurrency", type=int, default=1, help="/messages calls in flight")
    parser.add_argument(
        "--import-via",
        choices=("messages", "imports"),
        default="messages",
        help="POST /messages (written in the API workers) or POST /imports (the import lane, until done)",
    )
    parser.add_argument("--workers", type=int, default=2, help="uvicorn API workers")
    parser.add_argument("--embedding-threads", type=int, default=0, help="EMBEDDING_THREADS (0: default)")
    parser.add_argument("--chat-users", type=int, default=10)
    parser.add_argument("--chat-seconds", type=float, default=20.0)
    parser.add_argument("--rounds", type=int, default=3, help="warm searches of every question")
    parser.add_argument("--show-misses", type=int, default=0)
    parser.add_argument("--import-only", action="store_true", help="stop after the import (no search)")
    parser.add_argument("--tag", default="")
    parser.add_argument(
        "--keep-stores",
        action="store_true",
        help="keep the stores (Redis with an AOF): serve them again and measure them with --redis/--chroma",
    )
    parser.add_argument("--redis", default="", help="measure stores that already hold the user (no import)")
    parser.add_argument("--profile", default="", help="DIR: cProfile the first and the warm searches into it")
    parser.add_argument(
        "--profile-clock",
        choices=("wall", "cpu"),
        default="wall",
        help="cpu: the event loop thread's CPU time",
    )
    parser.add_argument("--chroma", default="", help="with --redis: the Chroma server of those stores")
    parser.add_argument(
        "--redis-proto-max-bulk-len",
        default="",
        help="the bench redis-server's proto-max-bulk-len (e.g. 2gb: a 10M-token user's index snapshot passes 512mb)",
    )
    args = parser.parse_args()
    result = asyncio.run(run(args) if not args.redis else measured(args))
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    name = f"token_history_run_{args.tokens}_{args.import_turns}_c{args.concurrency}{args.tag}.json"
    (out / name).write_text(json.dumps(result, indent=2, ensure_ascii=False))
    misses = result.pop("misses", [])
    result.pop("questions", None)  # in the file only
    for key, value in result.items():
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            say(f"{key}\n" + "".join(f"  {k:<12} {v}\n" for k, v in value.items()))
        else:
            say(f"{key:<32} {value}")
    for miss in misses:
        say(json.dumps(miss, ensure_ascii=False))


if __name__ == "__main__":
    main()
