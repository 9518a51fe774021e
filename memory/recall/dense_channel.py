"""The dense channel of a search: its candidates (exact cosine over the in-process vectors of a user
within `in_process_dense_max`, else the store's query, and each archived tier's vectors), the cosine of
candidates only other channels found, and which candidates sit in the query's cluster.
`HybridRetriever` (memory/recall/retrieval.py) calls these with its store and weights."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from memory.longterm.chroma import LongTermStore
from memory.longterm.dense_models import DenseModel, DenseModelChanged
from memory.models import Memory, RecallRequest
from memory.recall.fusion import RankingWeights, Scope, _visible, cluster_members
from memory.recall.keyword_index import BM25Index

__all__ = ["clusters", "dense_hits", "fill_cosine"]


async def dense_hits(
    store: LongTermStore,
    w: RankingWeights,
    user_id: str,
    index: BM25Index,
    qvec: np.ndarray,
    request: RecallRequest,
    scope: Scope,
    model: DenseModel,
) -> list[tuple[Memory, float]]:
    """The dense channel's candidates: hot (in process, or the store) and each archived tier."""
    filters, hidden_hot = request.filters, scope.hidden_hot
    n_dense = max(w.dense_candidates, request.top_k)
    found_hits: list[tuple[Memory, float]] = []
    if len(index):
        if index.has_vectors and len(index) <= w.in_process_dense_max:
            # the index holds every vector of this user at the current version (or of every memory a
            # provisional index holds: memory/recall/cold_start.py): exact cosine here, no round trip
            found_hits = index.nearest(qvec, limit=n_dense, keep=_visible(filters, hidden_hot))
        else:
            try:
                found = await store.query(
                    user_id,
                    qvec.tolist(),
                    n_results=n_dense + len(hidden_hot),
                    filters=filters,
                    model=model.tag or None,
                    user_rows=len(index),
                )
            except DenseModelChanged:  # switched since the query was embedded: keywords this once
                found = []
            found_hits = [(m, sim) for m, sim in found if m.id not in hidden_hot][:n_dense]
    for extra, hidden in scope.archived:  # exact cosine over the archived tier's vectors
        found_hits += extra.nearest(
            qvec, limit=n_dense, keep=_visible(filters, hidden), model=model.tag or None
        )
    return found_hits


async def fill_cosine(
    store: LongTermStore,
    user_id: str,
    missing: Sequence[str],
    sources: Sequence[tuple[BM25Index, Collection[str]]],
    qvec: np.ndarray,
    cosine: dict[str, float],
    model: DenseModel,
) -> None:
    """The cosine of candidates only other channels found, from the indexes' vectors (of the query's
    model only: an archived row of another model has none), else the store's."""
    if not missing:
        return
    tag = model.tag or None
    for source, _ in sources:
        cosine.update(source.cosine([mid for mid in missing if mid in source.memories], qvec, model=tag))
    still = [mid for mid in missing if mid not in cosine]
    if still:  # index built without vectors: ask the store
        vectors = await store.embeddings(user_id, still)
        for mid, vec in vectors.items():
            cosine[mid] = float(np.dot(np.asarray(vec, dtype=np.float32), qvec))


async def clusters(store: LongTermStore, user_id: str, candidates: list[str], qvec: np.ndarray) -> set[str]:
    """The candidates in the query's cluster of stored vectors (a boost, never a filter)."""
    vectors = await store.embeddings(user_id, candidates)
    ids = [mid for mid in candidates if mid in vectors]
    mask = cluster_members(np.asarray([vectors[i] for i in ids], dtype=np.float32), qvec)
    return {mid for mid, keep in zip(ids, mask, strict=True) if keep}
