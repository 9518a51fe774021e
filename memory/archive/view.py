"""Warm and cold records of one user, as readers and governance see them: every id from exactly one
tier (the move in progress in the user's archive state decides, `memory/archive/tiers.py`).

`ArchivedTiers` reads (headers, by id, vectors, pages for export), deletes and erases over the warm
archive collections and the cold Parquet files. Hot stays the `LongTermStore` it always was; callers
combine the two and drop from hot what the snapshot hides there.

Each archived row records the dense model that made its vector (`MODEL_FIELD`: the warm record's
metadata, the cold row's column; memory/longterm/dense_models.py): the tiered search never ranks a
vector against a query of another model. Rows archived before rows carried one are of `first_model`.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Collection, Sequence

import anyio.to_thread
import numpy as np

from memory import keys
from memory.archive.cold import MODEL_FIELD, ColdStore
from memory.archive.tiers import ArchiveState, Snapshot
from memory.embedding.base import Vectors
from memory.errors import StoreUnavailable
from memory.locks import RedisLocks
from memory.longterm.chroma import ChromaLongTermStore
from memory.longterm.records import from_record
from memory.models import ArchiveTier, Memory
from memory.redis_client import RedisClient

COLD_LOCK_TTL_SECONDS = 60
COLD_ONLY: tuple[ArchiveTier, ...] = ("cold",)
COLD_LOCK_WAIT_SECONDS = 60.0
Tagged = tuple[list[Memory], Vectors, list[str | None]]  # memories, their vectors, each vector's model


class ArchivedTiers:
    def __init__(
        self, warm: ChromaLongTermStore, cold: ColdStore, redis: RedisClient, *, first_model: str = ""
    ) -> None:
        """`first_model`: the tag of the dense model the collection prefix was first started with, the
        model of rows archived before rows recorded theirs; "" (not said): such rows are taken to be
        of any query's model (ranked as they always were)."""
        self.warm = warm
        self.cold = cold
        self.first_model = first_model
        self.state = ArchiveState(redis)
        self._locks = RedisLocks(redis)

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

    # -- reads --------------------------------------------------------------------------------------

    async def warm_with_vectors(self, user_id: str, snap: Snapshot) -> Tagged:
        """Every warm memory of the user, with vectors and their models, less what the snapshot hides
        in warm."""
        records = await self.warm.records(user_id)
        memories = [
            from_record(i, d, meta)
            for i, d, meta in zip(records.ids, records.documents, records.metadatas, strict=True)
        ]
        models = [self.model_of(meta.get(MODEL_FIELD)) for meta in records.metadatas]
        return _visible(memories, records.embeddings, models, snap.hidden("warm"), "warm")

    async def cold_with_vectors(self, user_id: str, snap: Snapshot) -> Tagged:
        if not snap.has_cold:
            return [], np.zeros((0, 0), dtype=np.float32), []
        memories, vectors, tags = await anyio.to_thread.run_sync(self._read_cold, user_id, True)
        models = [self.model_of(tag) for tag in tags]
        return _visible(memories, vectors, models, snap.hidden("cold"), "cold")

    def _read_cold(self, user_id: str, with_vectors: bool) -> Tagged:
        try:
            return self.cold.read_tagged(user_id, with_vectors=with_vectors)
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
            hidden = snap.hidden("warm")
            warm = await self.warm.get(user_id, include_content=include_content)
            out += [_tier(m, "warm") for m in warm if m.id not in hidden]
        if "cold" in tiers and snap.has_cold:
            hidden = snap.hidden("cold")
            cold, _, _ = await anyio.to_thread.run_sync(self._read_cold, user_id, False)
            out += [m for m in cold if m.id not in hidden]
        return out

    async def embeddings(self, user_id: str, snap: Snapshot, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored vectors of these ids, from warm and cold."""
        if not snap.archived or not ids:
            return {}
        out = await self.warm.embeddings(user_id, ids)
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
        offset = 0
        while True:
            await self._unchanged(user_id, snap)
            page, rows = await self.warm.page(user_id, limit=page_size, offset=offset)
            hidden = snap.hidden("warm")
            visible = [_tier(m, "warm") for m in page if m.id not in hidden]
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
        await self.warm.delete(user_id, ids)
        if snap.has_cold:
            async with self.cold_lock(user_id):
                await anyio.to_thread.run_sync(self.cold.delete_ids, user_id, set(ids))
        await self.state.bump(user_id)

    async def delete_user(self, user_id: str) -> dict[str, int]:
        """Erasure: every warm record and every cold row of the user, whatever the state says."""
        warm = await self.warm.delete_user(user_id)
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
