"""The parts of a user's keyword index that grow with the user: its postings as the arrays a snapshot
loads (memory/recall/snapshot.py) and as layers a write adds to (`LayeredPostings`), and its memories'
repeated texts held once.

Measured on a user of long turns (issue 45: 948 turns of ~2,000 characters, 5,875 memories; a memory's
context is the turns around it, ~6,000 characters, and each of a turn's ~6 segments has the same one):
the postings as object arrays (a pointer to the memory's id and one to the weight, per entry: 16 bytes)
were 72 MiB of the worker's 236 MiB for the user, the contexts held once per memory 49.5 MiB of which
41.5 MiB were copies (`bench/worker_rss.py`). Here an entry is the memory's row (int32) and the weight's
code (uint16): 6 bytes; and equal texts are one string.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping, Sequence

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
    ) -> None:
        """`terms`: the distinct terms in their sorted order; `edges`: len(terms) + 1 offsets;
        `owners`: each entry's memory row (int32); `ids`: each row's memory id (object array); `codes`:
        each entry's weight as a position in `weights` (object array of shared floats)."""
        self._at = {t: k for k, t in enumerate(terms)}
        self._edges = edges
        self._owners = owners
        self._ids = ids
        self._codes = codes
        self._weights = weights

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
        return int(self._owners.nbytes + self._codes.nbytes + self._ids.nbytes)


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


__all__ = ["ColumnPostings", "LayeredPostings", "Posting", "postings_of", "shared_texts"]
