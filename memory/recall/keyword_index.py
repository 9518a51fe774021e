"""The keyword channel: BM25 over a user's memories, CJK-aware.

A text's words are memory/text/tokens.py's (English stems, CJK bigrams and unigrams), so Chinese names,
places and numbers match without a segmenter. An index is built per user from the long-term store and cached in
this process, keyed by the user's write version (a Redis counter bumped on every write and delete), so
every worker sees a change on its next search. A worker that holds no index of a user loads the user's
snapshot from Redis when there is one (memory/recall/snapshot.py) instead of reading the store.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory.longterm.dense_models import same_model
from memory.models import Memory
from memory.recall.dense_rows import QuantisedRows, ranked
from memory.recall.index_cache import KeywordIndexCache as KeywordIndexCache  # moved out; importable here too
from memory.recall.index_views import IndexViews
from memory.recall.postings import (
    ColumnPostings,
    Delta,
    InverseFrequencies,
    LayeredPostings,
    Posting,
    TermFrequencies,
    among,
    columns_under,
    held_weights,
    postings_of,
    shared_weight,
)
from memory.recall.term_rows import COLUMNS_FROM, COMPACT_AFTER, TermRows, by_row, compact
from memory.text.tokens import UNIGRAM, tokenize
from monitoring import metrics

_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@functools.lru_cache(maxsize=8192)
def words_of(text: str) -> frozenset[str]:
    """The distinct tokens of `text`, remembered for the last 8,192 texts: forget reads a memory's words
    again and again (memory/recall/relevance.py). A search's coverage of its candidates uses
    `hashed_words` (issue 29: tokenising them each time was 3-30 ms of a search; issue 45: their
    contexts made these sets far larger than the ~2 KB each of short memories)."""
    return frozenset(tokenize(text))


@functools.lru_cache(maxsize=8192)
def hashed_words(text: str) -> np.ndarray:
    """The distinct tokens of `text` as their sorted 64-bit hashes, remembered for the last 8,192 texts:
    what `BM25Index.coverage` asks of a memory's words and of its context's (is this query word there).
    8 bytes a word: `words_of`'s frozensets took 30-40 and a string of each token besides, and the
    context of a long turn's segment is the turns around it (~800 distinct words): a worker that
    searched a user of 5,875 such memories 102 times held 87 MiB of them (issue 45). Two different
    words of one hash (1 in 2^64) would count as both there."""
    return np.unique(np.fromiter((hash(t) for t in tokenize(text)), dtype=np.int64))


@dataclass(frozen=True, slots=True)
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    unigram_weight: float = 0.3
    context_weight: float = 0.9  # a term in the surrounding messages counts this much of one in the memory


class BM25Index:
    """BM25 over one user's memories, plus their vectors (int8 with a scale per row:
    memory/recall/dense_rows.py) so that candidates found only by keywords get a cosine without another
    round trip to the vector store, and the dense pass over them needs no conversion of the matrix.

    Immutable once built: `updated()` returns a new index that shares every unchanged memory's term
    frequencies, so a write costs the tokenisation of the changed memories, not of all of them, and
    a search running in another thread never sees a half-applied change.

    `models` (archived tiers: memory/archive/search.py): the dense model tag of each memory's vector,
    None for a row of any (hot indexes have none); `nearest` and `cosine` given a query's `model` leave
    out the rows of another model (they are still found by their words)."""

    _models: dict[str, str]  # id -> the dense model of its vector (untagged: any)
    _fitting: dict[str, tuple[list[str], np.ndarray]]  # query model -> the ids and rows `nearest` ranks

    def __init__(
        self,
        memories: Sequence[Memory],
        vectors: np.ndarray | None = None,
        params: BM25Params = BM25Params(),
        models: Sequence[str | None] | None = None,
    ) -> None:
        self._params = params
        tfs = {m.id: _term_frequencies(m, params) for m in memories}
        usable = vectors is not None and len(vectors) == len(memories)
        rows = {m.id: i for i, m in enumerate(memories)} if usable else {}
        matrix = QuantisedRows.of(vectors) if usable and vectors is not None else None
        if len(tfs) < COLUMNS_FROM:
            self._set({m.id: m for m in memories}, tfs, rows, matrix)
        else:  # kept as a loaded snapshot holds them (memory/recall/term_rows.py)
            stored = TermRows.of(tfs.values())
            del tfs  # the dicts go: a memory's is read off the columns when asked
            ids = [m.id for m in memories]
            held, columns = stored.held(ids)
            lengths = dict(zip(ids, stored.lengths.tolist(), strict=True))
            self._set({m.id: m for m in memories}, held, rows, matrix, columns or {}, lengths)
        tagged = zip(memories, models, strict=True) if models is not None else ()
        self._models = {m.id: tag for m, tag in tagged if tag is not None}

    def _set(
        self,
        memories: dict[str, Memory],
        tfs: Mapping[str, dict[str, float]],
        rows: dict[str, int],
        matrix: QuantisedRows | None,
        postings: Mapping[str, Posting] | None = None,
        lengths: dict[str, float] | None = None,
    ) -> None:
        """`tfs`: each memory's term frequencies (a loaded snapshot's are `TermFrequencies`: searches
        need only `postings` and `lengths`, a write those of what it removes). `postings`: each term's
        memory ids and term frequencies, in the order of the memories; `lengths`: each memory's length.
        Both computed here from `tfs` when None. `rows`: each vector's row in `matrix`, in row order."""
        self.memories = memories
        self._tf = tfs
        self._row = rows
        self._ids = list(rows)  # by row
        self._vectors = matrix
        if postings is None or lengths is None:
            made = self._tf
            lengths = {mid: sum(tf.values()) for mid, tf in made.items()}
            postings = postings_of(made.items())
        self._len = lengths
        self._postings: Mapping[str, Posting] = postings
        n = max(1, len(memories))
        self._avg_len = (sum(self._len.values()) / n) or 1.0
        self._idf: Mapping[str, float] = InverseFrequencies(postings, n)
        self.names = frozenset(m.name for m in memories.values() if m.name)
        self.views = IndexViews(memories)  # by hash, by claim key, chains, newest first: on first use
        self._models = {}
        self._fitting = {}

    @classmethod
    def from_parts(
        cls,
        memories: Sequence[Memory],
        tfs: Sequence[dict[str, float]] | TermFrequencies,
        vectors: QuantisedRows | np.ndarray | None,
        params: BM25Params = BM25Params(),
        postings: Mapping[str, Posting] | None = None,
        lengths: Sequence[float] | None = None,
    ) -> BM25Index:
        """An index from what `parts()` gave (term frequencies already computed, one per memory, or a
        loaded snapshot's `TermFrequencies`, made when asked, and the vectors row-aligned with
        `memories`, quantised or float, or None): no tokenising. `postings` and `lengths` (one per
        memory), when given, spare the term frequencies until something needs them (`BM25Index._set`)."""
        index = cls.__new__(cls)
        index._params = params
        usable = vectors is not None and len(vectors) == len(memories)
        rows = {m.id: i for i, m in enumerate(memories)} if usable else {}
        matrix = None
        if usable and vectors is not None:
            matrix = vectors if isinstance(vectors, QuantisedRows) else QuantisedRows.of(vectors)
        ids = [m.id for m in memories]
        index._set(
            dict(zip(ids, memories, strict=True)),
            tfs if isinstance(tfs, TermFrequencies) else dict(zip(ids, tfs, strict=True)),
            rows,
            matrix,
            postings,
            dict(zip(ids, lengths, strict=True)) if lengths is not None and postings is not None else None,
        )
        return index

    def parts(self) -> tuple[list[Memory], list[dict[str, float]], QuantisedRows | None]:
        """The memories, each one's term frequencies and the quantised vectors in the same order (None
        unless every memory has one): `from_parts` rebuilds the index."""
        memories, matrix = self._in_order()
        return memories, list(self._tfs_in_order(memories)), matrix

    def stored(self) -> tuple[list[Memory], ColumnPostings | None, np.ndarray, QuantisedRows | None]:
        """What a snapshot stores: the memories, their postings as columns in that order (None: no
        memory has a word), each one's length, and the quantised vectors (`parts`). The columns are this
        index's own when no write changed them, else made: new columns of the kept rows and what was
        written since (`compact`), or of an index of dicts."""
        memories, matrix = self._in_order()
        ids = [m.id for m in memories]
        lengths = np.asarray([self._len[mid] for mid in ids], dtype=np.float64)
        postings, tfs = self._postings, self._tf
        if isinstance(postings, ColumnPostings):
            return memories, postings, lengths, matrix
        made = compact(ids, tfs, self._len) if isinstance(tfs, TermFrequencies) else None
        if made is not None:
            return memories, made[1], lengths, matrix
        _, columns = TermRows.of(self._tfs_in_order(memories), lengths.tolist()).held(ids)
        return memories, columns, lengths, matrix

    def _tfs_in_order(self, memories: Sequence[Memory]) -> Iterator[dict[str, float]]:
        tfs = self._tf
        if not isinstance(tfs, TermFrequencies):
            return (tfs[m.id] for m in memories)
        base = by_row(tfs.columns) if tfs.columns is not None else None
        return tfs.in_order([m.id for m in memories], base.row if base is not None else lambda _: {})

    def _in_order(self) -> tuple[list[Memory], QuantisedRows | None]:
        memories = list(self.memories.values())
        matrix = None
        if self._vectors is not None and self.has_vectors:
            order = [self._row[m.id] for m in memories]
            in_order = order == list(range(len(order)))
            matrix = self._vectors if in_order else self._vectors.select(order)
        return memories, matrix

    @property
    def params(self) -> BM25Params:
        return self._params

    def updated(
        self, upserted: Sequence[Memory], vectors: np.ndarray | None, deleted: Iterable[str]
    ) -> BM25Index:
        """A new index with `upserted` added or replaced (with their vectors) and `deleted` removed."""
        gone = set(deleted) | {m.id for m in upserted}
        memories = {mid: m for mid, m in self.memories.items() if mid not in gone}
        old_tfs = self._tf
        lengths = {mid: n for mid, n in self._len.items() if mid not in gone}
        added: list[tuple[str, dict[str, float]]] = []
        same: dict[str, dict[str, float]] = {}  # the replaced memories whose words did not change
        for m in upserted:
            tf = _term_frequencies(m, self._params)
            was = self.memories.get(m.id)
            if was is not None and was.embed_text == m.embed_text and was.context == m.context:
                same[m.id] = tf  # a supersession marks the old statement: its words were these
            memories[m.id] = m
            lengths[m.id] = sum(tf.values())
            added.append((m.id, tf))
        tfs: Mapping[str, dict[str, float]]
        if isinstance(old_tfs, TermFrequencies):  # a loaded snapshot's: none of the kept are made
            tfs = old_tfs.after_write(gone, dict(added))
        else:
            tfs = {mid: tf for mid, tf in old_tfs.items() if mid not in gone}
            tfs.update(added)
        # only the terms of what changed: the rest of the postings are shared with this index
        gone_tfs = (
            {**same, **old_tfs.many(gone - same.keys())}  # read off the columns, in one pass
            if isinstance(old_tfs, TermFrequencies)
            else {mid: old_tfs[mid] for mid in gone if mid in old_tfs}
        )
        postings: Mapping[str, Posting] = LayeredPostings.after_write(self._postings, gone_tfs, added)
        if isinstance(tfs, TermFrequencies) and len(tfs.own) + len(tfs.removed) >= COMPACT_AFTER:
            tfs, postings = compact(list(memories), tfs, lengths) or (tfs, postings)
        elif not isinstance(tfs, TermFrequencies) and len(memories) >= COLUMNS_FROM:  # grown past it
            ids = list(memories)
            rows_of = TermRows.of([tfs[mid] for mid in ids], [lengths[mid] for mid in ids])
            held, columns = rows_of.held(ids)
            tfs, postings = held, columns if columns is not None else {}
        rows: dict[str, int] = {}
        matrix: QuantisedRows | None = None
        # a delete-only update needs no new vectors: the kept rows keep theirs
        new_vectors_ok = not upserted or (vectors is not None and len(vectors) == len(upserted))
        if self._vectors is not None and new_vectors_ok:
            new_ids = {m.id for m in upserted}
            kept = [mid for mid in memories if mid not in new_ids and mid in self._row]
            if len(kept) + len(upserted) == len(memories):  # every memory has a vector
                old = self._vectors.select([self._row[mid] for mid in kept])
                new = QuantisedRows.of(vectors) if upserted and vectors is not None else None
                if new is None:
                    matrix = old
                elif not kept:  # also when the old index was empty (its matrix has no columns)
                    matrix = new
                elif old.dim == new.dim:
                    matrix = old.concat(new)
                if matrix is not None:
                    rows = {mid: i for i, mid in enumerate([*kept, *(m.id for m in upserted)])}
        fresh = BM25Index.__new__(BM25Index)
        fresh._params = self._params
        fresh._set(memories, tfs, rows, matrix, postings, lengths)
        fresh._models = {mid: tag for mid, tag in self._models.items() if mid not in gone}
        removed = {mid: self.memories[mid] for mid in gone if mid in self.memories}
        fresh.views = self.views.after_write(memories, removed, upserted)
        return fresh

    def __len__(self) -> int:
        return len(self.memories)

    def vectors_of(self, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored vectors (float32, as quantised) of those of `ids` that have one."""
        if self._vectors is None:
            return {}
        found = [i for i in ids if i in self._row]
        if not found:
            return {}
        return dict(zip(found, self._vectors.rows([self._row[i] for i in found]), strict=True))

    def cosine(self, ids: Sequence[str], query: np.ndarray, *, model: str | None = None) -> dict[str, float]:
        """Cosine of the query with the stored vectors of `ids` (vectors are unit length); `model`: the
        query's dense model (the ids whose vector is of another have none)."""
        if self._vectors is None:
            return {}
        tags = self._models if model else {}
        found = [i for i in ids if i in self._row and (i not in tags or same_model(tags[i], model or ""))]
        if not found:
            return {}
        sims = self._vectors.rows([self._row[i] for i in found]) @ np.asarray(query, dtype=np.float32)
        return {i: float(x) for i, x in zip(found, sims, strict=True)}

    def _rows_for(self, model: str | None) -> tuple[list[str], np.ndarray | None]:
        """The ids whose vector may be ranked against a query of `model` (None or "": every one), and
        their rows (None: every row, in order)."""
        if not model or not self._models:
            return self._ids, None
        fitting = self._fitting.get(model)
        if fitting is None:
            tags = self._models
            fits = {tag: same_model(tag, model) for tag in set(tags.values())}
            ids = [i for i in self._ids if i not in tags or fits[tags[i]]]
            fitting = self._fitting[model] = (ids, np.asarray([self._row[i] for i in ids], dtype=np.int64))
        if len(fitting[0]) < len(self._row):
            metrics.DENSE_ROWS_SKIPPED.inc(len(self._row) - len(fitting[0]))
            return fitting
        return self._ids, None

    @property
    def has_vectors(self) -> bool:
        return self._vectors is not None and len(self._row) == len(self.memories)

    def nearest(
        self,
        query: np.ndarray,
        *,
        limit: int,
        keep: Callable[[Memory], bool] | None = None,
        model: str | None = None,
    ) -> list[tuple[Memory, float]]:
        """Cosine nearest neighbours among this user's memories (brute force over every quantised row:
        1.4 ms of CPU at 20,000 memories), best first, `keep` applied; `model`: the query's dense model
        (rows tagged with another are left out). Only the best few are sorted (`ranked`); more of them
        when `keep` turns many away."""
        if self._vectors is None or not len(self._row) or limit <= 0:
            return []
        ids, at = self._rows_for(model)
        if not ids:
            return []
        sims = self._vectors.scores(query)
        if at is not None:
            sims = sims[at]
        out: list[tuple[Memory, float]] = []
        seen = 0
        wanted = limit if keep is None else 2 * limit + 16
        while seen < len(sims):
            order = ranked(sims, wanted)
            for j in order[seen:]:
                m = self.memories[ids[int(j)]]
                if keep is None or keep(m):
                    out.append((m, float(sims[int(j)])))
                    if len(out) == limit:
                        return out
            seen = len(order)
            wanted *= 4
        return out

    def nearest_many(self, queries: np.ndarray, *, limit: int) -> list[list[tuple[Memory, float]]]:
        """`nearest` for several queries at once (the writer's near-duplicate check of a round): one
        matrix product over the user's vectors instead of one pass per query."""
        if self._vectors is None or not len(self._row) or not len(queries):
            return [[] for _ in range(len(queries))]
        ids = self._ids
        sims = self._vectors.scores_many(np.asarray(queries, dtype=np.float32).reshape(len(queries), -1))
        out: list[list[tuple[Memory, float]]] = []
        for row in sims:
            out.append([(self.memories[ids[int(j)]], float(row[int(j)])) for j in ranked(row, limit)])
        return out

    def coverage(
        self, mids: Sequence[str], query_tokens: Sequence[str]
    ) -> list[tuple[float, tuple[str, ...]]]:
        """How much of the query each of `mids` holds, on an absolute scale (relevance's `coverage`).
        Which query words a memory or its context holds is read off the postings (`_terms_held`); only
        its own text is tokenised, to tell its words from its context's: tokenising each candidate's
        context (a long turn's ~6,000 characters) was most of a search's CPU (issue 45)."""
        distinct = list(dict.fromkeys(query_tokens))
        unseen = math.log(1 + (max(1, len(self.memories)) + 0.5) / 0.5)
        held = self._terms_held(mids, distinct)
        out: list[tuple[float, tuple[str, ...]]] = []
        for k, mid in enumerate(mids):
            m = self.memories[mid]
            present = distinct if held is None else [t for t in distinct if t in held[k]]
            hashes = np.fromiter((hash(t) for t in present), dtype=np.int64, count=len(present))
            own = among(hashes, hashed_words(m.embed_text)) if present else np.zeros(0, bool)
            if held is None:  # tokenised: the context too
                around = among(hashes, hashed_words(m.context)) if m.context else np.zeros(len(present), bool)
            else:  # held and not its own: in its context
                around = ~own
            out.append(
                coverage(
                    distinct,
                    {t for t, x in zip(present, own.tolist(), strict=True) if x},
                    {t for t, x in zip(present, around.tolist(), strict=True) if x},
                    self._idf,
                    unseen,
                    unigram_weight=self._params.unigram_weight,
                )
            )
        return out

    def _terms_held(self, mids: Sequence[str], terms: Sequence[str]) -> list[set[str]] | None:
        """Which of `terms` each of `mids` holds in its words or its context: from the term frequencies
        of an index built as dicts, off the columns and the writes since otherwise; None where the
        postings do not say it (a context not counted)."""
        if not self._params.context_weight:
            return None
        columns, changed = columns_under(self._postings)
        tfs = self._tf
        if columns is None or not isinstance(tfs, TermFrequencies):
            return [{t for t in terms if t in tfs[mid]} for mid in mids]
        rows = tfs.base_rows(mids)
        held: list[set[str]] = [set() for _ in mids]
        for t in terms:
            for k in np.flatnonzero(held_weights(columns, changed, t, mids, rows)).tolist():
                held[k].add(t)
        return held

    def known(self, query_tokens: Sequence[str]) -> float:
        """How much of the query the user ever wrote: per script (CJK, Latin letters and digits), the
        idf-weighted share of the query's distinct words that any memory here holds (own words or
        context), single CJK characters at the unigram weight; the larger of the two. Per script, so
        that the English words of "What brand is the guitar 周明 bought?" (unknowable in a Chinese
        store) do not hide that 周明 is known; 0 for an empty index or query."""
        if not self.memories:
            return 0.0
        unseen = math.log(1 + (len(self.memories) + 0.5) / 0.5)
        total = {True: 0.0, False: 0.0}
        found = {True: 0.0, False: 0.0}
        for token in dict.fromkeys(query_tokens):
            cjk = token.startswith(UNIGRAM) or bool(_CJK_RE.match(token))
            idf = self._idf.get(token)
            weight = (idf if idf is not None else unseen) * (
                self._params.unigram_weight if token.startswith(UNIGRAM) else 1.0
            )
            total[cjk] += weight
            found[cjk] += weight if idf is not None else 0.0
        return max((found[k] / total[k] for k in (True, False) if total[k] > 0), default=0.0)

    def _weighted(
        self, query_tokens: Iterable[str], weights: Mapping[str, float] | None
    ) -> Iterator[tuple[str, float]]:
        """The query's terms this index knows, each with its idf as the score counts it: single CJK
        characters at the unigram weight, an added term (`weights`) at its weight."""
        terms = dict.fromkeys(query_tokens, 1.0)
        for token, weight in (weights or {}).items():
            terms.setdefault(token, weight)
        for token, weight in terms.items():
            idf = self._idf.get(token)
            if idf is None:
                continue
            if token.startswith(UNIGRAM):
                idf *= self._params.unigram_weight
            yield token, idf * weight if weight != 1.0 else idf

    def rarest(self, terms: Iterable[str]) -> str | None:
        """The term of `terms` the fewest memories hold (the highest idf), without reading a posting;
        None when one of them is held by none."""
        idf = self._idf
        held = list(terms)
        if not held or any(t not in idf for t in held):
            return None
        return max(held, key=lambda t: idf[t])

    def holding(self, term: str) -> list[str]:
        """The ids of the memories whose words or context have `term` (its posting list)."""
        return list(self._postings[term][0]) if term in self._postings else []

    def search(
        self, query_tokens: Iterable[str], *, limit: int, weights: Mapping[str, float] | None = None
    ) -> list[tuple[str, float]]:
        """BM25 of the query's terms; `weights`: terms to add, each at its weight (a term of
        `query_tokens` keeps 1): the bilingual lexicon's translations (memory/recall/bilingual.py)."""
        k1, b = self._params.k1, self._params.b
        columns, changed = columns_under(self._postings)
        in_columns: list[tuple[str, float]] = []
        dropped: dict[str, frozenset[int]] = {}
        scores: dict[str, float] = {}
        for token, idf in self._weighted(query_tokens, weights):
            entries: Iterable[tuple[str, float]]
            if (
                columns is not None
            ):  # its run scored below, all such terms in one pass; then what writes added
                delta = changed.get(token)
                if token in columns:
                    in_columns.append((token, idf))
                if isinstance(delta, Delta):
                    dropped[token] = delta.dropped
                entries = zip(delta.ids, delta.weights, strict=True) if isinstance(delta, Delta) else ()
            else:
                entries = zip(*self._postings[token], strict=True)
            for mid, tf in entries:
                norm = k1 * (1 - b + b * self._len[mid] / self._avg_len)
                scores[mid] = scores.get(mid, 0.0) + idf * tf * (k1 + 1) / (tf + norm)
        found = list(scores.items())
        if columns is not None and in_columns:
            row_scores = columns.bm25(in_columns, k1=k1, b=b, avg_len=self._avg_len, dropped=dropped)
            found = columns.best(row_scores, scores, limit)
        if len(found) > limit:  # the best few sorted, not thousands (C heapq over the floats)
            last = heapq.nlargest(limit, (score for _, score in found))[-1]
            found = [kv for kv in found if kv[1] >= last]
        # ties by id: the same order however the index was made (built, loaded, written to)
        return sorted(found, key=lambda kv: (-kv[1], kv[0]))[:limit]

    def scores_of(
        self, query_tokens: Iterable[str], ids: Iterable[str], *, weights: Mapping[str, float] | None = None
    ) -> dict[str, float]:
        """The BM25 that `search` gives these memories (those the index holds), however far below its
        `limit` they rank: for candidates another channel brought (relation memory's links)."""
        k1, b = self._params.k1, self._params.b
        wanted = [mid for mid in dict.fromkeys(ids) if mid in self.memories]
        scores = dict.fromkeys(wanted, 0.0)
        for token, idf in self._weighted(query_tokens, weights):
            for mid, tf in zip(wanted, self._weights_of(token, wanted), strict=True):
                if tf:
                    norm = k1 * (1 - b + b * self._len[mid] / self._avg_len)
                    scores[mid] += idf * tf * (k1 + 1) / (tf + norm)
        return scores

    def _weights_of(self, term: str, mids: Sequence[str]) -> list[float]:
        """`term`'s weight in each of `mids` (0.0: not held), as `_terms_held` reads it."""
        columns, changed = columns_under(self._postings)
        tfs = self._tf
        if columns is None or not isinstance(tfs, TermFrequencies):
            return [tfs[mid].get(term, 0.0) for mid in mids]
        weights: list[float] = held_weights(columns, changed, term, mids, tfs.base_rows(mids)).tolist()
        return weights


def coverage(
    query_tokens: Iterable[str],
    own: Collection[str],
    around: Collection[str],
    idf: Mapping[str, float],
    unseen_idf: float,
    *,
    unigram_weight: float = 0.3,
    context_weight: float = 0.9,
) -> tuple[float, tuple[str, ...]]:
    """Idf-weighted share of the query's distinct words found in a memory (`own`: its own words,
    `around`: its surrounding turns', counted at `context_weight` as BM25 counts them), and the words found (CJK single
    characters without their prefix). A word the index has never seen weighs `unseen_idf` (as rare as
    a word can be): "xyzzy plugh" covers 0 of anything."""
    total = found = 0.0
    words: list[str] = []
    for token in dict.fromkeys(query_tokens):
        weight = idf.get(token, unseen_idf) * (unigram_weight if token.startswith(UNIGRAM) else 1.0)
        total += weight
        if token in own:
            found += weight
        elif token in around:
            found += context_weight * weight
        else:
            continue
        words.append(token.removeprefix(UNIGRAM))
    return (found / total if total > 0 else 0.0), tuple(words)


def _term_frequencies(m: Memory, params: BM25Params) -> dict[str, float]:
    own = Counter(tokenize(m.embed_text))
    if not (m.context and params.context_weight):  # its own words only (a provisional index: cold_start.py)
        return {sys.intern(t): shared_weight(n + 0.0) for t, n in own.items()}
    around, weighted = _context_terms(m.context, params.context_weight)
    # the context's terms at their weight (the same for each of a turn's segments: a copy), then its
    # own words: interned, as every memory of a user repeats the same few thousand words and a per-memory
    # copy of each was most of a cached index's memory (issue 29: ~20 KiB per memory before); the weights
    # repeat too (1, 0.9, 1.9, 2, ...): one float object for each value, not one per entry
    tf = dict(weighted)
    for t, n in own.items():
        tf[sys.intern(t)] = shared_weight(n + params.context_weight * around.get(t, 0))
    return tf


@functools.lru_cache(maxsize=64)
def _context_terms(context: str, weight: float) -> tuple[Counter[str], dict[str, float]]:
    """A context's token counts and its terms at `weight` (both read only): a long turn's ~6 segments
    share one context of ~6,000 characters, tokenized and weighed once instead of once a segment (an
    import spent ~4% of its CPU tokenising them, and a write of 101 such segments 60 ms weighing them)."""
    counts = Counter(tokenize(context))
    return counts, {sys.intern(t): shared_weight(0 + weight * n) for t, n in counts.items()}
