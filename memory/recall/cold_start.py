"""A large user's searches while this worker loads their index (issue 45).

A worker's first search of a user past `IN_PROCESS_INDEX_MAX` (58,000 memories at 10M tokens) used to
wait for the user's snapshot: 3 s to read it from Redis and 4 s to decode it. That load now runs in the
background (memory/recall/user_index.py), and until it is done each search is answered over a
provisional index of the memories the stores can give at once for that question:

- the `CANDIDATES` nearest the query in Chroma (the unfiltered query of a user who holds most of their
  collection: memory/longterm/wide_query.py), with their vectors read in the same call;
- the newest statements of every claim those candidates state (the claim index the writer keeps in
  Redis, memory/write/claim_index.py), so a fact that changed is answered with its latest statement
  even when only an older one was near the question;
- the `KEYWORD_CANDIDATES` best of the user's memories by the keyword channel over all of them, read off
  the buckets of the query's terms in the user's snapshot (memory/recall/term_buckets.py): what the
  loaded index's keyword channel would find (at the snapshot's version: later writes are found by
  their vectors), without loading it. Without it these answers found 1 of 12 on a long history (the
  set puts other people's facts in the user's words around every fact: the words find it).

The ranking then runs over that index as over any other (keywords, validity, categories, the user's
own statements), but its keyword channel counts each memory's own words, not the turns around it
(`OWN_WORDS`), and what it cannot see is what neither channel nor the claims reach: a category or
ownership question's statements far from the question's vector and words. Those searches are the few
seconds a worker takes to load the user; the figures (recall of these answers against the loaded
index's, their latency) are in docs/performance.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import anyio.to_thread
import numpy as np

from memory.errors import REDIS_UNAVAILABLE
from memory.longterm.chroma import LongTermStore
from memory.models import Memory, SearchFilters
from memory.recall import term_buckets
from memory.recall.keyword_index import BM25Index, BM25Params
from memory.recall.postings import shared_texts

__all__ = [
    "CANDIDATES",
    "KEYWORD_CANDIDATES",
    "OWN_WORDS",
    "ClaimLookup",
    "QueryWords",
    "TermLookup",
    "ProvisionalIndex",
    "keyword_words",
    "provisional_index",
]

log = logging.getLogger(__name__)

CANDIDATES = 200  # nearest memories a provisional index holds (the wide query reads up to 1.5× as many)
KEYWORD_CANDIDATES = 100  # best memories by the keyword channel a provisional index holds besides
# A provisional index counts each memory's own words only: the turns around a memory (~6,000 characters
# of a long turn's neighbours) were 9/10 of its build, ~600 ms for 250 memories against ~65 without
OWN_WORDS = BM25Params(context_weight=0.0)
INDEX_PARAMS = BM25Params()  # a user's index's (the keyword channel's best are read as it scores them)


class ClaimLookup(Protocol):
    """Which memories state these claims, newest first (memory/write/claim_index.py's `ClaimIndex`)."""

    async def ids(self, user_id: str, claim_keys: Iterable[str]) -> list[str]: ...


class TermLookup(Protocol):
    """The head and the buckets of these terms in the user's snapshot (memory/recall/snapshot.py's
    `IndexSnapshots`); None when it has none."""

    async def terms(
        self, user_id: str, tokens: Iterable[str]
    ) -> tuple[term_buckets.Head, dict[int, bytes]] | None: ...


@dataclass(frozen=True, slots=True)
class QueryWords:
    """The query's keyword terms and the terms added at their weight (the bilingual lexicon's), as the
    loaded index's keyword channel takes them."""

    tokens: tuple[str, ...]
    weights: Mapping[str, float] | None


async def keyword_words(
    terms: TermLookup,
    user_id: str,
    words: QueryWords,
    params: BM25Params = INDEX_PARAMS,
    limit: int = KEYWORD_CANDIDATES,
) -> term_buckets.Words | None:
    """The user's `limit` best memories by the keyword channel and the query's terms' rows, read off
    their snapshot's buckets of these terms (None: no snapshot with buckets, or Redis is down).
    `params`: the index's (every user index has the default ones)."""
    try:
        found = await terms.terms(user_id, [*words.tokens, *(words.weights or {})])
    except REDIS_UNAVAILABLE as exc:
        log.warning("keywords skipped in a provisional index: redis unavailable", extra={"reason": str(exc)})
        return None
    if found is None:
        return None
    head, buckets = found

    def scored() -> term_buckets.Words:
        read = term_buckets.read(
            head,
            buckets,
            words.tokens,
            weights=words.weights,
            k1=params.k1,
            b=params.b,
            unigram_weight=params.unigram_weight,
            limit=limit,
        )
        read.ids.row_of("")  # its id -> row map made here, not in the event loop (8 ms at 19,000)
        return read

    return await anyio.to_thread.run_sync(scored)


class _UsersIdf(Mapping[str, float]):
    """The user's idf of the terms read off the buckets, else the provisional index's own (made when
    asked, as `InverseFrequencies` makes them: nothing computed for its whole vocabulary up front)."""

    def __init__(self, users: Mapping[str, float], own: Mapping[str, float]) -> None:
        self._users = users
        self._own = own

    def __getitem__(self, term: str) -> float:
        found = self._users.get(term)
        return self._own[term] if found is None else found

    def __contains__(self, term: object) -> bool:
        return term in self._users or term in self._own

    def __iter__(self) -> Iterator[str]:
        yield from self._users
        yield from (t for t in self._own if t not in self._users)

    def __len__(self) -> int:
        return sum(1 for _ in self)


class ProvisionalIndex(BM25Index):
    """A provisional index whose keyword channel and coverage, for the query its words were read for,
    are the user's whole index's: the best memories by BM25 over every memory (their contexts counted),
    and which query terms a memory or its context holds, from the same runs. Its own postings count a
    memory's own words (`OWN_WORDS`): ranked by those, the same candidates found fewer answers (any@10
    0.667 against 0.75 on 19,080 memories), and a candidate's context tokenised for its coverage took
    ~70 ms of the event loop a search."""

    def __init__(self, memories: list[Memory], vectors: np.ndarray | None, words: term_buckets.Words) -> None:
        super().__init__(memories, vectors, OWN_WORDS)
        self._words = words
        self._idf = _UsersIdf(words.idf, self._idf)  # a read term's idf is the user's (coverage, known)

    def search(
        self, query_tokens: Iterable[str], *, limit: int, weights: Mapping[str, float] | None = None
    ) -> list[tuple[str, float]]:
        tokens = tuple(query_tokens)
        if tokens != self._words.tokens or weights != self._words.weights:  # another query: its own words
            return super().search(tokens, limit=limit, weights=weights)
        return [(mid, score) for mid, score in self._words.hits if mid in self.memories][:limit]

    def _terms_held(self, mids: Sequence[str], terms: Sequence[str]) -> list[set[str]] | None:
        return self._words.held(mids, terms)


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
    keywords: Awaitable[term_buckets.Words | None] | None = None,
) -> BM25Index:
    """The index of the user's memories nearest `qvec`, of the keyword channel's best (`keywords`, from
    `keyword_words`: read from the store beside the dense query) and of the latest statements of their
    claims, with their vectors. `memories`: how many the user has (their snapshot's count: the wide
    query's share)."""

    async def by_words() -> tuple[term_buckets.Words | None, list[Memory], np.ndarray]:
        words = await keywords if keywords is not None else None
        if words is None or not words.hits:
            return words, [], np.zeros((0, 0), np.float32)
        worded, worded_rows = await store.get_with_vectors(user_id, [mid for mid, _ in words.hits])
        return words, worded, worded_rows

    (found, rows), (words, worded, worded_rows) = await asyncio.gather(
        store.query_with_vectors(
            user_id, qvec.tolist(), n_results=n, filters=filters, model=model, user_rows=memories
        ),
        by_words(),
    )
    held = [m for m, _ in found]
    near = {m.id for m in held}
    fresh = [i for i, m in enumerate(worded) if m.id not in near]
    held, rows = _joined(held, rows, [worded[i] for i in fresh], worded_rows[fresh] if fresh else None)
    if not held:
        return BM25Index([])
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
                held, rows = _joined(held, rows, more, more_rows)
    vectors = rows if rows is not None and len(rows) == len(held) else None
    if words is None:
        return await anyio.to_thread.run_sync(lambda: BM25Index(shared_texts(held), vectors, OWN_WORDS))
    read = words
    return await anyio.to_thread.run_sync(lambda: ProvisionalIndex(shared_texts(held), vectors, read))


def _joined(
    held: list[Memory], rows: np.ndarray | None, more: list[Memory], more_rows: np.ndarray | None
) -> tuple[list[Memory], np.ndarray | None]:
    """Both lists of memories and their vectors (None: some lack theirs: the index then has none)."""
    if not more:
        return held, rows
    whole = (
        rows is not None
        and more_rows is not None
        and len(rows) == len(held)
        and len(more_rows) == len(more)
        and (not len(rows) or rows.shape[1:] == more_rows.shape[1:])
    )
    if not whole or rows is None or more_rows is None:
        return held + more, None
    return held + more, np.concatenate([rows, more_rows]) if len(rows) else more_rows
