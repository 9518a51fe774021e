"""How fast the long-term writer empties the outbox, and where its time goes.

    .venv/bin/python bench/writer_throughput.py                       # 600 turns of 10 users
    .venv/bin/python bench/writer_throughput.py --users 50 --turns 1000 --existing 100

A backlog of chat turns (the user's message, as the chat path appends it with the offline responder;
`--replies` adds a model's reply as with a real LLM) is put in the
outbox of a fresh redis-server, then one writer (the same `OutboxWorker` + `MemoryService.ingest_entries`
that `python -m app.cli.writer` runs, in this process, not niced) writes it to a fresh `chroma run`. It
reports turns/s until the outbox is empty and the wall time spent in each stage: embedding, and every
long-term-store call (summed over concurrent writes, so the stages can add up to more than the wall
time). `--existing N` first gives every user N stored memories, so the writer's duplicate checks run
against a realistic index.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.clients.redis import build_redis  # noqa: E402
from app.composition import (  # noqa: E402
    bridge_shared_vectors,
    build_bridge,
    build_embedder,
    build_memory_service,
    build_store,
)
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, TURNS, machine  # noqa: E402
from harness.services import start_chroma, start_redis  # noqa: E402
from memory.longterm.bridge import BridgedStore  # noqa: E402
from memory.longterm.shared_vectors import SharedVectors  # noqa: E402
from memory.models import Message  # noqa: E402
from memory.outbox.stream import Outbox, OutboxEntry  # noqa: E402
from memory.outbox.worker import OutboxWorker  # noqa: E402

STATEMENTS = [t for t in TURNS if not t.endswith(("？", "?"))]  # what a writer mostly stores
# stands in for a model's reply (about 3x a turn's tokens); the offline responder's are not written
REPLY = "Thanks, I have noted that. Here is a short answer to what you said, with a detail or two: {}"


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


class Stages:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)

    def wrap(self, obj: Any, *names: str, prefix: str) -> None:
        for name in names:
            original: Callable[..., Awaitable[Any]] = getattr(obj, name)

            async def timed(*args: Any, _o: Any = original, _n: str = f"{prefix}.{name}", **kw: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await _o(*args, **kw)
                finally:
                    self.seconds[_n] += time.perf_counter() - started
                    self.calls[_n] += 1

            setattr(obj, name, timed)


def entry(user: int, turn: int, replies: bool) -> OutboxEntry:
    said = f"{STATEMENTS[(user + turn) % len(STATEMENTS)]} ({turn})"
    now = time.time()
    message = Message("user", said, None, f"m-u{user}-{turn}-q", now)
    reply = Message("assistant", REPLY.format(said), None, f"m-u{user}-{turn}-a", now)
    return OutboxEntry(f"u{user}", f"s{turn // 20}", (message, reply) if replies else (message,))


async def main(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    redis_server = start_redis(workdir / "redis")
    chroma_server = start_chroma(workdir / "chroma")
    try:
        settings = Settings(
            _env_file=None,
            redis_url=f"{redis_server.url}/0",
            chroma_url=chroma_server.url,
            auth_jwt_secret=SECRET,
            log_level="WARNING",
            bridge_embedding=args.bridge == "on",
        )
        embedder = build_embedder(settings)
        bridge = build_bridge(settings)
        redis = build_redis(settings, "bench-writer")
        store = build_store(settings, redis, bridge)
        outbox = Outbox(redis)
        service = build_memory_service(settings, store, embedder, redis, outbox)
        if args.existing:
            seeded = time.perf_counter()
            for user in range(args.users):
                for start in range(0, args.existing, 50):
                    stop = min(args.existing, start + 50)
                    await service.ingest(
                        f"u{user}",
                        "seed",
                        [
                            Message(
                                "user",
                                f"seed memory {n} of user {user}: {STATEMENTS[n % len(STATEMENTS)]}",
                                None,
                                f"seed-{user}-{n}",
                            )
                            for n in range(start, stop)
                        ],
                    )
            say(
                f"seeded {args.users} users x {args.existing} memories in {time.perf_counter() - seeded:.1f} s"
            )
        shared = SharedVectors(
            redis, f"{type(embedder).__name__}:{settings.embedding_model}:{embedder.dimension}"
        )
        bridge_shared = bridge_shared_vectors(redis, bridge) if bridge is not None else None
        for turn in range(args.turns // args.users):
            for user in range(args.users):
                made = entry(user, turn, args.replies)
                if args.recalled:  # as the chat turn's recall would have, before the entry was appended
                    text = made.messages[0].content
                    await shared.publish(made.user_id, text, (await embedder.embed([text]))[0])
                    if (
                        bridge is not None and bridge_shared is not None and args.recalled_bridge
                    ):  # recall over a mixed-language user
                        await bridge_shared.publish(made.user_id, text, (await bridge.embed([text]))[0])
                await outbox.append(made)
        total = await outbox.pending()
        stages = Stages()
        stages.wrap(
            store, "upsert", "find_by_hashes", "nearest", "get_with_vectors", "get", "query", prefix="chroma"
        )
        stages.wrap(embedder, "embed", prefix="embedder")
        if isinstance(store, BridgedStore):
            stages.wrap(store, "bridge_vectors", prefix="bridge")
        worker = OutboxWorker(outbox, service.ingest_entries, consumer="bench")
        started = time.perf_counter()
        task = asyncio.create_task(worker.run())
        drained = await worker.drain(timeout=600)
        elapsed = time.perf_counter() - started
        worker.stop()
        await task
        say(f"\nwriter: {total} turns of {args.users} users, existing {args.existing}, bridge {args.bridge}")
        say(f"drained={drained} in {elapsed:.1f} s: {total / elapsed:.1f} turns/s\n")
        say("| stage | calls | seconds | ms/call |")
        say("|---|---:|---:|---:|")
        for name in sorted(stages.seconds, key=lambda n: -stages.seconds[n]):
            s, c = stages.seconds[name], stages.calls[name]
            say(f"| {name} | {c} | {s:.2f} | {1000 * s / c:.1f} |")
        say(f"\n{machine()}")
        await redis.aclose()
    finally:
        chroma_server.stop()
        redis_server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--turns", type=int, default=600)
    parser.add_argument("--existing", type=int, default=0, help="memories stored per user before the run")
    parser.add_argument(
        "--replies",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="turns carry a model's reply too (with the offline responder they carry the user's message only)",
    )
    parser.add_argument(
        "--recalled",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="each user message's vector was published by the chat turn's recall, as in the service",
    )
    parser.add_argument(
        "--bridge", choices=["on", "off"], default="on", help="BRIDGE_EMBEDDING (off: the pipeline before it)"
    )
    parser.add_argument(
        "--recalled-bridge",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="recall published the bridge vector too (it does for users with memories in both languages)",
    )
    asyncio.run(main(parser.parse_args()))
