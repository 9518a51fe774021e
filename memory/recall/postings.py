"""The parts of a user's keyword index that grow with the user: its postings as the arrays a snapshot
loads (memory/recall/snapshot.py), which BM25 scores in one numpy pass (`ColumnPostings.bm25`), and as
layers a write adds to (`LayeredPostings`), and its memories' repeated texts held once.

Measured on a user of long turns (issue 45: 948 turns of ~2,000 characters, 5,875 memories; a memory's
context is the turns around it, ~6,000 characters, and each of a turn's ~6 segments has the same one):
the postings as object arrays (a pointer to the memory's id and one to the weight, per entry: 16 bytes)
were 72 MiB of the worker's 236 MiB for the user, the contexts held once per memory 49.5 MiB of which
41.5 MiB were copies (`bench/worker_rss.py`). Here an entry is the memory's row (int32) and the weight's
code (uint16): 6 bytes; and equal texts are one string. The columns are the only copy of the entries:
a memory's term frequencies are read off them (`TermFrequencies`, `held_weights`), not kept by row
beside them (which doubled the arrays: 58,000 memories of long turns, 553 -> 297 MiB for their words,
`bench/index_update.py`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence

import numpy as np

from memory.models import Memory

Posting = tuple[list[str], list[float]]  # a term's memory ids and its frequency in each


def among(values: np.ndarray, sorted_values: np.ndarray) -> np.ndarray:
    """Which of `values` are in `sorted_values` (ascending): a binary search each."""
    if not len(sorted_values) or not len(values):
        return np.zeros(len(values), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_values, values), len(sorted_values) - 1)
    return np.asarray(sorted_values[at] == values)


class RowIds:
    """A loaded snapshot's memory ids by row, and each id's row: made once, on first use (a search that
    mixes the columns with terms a write changed, its candidates' coverage, a write's removals), and
    shared by the columns and the term frequencies (~5 MB at 58,565 memories)."""

    __slots__ = ("_row_of", "ids")

    def __init__(self, ids: np.ndarray) -> None:
        self.ids = ids  # object array of str
        self._row_of: dict[str, int] | None = None

    def row_of(self, memory_id: str) -> int | None:
        if self._row_of is None:
            self._row_of = {mid: k for k, mid in enumerate(self.ids.tolist())}
        return self._row_of.get(memory_id)

    def __len__(self) -> int:
        return len(self.ids)


_WEIGHTS: dict[float, float] = {}


def shared_weight(weight: float) -> float:
    """One float object per distinct weight (bounded), shared by every index of this process."""
    if len(_WEIGHTS) > 4096:  # bounded: odd context weights could make many distinct values
        return weight
    return _WEIGHTS.setdefault(weight, weight)


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
        rows: RowIds,
        codes: np.ndarray,
        weights: np.ndarray,
        lengths: np.ndarray,
    ) -> None:
        """`terms`: the distinct terms in their sorted order; `edges`: len(terms) + 1 offsets;
        `owners`: each entry's memory row (int32); `rows`: each row's memory id; `codes`:
        each entry's weight as a position in `weights` (object array of shared floats); `lengths`: each
        row's length (float64), as BM25 counts it."""
        self._terms = list(terms)
        self._at = {t: k for k, t in enumerate(self._terms)}
        self._edges = edges
        self._edge_array = np.asarray(edges, dtype=np.int64)
        self._owners = owners
        self.rows = rows
        self._ids = rows.ids
        self._codes = codes
        self._weights = weights
        self._values = np.asarray(weights, dtype=np.float64)  # the same weights, for `bm25`
        self._lengths = np.array(lengths, dtype=np.float64)  # a copy: a view would keep a snapshot's payload

    def __getitem__(self, term: str) -> Posting:
        k = self._at[term]
        start, end = self._edges[k], self._edges[k + 1]
        return self._ids[self._owners[start:end]].tolist(), self._weights[self._codes[start:end]].tolist()

    def lists(self, term: str, without: frozenset[int] = frozenset()) -> Posting:
        """`term`'s lists less the rows `without` (none held: empty lists)."""
        k = self._at.get(term)
        if k is None:
            return [], []
        owners, codes = self._run(k, without)
        return self._ids[owners].tolist(), self._weights[codes].tolist()

    def _run(self, k: int, without: frozenset[int]) -> tuple[np.ndarray, np.ndarray]:
        start, end = self._edges[k], self._edges[k + 1]
        owners, codes = self._owners[start:end], self._codes[start:end]
        if without:
            keep = ~np.isin(owners, np.fromiter(without, dtype=np.int64, count=len(without)))
            owners, codes = owners[keep], codes[keep]
        return owners, codes

    def size(self, term: str) -> int:
        k = self._at.get(term)
        return 0 if k is None else self._edges[k + 1] - self._edges[k]

    def __contains__(self, term: object) -> bool:
        return term in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)

    @property
    def nbytes(self) -> int:
        return int(self._owners.nbytes + self._codes.nbytes + self._ids.nbytes + self._lengths.nbytes)

    @property
    def ids(self) -> np.ndarray:
        """Each row's memory id (object array)."""
        return self._ids

    def bm25(
        self,
        terms: Sequence[tuple[str, float]],
        *,
        k1: float,
        b: float,
        avg_len: float,
        dropped: Mapping[str, frozenset[int]] | None = None,
    ) -> np.ndarray:
        """Each row's BM25 over `terms` (each held here, with its idf as the score counts it), in one
        pass over their entries: the per-entry loop in Python was ~210 ms a search of a 58,565-memory
        user (issue 45). The same arithmetic in the same order as `BM25Index.search`'s loop, so a row's
        score is the same float. `dropped`: rows a term's run no longer counts (writes since)."""
        if not terms:
            return np.zeros(len(self._ids))
        runs = [self._run(self._at[t], (dropped or {}).get(t, frozenset())) for t, _ in terms]
        rows = np.concatenate([owners for owners, _ in runs])
        tf = self._values[np.concatenate([codes for _, codes in runs])]
        idf = np.repeat(np.asarray([i for _, i in terms], dtype=np.float64), [len(o) for o, _ in runs])
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
        if k is None:
            return np.zeros(len(rows), dtype=bool)
        return among(rows, self._owners[self._edges[k] : self._edges[k + 1]])

    def weights_at(self, term: str, rows: np.ndarray) -> np.ndarray:
        """`term`'s weight in each of `rows` (0: not held; a row of -1: none), by a binary search each
        (a term's entries are in row order)."""
        out = np.zeros(len(rows), dtype=np.float64)
        k = self._at.get(term)
        if k is None or not len(rows):
            return out
        start, end = self._edges[k], self._edges[k + 1]
        owners = self._owners[start:end]
        at = np.minimum(np.searchsorted(owners, rows), len(owners) - 1)
        hit = owners[at] == rows
        out[hit] = self._values[self._codes[start:end][at[hit]]]
        return out

    def row_terms(self, rows: Collection[int]) -> dict[int, dict[str, float]]:
        """The term frequencies of `rows`, read off the entries in one pass over them: what a write
        needs of the memories it removes. Kept by row instead, they were a second copy of every entry
        (6 bytes each: a build of 58,000 memories held 553 MiB with it, 297 without, issue 45)."""
        out: dict[int, dict[str, float]] = {r: {} for r in rows}
        if not out:
            return out
        asked = np.zeros(len(self._ids), dtype=bool)
        asked[np.fromiter(out, dtype=np.int64, count=len(out))] = True
        at = np.flatnonzero(asked[self._owners])
        terms = np.searchsorted(self._edge_array, at, side="right") - 1
        names, weights = self._terms, self._weights
        for row, k, code in zip(
            self._owners[at].tolist(), terms.tolist(), self._codes[at].tolist(), strict=True
        ):
            out[row][names[k]] = weights[code]
        return out

    def arrays(self) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The terms, the runs' offsets, each entry's row and weight code, the weights (float64) and each
        row's length: what a snapshot stores (memory/recall/snapshot.py) and compaction reads
        (memory/recall/term_rows.py)."""
        return self._terms, self._edge_array, self._owners, self._codes, self._values, self._lengths

    def row_of(self, memory_id: str) -> int | None:
        """The row of a memory (`RowIds.row_of`)."""
        return self.rows.row_of(memory_id)


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


@dataclasses.dataclass(frozen=True, slots=True)
class Delta:
    """A term that writes changed over a snapshot's columns: its run there less the `dropped` rows (the
    memories removed or written over since, each holding the term there), then `ids` with `weights`
    (memories written since, in order)."""

    dropped: frozenset[int] = frozenset()
    ids: tuple[str, ...] = ()
    weights: tuple[float, ...] = ()

    def size(self, base: ColumnPostings, term: str) -> int:
        return base.size(term) - len(self.dropped) + len(self.ids)


class LayeredPostings(Mapping[str, Posting]):
    """Postings after writes: a base that is never changed (a snapshot's columns, or none) under the
    terms that writes touched since: over columns as a `Delta` of each (its run less the rows removed,
    plus what was written), without columns as lists (an empty one: the term is gone). A write makes a
    new one from the last in time proportional to what it changes (`after_write`), not to every posting
    of the user, nor to the runs of the terms it touches: rebuilt whole, each write round of a 10M-token
    user's import cost seconds (issue 45), and a run made into lists for a write was 0.4 s of the first
    write after a worker loaded 20,000 memories; BM25 still scores a changed term's run in the columns'
    one pass (`ColumnPostings.bm25`'s `dropped`)."""

    def __init__(self, base: ColumnPostings | None, changed: dict[str, Posting | Delta]) -> None:
        self.base = base
        self.changed = changed

    def __getitem__(self, term: str) -> Posting:
        found = self.changed.get(term)
        if found is None:
            if self.base is None:
                raise KeyError(term)
            return self.base[term]
        if isinstance(found, Delta):
            assert self.base is not None
            ids, weights = self.base.lists(term, found.dropped)
            found = (ids + list(found.ids), weights + list(found.weights))
        if not found[0]:
            raise KeyError(term)
        return found

    def size(self, term: str) -> int:
        """How many memories hold `term` (0: none), without making its lists."""
        found = self.changed.get(term)
        if found is None:
            return self.base.size(term) if self.base is not None else 0
        if isinstance(found, Delta):
            assert self.base is not None
            return found.size(self.base, term)
        return len(found[0])

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.size(term) > 0

    def __iter__(self) -> Iterator[str]:
        if self.base is not None:
            yield from (t for t in self.base if t not in self.changed)
        yield from (t for t in self.changed if self.size(t))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    @classmethod
    def after_write(
        cls,
        postings: Mapping[str, Posting],
        gone: Mapping[str, Mapping[str, float]],
        added: Sequence[tuple[str, Mapping[str, float]]],
    ) -> LayeredPostings:
        """`postings` without the memories `gone` (id -> its term frequencies) and with `added` (id and
        term frequencies, in order) at the end of each term's lists: the lists a whole rebuild makes,
        in the same order. `postings` is never changed."""
        if isinstance(postings, LayeredPostings):
            out = cls(postings.base, dict(postings.changed))
        elif isinstance(postings, ColumnPostings):
            out = cls(postings, {})
        else:
            out = cls(None, dict(postings))
        if out.base is not None:
            out._columns_write(out.base, gone, added)
            return out
        removed = set(gone)
        for term in {t for tf in gone.values() for t in tf}:
            ids, weights = out.get(term, ([], []))
            kept = [(i, w) for i, w in zip(ids, weights, strict=True) if i not in removed]
            out.changed[term] = ([i for i, _ in kept], [w for _, w in kept])
        for term, (ids, weights) in postings_of(added).items():
            old_ids, old_weights = out.get(term, ([], []))
            out.changed[term] = (old_ids + ids, old_weights + weights)  # new lists: the old are shared
        return out

    def _columns_write(
        self,
        base: ColumnPostings,
        gone: Mapping[str, Mapping[str, float]],
        added: Sequence[tuple[str, Mapping[str, float]]],
    ) -> None:
        """`after_write` over columns: each touched term's `Delta` (no run made into lists)."""
        rows = {mid: row for mid in gone if (row := base.row_of(mid)) is not None}
        by_term: dict[str, list[str]] = {}
        for mid, tf in gone.items():
            for term in tf:
                by_term.setdefault(term, []).append(mid)
        for term, mids in by_term.items():
            found = self.changed.get(term)
            delta = found if isinstance(found, Delta) else Delta()
            asked = np.asarray(
                [rows[m] for m in mids if m in rows and rows[m] not in delta.dropped], np.int64
            )
            # only rows the term's run holds: a memory written over since holds other terms now
            held = asked[base.holding(term, asked)]
            ids, weights = delta.ids, delta.weights
            if not gone.keys().isdisjoint(ids):
                kept = [(i, w) for i, w in zip(ids, weights, strict=True) if i not in gone]
                ids, weights = tuple(i for i, _ in kept), tuple(w for _, w in kept)
            self.changed[term] = Delta(delta.dropped | frozenset(held.tolist()), ids, weights)
        for term, (new_ids, new_weights) in postings_of(added).items():
            found = self.changed.get(term)
            delta = found if isinstance(found, Delta) else Delta()
            self.changed[term] = Delta(
                delta.dropped, delta.ids + tuple(new_ids), delta.weights + tuple(new_weights)
            )


class InverseFrequencies(Mapping[str, float]):
    """Each term's idf as BM25 counts it, log(1 + (n - df + 0.5) / (df + 0.5)) over `n` memories, made
    from its postings' size when asked: a search asks for a few dozen terms. Made for every term of the
    vocabulary at each write instead (the user's count changes every idf), a write round of a
    58,000-memory user spent most of its CPU on it (issue 45: `bench/index_update.py`)."""

    def __init__(self, postings: Mapping[str, Posting], n: int) -> None:
        self._postings = postings
        self._n = n

    def _size(self, term: str) -> int:
        postings = self._postings
        if isinstance(postings, ColumnPostings | LayeredPostings):
            return postings.size(term)
        found = postings.get(term)
        return 0 if found is None else len(found[0])

    def __getitem__(self, term: str) -> float:
        df = self._size(term)
        if not df:
            raise KeyError(term)
        return math.log(1 + (self._n - df + 0.5) / (df + 0.5))

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self._size(term) > 0

    def __iter__(self) -> Iterator[str]:
        return iter(self._postings)

    def __len__(self) -> int:
        return len(self._postings)


class TermFrequencies(Mapping[str, dict[str, float]]):
    """Each memory's term frequencies by id: a loaded snapshot's (or a large build's) read off its
    columns when asked (`many`: one pass for any number), a write's own on top, the memories writes
    removed left out. Made whole, a 20,000-memory user's took 1.8 s of CPU at the first write after a
    worker loaded them, and at 58,565 memories several seconds and gigabytes, while the chat turn's
    search waited (issue 45); kept by row, they doubled the arrays: a write needs those of the
    memories it removes, a snapshot's save all of them in order (`in_order`)."""

    def __init__(
        self,
        rows: RowIds,
        columns: ColumnPostings | None,
        own: dict[str, dict[str, float]] | None = None,
        removed: frozenset[str] = frozenset(),
    ) -> None:
        """`rows`: the columns' memory ids by row; `columns`: their postings (None: no entries);
        `own`: the term frequencies of memories written since (by id); `removed`: column memories
        written over or deleted since."""
        self._rows = rows
        self.columns = columns
        self._own = own or {}
        self._removed = removed
        self.rows_made = 0  # how many rows' dicts were made (tests: a search reads the columns instead)

    @property
    def own(self) -> Mapping[str, dict[str, float]]:
        """The term frequencies of the memories written since the columns, in the order written."""
        return self._own

    @property
    def removed(self) -> frozenset[str]:
        """The column memories written over or deleted since."""
        return self._removed

    def _base_row(self, memory_id: str) -> int | None:
        return None if memory_id in self._removed else self._rows.row_of(memory_id)

    def many(self, memory_ids: Iterable[str]) -> dict[str, dict[str, float]]:
        """The term frequencies of those of `memory_ids` held here, by id."""
        out: dict[str, dict[str, float]] = {}
        rows: dict[int, str] = {}
        for mid in memory_ids:
            tf = self._own.get(mid)
            if tf is not None:
                out[mid] = tf
            elif (row := self._base_row(mid)) is not None:
                rows[row] = mid
        if rows:
            self.rows_made += len(rows)
            made = self.columns.row_terms(rows) if self.columns is not None else {r: {} for r in rows}
            out.update((rows[r], tf) for r, tf in made.items())
        return out

    def base_rows(self, memory_ids: Sequence[str]) -> np.ndarray:
        """Each memory's row in the columns (-1: written since, or not held)."""
        return np.fromiter(
            (-1 if (r := self._base_row(mid)) is None else r for mid in memory_ids),
            dtype=np.int64,
            count=len(memory_ids),
        )

    def in_order(
        self, memory_ids: Iterable[str], base_row: Callable[[int], dict[str, float]]
    ) -> Iterator[dict[str, float]]:
        """The term frequencies of `memory_ids` (each held here), a column memory's by `base_row` (its
        row's, from the columns by row: memory/recall/term_rows.py)."""
        for mid in memory_ids:
            tf = self._own.get(mid)
            if tf is None:
                row = self._base_row(mid)
                if row is None:
                    raise KeyError(mid)
                self.rows_made += 1
                tf = base_row(row)
            yield tf

    def __getitem__(self, memory_id: str) -> dict[str, float]:
        found = self.many([memory_id])
        if memory_id not in found:
            raise KeyError(memory_id)
        return found[memory_id]

    def __contains__(self, memory_id: object) -> bool:
        if not isinstance(memory_id, str):
            return False
        return memory_id in self._own or self._base_row(memory_id) is not None

    def __iter__(self) -> Iterator[str]:
        own, removed = self._own, self._removed
        yield from (mid for mid in self._rows.ids.tolist() if mid not in own and mid not in removed)
        yield from own

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def after_write(self, gone: Collection[str], added: Mapping[str, dict[str, float]]) -> TermFrequencies:
        """These without `gone` and with `added` (this mapping is not changed: the last index keeps it)."""
        own = {mid: tf for mid, tf in self._own.items() if mid not in gone}
        own.update(added)
        removed = self._removed | {mid for mid in gone if self._rows.row_of(mid) is not None}
        return TermFrequencies(self._rows, self.columns, own, frozenset(removed))


def held_weights(
    columns: ColumnPostings,
    changed: Mapping[str, Posting | Delta],
    term: str,
    mids: Sequence[str],
    rows: np.ndarray,
) -> np.ndarray:
    """`term`'s weight in each of `mids` (0: not held) over columns and the writes since (`changed`),
    without making a memory's term frequencies; `rows`: each one's row in the columns (-1: none)."""
    out = columns.weights_at(term, rows)
    found = changed.get(term)
    if isinstance(found, Delta):
        if found.dropped:
            out[np.isin(rows, np.fromiter(found.dropped, dtype=np.int64, count=len(found.dropped)))] = 0.0
        if found.ids:
            added = dict(zip(found.ids, found.weights, strict=True))
            for k, mid in enumerate(mids):
                weight = added.get(mid)
                if weight is not None:
                    out[k] = weight
    return out


def columns_under(
    postings: Mapping[str, Posting],
) -> tuple[ColumnPostings | None, Mapping[str, Posting | Delta]]:
    """The columns under `postings` (a loaded snapshot's, or None) and the terms a write changed since
    (each a `Delta` of its run there)."""
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
    "Delta",
    "InverseFrequencies",
    "LayeredPostings",
    "Posting",
    "RowIds",
    "TermFrequencies",
    "among",
    "columns_under",
    "held_weights",
    "postings_of",
    "shared_texts",
    "shared_weight",
]
