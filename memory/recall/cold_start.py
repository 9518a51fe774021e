"""A large user's searches while this worker loads their index (issue 45).

A worker's first search of a user past `IN_PROCESS_INDEX_MAX` (58,000 memories at 10M tokens) used to
wait for the user's snapshot: 3 s to read it from Redis and 4 s to decode it. That load now runs in the
background (memory/recall/user_index.py), and until it is done each search is answered over a
provisional index of the memories the stores can give at once for that question:

- the `CANDIDATES` nearest the query in Chroma (the unfiltered query of a user who holds most of their
  collection: memory/longterm/wide_query.py), with their vectors read in the same call;
- the newest statements of every claim those candidates state (the claim index the writer keeps in
  Redis, memory/write/claim_index.py), so a fact that changed is answered with its latest statement
  even when only an older one was near the question.

The ranking then runs over that index as over any other (keywords, validity, categories, the user's
own statements), but its keyword channel counts each memory's own words, not the turns around it
(`OWN_WORDS`), and what it cannot see is what neither the dense neighbours nor their claims reach: a
memory only its rare words would find, and a category or ownership question's statements far from the
question's vector. Those searches are the few seconds a worker takes to load the user; the figures
(recall of these answers against the loaded index's, their latency) are in docs/performance.md.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Protocol

import anyio.to_thread
import numpy as np

from memory.errors import REDIS_UNAVAILABLE
from memory.longterm.chroma import LongTermStore
from memory.models import SearchFilters
from memory.recall.keyword_index import BM25Index, BM25Params
from memory.recall.postings import shared_texts

__all__ = ["CANDIDATES", "OWN_WORDS", "ClaimLookup", "provisional_index"]

log = logging.getLogger(__name__)

CANDIDATES = 200  # nearest memories a provisional index holds (the wide query reads up to 1.5× as many)
# A provisional index counts each memory's own words only: the turns around a memory (~6,000 characters
# of a long turn's neighbours) were 9/10 of its build, ~600 ms for 250 memories against ~65 without
OWN_WORDS = BM25Params(context_weight=0.0)


class ClaimLookup(Protocol):
    """Which memories state these claims, newest first (memory/write/claim_index.py's `ClaimIndex`)."""

    async def ids(self, user_id: str, claim_keys: Iterable[str]) -> list[str]: ...


async def provisional_index(
    store: LongTermStore,
    claims: ClaimLookup | None,
    user_id: str,
    qvec: np.ndarray,
    *,
    memories: int,
    filters: SearchFilters,
    model: str | None,
    n: int = CANDIDATES,
) -> BM25Index:
    """The index of the user's memories nearest `qvec` and of the latest statements of their claims, with
    their vectors. `memories`: how many the user has (their snapshot's count: the wide query's share)."""
    found, rows = await store.query_with_vectors(
        user_id, qvec.tolist(), n_results=n, filters=filters, model=model, user_rows=memories
    )
    held = [m for m, _ in found]
    if not held:
        return BM25Index([])
    extra: list[str] = []
    if claims is not None:
        try:
            stated = await claims.ids(user_id, {key for m in held for key, _ in m.facts})
        except REDIS_UNAVAILABLE as exc:  # the nearest alone: a changed fact may show an older statement
            log.warning(
                "claims skipped in a provisional index: redis unavailable", extra={"reason": str(exc)}
            )
        else:
            near = {m.id for m in held}
            extra = [mid for mid in dict.fromkeys(stated) if mid not in near]
    if extra:
        more, more_rows = await store.get_with_vectors(user_id, extra)
        if len(more) and len(more_rows) and len(rows):
            held, rows = held + more, np.concatenate([rows, more_rows])
    vectors = rows if len(rows) == len(held) else None
    return await anyio.to_thread.run_sync(lambda: BM25Index(shared_texts(held), vectors, OWN_WORDS))
