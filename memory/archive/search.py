"""Which tiers a search covers, and the warm/cold indexes it searches them with.

By default a search covers hot + warm. Cold is searched when the caller asks for it (`tiers`), or when
hot + warm found nothing relevant: no result, or the best one's cosine below `cold_fallback_similarity`.
The answer says which tiers were searched and why (`TierChoice`).

Warm and cold are never loaded into the hot in-process index: each has a per-worker cache of its own
(`KeywordIndexCache`, bounded by memories held), keyed by the user's archive version, filled on the
first search that covers that tier. The dense channel over them is exact cosine over the stored vectors
(Chroma's HNSW index of the archive collection is never queried); the keyword channel is BM25 as for hot.
Each index knows the dense model of each row's vector (memory/archive/view.py): after a dense model
switch, the retriever's query model leaves out the rows of another (`BM25Index.nearest(..., model=)`),
which are found by their words until `python -m app.cli.archive --reembed` embeds them again.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

import anyio.to_thread
from redis.exceptions import RedisError

from memory.archive.tiers import TIERS, Snapshot
from memory.archive.view import ArchivedTiers, Tagged
from memory.models import ArchiveTier, RecallRequest, ScoredMemory
from memory.recall.keyword_index import BM25Index, KeywordIndexCache
from memory.recall.retrieval import HybridRetriever

DEFAULT_TIERS: tuple[ArchiveTier, ...] = ("hot", "warm")
HOT: tuple[ArchiveTier, ...] = ("hot",)
log = logging.getLogger(__name__)
Choice = Literal["requested", "default", "cold_fallback"]


@dataclass(frozen=True, slots=True)
class TierChoice:
    searched: tuple[ArchiveTier, ...]
    choice: Choice
    detail: str


@dataclass(frozen=True, slots=True)
class TieredHits:
    hits: list[ScoredMemory]
    tiers: TierChoice


class TieredSearch:
    def __init__(
        self,
        retriever: HybridRetriever,
        archive: ArchivedTiers,
        *,
        warm_cache: KeywordIndexCache | None = None,
        cold_cache: KeywordIndexCache | None = None,
        cold_fallback_similarity: float = 0.3,
    ) -> None:
        self._retriever = retriever
        self._archive = archive
        self.warm_cache = warm_cache or KeywordIndexCache(100_000)
        self.cold_cache = cold_cache or KeywordIndexCache(50_000)
        self._fallback = cold_fallback_similarity

    async def search(self, user_id: str, request: RecallRequest) -> TieredHits:
        """The request's hits over the tiers it asks for (`request.as_of` is set: `MemoryService.recall`).
        The cold fallback looks at the hits that pass `request.min_relevance`: hot + warm holding nothing
        relevant searches cold too."""
        try:
            snap = await self._archive.snapshot(user_id)
        except RedisError:  # as LtmVersions.get: any Redis failure
            # as with versions and placements: search goes on with what it can reach (hot alone: which
            # tier answers for an id in a move is in Redis)
            log.warning("archive state unavailable; searching hot only")
            hits = await self._search(user_id, request, Snapshot(), HOT)
            return TieredHits(hits, TierChoice(HOT, "default", "archive state unavailable (Redis): hot only"))
        if request.tiers:
            chosen = tuple(t for t in TIERS if t in request.tiers)
            hits = await self._search(user_id, request, snap, chosen)
            return TieredHits(hits, TierChoice(chosen, "requested", "the tiers the request named"))
        hits = await self._search(user_id, request, snap, DEFAULT_TIERS)
        best = max((h.similarity for h in hits), default=None)
        if not snap.has_cold or (best is not None and best >= self._fallback):
            detail = (
                "no cold memories"
                if not snap.has_cold
                else f"best similarity {best:.2f} >= {self._fallback:.2f}"
            )
            return TieredHits(hits, TierChoice(DEFAULT_TIERS, "default", detail))
        every: tuple[ArchiveTier, ...] = ("hot", "warm", "cold")
        hits = await self._search(user_id, request, snap, every)
        detail = (
            "hot + warm found nothing"
            if best is None
            else f"best similarity {best:.2f} < {self._fallback:.2f}"
        )
        return TieredHits(hits, TierChoice(every, "cold_fallback", detail))

    async def _search(
        self, user_id: str, request: RecallRequest, snap: Snapshot, tiers: Sequence[ArchiveTier]
    ) -> list[ScoredMemory]:
        archived: list[tuple[BM25Index, Collection[str]]] = []
        if snap.archived:
            if "warm" in tiers:
                archived.append((await self.index(user_id, snap, "warm"), snap.hidden("warm")))
            if "cold" in tiers and snap.has_cold:
                archived.append((await self.index(user_id, snap, "cold"), snap.hidden("cold")))
        return await self._retriever.search(
            user_id, request, hot="hot" in tiers, hidden_hot=snap.hidden("hot"), archived=archived
        )

    async def index(self, user_id: str, snap: Snapshot, tier: ArchiveTier) -> BM25Index:
        """The user's warm or cold index at this archive version: cached, or built from that tier
        (every record, hidden ones too: hiding is per search, the snapshot decides)."""
        cache = self.warm_cache if tier == "warm" else self.cold_cache
        cached = cache.get(user_id, snap.version)
        if cached is not None:
            return cached
        memories, vectors, models = await self._load(user_id, tier)
        index = await anyio.to_thread.run_sync(lambda: BM25Index(memories, vectors, models=models))
        cache.put(user_id, snap.version, index)
        return index

    async def _load(self, user_id: str, tier: ArchiveTier) -> Tagged:
        everything = Snapshot(version=1, has_cold=True)  # nothing hidden
        if tier == "warm":
            return await self._archive.warm_with_vectors(user_id, everything)
        return await self._archive.cold_with_vectors(user_id, everything)

    def forget_user(self, user_id: str) -> None:
        self.warm_cache.drop(user_id)
        self.cold_cache.drop(user_id)
