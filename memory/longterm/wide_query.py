"""A large user's dense query without Chroma's `user_id` filter (issue 45).

Chroma 1.5.9 evaluates a metadata filter over every record it matches before it searches: a query of
one user's nearest 60 cost 20 ms at 5,000 of their records in the collection, 60 ms at 20,000 and
170 ms at 58,000, where the same query without the filter took 6-9 ms (`bench/chroma_where.py`). A
user who holds most of their shard's collection is therefore searched without it: the collection's
nearest `k` (enough that, at the user's share of the collection, `n` of them are theirs), the other
users' rows dropped here. When fewer than `n` of the user's come back (their share was smaller than
the counts said), the caller asks again with the filter, so the answer is never shorter than the
filtered query's. Pure functions: memory/longterm/chroma.py runs the queries.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from memory.embedding.base import Vectors
from memory.longterm.records import from_record
from memory.models import Memory

__all__ = ["COUNT_TTL_SECONDS", "WIDE_MAX", "WIDE_SHARE", "own_hits", "wide_size"]

log = logging.getLogger(__name__)

COUNT_TTL_SECONDS = 60.0  # how long a collection's record count stands for the choice

WIDE_SHARE = 0.25  # the user's share of the collection from which a query goes without the filter
WIDE_MAX = 600  # rows asked of an unfiltered query at most (a row's metadata costs ~0.08 ms to return)
_MARGIN = 1.5  # the share is counted, not known for the query's neighbourhood: ask this much more


def wide_size(n_results: int, user_rows: int, collection_rows: int) -> int | None:
    """How many of the collection's nearest rows an unfiltered query asks for, or None when the user's
    share of the collection is too small for one to pay."""
    if n_results < 1 or user_rows < 1 or collection_rows < 1:
        return None
    share = min(1.0, user_rows / collection_rows)
    if share < WIDE_SHARE:
        return None
    k = math.ceil(n_results / share * _MARGIN)
    return min(k, collection_rows) if k <= WIDE_MAX else None


def own_hits(
    user_id: str, result: Mapping[str, Any], *, filtered: bool = True
) -> tuple[list[tuple[Memory, float]], Vectors]:
    """The user's rows of a query's result as `(memory, cosine similarity)`, in its order, and their
    stored vectors when the query asked for them (else an empty matrix); every other row is dropped
    unread: an unfiltered query's other users' rows (`filtered=False`: expected), or in a query
    filtered by the user a record a concurrent delete emptied (logged, as `records.rows_of` does)."""
    ids = (result.get("ids") or [[]])[0]
    docs = (result.get("documents") or [[]])[0]
    metas = (result.get("metadatas") or [[]])[0]
    dists = (result.get("distances") or [[]])[0]
    raw = (result.get("embeddings") or [None])[0]
    out: list[tuple[Memory, float]] = []
    rows: list[int] = []
    for row, (i, doc, meta, dist) in enumerate(zip(ids, docs, metas, dists, strict=True)):
        if meta and meta.get("user_id") == user_id:
            out.append((from_record(i, doc, dict(meta)), 1.0 - float(dist)))
            rows.append(row)
        elif filtered:
            log.warning("chroma returned a record without this user's metadata; skipped", extra={"id": i})
    if raw is None or not len(raw) or not rows:
        return out, np.zeros((0, 0), dtype=np.float32)
    return out, np.asarray(raw, dtype=np.float32)[rows]
