"""Rewrite the stores' files now, so that erased users' data is gone from disk:
`python -m app.cli.compact [--chroma-path DIR] [--only redis|chroma]`.

Redis: the outbox streams are rebuilt from their live entries, then BGREWRITEAOF (AOF on) and BGSAVE
(RDB in use), waited for. Chroma: obsolete log rows of deleted records are purged, the full-text index
merged, the database VACUUMed. Chroma's part needs its persist directory on this machine's disk
(`--chroma-path`, or CHROMA_DATA_PATH): run it on the Chroma host; the server may keep running.

Every run covers every erase made before it started; the erase receipts that said "operator" are then
true. Safe to run from cron (a Redis lease keeps two runs of one store apart: this command waits for a
running one, then runs its own). Exit status 0 when every store it ran succeeded, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import logging

from app.clients.redis import build_redis
from app.composition import build_compactor
from app.settings import Settings, load_settings
from memory.governance.compaction import Store
from memory.redis_client import close
from monitoring.logging import configure_logging

log = logging.getLogger("mnemo.compact")


async def run(settings: Settings, *, chroma_path: str | None, only: Store | None = None) -> dict[Store, str]:
    redis = build_redis(settings, "mnemo-compact")
    try:
        compactor = build_compactor(settings, redis, chroma_path=chroma_path)
        stores = [s for s in compactor.stores if only is None or s == only]
        if only == "chroma" and "chroma" not in compactor.stores:
            raise SystemExit("--only chroma needs --chroma-path (or CHROMA_DATA_PATH)")
        outcomes: dict[Store, str] = {}
        for store in stores:
            outcome = await compactor.run_store(
                store, wait_seconds=settings.erasure_compaction_timeout_seconds
            )
            outcomes[store] = outcome or "busy"
        log.info("compaction done", extra={"outcomes": outcomes})
        return outcomes
    finally:
        await close(redis)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--chroma-path", help="Chroma's persist directory (default: CHROMA_DATA_PATH)")
    parser.add_argument("--only", choices=["redis", "chroma"], help="compact one store only")
    args = parser.parse_args(argv)
    settings = load_settings()
    configure_logging(settings.log_level)
    outcomes = asyncio.run(run(settings, chroma_path=args.chroma_path, only=args.only))
    if "chroma" not in outcomes and args.only is None:
        log.warning("chroma not compacted: no --chroma-path (or CHROMA_DATA_PATH) given")
    return 0 if outcomes and all(o == "ok" for o in outcomes.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
