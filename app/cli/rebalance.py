"""Move users to the Chroma server rendezvous hashing gives them over the current servers, online:
`python -m app.cli.rebalance [--dry-run] [--batch-users 50] [--page-size 500] [--grace-seconds 5]`.

Run it with the configuration the API and the writer run with (CHROMA_URLS, CHROMA_DRAINING, REDIS_URL,
CHROMA_COLLECTION_PREFIX, MEMORY_SHARDS) after adding a server or marking one draining. It scans every
server for the users it holds, then, per user, under the user's long-term write lock: copies the
records to the target, verifies ids and counts, switches the placement; after a grace period it deletes
the source copy. Searches keep answering throughout; a moving user's writes wait for the lock. It is
idempotent and resumable: run it again after a crash or a failure and it completes what was left.
`--dry-run` only scans and logs what it would do. Progress goes to the JSON logs on stderr; a summary
(JSON) to stdout. Exit status: 0 all settled, 1 some users failed (a re-run retries them), 2 it could
not run (bad configuration, a server down, another rebalance running).

A dense model switch is the same run (memory/longterm/dense_models.py, docs/operations.md#switching-
models): with PREVIOUS_EMBEDDINGS_* set, every user still on the previous model's collections moves to
the current model's on the same server, their records embedded again by the current model on the way
(`--max-per-second` bounds the texts embedded per second, the model server serving searches
meanwhile). When a run settles everyone and no previous model's collection holds a record any more,
hot or warm, it records the switch as done (`dense_switched` in the summary): processes configured with
the current model then start without PREVIOUS_EMBEDDINGS_*. Archived (warm) rows of the previous model
move with `python -m app.cli.archive --reembed`, run after this; that run records the switch as done.
"""

from __future__ import annotations

import argparse
import logging

import anyio.to_thread

from app.cli.batch_job import run_job
from app.clients.embeddings import HttpEmbedder
from app.clients.redis import build_redis
from app.composition import bridge_stores, build_archive, build_embedder, build_store, token_codec
from app.composition.dense import dense_layout, dense_models, finish_switch
from app.settings import Settings
from memory.errors import StoreUnavailable
from memory.longterm.dense_models import DenseModels
from memory.longterm.rebalance import RebalanceBusy, Rebalancer, Report
from memory.redis_client import close

log = logging.getLogger("mnemo.rebalance")


async def run(settings: Settings, args: argparse.Namespace) -> Report:
    redis = build_redis(settings, "mnemo-rebalance")
    models: DenseModels | None = None
    try:
        layout = await dense_layout(settings, redis, record=False)
        store = build_store(settings, redis, layout=layout)
        if layout.previous is not None:  # a switch: moved users' records are embedded by the current model
            embedder = await anyio.to_thread.run_sync(build_embedder, settings)
            models = await dense_models(settings, embedder, store)
        rebalancer = Rebalancer(
            store,
            redis,
            batch_users=args.batch_users,
            page_size=args.page_size,
            grace_seconds=args.grace_seconds,
            lock_wait_seconds=args.lock_wait_seconds,
            user_label=token_codec(settings).digest,  # the access log's stand-in for user ids
            # a moving user's bridge vectors move with their records (no model needed: copied as stored)
            # (both dense models' stores of a server share its bridge store: found by the server's name)
            companions=bridge_stores(settings) if settings.bridge_embedding else None,
            models=models,
            max_per_second=args.max_per_second,
        )
        log.info(
            "rebalance started",
            extra={"servers": list(store.servers), "candidates": store.candidates, "dry_run": args.dry_run},
        )
        report = await rebalancer.run(dry_run=args.dry_run, run_lock_wait_seconds=args.wait_seconds)
        # a switch whose every user settled: done once no previous model's collection holds a record
        switch_settled = layout.previous is not None and not args.dry_run and not report.failures
        # and no previous model's warm archive store either (`archive --reembed` moves those rows)
        archive = build_archive(settings, redis, layout)
        if switch_settled and await finish_switch(settings, redis, store, archive):
            report.dense_switched = layout.current
        log.info("rebalance finished", extra=report.as_dict())
        return report
    finally:
        if models is not None:
            for model in (models.current, models.previous):
                if model is not None and isinstance(model.embedder, HttpEmbedder):
                    await model.embedder.aclose()
        await close(redis)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m app.cli.rebalance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dry-run", action="store_true", help="scan and log the plan; change nothing")
    parser.add_argument("--batch-users", type=int, default=50, help="users per batch (default 50)")
    parser.add_argument("--page-size", type=int, default=500, help="records per copy request (default 500)")
    parser.add_argument(
        "--grace-seconds",
        type=float,
        default=5.0,
        help="wait between a batch's switches and deleting its source copies (default 5, at least 1)",
    )
    parser.add_argument(
        "--lock-wait-seconds",
        type=float,
        default=60.0,
        help="longest wait for a busy user's lock (default 60)",
    )
    parser.add_argument(
        "--wait-seconds",
        type=float,
        default=30.0,
        help="longest wait for another rebalance to finish, e.g. one that crashed holding the run lock (default 30)",
    )
    parser.add_argument(
        "--max-per-second",
        type=float,
        default=None,
        help="a dense switch embeds at most this many texts per second, on average (default: no bound)",
    )
    args = parser.parse_args(argv)
    if args.batch_users < 1 or args.page_size < 1:
        parser.error("--batch-users and --page-size must be >= 1")
    if args.max_per_second is not None and args.max_per_second <= 0:
        parser.error("--max-per-second must be > 0")
    return run_job(
        lambda settings: run(settings, args),
        log=log,
        name="rebalance",
        could_not_run=(RebalanceBusy, StoreUnavailable, ValueError),
    )


if __name__ == "__main__":
    raise SystemExit(main())
