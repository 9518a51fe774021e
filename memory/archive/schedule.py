"""The daily archival run inside the writer process (`ARCHIVE_HOUR`, UTC).

Every writer runs this loop; at the hour, each tries to claim the day (`SET NX` on a key naming the
date) and the one that gets it runs the job, which itself holds the run lease (`keys.ARCHIVE_LOCK`): so
never two at once, and once a day however many writers there are. A writer that was down at the hour
runs it when it starts, if that day's run has not happened yet.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable

from redis.exceptions import RedisError

from memory import keys
from memory.archive.mover import ArchiveBusy, ArchiveReport
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)
DAY_CLAIM_TTL_SECONDS = 3 * 86_400


def next_run(now: dt.datetime, hour: int) -> dt.datetime:
    """The next `hour`:00 UTC at or after `now`."""
    at = now.replace(hour=hour, minute=0, second=0, microsecond=0)
    return at if at >= now else at + dt.timedelta(days=1)


def day_claim(day: dt.date) -> str:
    return f"{keys.ARCHIVE_LAST_RUN}:{day.isoformat()}"


class DailyArchive:
    def __init__(
        self,
        redis: RedisClient,
        run: Callable[[], Awaitable[ArchiveReport]],
        *,
        hour: int,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        if not 0 <= hour <= 23:
            raise ValueError("hour must be 0-23")
        self._redis = redis
        self._run = run
        self._hour = hour
        self._clock = clock
        self._stopped = asyncio.Event()

    def stop(self) -> None:
        self._stopped.set()

    async def run_forever(self) -> None:
        while not self._stopped.is_set():
            now = self._clock()
            due = now.replace(hour=self._hour, minute=0, second=0, microsecond=0)
            if now >= due:  # today's hour has passed: run unless some writer already did
                await self.run_once(now.date())
            wait = (next_run(self._clock(), self._hour) - self._clock()).total_seconds()
            try:
                await asyncio.wait_for(self._stopped.wait(), timeout=max(1.0, wait))
            except TimeoutError:
                continue

    async def run_once(self, day: dt.date) -> bool:
        """Run the job for `day` if no writer has claimed that day; True if this one ran it."""
        try:
            if not await self._redis.set(day_claim(day), "claimed", nx=True, ex=DAY_CLAIM_TTL_SECONDS):
                return False
        except RedisError:
            log.warning("archive day not claimed: redis unavailable; retried at the next hour")
            return False
        try:
            report = await self._run()
        except ArchiveBusy:
            log.info("archival job already running elsewhere")
            return False
        except Exception:
            log.exception("archival job failed; the next day's run (or the CLI) completes it")
            await self._redis.delete(day_claim(day))
            return False
        log.info("daily archive done", extra=report.as_dict())
        return True
