"""The archival job: `python -m app.cli.archive [--dry-run] [--now TIMESTAMP]`, and the archive's
re-embed after a dense model switch: `python -m app.cli.archive --reembed [--dry-run] [--max-per-second N]`.

Moves long-term memories by age: hot (the main collections, every worker's in-process index) past
ARCHIVE_WARM_AFTER_DAYS (30) to the warm archive collections, and warm past ARCHIVE_COLD_AFTER_DAYS
(365) to cold Parquet files at ARCHIVE_COLD_URL (./data/archive, or s3://...). In bounded batches, each
user under their long-term write lock; every memory is readable from exactly one tier at every moment,
a crash leaves nothing lost or doubled, and a re-run completes what was left. The writer process runs
it daily at ARCHIVE_HOUR. Progress goes to the JSON logs on stderr; a summary (JSON) to stdout. Exit
status: 0 done, 1 some users failed (a re-run retries them), 2 it could not run (bad configuration, a
store down, another archival job running).

`--reembed` (after the switch's rebalance moved the users, docs/operations.md#switching-models): every
warm and cold row whose vector is of another dense model than its user's is embedded again by the user's
model (memory/archive/reembed.py), user by user, online and resumable, warm rows moving to the warm
collections of the user's model; until then searches find those rows by their words alone. The summary
counts rows per tier (`--dry-run`: rows that would be). During a switch (PREVIOUS_EMBEDDINGS_*), a run
that leaves no record nor warm row on the previous model records the switch as finished
(`dense_switched`), as the rebalance does when there is no archived row to move.
"""

from __future__ import annotations

import argparse
import logging

import anyio.to_thread

from app.cli.batch_job import JobReport, run_job
from app.clients.embeddings import HttpEmbedder
from app.clients.redis import build_redis
from app.composition import build_archive, build_bridge, build_embedder, build_store, tier_policy, token_codec
from app.composition.dense import DenseLayout, dense_layout, dense_models, finish_switch
from app.settings import Settings
from memory.archive.mover import ArchiveBusy, Archiver
from memory.archive.reembed import ArchiveReembedder, ArchiveReembedReport
from memory.archive.view import ArchivedTiers
from memory.errors import StoreUnavailable
from memory.longterm.routing import RoutingLongTermStore
from memory.redis_client import RedisClient, close

log = logging.getLogger("mnemo.archive")


def build_archiver(
    settings: Settings,
    redis: RedisClient,
    store: RoutingLongTermStore,
    archive: ArchivedTiers,
    *,
    grace_seconds: float = 0.5,
) -> Archiver:
    return Archiver(
        store,
        archive,
        redis,
        tier_policy(settings),
        batch_users=settings.archive_batch_users,
        batch_size=settings.archive_batch_size,
        grace_seconds=grace_seconds,
        user_label=token_codec(settings).digest,  # the access log's stand-in for user ids
    )


async def run(settings: Settings, args: argparse.Namespace) -> JobReport:
    redis = build_redis(settings, "mnemo-archive")
    try:
        layout = await dense_layout(settings, redis, record=False)
        if args.reembed:
            return await reembed(settings, args, redis, layout)
        # with the bridge channel, so the hot records it moves lose their bridge vectors too; every dense
        # model's stores, so each copy records the model of the store it is read from
        store = build_store(settings, redis, build_bridge(settings), layout)
        archiver = build_archiver(
            settings, redis, store, build_archive(settings, redis, layout), grace_seconds=args.grace_seconds
        )
        return await archiver.run(now=args.now, dry_run=args.dry_run, run_lock_wait_seconds=args.wait_seconds)
    finally:
        await close(redis)


async def reembed(
    settings: Settings, args: argparse.Namespace, redis: RedisClient, layout: DenseLayout
) -> ArchiveReembedReport:
    store = build_store(settings, redis, None, layout)  # where each user is, and by which model
    embedder = await anyio.to_thread.run_sync(build_embedder, settings)
    models = await dense_models(settings, embedder, store)
    archive = build_archive(settings, redis, layout)
    job = ArchiveReembedder(
        archive,
        models,
        redis,
        batch_size=args.batch_size,
        max_per_second=args.max_per_second,
        user_label=token_codec(settings).digest,
    )
    log.info("archive reembed started", extra={"model": models.current.tag, "dry_run": args.dry_run})

    def progress(report: ArchiveReembedReport, users: int) -> None:
        done = report.users_reembedded + report.users_current + report.users_left
        done += report.size_changed + report.failures
        if done % 10 == 0 or done == users:
            log.info(
                "archive reembed progress", extra={"users_done": done, "users": users, **report.as_dict()}
            )

    try:
        report = await job.run(dry_run=args.dry_run, progress=progress)
        # a switch whose every archived row moved: done once no previous model's store holds a record
        settled = not (args.dry_run or report.failures or report.users_left or report.size_changed)
        if layout.previous is not None and settled and await finish_switch(settings, redis, store, archive):
            report.dense_switched = layout.current
    finally:
        for model in (models.current, models.previous):
            if model is not None and isinstance(model.embedder, HttpEmbedder):
                await model.embedder.aclose()
    log.info("archive reembed finished", extra=report.as_dict())
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m app.cli.archive",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="count what would move (or be re-embedded); change nothing"
    )
    parser.add_argument(
        "--reembed",
        action="store_true",
        help="embed archived rows of another dense model than their user's again (after a switch)",
    )
    parser.add_argument(
        "--max-per-second",
        type=float,
        default=None,
        help="--reembed: embed at most this many rows per second (spares a shared model server)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=64, help="--reembed: rows per embedding batch (default 64)"
    )
    parser.add_argument(
        "--now", type=float, default=None, help="the time ages are measured from (Unix seconds; default now)"
    )
    parser.add_argument(
        "--grace-seconds",
        type=float,
        default=0.5,
        help="wait between a batch's switches and deleting the source copies (default 0.5)",
    )
    parser.add_argument(
        "--wait-seconds", type=float, default=0.0, help="longest wait for another archival job (default 0)"
    )
    args = parser.parse_args(argv)
    if args.max_per_second is not None and args.max_per_second <= 0:
        parser.error("--max-per-second must be > 0")
    if args.batch_size < 1:
        parser.error("--batch-size must be >= 1")
    return run_job(
        lambda settings: run(settings, args),
        log=log,
        name="archival job",
        could_not_run=(ArchiveBusy, StoreUnavailable, ValueError),
    )


if __name__ == "__main__":
    raise SystemExit(main())
