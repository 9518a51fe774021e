"""The per-worker LRU of users' keyword indexes (split from keyword_index.py, issue 44; still importable
from there)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.recall.keyword_index import BM25Index


class KeywordIndexCache:
    """LRU of per-user indexes, bounded by the total number of memories held."""

    def __init__(self, max_memories: int = 200_000) -> None:
        self._max = max_memories
        self._items: OrderedDict[str, tuple[int, BM25Index]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def latest(self, user_id: str) -> tuple[int, BM25Index] | None:
        """The cached index of this user at whatever version it was built (to update it)."""
        with self._lock:
            return self._items.get(user_id)

    def get(self, user_id: str, version: int) -> BM25Index | None:
        with self._lock:
            item = self._items.get(user_id)
            if item is None or item[0] != version:
                return None
            self._items.move_to_end(user_id)
            return item[1]

    def put(self, user_id: str, version: int, index: BM25Index) -> None:
        with self._lock:
            old = self._items.pop(user_id, None)
            if old is not None:
                self._size -= len(old[1])
            self._items[user_id] = (version, index)
            self._size += len(index)
            while self._size > self._max and len(self._items) > 1:
                _, (_, evicted) = self._items.popitem(last=False)
                self._size -= len(evicted)

    def drop(self, user_id: str) -> None:
        with self._lock:
            old = self._items.pop(user_id, None)
            if old is not None:
                self._size -= len(old[1])
