"""Fill the multilingual bridge channel for every stored memory, online:
`python -m app.cli.reembed [--dry-run] [--batch-size 64]`.

Run it with the configuration the API and the writer run with (CHROMA_URL(S), REDIS_URL,
CHROMA_COLLECTION_PREFIX, MEMORY_SHARDS, BRIDGE_EMBEDDING=true) after turning the bridge channel on
over existing data (or a rebalance run with it off), or after the bridge model changes (BRIDGE_EMBEDDINGS_*
set to the new model: its vectors go to collections of their own, beside the old model's; see
docs/operations.md#switching-models). Per user it embeds the
records that have no bridge vector of the current model, `--batch-size` at a time under the user's
long-term write lock, then bumps the user's version so recall takes the channel up; search keeps
ranking from the main channel until a user is complete. Resumable: a re-run does only what is left.
Progress (users done / all, vectors written) goes to the JSON logs on stderr every `--progress-every`
users; a summary (JSON) to stdout. Exit status: 0 done, 1 some users failed (a re-run retries them),
2 it could not run (bad configuration, the channel off, a server down).
"""

from __future__ import annotations

import argparse
import logging

from app.cli.batch_job import run_job
from app.clients.redis import build_redis
from app.composition import build_bridge, build_store, token_codec
from app.composition.dense import dense_layout
from app.settings import Settings
from memory.errors import StoreUnavailable
from memory.longterm.bridge import BridgedStore
from memory.longterm.reembed import Reembedder, ReembedReport
from memory.redis_client import close

log = logging.getLogger("mnemo.reembed")


async def run(settings: Settings, args: argparse.Namespace) -> ReembedReport:
    bridge = build_bridge(settings)
    if bridge is None:
        raise ValueError("the bridge channel is off (BRIDGE_EMBEDDING=false or RETRIEVAL_PIPELINE=naive)")
    redis = build_redis(settings, "mnemo-reembed")
    store = build_store(settings, redis, bridge, await dense_layout(settings, redis, record=False))
    if not isinstance(store, BridgedStore):  # build_store gives one whenever a bridge model is passed
        raise TypeError("the store does not carry the bridge channel")
    every = max(1, args.progress_every)

    def progress(report: ReembedReport, users: int) -> None:
        done = report.users_filled + report.users_complete_before + report.failures
        if done % every == 0 or done == users:
            log.info(
                "reembed progress",
                extra={
                    "users_done": done,
                    "users": users,
                    "vectors_written": report.vectors_written,
                    "seconds": round(report.seconds, 1),
                    "failures": report.failures,
                },
            )

    try:
        reembedder = Reembedder(
            store,
            bridge.for_caller("reembed"),
            redis,
            batch_size=args.batch_size,
            lock_wait_seconds=args.lock_wait_seconds,
            max_per_second=args.max_per_second,
            user_label=token_codec(settings).digest,  # the access log's stand-in for user ids
        )
        log.info("reembed started", extra={"model": bridge.model_name, "dry_run": args.dry_run})
        report = await reembedder.run(dry_run=args.dry_run, progress=progress)
        log.info("reembed finished", extra=report.as_dict())
        return report
    finally:
        await close(redis)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m app.cli.reembed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dry-run", action="store_true", help="count what is missing; write nothing")
    parser.add_argument("--batch-size", type=int, default=64, help="records per embedding batch (default 64)")
    parser.add_argument(
        "--progress-every", type=int, default=10, help="log progress every N users (default 10)"
    )
    parser.add_argument(
        "--lock-wait-seconds",
        type=float,
        default=30.0,
        help="longest wait for a busy user's lock (default 30)",
    )
    parser.add_argument(
        "--max-per-second",
        type=float,
        default=None,
        help="embed at most this many memories per second (spares a shared model server; default: no bound)",
    )
    args = parser.parse_args(argv)
    if args.batch_size < 1:
        parser.error("--batch-size must be >= 1")
    if args.max_per_second is not None and args.max_per_second <= 0:
        parser.error("--max-per-second must be > 0")
    return run_job(
        lambda settings: run(settings, args),
        log=log,
        name="reembed",
        could_not_run=(StoreUnavailable, ValueError, TypeError),
    )


if __name__ == "__main__":
    raise SystemExit(main())
