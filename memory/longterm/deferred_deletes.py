"""A long-term store whose deletes answer before Chroma has applied them.

`DeferredDeleteStore` wraps the store the services use. `delete` hides the ids (memory/longterm/purges.py)
and returns; a task of this process then deletes them from Chroma (`purge`), and forgets them once
Chroma did. Every read in between drops the hidden ids: get, pages, query, nearest, hashes, vectors,
counts. So a caller sees the memory gone the moment `delete` returns, wherever it reads from, while the
Chroma delete itself may wait in the server behind the writers' upserts, or for the server to come back.

What this process did not finish (it crashed, or Chroma was down), `PurgeSweeper` finishes from the
writers: each sweeps the partitions it leases for users whose purge is older than a grace period.

Reads ask Redis for the hidden ids first and Chroma second, never both at once: a purge deletes from
Chroma before it stops hiding, so a reader that saw an id unhidden reads Chroma after the delete. With
Redis down, reads go on unfiltered (search keeps answering from Chroma during a Redis outage): only a
memory deleted just before the outage, whose purge had not finished, could show in them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence

from redis.exceptions import RedisError

from memory.embedding.base import Vectors
from memory.errors import REDIS_UNAVAILABLE, StoreUnavailable
from memory.longterm.chroma import ErasableStore
from memory.longterm.purges import Purges
from memory.longterm.restorable import RestorableBin
from memory.models import Memory, SearchFilters
from monitoring import metrics

log = logging.getLogger(__name__)


class DeferredDeleteStore:
    """`ErasableStore` over `inner` with deletes that hide first and purge in the background."""

    def __init__(self, inner: ErasableStore, purges: Purges) -> None:
        self.inner = inner
        self.purges = purges
        self._tasks: set[asyncio.Task[None]] = set()

    # -- deletes -------------------------------------------------------------------------------------

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """Hidden from every read once this returns; deleted from Chroma soon after (`purge`)."""
        if not ids:
            return
        await self.purges.hide(user_id, ids)
        task = asyncio.create_task(self._purge_quietly(user_id), name=f"purge:{user_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def purge(self, user_id: str) -> int:
        """Delete the user's hidden ids from Chroma, then stop hiding them. Returns how many it deleted.
        Idempotent: two purges of one user (this worker and a sweeping writer) delete the same ids."""
        async with self.purges.lock(user_id):  # a restore waits for the delete of what it read
            hidden = await self.purges.hidden(user_id)  # the purge itself needs Redis
            if hidden:
                await self.inner.delete(user_id, sorted(hidden))
            await self.purges.finish(user_id, hidden)
        return len(hidden)

    async def unhide(self, user_id: str, ids: Sequence[str]) -> None:
        """A restore: these ids are no longer to be purged or hidden. Once this returns, no purge that
        read them is still deleting: the restore's write that follows stays."""
        async with self.purges.lock(user_id):
            await self.purges.finish(user_id, ids)

    async def _purge_quietly(self, user_id: str) -> None:
        try:
            deleted = await self.purge(user_id)
        except (StoreUnavailable, RedisError) as exc:  # hidden meanwhile; a writer's sweep retries
            metrics.LTM_PURGES.labels("deferred").inc()
            log.warning("purge deferred to the sweep", extra={"user_id": user_id, "reason": str(exc)})
            return
        if deleted:
            metrics.LTM_PURGES.labels("done").inc()

    async def settle(self, timeout: float = 10.0) -> None:
        """Wait for the purges this process started (shutdown; tests that look into Chroma)."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)

    async def delete_user(self, user_id: str) -> int:
        """Erasure: every record, hidden or not (erasure deletes the user's Redis keys, hidden ids too)."""
        return await self.inner.delete_user(user_id)

    # -- writes and health pass through ---------------------------------------------------------------

    async def upsert(
        self, memories: Sequence[Memory], embeddings: Vectors, *, models: Mapping[str, str] | None = None
    ) -> None:
        await self.inner.upsert(memories, embeddings, models=models)

    async def ping(self) -> None:
        await self.inner.ping()

    # -- reads drop what is hidden --------------------------------------------------------------------

    async def _hidden(self, user_id: str) -> frozenset[str]:
        try:
            return await self.purges.hidden(user_id)
        except REDIS_UNAVAILABLE as exc:
            metrics.HIDDEN_CHECK_FAILURES.inc()
            log.debug("read not checked for hidden ids", extra={"user_id": user_id, "reason": str(exc)})
            return frozenset()

    async def get(
        self, user_id: str, *, ids: Sequence[str] | None = None, include_content: bool = True
    ) -> list[Memory]:
        hidden = await self._hidden(user_id)
        if ids is not None:
            ids = [i for i in ids if i not in hidden]
            if not ids:
                return []
        return _visible(await self.inner.get(user_id, ids=ids, include_content=include_content), hidden)

    async def query(
        self,
        user_id: str,
        embedding: Sequence[float],
        *,
        n_results: int,
        filters: SearchFilters,
        model: str | None = None,
        user_rows: int | None = None,
    ) -> list[tuple[Memory, float]]:
        hidden = await self._hidden(user_id)
        hits = await self.inner.query(
            user_id,
            embedding,
            n_results=n_results + len(hidden),
            filters=filters,
            model=model,
            user_rows=user_rows,
        )
        return [(m, s) for m, s in hits if m.id not in hidden][:n_results]

    async def query_with_vectors(
        self,
        user_id: str,
        embedding: Sequence[float],
        *,
        n_results: int,
        filters: SearchFilters,
        model: str | None = None,
        user_rows: int | None = None,
    ) -> tuple[list[tuple[Memory, float]], Vectors]:
        hidden = await self._hidden(user_id)
        hits, rows = await self.inner.query_with_vectors(
            user_id,
            embedding,
            n_results=n_results + len(hidden),
            filters=filters,
            model=model,
            user_rows=user_rows,
        )
        keep = [i for i, (m, _) in enumerate(hits) if m.id not in hidden][:n_results]
        return [hits[i] for i in keep], rows[keep] if len(rows) else rows

    async def find_by_hashes(self, user_id: str, hashes: Sequence[str]) -> list[Memory]:
        hidden = await self._hidden(user_id)
        return _visible(await self.inner.find_by_hashes(user_id, hashes), hidden)

    async def pages(self, user_id: str, page_size: int = 500) -> AsyncIterator[list[Memory]]:
        hidden = await self._hidden(user_id)
        async for page in self.inner.pages(user_id, page_size):
            visible = _visible(page, hidden)
            if visible:
                yield visible

    async def get_with_vectors(
        self, user_id: str, ids: Sequence[str] | None = None
    ) -> tuple[list[Memory], Vectors]:
        hidden = await self._hidden(user_id)
        if ids is not None:
            ids = [i for i in ids if i not in hidden]
        memories, vectors = await self.inner.get_with_vectors(user_id, ids)
        rows = [r for r, m in enumerate(memories) if m.id not in hidden]
        if len(rows) == len(memories):
            return memories, vectors
        return [memories[r] for r in rows], vectors[rows]

    async def embeddings(self, user_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        hidden = await self._hidden(user_id)
        return await self.inner.embeddings(user_id, [i for i in ids if i not in hidden])

    async def nearest(
        self, user_id: str, embeddings: Vectors, *, n_results: int = 1, model: str | None = None
    ) -> list[list[tuple[Memory, float]]]:
        hidden = await self._hidden(user_id)
        found = await self.inner.nearest(user_id, embeddings, n_results=n_results + len(hidden), model=model)
        return [[(m, s) for m, s in hits if m.id not in hidden][:n_results] for hits in found]

    async def count(self, user_id: str) -> int:
        hidden = await self._hidden(user_id)
        if not hidden:
            return await self.inner.count(user_id)
        return len(_visible(await self.inner.get(user_id, include_content=False), hidden))


def _visible(memories: list[Memory], hidden: Collection[str]) -> list[Memory]:
    return [m for m in memories if m.id not in hidden] if hidden else memories


class PurgeSweeper:
    """Finishes purges nobody finished: every `interval_seconds`, the users of the partitions `held()`
    names whose purge is older than `grace_seconds` (the asking worker's own task had its chance). With
    `restorable`, it also removes for good the restorable copies whose grace period has ended."""

    def __init__(
        self,
        store: DeferredDeleteStore,
        held: Callable[[], Collection[int]],
        *,
        interval_seconds: float = 5.0,
        grace_seconds: float = 10.0,
        batch: int = 50,
        restorable: RestorableBin | None = None,
    ) -> None:
        self._store = store
        self._restorable = restorable
        self._held = held
        self._interval = interval_seconds
        self._grace = grace_seconds
        self._batch = batch
        self._stopping = asyncio.Event()

    def stop(self) -> None:
        self._stopping.set()

    async def sweep(self) -> int:
        """One pass over the held partitions; returns how many users it purged."""
        purged = 0
        for partition in sorted(self._held()):
            for user_id in await self._store.purges.due(
                partition, older_than_seconds=self._grace, limit=self._batch
            ):
                try:
                    await self._store.purge(user_id)
                except StoreUnavailable as exc:  # Chroma down: the user stays queued for the next pass
                    metrics.LTM_PURGES.labels("deferred").inc()
                    log.warning("sweep could not purge", extra={"user_id": user_id, "reason": str(exc)})
                    continue
                metrics.LTM_PURGES.labels("swept").inc()
                purged += 1
        if self._restorable is not None:
            expired = await self._restorable.sweep(sorted(self._held()), batch=self._batch)
            if expired:
                log.info("restorable copies expired", extra={"count": expired})
        return purged

    async def run(self) -> None:
        while not self._stopping.is_set():
            try:
                await self.sweep()
            except RedisError as exc:
                log.warning("purge sweep failed", extra={"reason": str(exc)})
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("purge sweep error")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=self._interval)
