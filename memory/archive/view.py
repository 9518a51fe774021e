"""Warm and cold records of one user, as readers and governance see them: every id from exactly one
tier (the move in progress in the user's archive state decides, `memory/archive/tiers.py`).

`ArchivedTiers` reads (headers, by id, vectors, pages for export), deletes and erases over the warm
archive collections and the cold Parquet files. Hot stays the `LongTermStore` it always was; callers
combine the two and drop from hot what the snapshot hides there.

Each archived row records the dense model that made its vector (`MODEL_FIELD`: the warm record's
metadata, the cold row's column; memory/longterm/dense_models.py): the tiered search never ranks a
vector against a query of another model. Rows archived before rows carried one are of `first_model`.

Warm rows live in the warm collections of their vector's model, as hot records do in their model's
namespace (Chroma fixes a collection's vector size at its first record): `warm` is the configured
model's (`<namespace>-warm`; the prefix's first model keeps `<prefix>-warm`), `others` those of the
other configured models (a switch's previous one). The archival job writes a user's rows to the warm
store of their hot store's model (`warm_for`); every read covers every warm store, each id once (a row
the re-embed is moving, copied to the configured model's store and not yet deleted from the other, is
answered from the configured model's copy: the other stores are read first, so a move in between is
seen at least once); deletes and erasure go to every warm store. Without a dense layout (tests,
benches) there is one warm store, of every model, as before.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from typing import TypeVar

import anyio.to_thread
import numpy as np

from memory import keys
from memory.archive.cold import MODEL_FIELD, ColdStore
from memory.archive.sizes import stacked
from memory.archive.tiers import ArchiveState, Snapshot
from memory.embedding.base import Vectors
from memory.errors import StoreUnavailable
from memory.locks import RedisLocks
from memory.longterm.chroma import ChromaLongTermStore
from memory.longterm.dense_models import same_model
from memory.longterm.records import from_record
from memory.models import ArchiveTier, Memory
from memory.redis_client import RedisClient

COLD_LOCK_TTL_SECONDS = 60
COLD_ONLY: tuple[ArchiveTier, ...] = ("cold",)
COLD_LOCK_WAIT_SECONDS = 60.0
Tagged = tuple[list[Memory], Vectors, list[str | None]]  # memories, their vectors, each vector's model
T = TypeVar("T")


class ArchivedTiers:
    def __init__(
        self,
        warm: ChromaLongTermStore,
        cold: ColdStore,
        redis: RedisClient,
        *,
        first_model: str = "",
        others: Sequence[ChromaLongTermStore] = (),
    ) -> None:
        """`warm`: the warm store of the configured dense model (of every row, without `others`);
        `others`: the warm stores of the other configured models (a switch's previous one), each
        naming its model (`dense_model`). `first_model`: the tag of the dense model the collection
        prefix was first started with, the model of rows archived before rows recorded theirs; ""
        (not said): such rows are taken to be of any query's model (ranked as they always were)."""
        self.warm = warm
        self.others = tuple(others)
        self.cold = cold
        self.first_model = first_model
        self.state = ArchiveState(redis)
        self._locks = RedisLocks(redis)

    @property
    def warm_stores(self) -> tuple[ChromaLongTermStore, ...]:
        """Every warm store, in reading order: the other models' first, the configured model's last."""
        return (*self.others, self.warm)

    @property
    def models(self) -> list[str]:
        """The warm stores' models, the configured one first (an index of vectors of several sizes
        keeps this order's: memory/archive/sizes.py)."""
        return [s.dense_model for s in reversed(self.warm_stores) if s.dense_model]

    def warm_for(self, model: str) -> ChromaLongTermStore:
        """The warm store of rows whose vectors `model` made (a hot store's model; "": not said, the
        configured model's store)."""
        if not self.others or not model:
            return self.warm
        for store in self.warm_stores:
            if store.dense_model and same_model(store.dense_model, model):
                return store
        raise StoreUnavailable(
            "archive", f"no warm collections for the dense model {model!r} (not a configured model)"
        )

    def model_of(self, tag: object) -> str | None:
        """The dense model of a row whose recorded tag is `tag` (None: not known: any)."""
        return str(tag) if tag else (self.first_model or None)

    async def snapshot(self, user_id: str) -> Snapshot:
        return await self.state.read(user_id)

    def cold_lock(self, user_id: str) -> contextlib.AbstractAsyncContextManager[str]:
        return self._locks.hold(
            keys.archive_cold_lock(user_id),
            ttl_seconds=COLD_LOCK_TTL_SECONDS,
            wait_seconds=COLD_LOCK_WAIT_SECONDS,
            kind="archive-cold",
        )

    # -- warm over every model's store --------------------------------------------------------------

    async def warm_user_counts(self) -> dict[str, int]:
        """Warm records per user over every warm store."""
        out: dict[str, int] = {}
        for store in self.warm_stores:
            for user_id, n in (await store.user_counts()).items():
                out[user_id] = out.get(user_id, 0) + n
        return out

    async def warm_count(self, user_id: str) -> int:
        return sum([await store.count(user_id) for store in self.warm_stores])

    async def warm_delete(self, user_id: str, ids: Sequence[str]) -> None:
        """These ids out of every warm store (each holds an id at most once, a re-embed's move aside)."""
        for store in self.warm_stores:
            await store.delete(user_id, ids)

    async def _warm_each(self, read: Callable[[ChromaLongTermStore], Awaitable[T]]) -> list[T]:
        """`read` of each warm store in reading order, returned the configured model's first (the copy
        that answers for an id two stores hold)."""
        return [await read(store) for store in self.warm_stores][::-1]

    # -- reads --------------------------------------------------------------------------------------

    async def warm_with_vectors(self, user_id: str, snap: Snapshot) -> Tagged:
        """Every warm memory of the user, with vectors and their models, less what the snapshot hides
        in warm."""
        memories: list[Memory] = []
        vectors: list[np.ndarray] = []
        models: list[str | None] = []
        seen: set[str] = set()
        for records in await self._warm_each(lambda store: store.records(user_id)):
            for row, (i, d, meta) in enumerate(
                zip(records.ids, records.documents, records.metadatas, strict=True)
            ):
                if i in seen:
                    continue
                seen.add(i)
                memories.append(from_record(i, d, meta))
                vectors.append(records.embeddings[row])
                models.append(self.model_of(meta.get(MODEL_FIELD)))
        matrix, models = stacked(vectors, models, self.models)
        return _visible(memories, matrix, models, snap.hidden("warm"), "warm")

    async def cold_with_vectors(self, user_id: str, snap: Snapshot) -> Tagged:
        if not snap.has_cold:
            return [], np.zeros((0, 0), dtype=np.float32), []
        memories, vectors, tags = await anyio.to_thread.run_sync(self._read_cold, user_id, True)
        matrix, models = stacked(vectors, [self.model_of(tag) for tag in tags], self.models)
        return _visible(memories, matrix, models, snap.hidden("cold"), "cold")

    def _read_cold(
        self, user_id: str, with_vectors: bool
    ) -> tuple[list[Memory], list[np.ndarray], list[str | None]]:
        try:
            return self.cold.read_rows(user_id, with_vectors=with_vectors)
        except (OSError, ValueError) as exc:  # object storage down, or a file half written
            raise StoreUnavailable("archive", f"{type(exc).__name__}: {exc}") from exc

    async def memories(
        self, user_id: str, snap: Snapshot, tiers: Collection[ArchiveTier], *, include_content: bool = True
    ) -> list[Memory]:
        """Warm and/or cold memories of the user (hot is the caller's), each id once."""
        if not snap.archived:
            return []
        out: list[Memory] = []
        if "warm" in tiers:
            hidden = set(snap.hidden("warm"))
            for warm in await self._warm_each(lambda s: s.get(user_id, include_content=include_content)):
                out += [_tier(m, "warm") for m in warm if m.id not in hidden]
                hidden |= {m.id for m in warm}
        if "cold" in tiers and snap.has_cold:
            hidden = set(snap.hidden("cold"))
            cold, _, _ = await anyio.to_thread.run_sync(self._read_cold, user_id, False)
            out += [m for m in cold if m.id not in hidden]
        return out

    async def embeddings(self, user_id: str, snap: Snapshot, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored vectors of these ids, from warm and cold (of whichever model made each)."""
        if not snap.archived or not ids:
            return {}
        out: dict[str, list[float]] = {}
        for found in await self._warm_each(lambda store: store.embeddings(user_id, ids)):
            out.update({i: v for i, v in found.items() if i not in out})
        wanted = set(ids) - set(out)
        if wanted and snap.has_cold:
            memories, vectors, _ = await anyio.to_thread.run_sync(self._read_cold, user_id, True)
            out.update(
                {m.id: [float(x) for x in vectors[row]] for row, m in enumerate(memories) if m.id in wanted}
            )
        return out

    async def pages(
        self, user_id: str, page_size: int = 500, snap: Snapshot | None = None
    ) -> AsyncIterator[list[Memory]]:
        """Warm then cold memories a page at a time (export). The archive version is checked against
        `snap` (the caller's, taken before it read hot) before each page: a move or delete in the
        middle fails the read (StoreUnavailable) rather than answer an id twice or miss it."""
        snap = snap if snap is not None else await self.snapshot(user_id)
        if not snap.archived:
            return
        seen: set[str] = set(snap.hidden("warm"))
        for store in self.warm_stores:
            offset = 0
            while True:
                await self._unchanged(user_id, snap)
                page, rows = await store.page(user_id, limit=page_size, offset=offset)
                visible = [_tier(m, "warm") for m in page if m.id not in seen]
                seen |= {m.id for m in page}
                if visible:
                    yield visible
                if rows < page_size:
                    break
                offset += page_size
        if snap.has_cold:
            await self._unchanged(user_id, snap)
            cold = [m for m in await self.memories(user_id, snap, COLD_ONLY) if m.archive_tier == "cold"]
            for start in range(0, len(cold), page_size):
                yield cold[start : start + page_size]

    async def _unchanged(self, user_id: str, snap: Snapshot) -> None:
        if (await self.snapshot(user_id)).version != snap.version:
            raise StoreUnavailable("archive", "the user's archive changed during the read")

    # -- deletes ------------------------------------------------------------------------------------

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """From warm and cold (callers have buried the ids first: a move in flight drops them)."""
        snap = await self.snapshot(user_id)
        if not snap.archived or not ids:
            return
        await self.warm_delete(user_id, ids)
        if snap.has_cold:
            async with self.cold_lock(user_id):
                await anyio.to_thread.run_sync(self.cold.delete_ids, user_id, set(ids))
        await self.state.bump(user_id)

    async def delete_user(self, user_id: str) -> dict[str, int]:
        """Erasure: every warm record (in every model's warm store) and every cold row of the user,
        whatever the state says."""
        warm = 0
        for store in self.warm_stores:
            warm += await store.delete_user(user_id)
        async with self.cold_lock(user_id):
            cold = await anyio.to_thread.run_sync(self.cold.delete_user, user_id)
        return {"warm": warm, "cold": cold}


def _tier(m: Memory, tier: ArchiveTier) -> Memory:
    return m if m.archive_tier == tier else dataclasses.replace(m, archive_tier=tier)


def _visible(
    memories: list[Memory],
    vectors: Vectors,
    models: list[str | None],
    hidden: frozenset[str],
    tier: ArchiveTier,
) -> Tagged:
    rows = [row for row, m in enumerate(memories) if m.id not in hidden]
    kept = [_tier(memories[r], tier) for r in rows]
    if len(rows) == len(memories):
        return kept, vectors, models
    return kept, (vectors[rows] if len(vectors) else vectors), [models[r] for r in rows]
