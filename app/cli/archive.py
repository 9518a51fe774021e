"""The archival job: `python -m app.cli.archive [--dry-run] [--now TIMESTAMP]`.

Moves long-term memories by age: hot (the main collections, every worker's in-process index) past
ARCHIVE_WARM_AFTER_DAYS (30) to the warm archive collections, and warm past ARCHIVE_COLD_AFTER_DAYS
(365) to cold Parquet files at ARCHIVE_COLD_URL (./data/archive, or s3://...). In bounded batches, each
user under their long-term write lock; every memory is readable from exactly one tier at every moment,
a crash leaves nothing lost or doubled, and a re-run completes what was left. The writer process runs
it daily at ARCHIVE_HOUR. Progress goes to the JSON logs on stderr; a summary (JSON) to stdout. Exit
status: 0 done, 1 some users failed (a re-run retries them), 2 it could not run (bad configuration, a
store down, another archival job running).
"""

from __future__ import annotations

import argparse
import logging

from app.cli.batch_job import run_job
from app.clients.redis import build_redis
from app.composition import build_archive, build_bridge, build_store, tier_policy, token_codec
from app.settings import Settings
from memory.archive.mover import ArchiveBusy, Archiver, ArchiveReport
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


async def run(settings: Settings, args: argparse.Namespace) -> ArchiveReport:
    redis = build_redis(settings, "mnemo-archive")
    try:
        # with the bridge channel, so the hot records it moves lose their bridge vectors too
        store = build_store(settings, redis, build_bridge(settings))
        archiver = build_archiver(
            settings, redis, store, build_archive(settings, redis), grace_seconds=args.grace_seconds
        )
        return await archiver.run(now=args.now, dry_run=args.dry_run, run_lock_wait_seconds=args.wait_seconds)
    finally:
        await close(redis)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m app.cli.archive",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--dry-run", action="store_true", help="count what would move; change nothing")
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
    return run_job(
        lambda settings: run(settings, args),
        log=log,
        name="archival job",
        could_not_run=(ArchiveBusy, StoreUnavailable, ValueError),
    )


if __name__ == "__main__":
    raise SystemExit(main())
