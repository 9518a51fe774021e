"""Which users the writer checks against its in-process index, and which against the store.

The write path's duplicate and supersession checks read the user's in-process index (recall's: BM25
and MiniLM rows) while the user has at most `in_process_max` memories, and ask the vector store past
that. Asking for the index builds or brings it forward, so a writer used to keep every large user's
index current only to find it too large to use: a 10M-token import's writer held and updated an index
of 20,000+ memories it never read, and read each round's records back from Chroma to do so (issue 45).
Here a user found past the limit is remembered as large: the index is not asked for again (and, in a
process that does not search, `release` drops it), until `recheck_seconds` pass and the store's count
says whether the user is still past it (deletes, archival).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from memory.recall.keyword_index import BM25Index

IndexOf = Callable[[str], Awaitable[BM25Index]]
LARGE_KEPT = 10_000  # users remembered as large; past it the oldest are forgotten (asked again)


class LocalIndexes:
    def __init__(
        self,
        index: IndexOf | None,
        count: Callable[[str], Awaitable[int]],
        *,
        in_process_max: int,
        release: Callable[[str], None] | None = None,
        recheck_seconds: float = 600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`index`: the user's current in-process index (None: the store answers every check);
        `count`: the user's memories in the store; `release`: drop a large user's index from this
        process (given only where nothing else here reads it: a writer that does not search)."""
        self._index = index
        self._count = count
        self._max = in_process_max
        self._release = release
        self._recheck = recheck_seconds
        self._clock = clock
        self._large: OrderedDict[str, float] = OrderedDict()  # user -> when to look again

    async def get(self, user_id: str) -> BM25Index | None:
        """The user's index if it can answer both checks (vectors, at most `in_process_max`), else None."""
        if self._index is None:
            return None
        until = self._large.get(user_id)
        if until is not None:
            if self._clock() < until or await self._count(user_id) > self._max:
                if self._clock() >= until:
                    self._mark_large(user_id)
                return None
            del self._large[user_id]
        index = await self._index(user_id)
        if not len(index) or (index.has_vectors and len(index) <= self._max):
            return index
        if len(index) > self._max:
            self._mark_large(user_id)
            if self._release is not None:
                self._release(user_id)
        return None

    def _mark_large(self, user_id: str) -> None:
        self._large[user_id] = self._clock() + self._recheck
        self._large.move_to_end(user_id)
        while len(self._large) > LARGE_KEPT:
            self._large.popitem(last=False)


__all__ = ["LocalIndexes"]
