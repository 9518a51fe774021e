"""The long-term writer as a process of its own: `python -m app.cli.writer [--nice 10]`.

It runs the same outbox consumer the API workers can run in-process (`OUTBOX_WORKER`), without serving
HTTP: chat turns are appended to the outbox by the API workers and written to long-term memory here
(write policy, embedding, Chroma). Measured on 2 cores (docs/performance.md): writing in the API
workers makes chat turns wait on that CPU work; a separate, niced writer lets the turns go first and
catches up when they pause. Its entries stay in Redis until written, so stopping it loses nothing.

Run as many as you like, on any hosts: they share the outbox partitions through leases
(memory/outbox/leases.py), each partition read by one writer at a time.

It also runs the archival job once a day at `ARCHIVE_HOUR` (UTC; -1 turns it off), one writer per day
and never two at once (memory/archive/schedule.py); `python -m app.cli.archive` runs it by hand.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket

from app.cli.archive import build_archiver
from app.composition import build_core, sample_gauges
from app.settings import Settings, load_settings
from memory.archive.schedule import DailyArchive
from memory.longterm.deferred_deletes import PurgeSweeper
from memory.outbox.worker import OutboxWorker
from monitoring import metrics
from monitoring.logging import configure_logging
from monitoring.tasks import log_task_stacks

log = logging.getLogger("mnemo.writer")


async def run(settings: Settings) -> None:
    core = await build_core(settings, "writer")
    redis, store, outbox, archive, memory = core.redis, core.store, core.outbox, core.archive, core.memory
    deferred = core.deferred
    worker = OutboxWorker(
        outbox,
        memory.ingest_entries,
        look_ahead=memory.warm_entries,
        consumer=f"writer-{socket.gethostname()}-{os.getpid()}",
        lease_ttl_ms=settings.outbox_lease_ttl_ms,
        round_timeout_seconds=settings.outbox_round_bound_seconds,
    )
    daily: DailyArchive | None = None
    if settings.archive_hour >= 0:
        archiver = build_archiver(settings, redis, store, archive)
        daily = DailyArchive(redis, archiver.run, hour=settings.archive_hour)
    loop = asyncio.get_running_loop()

    # deletes an API worker could not finish in Chroma (it crashed, or Chroma was down), for the
    # partitions this writer leases
    sweeper = PurgeSweeper(deferred, lambda: worker.leases.held, restorable=memory.restorable)

    def stop() -> None:
        worker.stop()
        sweeper.stop()
        if daily is not None:
            daily.stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop)
    loop.add_signal_handler(signal.SIGUSR1, log_task_stacks)  # where a writer that stalled waits
    metrics.mark_dead_workers()
    log.info("writer started", extra={"archive_hour": settings.archive_hour})
    sampler = asyncio.create_task(sample_gauges(outbox))
    scheduled = asyncio.create_task(daily.run_forever(), name="daily-archive") if daily else None
    sweeping = asyncio.create_task(sweeper.run(), name="purge-sweeper")
    try:
        await worker.run()
    finally:
        sampler.cancel()
        sweeper.stop()
        sweeping.cancel()
        if daily is not None and scheduled is not None:
            daily.stop()
            scheduled.cancel()
        await core.aclose()
        metrics.mark_self_dead()
        log.info("writer stopped", extra={"written": worker.processed})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nice", type=int, default=10, help="scheduling niceness increment (0: none)")
    args = parser.parse_args()
    settings = load_settings()
    configure_logging(settings.log_level)
    if args.nice:
        os.nice(args.nice)
    asyncio.run(run(settings))


if __name__ == "__main__":
    main()
