"""The keyword channel: BM25 over a user's memories, CJK-aware.

English (and other Latin-script) words are lower-cased, stop-worded and Snowball-stemmed; CJK runs
become overlapping character bigrams (a single ideograph stays a unigram), so Chinese names, places and
numbers match without a segmenter. An index is built per user from the long-term store and cached in
this process, keyed by the user's write version (a Redis counter bumped on every write and delete), so
every worker sees a change on its next search.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import snowballstemmer

from memory.lexicons import (
    EN_CANONICAL,
    EN_STOPWORDS,
    ZH_CANONICAL,
    ZH_QUESTION_CHARS,
    ZH_QUESTION_WORDS,
    ZH_STOPWORDS,
)
from memory.models import Memory

_TOKEN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_stemmer = snowballstemmer.stemmer("english")
_stem_lock = threading.Lock()


_ZH_CANON = {v: k for k, vs in ZH_CANONICAL.items() for v in (k, *vs)}
_ZH_CANON_RE = re.compile("|".join(sorted(_ZH_CANON, key=len, reverse=True)))
_EN_CANON = {v: k for k, vs in EN_CANONICAL.items() for v in vs}
UNIGRAM = "u:"  # prefix of CJK single-character tokens: they match 爸 in 我爸 for 爸爸, at a lower weight


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for match in _TOKEN_RE.finditer(text):
        run = match.group(0)
        if _CJK_RE.match(run):
            run = _ZH_CANON_RE.sub(lambda m: _ZH_CANON[m.group(0)], run)
            tokens.extend(
                run[i : i + 2]
                for i in range(len(run) - 1)
                if run[i] not in ZH_QUESTION_CHARS
                and run[i + 1] not in ZH_QUESTION_CHARS
                and run[i : i + 2] not in ZH_QUESTION_WORDS
            )
            tokens.extend(
                UNIGRAM + ch for ch in run if ch not in ZH_STOPWORDS and ch not in ZH_QUESTION_CHARS
            )
        else:
            word = run.lower().replace("’", "'")
            word = word.split("'")[0] if word.endswith(("'s", "'re", "'ve", "'ll", "'d", "'m")) else word
            word = _EN_CANON.get(word, word)
            if word in EN_STOPWORDS or len(word) < 2 and not word.isdigit():
                continue
            with _stem_lock:  # snowballstemmer objects are not thread-safe
                tokens.append(_stemmer.stemWord(word))
    return tokens


@dataclass(frozen=True, slots=True)
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    unigram_weight: float = 0.3
    context_weight: float = 0.9  # a term in the surrounding messages counts this much of one in the memory


class BM25Index:
    """BM25 over one user's memories, plus their vectors (float16) so that candidates found only by
    keywords get an exact cosine without another round trip to the vector store."""

    def __init__(
        self, memories: Sequence[Memory], vectors: np.ndarray | None = None, params: BM25Params = BM25Params()
    ) -> None:
        self.memories = {m.id: m for m in memories}
        self._row = {m.id: i for i, m in enumerate(memories)}
        self._vectors = (
            np.asarray(vectors, dtype=np.float16)
            if vectors is not None and len(vectors) == len(memories)
            else None
        )
        self._params = params
        self._tf: dict[str, dict[str, float]] = {}
        self._len: dict[str, float] = {}
        postings: dict[str, list[str]] = {}
        for m in memories:
            own = Counter(tokenize(m.embed_text))
            around = Counter(tokenize(m.context)) if m.context else Counter()
            tf = {
                t: own.get(t, 0) + params.context_weight * around.get(t, 0)
                for t in own.keys() | around.keys()
            }
            self._tf[m.id] = tf
            self._len[m.id] = sum(tf.values())
            for token in tf:
                postings.setdefault(token, []).append(m.id)
        self._postings = postings
        n = max(1, len(memories))
        self._avg_len = (sum(self._len.values()) / n) or 1.0
        self._idf = {t: math.log(1 + (n - len(ids) + 0.5) / (len(ids) + 0.5)) for t, ids in postings.items()}
        self.names = frozenset(m.name for m in memories if m.name)

    def __len__(self) -> int:
        return len(self.memories)

    def cosine(self, ids: Sequence[str], query: np.ndarray) -> dict[str, float]:
        """Cosine of the query with the stored vectors of `ids` (vectors are unit length)."""
        if self._vectors is None:
            return {}
        rows = [self._row[i] for i in ids if i in self._row]
        if not rows:
            return {}
        sims = self._vectors[rows].astype(np.float32) @ query.astype(np.float32)
        return {i: float(x) for i, x in zip([i for i in ids if i in self._row], sims, strict=True)}

    def search(self, query_tokens: Iterable[str], *, limit: int) -> list[tuple[str, float]]:
        k1, b = self._params.k1, self._params.b
        scores: dict[str, float] = {}
        for token in set(query_tokens):
            idf = self._idf.get(token)
            if idf is None:
                continue
            if token.startswith(UNIGRAM):
                idf *= self._params.unigram_weight
            for mid in self._postings[token]:
                tf = self._tf[mid][token]
                norm = k1 * (1 - b + b * self._len[mid] / self._avg_len)
                scores[mid] = scores.get(mid, 0.0) + idf * tf * (k1 + 1) / (tf + norm)
        return sorted(scores.items(), key=lambda kv: kv[1], reverse=True)[:limit]


class KeywordIndexCache:
    """LRU of per-user indexes, bounded by the total number of memories held."""

    def __init__(self, max_memories: int = 200_000) -> None:
        self._max = max_memories
        self._items: OrderedDict[str, tuple[int, BM25Index]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

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
