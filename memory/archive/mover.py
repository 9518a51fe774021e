"""The archival job (`python -m app.cli.archive`, or daily in the writer): hot -> warm -> cold by age.

Per user, in steps of at most `batch_size` memories, each step under the user's long-term write lock
(writes wait; searches go on; deletes do not wait: they bury the id first, and the step drops whatever
was buried meanwhile, as a rebalance does):

1. finish what a crashed run left (the user's archive state names it): a `copying` move is rolled back
   (its target copies deleted: no reader sees them), a `switched` one completed (its source copies
   deleted: no reader sees them either);
2. take the oldest hot ids past `warm_after_days` (else warm ids past `cold_after_days`), less buried;
3. record the move (`copying`), copy the records (documents, metadata, vectors) to the next tier,
   drop what was buried meanwhile, verify the copied ids;
4. switch (one HSET: from now on the target answers for them).

After a batch of users has switched, and `grace_seconds` for reads routed before the switch, the
source copies are deleted, the hot change is logged as a delete (every worker's in-process index drops
those memories) and the move record goes. Every step is idempotent and the state says where a user is,
so a re-run after a crash or failure completes it; one user failing leaves that user readable where
they were and the rest go on. Only one job runs at a time (`keys.ARCHIVE_LOCK`, a Redis lease).

Each copy records the dense model that made the vector (`MODEL_FIELD`: the warm record's metadata, the
cold row's column): the model of the hot store the records are read from (the user's placement names
it, read under the user's lock), then carried from warm to cold. A hot record goes to the warm store of
that model (`ArchivedTiers.warm_for`: each dense model has warm collections of its own, as it has hot
ones), so a user switched to a model of another size archives on; warm records go to cold from
whichever model's warm store holds them. memory/archive/reembed.py embeds the archived rows again
after a dense model switch, moving warm rows to the user's model's warm store.

Every vector channel must move with a memory: today a record has one vector (Chroma's embedding). A
second channel (a "bridge" collection per shard) must be copied in `_hot_to_warm` and exported to the
Parquet `embedding`-like column in `_warm_to_cold` the same way (see docs/decisions.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from memory import keys
from memory.archive.cold import MODEL_FIELD, ColdRows
from memory.archive.tiers import Move, TierPolicy
from memory.archive.view import ArchivedTiers
from memory.locks import LockTimeout, RedisLocks
from memory.longterm.chroma import ChromaLongTermStore, Records
from memory.longterm.routing import RoutingLongTermStore
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.redis_client import RedisClient
from monitoring import metrics

log = logging.getLogger(__name__)


class ArchiveBusy(Exception):
    """Another archival job holds the run lease."""


class ArchiveError(Exception):
    """A copy did not verify (left readable in its tier; a re-run retries)."""


@dataclass
class ArchiveReport:
    now: float
    dry_run: bool = False
    users_seen: int = 0
    moved: dict[str, int] = field(default_factory=lambda: {"hot_to_warm": 0, "warm_to_cold": 0})
    would_move: dict[str, int] = field(default_factory=lambda: {"hot_to_warm": 0, "warm_to_cold": 0})
    resumed: int = 0
    rolled_back: int = 0
    failures: int = 0
    tiers: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "now": self.now,
            "dry_run": self.dry_run,
            "users_seen": self.users_seen,
            "moved": dict(self.moved),
            "would_move": dict(self.would_move),
            "resumed": self.resumed,
            "rolled_back": self.rolled_back,
            "failures": self.failures,
            "tiers": dict(self.tiers),
            "seconds": round(self.seconds, 3),
        }


def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _label(move: Move) -> str:
    return f"{move.src}_to_{move.dst}"


def tagged(records: Records, model: str) -> Records:
    """The records with `model` recorded as their vectors' dense model (unchanged when not said)."""
    if not model:
        return records
    metadatas = [{**m, MODEL_FIELD: model} for m in records.metadatas]
    return Records(records.ids, records.documents, metadatas, records.embeddings, records.rows)


class Archiver:
    def __init__(
        self,
        hot: RoutingLongTermStore,
        archive: ArchivedTiers,
        redis: RedisClient,
        policy: TierPolicy,
        *,
        batch_users: int = 50,
        batch_size: int = 500,
        grace_seconds: float = 0.5,
        lock_ttl_seconds: int = 30,
        lock_wait_seconds: float = 60.0,
        user_label: Callable[[str], str] = lambda u: u,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if batch_users < 1 or batch_size < 1:
            raise ValueError("batch_users and batch_size must be >= 1")
        self._hot = hot
        self._archive = archive
        self._state = archive.state
        self._policy = policy
        self._locks = RedisLocks(redis)
        self._versions = LtmVersions(redis)
        self._tombstones = Tombstones(redis)
        self._batch_users = batch_users
        self._batch_size = batch_size
        self._grace = grace_seconds
        self._lock_ttl = lock_ttl_seconds
        self._lock_wait = lock_wait_seconds
        self._label = user_label
        self._clock = clock

    # -- the run ------------------------------------------------------------------------------------

    async def users(self) -> list[str]:
        """Every user with hot or warm records (from each store's metadata: the ground truth)."""
        found: set[str] = set()
        for server in self._hot.servers.values():
            found |= set(await server.user_counts())
        found |= set(await self._archive.warm_user_counts())
        return sorted(found)

    async def run(
        self, *, now: float | None = None, dry_run: bool = False, run_lock_wait_seconds: float = 0.0
    ) -> ArchiveReport:
        started = time.monotonic()
        report = ArchiveReport(now=now if now is not None else self._clock(), dry_run=dry_run)
        try:
            async with self._locks.hold(
                keys.ARCHIVE_LOCK, ttl_seconds=30, wait_seconds=run_lock_wait_seconds, kind="archive-run"
            ):
                users = await self.users()
                report.users_seen = len(users)
                log.info(
                    "archive started", extra={"users": len(users), "now": report.now, "dry_run": dry_run}
                )
                if dry_run:
                    await self._plan(users, report)
                else:
                    await self._archive_all(users, report)
                    report.tiers = await self.counts()
        except LockTimeout as exc:
            raise ArchiveBusy("another archival job is running") from exc
        report.seconds = time.monotonic() - started
        if not dry_run:
            for tier, n in report.tiers.items():
                metrics.ARCHIVE_MEMORIES.labels(tier).set(n)
            for move, n in report.moved.items():
                metrics.ARCHIVE_MOVED_LAST_RUN.labels(move).set(n)
            metrics.ARCHIVE_LAST_RUN.set(time.time())
        log.info("archive finished", extra=report.as_dict())
        return report

    async def _plan(self, users: Sequence[str], report: ArchiveReport) -> None:
        for user_id in users:
            server = self._hot.server(await self._hot.server_of(user_id, fresh=True))
            hot = await server.ids_before(user_id, self._policy.warm_cutoff(report.now), limit=10**9)
            warm = [
                i
                for store in self._archive.warm_stores
                for i in await store.ids_before(user_id, self._policy.cold_cutoff(report.now), limit=10**9)
            ]
            old_hot = await server.ids_before(user_id, self._policy.cold_cutoff(report.now), limit=10**9)
            report.would_move["hot_to_warm"] += len(hot)
            report.would_move["warm_to_cold"] += len(warm) + len(old_hot)

    async def _archive_all(self, users: Sequence[str], report: ArchiveReport) -> None:
        done = 0
        for number, batch in enumerate(_chunks(users, self._batch_users), start=1):
            pending = list(batch)
            while pending:
                switched: list[tuple[str, Move]] = []
                for user_id in pending:
                    try:
                        move = await self._step(user_id, report)
                    except Exception:
                        self._failed(user_id, report, "copy")
                        continue
                    if move is not None:
                        switched.append((user_id, move))
                if switched:
                    await asyncio.sleep(self._grace)
                finished: list[str] = []
                for user_id, move in switched:
                    try:
                        await self._finish(user_id, move, report)
                    except Exception:
                        self._failed(user_id, report, "delete source copies")
                        continue
                    finished.append(user_id)
                pending = finished
            done += len(batch)
            log.info(
                "archive progress",
                extra={"batch": number, "users_done": done, "users_total": len(users), **report.as_dict()},
            )

    def _failed(self, user_id: str, report: ArchiveReport, step: str) -> None:
        report.failures += 1
        metrics.ARCHIVE_FAILURES.inc()
        log.exception(
            "archive step failed; the user stays readable and a re-run completes it",
            extra={"user": self._label(user_id), "step": step},
        )

    def _user_lock(self, user_id: str) -> contextlib.AbstractAsyncContextManager[str]:
        return self._locks.hold(
            keys.ltm_lock(user_id), ttl_seconds=self._lock_ttl, wait_seconds=self._lock_wait
        )

    # -- one step of one user -----------------------------------------------------------------------

    async def _step(self, user_id: str, report: ArchiveReport) -> Move | None:
        """One bounded move of this user, up to its switch; None when the user has nothing to move."""
        async with self._user_lock(user_id):
            snap = await self._state.read(user_id)
            if snap.move is not None:
                await self._settle_leftover(user_id, snap.move, report)
            server = self._hot.server(await self._hot.server_of(user_id, fresh=True))
            ids = await server.ids_before(
                user_id, self._policy.warm_cutoff(report.now), limit=self._batch_size
            )
            ids = await self._alive(user_id, ids)
            if ids:
                return await self._hot_to_warm(user_id, server, ids)
            for warm in self._archive.warm_stores:  # one model's warm store per move (one vector size)
                cutoff = self._policy.cold_cutoff(report.now)
                ids = await self._alive(
                    user_id, await warm.ids_before(user_id, cutoff, limit=self._batch_size)
                )
                if ids:
                    return await self._warm_to_cold(user_id, warm, ids, report.now)
            if not snap.archived and await self._archive.warm_count(user_id):
                await self._state.mark_archived(user_id, cold=bool(self._archive.cold.files_of(user_id)))
            return None

    async def _alive(self, user_id: str, ids: Sequence[str]) -> list[str]:
        gone = await self._tombstones.buried(user_id, ids)
        return [i for i in ids if i not in gone]

    async def _hot_to_warm(self, user_id: str, server: ChromaLongTermStore, ids: list[str]) -> Move:
        move = Move("hot", "warm", "copying", frozenset(ids), started_at=self._clock())
        await self._state.begin(user_id, move)
        records = await server.records(user_id, ids=ids)
        await self.copy_to_warm(user_id, tagged(records, server.dense_model))
        landed, expected = await self._verify_warm(
            user_id, self._archive.warm_for(server.dense_model), records.ids
        )
        if expected - landed:
            raise ArchiveError(f"warm copy not verified: {len(expected - landed)} of {len(expected)} missing")
        return await self._state.switch(user_id, Move("hot", "warm", "copying", frozenset(expected)))

    async def copy_to_warm(self, user_id: str, records: Records) -> None:
        """To the warm store of the records' model (`tagged`; untagged: the configured model's)."""
        model = str(records.metadatas[0].get(MODEL_FIELD) or "") if records.metadatas else ""
        warm = Records(
            ids=records.ids,
            documents=records.documents,
            metadatas=[{**m, "archive_tier": "warm"} for m in records.metadatas],
            embeddings=records.embeddings,
            rows=records.rows,
        )
        await self._archive.warm_for(model).put_records(user_id, warm)

    async def _verify_warm(
        self, user_id: str, warm: ChromaLongTermStore, ids: Sequence[str]
    ) -> tuple[set[str], set[str]]:
        """(ids found in the `warm` store, ids that must be there: those copied less those buried
        meanwhile, which are dropped from warm here)."""
        gone = await self._tombstones.buried(user_id, ids)
        if gone:
            await warm.delete(user_id, sorted(gone))
        found = await warm.get(user_id, ids=list(ids), include_content=False)
        gone |= await self._tombstones.buried(user_id, ids)  # read after `found`
        return {m.id for m in found} - gone, set(ids) - gone

    async def _warm_to_cold(
        self, user_id: str, warm: ChromaLongTermStore, ids: list[str], now: float
    ) -> Move:
        records = await warm.records(user_id, ids=ids)
        cold = self._archive.cold
        created = [float(m["created_at"]) for m in records.metadatas]
        files = cold.plan_files(user_id, created)
        move = Move("warm", "cold", "copying", frozenset(records.ids), tuple(files.values()), self._clock())
        await self._state.begin(user_id, move)
        async with self._archive.cold_lock(user_id):
            rows = ColdRows(records.ids, records.documents, records.metadatas, records.embeddings)
            await anyio.to_thread.run_sync(lambda: cold.write(user_id, rows, files, archived_at=now))
            gone = await self._tombstones.buried(user_id, records.ids)
            if gone:  # deleted while we wrote: out of the new files too (a delete's cold pass waits for us)
                await anyio.to_thread.run_sync(cold.delete_ids, user_id, gone)
            landed = await anyio.to_thread.run_sync(cold.ids_in, cold.files_of(user_id), user_id)
        expected = set(records.ids) - gone
        if expected - landed:
            raise ArchiveError(f"cold copy not verified: {len(expected - landed)} of {len(expected)} missing")
        return await self._state.switch(
            user_id, Move("warm", "cold", "copying", frozenset(expected), move.files, move.started_at)
        )

    # -- after the grace period, and what a crash left ----------------------------------------------

    async def _finish(self, user_id: str, move: Move, report: ArchiveReport) -> None:
        async with self._user_lock(user_id):
            snap = await self._state.read(user_id)
            if snap.move is None or snap.move.phase != "switched" or snap.move.ids != move.ids:
                return  # erased meanwhile
            await self._delete_source(user_id, snap.move)
        report.moved[_label(move)] += len(move.ids)
        metrics.ARCHIVE_MOVED.labels(_label(move)).inc(len(move.ids))

    async def _delete_source(self, user_id: str, move: Move) -> None:
        ids = sorted(move.ids)
        if move.src == "hot":
            await self._hot.delete(user_id, ids)
            await self._versions.bump(user_id, deleted=ids)  # every worker's hot index drops them
        else:
            await self._archive.warm_delete(user_id, ids)
        await self._state.finish(user_id)

    async def _settle_leftover(self, user_id: str, move: Move, report: ArchiveReport) -> None:
        if move.phase == "switched":
            await self._delete_source(user_id, move)
            report.resumed += 1
            report.moved[_label(move)] += len(move.ids)
            log.info(
                "archive move completed after a crash",
                extra={"user": self._label(user_id), "move": _label(move)},
            )
            return
        ids = sorted(move.ids)
        if move.dst == "warm":  # from whichever model's warm store the copy went to
            await self._archive.warm_delete(user_id, ids)
        else:
            async with self._archive.cold_lock(user_id):
                cold = self._archive.cold
                await anyio.to_thread.run_sync(cold.delete_ids, user_id, set(ids))
        await self._state.finish(user_id)
        report.rolled_back += 1
        log.info(
            "archive copy rolled back after a crash",
            extra={"user": self._label(user_id), "move": _label(move)},
        )

    # -- gauges -------------------------------------------------------------------------------------

    async def counts(self) -> dict[str, int]:
        """Memories per tier over every store (a scan of the metadata, and of the Parquet footers)."""
        hot = 0
        for server in self._hot.servers.values():
            hot += sum((await server.user_counts()).values())
        warm = sum((await self._archive.warm_user_counts()).values())
        cold = await anyio.to_thread.run_sync(self._archive.cold.count_rows)
        return {"hot": hot, "warm": warm, "cold": cold}
