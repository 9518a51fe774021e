"""The compact parts of a user's keyword index a snapshot loads (memory/recall/snapshot.py): its postings
as arrays, and its memories' repeated texts held once.

Measured on a user of long turns (issue 45: 948 turns of ~2,000 characters, 5,875 memories; a memory's
context is the turns around it, ~6,000 characters, and each of a turn's ~6 segments has the same one):
the postings as object arrays (a pointer to the memory's id and one to the weight, per entry: 16 bytes)
were 72 MiB of the worker's 236 MiB for the user, the contexts held once per memory 49.5 MiB of which
41.5 MiB were copies (`bench/worker_rss.py`). Here an entry is the memory's row (int32) and the weight's
code (uint16): 6 bytes; and equal texts are one string.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence

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


__all__ = ["ColumnPostings", "Posting", "shared_texts"]
