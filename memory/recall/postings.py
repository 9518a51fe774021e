"""The parts of a user's keyword index that grow with the user: its postings as the arrays a snapshot
loads (memory/recall/snapshot.py), which BM25 scores in one numpy pass (`ColumnPostings.bm25`), and as
layers a write adds to (`LayeredPostings`), and its memories' repeated texts held once.

Measured on a user of long turns (issue 45: 948 turns of ~2,000 characters, 5,875 memories; a memory's
context is the turns around it, ~6,000 characters, and each of a turn's ~6 segments has the same one):
the postings as object arrays (a pointer to the memory's id and one to the weight, per entry: 16 bytes)
were 72 MiB of the worker's 236 MiB for the user, the contexts held once per memory 49.5 MiB of which
41.5 MiB were copies (`bench/worker_rss.py`). Here an entry is the memory's row (int32) and the weight's
code (uint16): 6 bytes; and equal texts are one string.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

import numpy as np

from memory.models import Memory

Posting = tuple[list[str], list[float]]  # a term's memory ids and its frequency in each


class ColumnPostings(Mapping[str, Posting]):
    """Postings kept as the arrays a snapshot stores: the entries sorted by term, each term's run given
    by `edges`, each entry its memory's row and its weight's code. A term's lists are made when a search
    asks for it (a few dozen terms per search; 5,875 entries' lists take ~0.1 ms) and not kept: kept,
    they grew with every new query term towards the whole postings as lists (16 bytes an entry)."""

    def __init__(
        self,
        terms: Sequence[str],
        edges: Sequence[int],
        owners: np.ndarray,
        ids: np.ndarray,
        codes: np.ndarray,
        weights: np.ndarray,
        lengths: np.ndarray,
    ) -> None:
        """`terms`: the distinct terms in their sorted order; `edges`: len(terms) + 1 offsets;
        `owners`: each entry's memory row (int32); `ids`: each row's memory id (object array); `codes`:
        each entry's weight as a position in `weights` (object array of shared floats); `lengths`: each
        row's length (float64), as BM25 counts it."""
        self._at = {t: k for k, t in enumerate(terms)}
        self._edges = edges
        self._owners = owners
        self._ids = ids
        self._codes = codes
        self._weights = weights
        self._values = np.asarray(weights, dtype=np.float64)  # the same weights, for `bm25`
        self._lengths = np.array(lengths, dtype=np.float64)  # a copy: a view would keep a snapshot's payload
        self._row_of: dict[str, int] | None = None

    def __getitem__(self, term: str) -> Posting:
        k = self._at[term]
        start, end = self._edges[k], self._edges[k + 1]
        return self._ids[self._owners[start:end]].tolist(), self._weights[self._codes[start:end]].tolist()

    def __contains__(self, term: object) -> bool:
        return term in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)

    def frequencies(self) -> dict[str, int]:
        """Each term's document frequency, without making its lists."""
        edges = self._edges
        return {t: edges[k + 1] - edges[k] for t, k in self._at.items()}

    @property
    def nbytes(self) -> int:
        return int(self._owners.nbytes + self._codes.nbytes + self._ids.nbytes + self._lengths.nbytes)

    @property
    def ids(self) -> np.ndarray:
        """Each row's memory id (object array)."""
        return self._ids

    def bm25(self, terms: Sequence[tuple[str, float]], *, k1: float, b: float, avg_len: float) -> np.ndarray:
        """Each row's BM25 over `terms` (each held here, with its idf as the score counts it), in one
        pass over their entries: the per-entry loop in Python was ~210 ms a search of a 58,565-memory
        user (issue 45). The same arithmetic in the same order as `BM25Index.search`'s loop, so a row's
        score is the same float."""
        if not terms:
            return np.zeros(len(self._ids))
        spans = [(self._edges[k], self._edges[k + 1]) for k in (self._at[t] for t, _ in terms)]
        rows = np.concatenate([self._owners[s:e] for s, e in spans])
        tf = self._values[np.concatenate([self._codes[s:e] for s, e in spans])]
        idf = np.repeat(np.asarray([i for _, i in terms], dtype=np.float64), [e - s for s, e in spans])
        norm = k1 * (1 - b + b * self._lengths[rows] / avg_len)
        return np.bincount(rows, weights=idf * tf * (k1 + 1) / (tf + norm), minlength=len(self._ids))

    def best(self, by_row: np.ndarray, scores: dict[str, float], limit: int) -> list[tuple[str, float]]:
        """The best `limit` (and any tied with the last) of `scores` (by memory id, from lists) plus
        these columns' scores by row (`by_row`, from `bm25`, added to in place). A memory a write
        removed has no entry under the columns' terms (every term it had is among the changed ones), so
        it scores 0 there."""
        extra: list[tuple[str, float]] = []
        for mid, score in scores.items():
            row = self.row_of(mid)
            if row is None:
                extra.append((mid, score))  # written after the snapshot
            else:
                by_row[row] += score
        hit = np.flatnonzero(by_row > 0)
        if len(hit) > limit:  # only the best rows become Python objects: a common word holds thousands
            last = np.partition(by_row[hit], len(hit) - limit)[len(hit) - limit]
            hit = hit[by_row[hit] >= last]
        return [*zip(self._ids[hit].tolist(), by_row[hit].tolist(), strict=True), *extra]

    def holding(self, term: str, rows: np.ndarray) -> np.ndarray:
        """Which of `rows` (-1: none) hold `term`, without making its lists: a term's entries are in row
        order (the snapshot sorts them by term, stably, from row order), so a binary search each."""
        k = self._at.get(term)
        if k is None or not len(rows):
            return np.zeros(len(rows), dtype=bool)
        owners = self._owners[self._edges[k] : self._edges[k + 1]]
        at = np.minimum(np.searchsorted(owners, rows), len(owners) - 1)
        return np.asarray(owners[at] == rows)

    def row_of(self, memory_id: str) -> int | None:
        """The row of a memory (made on first use: by a search that mixes these columns with terms a
        write changed, or that reads its candidates' coverage off them)."""
        if self._row_of is None:
            self._row_of = {mid: k for k, mid in enumerate(self._ids.tolist())}
        return self._row_of.get(memory_id)


def postings_of(tfs: Iterable[tuple[str, Mapping[str, float]]]) -> dict[str, Posting]:
    """Each term's memory ids and weights, in the order of `tfs` (memory id, its term frequencies)."""
    out: dict[str, Posting] = {}
    for mid, tf in tfs:
        for term, weight in tf.items():
            lists = out.get(term)
            if lists is None:
                out[term] = ([mid], [weight])
            else:
                lists[0].append(mid)
                lists[1].append(weight)
    return out


class LayeredPostings(Mapping[str, Posting]):
    """Postings after writes: a base that is never changed (a snapshot's columns, or none) under the
    terms that writes touched since, as lists (an empty one: the term is gone). A write makes a new one
    from the last in time proportional to the terms it touches (`after_write`), not to every posting of
    the user: rebuilt whole, each write round of a 10M-token user's import cost seconds, growing with
    the user (issue 45)."""

    def __init__(self, base: Mapping[str, Posting] | None, changed: dict[str, Posting]) -> None:
        self.base = base
        self.changed = changed

    def __getitem__(self, term: str) -> Posting:
        found = self.changed.get(term)
        if found is not None:
            if not found[0]:
                raise KeyError(term)
            return found
        if self.base is None:
            raise KeyError(term)
        return self.base[term]

    def __contains__(self, term: object) -> bool:
        found = self.changed.get(term) if isinstance(term, str) else None
        if found is not None:
            return bool(found[0])
        return self.base is not None and term in self.base

    def __iter__(self) -> Iterator[str]:
        if self.base is not None:
            yield from (t for t in self.base if t not in self.changed)
        yield from (t for t, (ids, _) in self.changed.items() if ids)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def frequencies(self) -> dict[str, int]:
        """Each term's document frequency (a base of columns: without making its lists)."""
        base = self.base
        if base is None:
            out: dict[str, int] = {}
        elif isinstance(base, ColumnPostings):
            out = base.frequencies()
        else:
            out = {t: len(p[0]) for t, p in base.items()}
        for term, (ids, _) in self.changed.items():
            if ids:
                out[term] = len(ids)
            else:
                out.pop(term, None)
        return out

    @classmethod
    def after_write(
        cls,
        postings: Mapping[str, Posting],
        gone: Mapping[str, Mapping[str, float]],
        added: Sequence[tuple[str, Mapping[str, float]]],
    ) -> LayeredPostings:
        """`postings` without the memories `gone` (id -> its term frequencies) and with `added` (id and
        term frequencies, in order) at the end of each term's lists: the lists a whole rebuild makes,
        in the same order. The lists of `postings` are copied before they change, never changed."""
        if isinstance(postings, LayeredPostings):
            out = cls(postings.base, dict(postings.changed))
        elif isinstance(postings, ColumnPostings):
            out = cls(postings, {})
        else:
            out = cls(None, dict(postings))
        removed = set(gone)
        for term in {t for tf in gone.values() for t in tf}:
            ids, weights = out.get(term, ([], []))
            kept = [(i, w) for i, w in zip(ids, weights, strict=True) if i not in removed]
            out.changed[term] = ([i for i, _ in kept], [w for _, w in kept])
        for term, (ids, weights) in postings_of(added).items():
            old_ids, old_weights = out.get(term, ([], []))
            out.changed[term] = (old_ids + ids, old_weights + weights)  # new lists: the old are shared
        return out


class TermFrequencies(Mapping[str, dict[str, float]]):
    """Each memory's term frequencies by id: a loaded snapshot's made one memory at a time when asked
    (from its arrays, by `row`), a write's own on top, the memories writes removed left out. Made whole,
    a 20,000-memory user's took 1.8 s of CPU at the first write after a worker loaded them, and at
    58,565 memories several seconds and gigabytes, while the chat turn's search waited (issue 45): a
    write needs those of the memories it removes, a snapshot's save reads them one at a time."""

    def __init__(
        self,
        ids: Sequence[str],
        row: Callable[[int], dict[str, float]],
        own: dict[str, dict[str, float]] | None = None,
        removed: frozenset[str] = frozenset(),
        rows: dict[str, int] | None = None,
    ) -> None:
        """`ids`: the snapshot's memory ids by row; `row`: a row's term frequencies; `own`: those of
        memories written since (by id); `removed`: snapshot memories written over or deleted since."""
        self._ids = ids
        self._row = row
        self._own = own or {}
        self._removed = removed
        self._rows = rows
        self.rows_made = 0  # how many a row's dict was made (tests: a search reads the columns instead)

    def _row_of(self) -> dict[str, int]:
        if self._rows is None:  # made once, shared by the frequencies of later writes
            self._rows = {mid: i for i, mid in enumerate(self._ids)}
        return self._rows

    def __getitem__(self, memory_id: str) -> dict[str, float]:
        tf = self._own.get(memory_id)
        if tf is not None:
            return tf
        if memory_id in self._removed:
            raise KeyError(memory_id)
        row = self._row_of()[memory_id]
        self.rows_made += 1
        return self._row(row)

    def __contains__(self, memory_id: object) -> bool:
        if not isinstance(memory_id, str):
            return False
        return memory_id in self._own or (memory_id not in self._removed and memory_id in self._row_of())

    def __iter__(self) -> Iterator[str]:
        own, removed = self._own, self._removed
        yield from (mid for mid in self._ids if mid not in own and mid not in removed)
        yield from own

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def after_write(self, gone: Collection[str], added: Mapping[str, dict[str, float]]) -> TermFrequencies:
        """These without `gone` and with `added` (this mapping is not changed: the last index keeps it)."""
        own = {mid: tf for mid, tf in self._own.items() if mid not in gone}
        own.update(added)
        rows = self._row_of()
        removed = self._removed | {mid for mid in gone if mid in rows}
        return TermFrequencies(self._ids, self._row, own, frozenset(removed), rows)


def columns_under(postings: Mapping[str, Posting]) -> tuple[ColumnPostings | None, Mapping[str, Posting]]:
    """The columns under `postings` (a loaded snapshot's, or None) and the terms they no longer answer
    for (those a write changed since: their lists are in the returned mapping)."""
    if isinstance(postings, ColumnPostings):
        return postings, {}
    if isinstance(postings, LayeredPostings) and isinstance(postings.base, ColumnPostings):
        return postings.base, postings.changed
    return None, {}


def shared_texts(memories: Sequence[Memory]) -> list[Memory]:
    """`memories` with equal contexts as one string (a memory equal to the one given, another object
    only where its context was a copy): every segment of a long turn has the turn's context."""
    seen: dict[str, str] = {}
    out: list[Memory] = []
    for m in memories:
        if m.context:
            one = seen.setdefault(m.context, m.context)
            if one is not m.context:
                m = dataclasses.replace(m, context=one)
        out.append(m)
    return out


__all__ = [
    "ColumnPostings",
    "LayeredPostings",
    "Posting",
    "TermFrequencies",
    "columns_under",
    "postings_of",
    "shared_texts",
]
