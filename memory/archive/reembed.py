"""Embedding archived memories again after a dense model switch: `python -m app.cli.archive --reembed`.

A switch (memory/longterm/dense_models.py) embeds a user's hot records again when the rebalance moves
them; their warm and cold rows keep the vectors of the model that archived them, and the tiered search
ranks those rows by their words alone (a vector is never ranked against a query of another model:
memory/archive/search.py). This job gives them vectors of the user's model, user by user, online:

- users: every user with warm records or cold rows (cold: the `user_id` column of every Parquet file);
- a user's model is their hot store's (`DenseModels.for_user`, read fresh); a row whose recorded model
  (`MODEL_FIELD`; a row archived before rows carried one: `ArchivedTiers.first_model`, and when that is
  not said, any model: never re-embedded) is another is embedded by it;
- warm: each dense model has warm collections of its own (memory/archive/view.py), and the user's
  rows belong in their model's. `batch_size` rows at a time, each batch under the user's long-term
  write lock (the one an archival step holds: no move runs meanwhile, and a rebalance switching the
  user waits): the rows in another model's warm store are read, embedded, written to the user's
  model's warm store with the new tag, verified there and deleted from the other store (a reader
  meanwhile answers each id once: the view prefers the user's model's copy), and the user's archive
  version bumped (an export paging the warm stores meanwhile fails rather than miss a row); rows of
  another model in the user's model's own store (archived before warm stores were per model, or
  untagged) are upserted in place. Deletes do not take that lock, so ids buried meanwhile are deleted
  again after the batch (as the archival copy does);
- cold: file by file (one user's rows of one month of one move), embedded outside the locks (archived
  rows never change, they only go), then, under the user's lock and the cold lock, the file rewritten
  with the new vectors and tags (a new file, the old one removed: `ColdStore.replace_vectors`); a file a
  delete rewrote meanwhile is left to the next run. Parquet files are per user (named by the user's
  digest, in a partition directory shared with other users): no other user's rows are rewritten, and
  the cost is the embedding, as for warm;
- a user with a move in progress (an archival run between its switch and deleting the source copies,
  or a crash's leftover), or switched to another model since the batch was planned, is left to the
  next run;
- once a user's rows changed, their archive version is bumped: every worker's warm and cold index of
  them is rebuilt on its next search.

Resumable by construction (what is done is what the rows' tags say), paced (`max_per_second`) and
retried (a paused Chroma, a model server down: `StoreUnavailable`) as memory/longterm/reembed.py is.

Vector sizes: Chroma fixes a collection's vector size at its first record, and each model's warm
collections hold its vectors alone, so a switch to a model of another size moves the rows as any other
switch does. Cold files are per user and rewritten: a user's rows may be of two sizes meanwhile (an
index keeps those of the configured model's size: memory/archive/sizes.py). Only an in-place upsert of
rows of another size (one warm store for every model: no dense layout, as in tests and benches) is
refused: that user is left as is (`size_changed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.to_thread

from memory import keys
from memory.archive.cold import MODEL_FIELD
from memory.archive.view import ArchivedTiers
from memory.embedding.base import Vectors
from memory.errors import MemoryBusy, StoreUnavailable
from memory.locks import RedisLocks
from memory.longterm.chroma import ChromaLongTermStore
from memory.longterm.dense_models import DenseModel, DenseModels, same_model
from memory.longterm.records import Records, from_record, where_for
from memory.longterm.tombstones import Tombstones
from memory.models import Memory
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)
MAX_RETRY_PAUSE_SECONDS = 30.0
T = TypeVar("T")


@dataclass(slots=True)
class ArchiveReembedReport:
    dry_run: bool = False
    users_seen: int = 0
    users_reembedded: int = 0  # users whose rows were embedded again (all that needed it)
    users_current: int = 0  # every archived row already of the user's model
    users_left: int = 0  # a move in progress, or switched meanwhile: the next run does them
    size_changed: int = 0  # users whose model's vectors have another size than their archived ones
    warm: int = 0  # rows embedded again (a dry run: rows that would be)
    cold: int = 0
    failures: int = 0
    failed_users: list[str] = field(default_factory=list)  # labels, never raw user ids
    batches_retried: int = 0
    seconds: float = 0.0
    dense_switched: str | None = None  # the switch this run recorded as finished (the CLI: finish_switch)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


Progress = Callable[[ArchiveReembedReport, int], None]  # (report so far, users in all)


class UserLeft(Exception):
    """The user has a move in progress or was switched meanwhile: left to the next run."""


class SizeChanged(Exception):
    """The user's model makes vectors of another size than their archived ones."""


@dataclass(frozen=True, slots=True)
class ColdFile:
    path: str
    memories: list[Memory]  # its rows of another model than the user's


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class ArchiveReembedder:
    def __init__(
        self,
        archive: ArchivedTiers,
        models: DenseModels,
        redis: RedisClient,
        *,
        batch_size: int = 64,
        lock_ttl_seconds: int = 30,
        lock_wait_seconds: float = 60.0,
        user_label: Callable[[str], str] = lambda u: u,
        max_per_second: float | None = None,
        batch_attempts: int = 6,
        retry_pause_seconds: float = 2.0,
    ) -> None:
        """`models`: the loaded dense models and which one embeds a user (app/composition/dense.py);
        `max_per_second`: at most this many rows embedded per second, on average (None: no bound);
        `batch_attempts` / `retry_pause_seconds`: as memory/longterm/reembed.py's Reembedder."""
        if batch_size < 1 or batch_attempts < 1 or retry_pause_seconds < 0:
            raise ValueError("batch_size and batch_attempts must be >= 1, retry_pause_seconds >= 0")
        if max_per_second is not None and max_per_second <= 0:
            raise ValueError("max_per_second must be > 0")
        self._archive = archive
        self._models = models
        self._locks = RedisLocks(redis)
        self._tombstones = Tombstones(redis)
        self._batch = batch_size
        self._lock_ttl = lock_ttl_seconds
        self._lock_wait = lock_wait_seconds
        self._label = user_label
        self._rate = max_per_second
        self._attempts = batch_attempts
        self._retry_pause = retry_pause_seconds
        self._started = time.monotonic()
        self._embedded = 0

    async def users(self) -> list[str]:
        """Every user with warm records or cold rows."""
        found = set(await self._archive.warm_user_counts())
        found |= await anyio.to_thread.run_sync(self._archive.cold.user_ids)
        return sorted(found)

    async def run(self, *, dry_run: bool = False, progress: Progress | None = None) -> ArchiveReembedReport:
        report = ArchiveReembedReport(dry_run=dry_run)
        t0 = self._started = time.monotonic()
        self._embedded = 0
        users = await self.users()
        report.users_seen = len(users)
        for user_id in users:
            try:
                await self.user(user_id, report, dry_run=dry_run)
            except UserLeft as exc:
                report.users_left += 1
                log.info("archive reembed: user left to the next run", extra=self._why(user_id, exc))
            except SizeChanged as exc:
                report.size_changed += 1
                log.warning(
                    "archive reembed: vector size changed; user left as is", extra=self._why(user_id, exc)
                )
            except Exception as exc:  # one user's failure never stops the others; a re-run retries
                report.failures += 1
                report.failed_users.append(self._label(user_id))
                log.warning("archive reembed failed for a user", extra=self._why(user_id, exc))
            report.seconds = time.monotonic() - t0
            if progress is not None:
                progress(report, len(users))
        return report

    def _why(self, user_id: str, exc: Exception) -> dict[str, str]:
        return {"user": self._label(user_id), "reason": f"{type(exc).__name__}: {exc}"}

    async def user(self, user_id: str, report: ArchiveReembedReport, *, dry_run: bool = False) -> int:
        """Embed again this user's archived rows of another model than theirs (warm ones into their
        model's warm store); returns the rows written."""
        model = await self._models.for_user(user_id, fresh=True)
        target = self._archive.warm_for(model.tag)
        warm = await self._warm_todo(user_id, model, target)
        cold = await anyio.to_thread.run_sync(self._cold_todo, user_id, model)
        if not warm and not cold:
            report.users_current += 1
            return 0
        if dry_run:
            report.warm += sum(len(ids) for _, ids in warm)
            report.cold += sum(len(f.memories) for f in cold)
            return 0
        written = 0
        try:
            for source, ids in warm:
                for chunk in _chunks(ids, self._batch):
                    await self._pace(len(chunk))  # outside the lock: a paced run never holds up a write
                    batch = functools.partial(self._warm_batch, user_id, chunk, model, source, target)
                    n = await self._retried(user_id, report, batch)
                    written += n
                    report.warm += n
            for file in cold:
                n = await self._cold_file(user_id, file, model, report)
                written += n
                report.cold += n
        finally:
            if written:  # every worker's warm and cold index of the user is rebuilt
                await self._archive.state.bump(user_id)
        report.users_reembedded += 1
        return written

    def _fits(self, tag: object, model: DenseModel) -> bool:
        """Whether a row whose recorded tag is `tag` has a vector of `model`'s (unknown: it may)."""
        resolved = self._archive.model_of(tag)
        return resolved is None or same_model(resolved, model.tag)

    @staticmethod
    def _check_size(vectors: Vectors, model: DenseModel) -> None:
        size = model.embedder.dimension
        if len(vectors) and vectors.shape[1] != size:
            raise SizeChanged(
                f"archived vectors have {vectors.shape[1]} dimensions, {model.tag} makes {size}"
            )

    # -- warm ---------------------------------------------------------------------------------------

    async def _warm_todo(
        self, user_id: str, model: DenseModel, target: ChromaLongTermStore
    ) -> list[tuple[ChromaLongTermStore, list[str]]]:
        """The user's warm ids to embed again, with the store holding them: every row in another
        model's warm store, and those of another model in `target`, the user's model's (read from
        their metadata; for an upsert in place, one vector for its size)."""
        where = where_for(user_id)
        out: list[tuple[ChromaLongTermStore, list[str]]] = []
        for store in self._archive.warm_stores:
            result = await store.on_collection(user_id, lambda c: c.get(where=where, include=["metadatas"]))
            metas = result.get("metadatas") or [{} for _ in result["ids"]]
            todo = [
                i
                for i, meta in zip(result["ids"], metas, strict=True)
                if (meta or {}).get("user_id") == user_id
                and (store is not target or not self._fits(meta.get(MODEL_FIELD), model))
            ]
            if todo and store is target:
                self._check_size((await store.records(user_id, ids=todo[:1])).embeddings, model)
            if todo:
                out.append((store, todo))
        return out

    async def _warm_batch(
        self,
        user_id: str,
        chunk: Sequence[str],
        model: DenseModel,
        source: ChromaLongTermStore,
        target: ChromaLongTermStore,
    ) -> int:
        """One batch under the user's lock: read from `source`, embed, write to `target` (the user's
        model's warm store) with the new tag, and when they differ, verify and delete from `source`.
        Idempotent."""
        moving = source is not target
        async with self._user_lock(user_id):
            await self._unchanged(user_id, model)
            records = await source.records(user_id, ids=list(chunk))
            if not moving:
                records = records.only(
                    {
                        i
                        for i, m in zip(records.ids, records.metadatas, strict=True)
                        if not self._fits(m.get(MODEL_FIELD), model)
                    }
                )
                self._check_size(records.embeddings, model)
            if not records.ids:
                return 0
            memories = [
                from_record(i, d, m)
                for i, d, m in zip(records.ids, records.documents, records.metadatas, strict=True)
            ]
            vectors = await model.embedder.embed([m.embed_text for m in memories])
            metadatas = [{**m, MODEL_FIELD: model.tag} for m in records.metadatas]
            await target.put_records(
                user_id, Records(records.ids, records.documents, metadatas, vectors, records.rows)
            )
            # a delete (which does not take the lock) between the read and the upsert: gone again
            gone = await self._tombstones.buried(user_id, records.ids)
            if gone:
                await target.delete(user_id, sorted(gone))
            if moving:
                await self._moved(user_id, records.ids, gone, source, target)
        return len(records.ids)

    async def _moved(
        self,
        user_id: str,
        ids: Sequence[str],
        gone: set[str],
        source: ChromaLongTermStore,
        target: ChromaLongTermStore,
    ) -> None:
        """Rows copied to `target`: verified there, then deleted from `source` (a reader meanwhile
        answers each from one store), and the archive version bumped (cached indexes are rebuilt, an
        export paging the warm stores fails rather than miss them). A copy not verified is retried."""
        found = await target.get(user_id, ids=list(ids), include_content=False)
        gone |= await self._tombstones.buried(user_id, ids)  # read after `found`
        missing = set(ids) - gone - {m.id for m in found}
        if missing:
            raise StoreUnavailable("archive", f"warm move not verified: {len(missing)} of {len(ids)} missing")
        await source.delete(user_id, list(ids))
        await self._archive.state.bump(user_id)

    # -- cold ---------------------------------------------------------------------------------------

    def _cold_todo(self, user_id: str, model: DenseModel) -> list[ColdFile]:
        """The user's cold files holding rows of another model, with those rows (blocking I/O). A
        file is rewritten whatever the size of its vectors (Parquet holds any)."""
        cold = self._archive.cold
        out: list[ColdFile] = []
        for path in cold.files_of(user_id):
            memories, _, tags = cold.read_rows(user_id, files=[path], with_vectors=False)
            stale = [m for m, tag in zip(memories, tags, strict=True) if not self._fits(tag, model)]
            if stale:
                out.append(ColdFile(path, stale))
        return out

    async def _cold_file(
        self, user_id: str, file: ColdFile, model: DenseModel, report: ArchiveReembedReport
    ) -> int:
        """Embed one file's rows (outside the locks: archived rows never change), then rewrite it."""
        vectors: dict[str, Vectors] = {}
        for chunk in _chunks(file.memories, self._batch):
            await self._pace(len(chunk))
            texts = [m.embed_text for m in chunk]
            made = await self._retried(user_id, report, functools.partial(model.embedder.embed, texts))
            vectors.update({m.id: made[row] for row, m in enumerate(chunk)})
        return await self._retried(
            user_id, report, functools.partial(self._rewrite, user_id, file.path, vectors, model)
        )

    async def _rewrite(self, user_id: str, path: str, vectors: dict[str, Vectors], model: DenseModel) -> int:
        async with self._user_lock(user_id):
            await self._unchanged(user_id, model)
            async with self._archive.cold_lock(user_id):
                cold = self._archive.cold
                return await anyio.to_thread.run_sync(cold.replace_vectors, user_id, path, vectors, model.tag)

    # -- shared -------------------------------------------------------------------------------------

    def _user_lock(self, user_id: str) -> contextlib.AbstractAsyncContextManager[str]:
        return self._locks.hold(
            keys.ltm_lock(user_id),
            ttl_seconds=self._lock_ttl,
            wait_seconds=self._lock_wait,
            on_timeout=lambda: MemoryBusy(user_id, self._lock_wait),
            kind="ltm",
        )

    async def _unchanged(self, user_id: str, model: DenseModel) -> None:
        """Under the user's lock: no move in progress, and the user still embedded by `model`."""
        if (await self._archive.snapshot(user_id)).move is not None:
            raise UserLeft("an archive move is in progress")
        now = await self._models.for_user(user_id, fresh=True)
        if not same_model(now.tag, model.tag):
            raise UserLeft(f"switched to {now.tag} meanwhile")

    async def _pace(self, n: int) -> None:
        """Wait until `n` more rows keep the run within `max_per_second`."""
        self._embedded += n
        if self._rate is None:
            return
        ahead = self._embedded / self._rate - (time.monotonic() - self._started)
        if ahead > 0:
            await asyncio.sleep(ahead)

    async def _retried(
        self, user_id: str, report: ArchiveReembedReport, step: Callable[[], Awaitable[T]]
    ) -> T:
        """`step`, tried again after a growing pause (no lock held meanwhile) when a store or the model
        fails it; the last failure propagates (the user is left to the next run)."""
        for attempt in range(1, self._attempts + 1):
            try:
                return await step()
            except StoreUnavailable as exc:
                if attempt == self._attempts:
                    raise
                pause = min(self._retry_pause * 2 ** (attempt - 1), MAX_RETRY_PAUSE_SECONDS)
                report.batches_retried += 1
                log.warning(
                    "archive reembed batch failed; trying again",
                    extra={"attempt": attempt, "pause_s": pause, **self._why(user_id, exc)},
                )
                await asyncio.sleep(pause)
        raise AssertionError("unreachable: the last attempt returns or raises")
