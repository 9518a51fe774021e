"""Filling the bridge channel for memories written before it existed (or moved without it).

Changing or adding an embedding model is a migration: every bridge vector records the model that made
it (`memory/longterm/bridge.py`), and this job gives every record that lacks a vector of the current
model one, user by user, online:

- users are found by scanning every server's records (as a rebalance does: the records are the truth);
- per user, the ids without a bridge vector of the current model are embedded `batch_size` at a time,
  each batch under the user's long-term write lock (the one writes and erasure hold, so a rewritten
  memory never gets a vector of its old text); deletes do not take that lock, so after each batch the
  ids deleted meanwhile lose the vector just written;
- when a user is complete, their long-term version is bumped (no record changes), so every worker's
  recall picks the channel up on its next search. Until then recall ranks by the main channel alone.

A new bridge model (another name or size: a model served over HTTP, docs/operations.md) has
collections of its own, so its vectors are written beside the old model's, never over them: switching
back is a configuration change. `max_per_second` bounds the vectors embedded per second (the model
server serves searches meanwhile).

It is resumable by construction: what is done is what the bridge collections hold, so a re-run (after
a crash, a Ctrl-C, a server outage) does only what is left. A batch that fails on a store or the model
(`StoreUnavailable`, `EmbeddingUnavailable`: a pause, not a fault) is tried again after a growing pause,
outside the lock, `batch_attempts` times in all before the user is left to the next run: a single-node
Chroma compacting the collection the backfill writes into ("Local Compaction manager") can answer
nothing for 15-50 s on a loaded machine (bench/served_models.py, 2 x 2,000 memories: every call timed
out meanwhile, both users were given up after 1,024 vectors); such a pause must not cost a user.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from memory import keys
from memory.embedding.base import Embedder
from memory.errors import MemoryBusy, StoreUnavailable
from memory.locks import RedisLocks
from memory.longterm.bridge import BridgedStore
from memory.longterm.versions import LtmVersions
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)
MAX_RETRY_PAUSE_SECONDS = 30.0


@dataclass(slots=True)
class ReembedReport:
    model: str
    users_seen: int = 0
    users_complete_before: int = 0
    users_filled: int = 0
    records_seen: int = 0
    vectors_written: int = 0
    failures: int = 0
    failed_users: list[str] = field(default_factory=list)  # labels, never raw user ids
    batches_retried: int = 0  # batches tried again after a store or the model failed them
    seconds: float = 0.0  # wall time of the run

    @property
    def seconds_per_1000(self) -> float | None:
        """Wall seconds per 1,000 vectors written (None before any)."""
        return 1000 * self.seconds / self.vectors_written if self.vectors_written else None

    def as_dict(self) -> dict[str, object]:
        return {**dataclasses.asdict(self), "seconds_per_1000": self.seconds_per_1000}


Progress = Callable[[ReembedReport, int], None]  # (report so far, users in all)


class Reembedder:
    def __init__(
        self,
        store: BridgedStore,
        embedder: Embedder,
        redis: RedisClient,
        *,
        batch_size: int = 64,
        lock_ttl_seconds: int = 10,
        lock_wait_seconds: float = 30.0,
        user_label: Callable[[str], str] = lambda u: u,
        max_per_second: float | None = None,
        batch_attempts: int = 6,
        retry_pause_seconds: float = 2.0,
    ) -> None:
        """`embedder`: the bridge model (its reembed view); `user_label`: how users appear in logs;
        `max_per_second`: at most this many vectors embedded per second, on average (None: no bound);
        `batch_attempts`: tries of a batch that a store or the model fails, the pause before the n-th retry
        `retry_pause_seconds * 2 ** (n - 1)`, at most 30 s (6 tries, 2 s: 60 s of pauses beside the calls'
        own timeouts, so a batch outlasts about 2 minutes of a silent Chroma)."""
        if batch_size < 1:
            raise ValueError("batch_size must be >= 1")
        if batch_attempts < 1 or retry_pause_seconds < 0:
            raise ValueError("batch_attempts must be >= 1 and retry_pause_seconds >= 0")
        self._attempts = batch_attempts
        self._retry_pause = retry_pause_seconds
        if max_per_second is not None and max_per_second <= 0:
            raise ValueError("max_per_second must be > 0")
        self._rate = max_per_second
        self._started = time.monotonic()
        self._embedded = 0
        self._store = store
        self._embedder = embedder
        self._versions = LtmVersions(redis)
        self._locks = RedisLocks(redis)
        self._batch = batch_size
        self._lock_ttl = lock_ttl_seconds
        self._lock_wait = lock_wait_seconds
        self._label = user_label

    async def users(self) -> dict[str, int]:
        """user id -> records, over every server (a user partly moved counts once per server)."""
        counts: dict[str, int] = {}
        for server in self._store.servers.values():
            for user_id, n in (await server.user_counts()).items():
                counts[user_id] = counts.get(user_id, 0) + n
        return counts

    async def run(self, *, dry_run: bool = False, progress: Progress | None = None) -> ReembedReport:
        report = ReembedReport(model=self._store.bridge.model)
        t0 = self._started = time.monotonic()
        self._embedded = 0
        users = await self.users()
        report.users_seen = len(users)
        for user_id in sorted(users):
            try:
                await self.user(user_id, report, dry_run=dry_run)
            except Exception as exc:  # one user's failure never stops the others; a re-run retries
                report.failures += 1
                report.failed_users.append(self._label(user_id))
                log.warning(
                    "reembed failed for a user",
                    extra={"user": self._label(user_id), "reason": f"{type(exc).__name__}: {exc}"},
                )
            report.seconds = time.monotonic() - t0
            if progress is not None:
                progress(report, len(users))
        return report

    async def _pace(self, n: int) -> None:
        """Wait until `n` more vectors keep the run within `max_per_second`."""
        self._embedded += n
        if self._rate is None:
            return
        ahead = self._embedded / self._rate - (time.monotonic() - self._started)
        if ahead > 0:
            await asyncio.sleep(ahead)

    async def user(self, user_id: str, report: ReembedReport, *, dry_run: bool = False) -> int:
        """Fill one user's bridge; returns the vectors written."""
        ids = [m.id for m in await self._store.get(user_id, include_content=False)]
        report.records_seen += len(ids)
        have = await self._store.bridge.ids(user_id)
        todo = [i for i in ids if i not in have]
        if not todo:
            report.users_complete_before += 1
            return 0
        if dry_run:
            report.vectors_written += len(todo)
            return len(todo)
        written = 0
        for start in range(0, len(todo), self._batch):
            chunk = todo[start : start + self._batch]
            await self._pace(len(chunk))  # outside the lock: a paced run never holds up a write
            n = await self._retried(user_id, chunk, report)
            written += n
            report.vectors_written += n
        await self._versions.bump(user_id)  # every worker's recall takes the channel up now
        report.users_filled += 1
        return written

    async def _retried(self, user_id: str, chunk: list[str], report: ReembedReport) -> int:
        """`_fill` of one batch, tried again after a growing pause (the lock released meanwhile) when a
        store or the model fails it; the last failure propagates (the user is left to the next run)."""
        for attempt in range(1, self._attempts + 1):
            try:
                return await self._fill(user_id, chunk)
            except StoreUnavailable as exc:
                if attempt == self._attempts:
                    raise
                pause = min(self._retry_pause * 2 ** (attempt - 1), MAX_RETRY_PAUSE_SECONDS)
                report.batches_retried += 1
                log.warning(
                    "reembed batch failed; trying again",
                    extra={
                        "user": self._label(user_id),
                        "attempt": attempt,
                        "pause_s": pause,
                        "reason": f"{type(exc).__name__}: {exc}",
                    },
                )
                await asyncio.sleep(pause)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def _fill(self, user_id: str, chunk: list[str]) -> int:
        """One batch under the user's lock: read, embed, store; returns the vectors written. Idempotent
        (an upsert by id of the text as stored now), so a failed batch is simply done again."""
        async with self._locks.hold(
            keys.ltm_lock(user_id),
            ttl_seconds=self._lock_ttl,
            wait_seconds=self._lock_wait,
            on_timeout=lambda: MemoryBusy(user_id, self._lock_wait),
            kind="ltm",
        ):
            # read under the lock: what is embedded is the text as stored now
            memories = await self._store.get(user_id, ids=chunk)
            if not memories:
                return 0
            t0 = time.perf_counter()
            vectors = await self._embedder.embed([m.embed_text for m in memories])
            server = await self._store.server_of(user_id, fresh=True)
            await self._store.bridge.put_on(server, memories, vectors)
            # deletes do not take the lock: one that removed a record between the read above and
            # the put would leave a vector behind; its own bridge delete ran before the put
            ids_put = [m.id for m in memories]
            still = {m.id for m in await self._store.get(user_id, ids=ids_put, include_content=False)}
            gone = [i for i in ids_put if i not in still]
            if gone:
                await self._store.bridge.delete(user_id, gone, [server])
            log.debug(
                "reembed batch",
                extra={"records": len(memories), "ms": round((time.perf_counter() - t0) * 1000, 1)},
            )
        return len(memories)
