"""How a large index comes to hold its words as columns (`postings.ColumnPostings`): from a build's
term frequencies (`TermRows`, CSR arrays over a vocabulary: `held` turns them into columns), from a
format 3 snapshot (the same arrays), and from columns plus the writes since (`compacted`).

A built index used to keep each memory's term frequencies as a dict (~600 entries for a long turn's
segment with its context: ~36 KB) and each term's postings as two Python lists (16 bytes an entry):
the worker that built a 10M-token user from the store held gigabytes for them (issue 45: 2.4 GB at
10,303 memories), searched them in a Python loop over every entry (24 ms at 20,000 memories against
0.5 ms over columns) and paid the cyclic garbage collector's passes over those millions of lists at
every write (half of a write round's CPU at 20,000). Past `COLUMNS_FROM` memories a build keeps what a
loaded snapshot holds: columns, a memory's term frequencies read off them when a write asks. A write
over columns keeps each changed term as a `Delta` and the written memories' dicts; once
`COMPACT_AFTER` memories were written since, the write makes new columns, so neither grows without end.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from memory.recall.postings import ColumnPostings, RowIds, TermFrequencies, shared_weight

COLUMNS_FROM = 2_000  # memories: a build of more keeps arrays (below, dicts and lists cost little)
COMPACT_AFTER = 2_000  # memories written over columns before a write makes new ones (`compacted`)


@dataclass(frozen=True, slots=True)
class TermRows:
    """Memories' term frequencies in order: row i's entries are `indptr[i]:indptr[i + 1]`, each a term
    (a position in `vocab`) and its weight's code (a position in `table`, the distinct weights as
    float64: BM25 scores stay exact); `lengths`: each row's length, summed as a build sums it (left to
    right); `by_term`: the entries sorted by term, stably (each term's rows in row order), or None when
    not kept (`order` makes it)."""

    vocab: Sequence[str]
    indptr: np.ndarray
    terms: np.ndarray
    codes: np.ndarray
    table: np.ndarray
    lengths: np.ndarray
    by_term: np.ndarray | None = None

    @classmethod
    def of(cls, tfs: Iterable[Mapping[str, float]], lengths: Sequence[float] | None = None) -> TermRows:
        """`lengths`: each row's length as its index holds it (None: summed here, as a build sums
        them; a memory's dict read off columns is in another order, and a float sum in another order
        may differ in its last bit)."""
        vocab: dict[str, int] = {}
        term_ids: list[int] = []
        weights: list[float] = []
        summed: list[float] = []
        indptr = [0]
        for tf in tfs:
            for term, weight in tf.items():
                term_ids.append(vocab.setdefault(term, len(vocab)))
                weights.append(weight)
            indptr.append(len(term_ids))
            if lengths is None:
                summed.append(sum(tf.values()))
        table, codes = np.unique(np.asarray(weights, dtype=np.float64), return_inverse=True)
        terms = np.asarray(term_ids, dtype=np.int32)
        return cls(
            list(vocab),
            np.asarray(indptr, dtype=np.int64),
            terms,
            codes.astype(np.uint16 if len(table) <= 65_536 else np.uint32),
            table,
            np.asarray(summed if lengths is None else lengths, dtype=np.float64),
        )

    def order(self) -> np.ndarray:
        """`by_term`, made when not kept."""
        if self.by_term is not None:
            return self.by_term
        return np.argsort(self.terms, kind="stable").astype(np.int32)

    def row(self, i: int) -> dict[str, float]:
        """Row i's term frequencies (its terms, not interned: for a save, not to be kept)."""
        start, end = int(self.indptr[i]), int(self.indptr[i + 1])
        words = [self.vocab[t] for t in self.terms[start:end].tolist()]
        return dict(zip(words, self.table[self.codes[start:end]].tolist(), strict=True))

    def held(self, ids: Sequence[str]) -> tuple[TermFrequencies, ColumnPostings | None]:
        """What an index holds of these rows (`ids`: each row's memory id): each term's postings as
        columns (None: no entries) and the term frequencies read off them when asked. Nothing of these
        arrays is kept (the columns are new arrays): a snapshot's loader may pass views of its payload."""
        rows = RowIds(np.asarray(list(ids), dtype=object))
        if not len(self.terms):
            return TermFrequencies(rows, None), None
        # interned, as a build's words are: users share most of them
        vocab = np.asarray([sys.intern(w) for w in self.vocab], dtype=object)
        # one float object per distinct weight, as a built index shares them
        shared = np.asarray([shared_weight(w) for w in self.table.tolist()], dtype=object)
        # each term's memories in memory order, as a build makes them (ties in BM25 keep that order)
        by_term = self.order()
        owners = np.repeat(np.arange(len(rows), dtype=np.int32), np.diff(self.indptr))[by_term]
        # each term's run among the entries sorted by term, from the counts (no sorted copy of the
        # terms: a transient the size of the postings, which the allocator then kept, issue 45)
        counts = np.bincount(self.terms, minlength=len(vocab))
        present = np.flatnonzero(counts)
        edges = [0, *np.cumsum(counts[present]).tolist()]
        columns = ColumnPostings(
            vocab[present].tolist(), edges, owners, rows, self.codes[by_term], shared, self.lengths
        )
        return TermFrequencies(rows, columns), columns


def by_row(columns: ColumnPostings) -> TermRows:
    """The columns' entries by row, each row's in the columns' term order (a stable sort of the entries
    by row; their order by term is its inverse): every memory's words in order, for `BM25Index.parts`
    and for a save that cannot compact (never expected)."""
    terms, edges, owners, codes, values, lengths = columns.arrays()
    of_entry = np.repeat(np.arange(len(terms), dtype=np.int32), np.diff(edges))
    order = np.argsort(owners, kind="stable")
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.bincount(owners, minlength=len(lengths)), out=indptr[1:])
    by_term = np.empty(len(order), dtype=np.int32)
    by_term[order] = np.arange(len(order), dtype=np.int32)
    return TermRows(terms, indptr, of_entry[order], codes[order], values, lengths, by_term)


def compacted(
    columns: ColumnPostings,
    kept: np.ndarray,
    own: Sequence[Mapping[str, float]],
    ids: Sequence[str],
    lengths: Sequence[float],
) -> tuple[TermFrequencies, ColumnPostings]:
    """New columns of the columns' rows that `kept` marks (bool by row; in row order), then `own` (the
    term frequencies of the memories written since, in order): `ids` and `lengths` are each resulting
    row's. What a write makes of an index whose writes since its columns reached `COMPACT_AFTER`
    memories: their dicts (~36 KB each) and each term's added entries would grow with every write.
    Each term's run is its kept entries (renumbered: their order holds), then its own ones, inserted
    after them in one pass (`np.insert`): placing every entry by its computed position was 4.9 s of CPU
    at 58,000 memories, a sort of every entry more."""
    terms, edges, owners, codes, values, _ = columns.arrays()
    keep = kept[owners]
    old_rows = (np.cumsum(kept, dtype=np.int32) - 1)[owners[keep]]
    # each term's kept entries (no run is empty: a term in the columns is held by some row)
    old_count = np.add.reduceat(keep, edges[:-1], dtype=np.int64) if len(terms) else np.zeros(0, np.int64)
    words = list(itertools.chain.from_iterable(tf.keys() for tf in own))
    weights = np.fromiter(
        itertools.chain.from_iterable(tf.values() for tf in own), dtype=np.float64, count=len(words)
    )
    vocab = {t: k for k, t in enumerate(terms)}
    for word in dict.fromkeys(words):  # new words after the columns' own, in the order first written
        vocab.setdefault(sys.intern(word), len(vocab))
    own_terms = np.fromiter(map(vocab.__getitem__, words), dtype=np.int64, count=len(words))
    sizes = np.fromiter((len(tf) for tf in own), dtype=np.int64, count=len(own))
    own_rows = int(kept.sum()) + np.repeat(np.arange(len(own), dtype=np.int32), sizes)
    # the distinct weights of both (float64, exact), and each entry's code among them
    table = np.unique(np.concatenate([values, weights]))
    code_type = np.uint16 if len(table) <= 65_536 else np.uint32
    old_codes = np.searchsorted(table, values).astype(code_type)[codes[keep]]
    by_term = np.argsort(own_terms, kind="stable")  # a word's own entries in row order
    sorted_terms = own_terms[by_term]
    # where each own entry goes among the kept ones: after its word's run (a new word: at the end)
    ends = np.concatenate([np.cumsum(old_count), np.full(len(vocab) - len(terms), len(old_rows))])
    at = ends[sorted_terms]
    rows = np.insert(old_rows, at, own_rows[by_term].astype(np.int32))
    entry_codes = np.insert(old_codes, at, np.searchsorted(table, weights)[by_term].astype(code_type))
    old_count = np.concatenate([old_count, np.zeros(len(vocab) - len(terms), dtype=np.int64)])
    own_count = np.bincount(own_terms, minlength=len(vocab))
    present = np.flatnonzero(old_count + own_count)
    names = list(vocab)
    fresh = ColumnPostings(
        [names[k] for k in present.tolist()],
        [0, *np.cumsum((old_count + own_count)[present]).tolist()],
        rows,
        RowIds(np.asarray(list(ids), dtype=object)),
        entry_codes,
        np.asarray([shared_weight(w) for w in table.tolist()], dtype=object),
        np.asarray(lengths, dtype=np.float64),
    )
    return TermFrequencies(fresh.rows, fresh), fresh


def compact(
    ids: list[str], tfs: TermFrequencies, lengths: Mapping[str, float]
) -> tuple[TermFrequencies, ColumnPostings] | None:
    """`compacted` for an index of these memories (`ids`, in its order) whose term frequencies are
    `tfs` (columns and the writes since). None when the order is not the columns' kept rows then the
    memories written since (never expected: the caller reads them another way)."""
    columns = tfs.columns
    if columns is None:
        return None
    base = columns.ids.tolist()
    kept = np.fromiter((mid not in tfs.removed for mid in base), dtype=bool, count=len(base))
    if ids != [mid for mid, k in zip(base, kept.tolist(), strict=True) if k] + list(tfs.own):
        return None
    return compacted(columns, kept, list(tfs.own.values()), ids, [lengths[mid] for mid in ids])


__all__ = ["COLUMNS_FROM", "COMPACT_AFTER", "TermRows", "by_row", "compact", "compacted"]
