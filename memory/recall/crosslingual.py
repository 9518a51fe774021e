"""Cross-lingual recall: each user's bridge vectors in process, and the weights that fuse them.

The bridge channel (`memory/longterm/bridge.py`) gives every memory a multilingual vector. Recall keeps
a user's bridge vectors here (int8 with a scale per row, memory/recall/dense_rows.py, with each memory's
language), aligned with the user's keyword
index and updated the same way: when the index's version moves, only the ids it gained are fetched
from Chroma, and the ids it lost are dropped.

A user's bridge is used only when it is **complete**: every memory in the index has a vector of the
current model. Until then (memories written before the channel existed, or by another bridge
model) recall ranks exactly as without the channel, and asks again after `retry_seconds` or at the
next version (`python -m app.cli.reembed` bumps it when it finishes a user).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from memory.embedding.base import Embedder, Vectors
from memory.errors import StoreUnavailable
from memory.longterm.bridge import BridgeVectors
from memory.longterm.shared_vectors import SharedVectors
from memory.models import Memory
from memory.recall.dense_rows import QuantisedRows, ranked
from memory.text.language import Lang, detect_language

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class BridgeWeights:
    """Shares of relevance the bridge cosine takes, by query language; the rest is split as before.
    Memories in another language than the query are ranked by the bridge (and keywords, which still
    match names and numbers), since MiniLM and BM25 cannot cross a language."""

    en: float = 0.0  # an English query over English memories: MiniLM and BM25 as before (measured)
    zh: float = 0.5  # a Chinese query over Chinese memories: the bridge takes MiniLM's place...
    minilm_zh: float = 0.0  # ...(the share of MiniLM's weight a Chinese query keeps: none)
    # a memory's bridge vector blended with its neighbours' (the turns before and after it in its
    # session), this much each, for same-language scoring: a reply makes sense with its question
    neighbours: float = 0.3
    # across languages too (issue 28, measured with the lexicon and names: +0.02 / +0.03 any@10 on the
    # dev slice both ways; 0 was better before them)
    neighbours_cross: float = 0.3
    cross: float = 0.85  # a memory in the other language than the query: the bridge leads
    cross_keyword: float = 0.15
    candidates: int = 30  # bridge nearest neighbours added to the candidates
    # below this bridge cosine the channel did not match: it adds nothing to the ranking (min-max gave
    # the best of unrelated memories the bridge's whole share, "cross-lingual 0.500", however far). Not
    # higher: 0.2 cost the Chinese set a question (recall_any@10 0.970 -> 0.955) and LoCoMo asked in
    # Chinese a tenth of its recall (0.672 -> 0.569), the answer's bridge cosine is often that low
    match_floor: float = 0.1
    match_floor_cross: float = 0.1
    # the bridge cosine that earns the channel its whole share: min-max scales the cosines by the best
    # candidate's, or by this when the best is lower. Min-max alone gave the best of weak matches the
    # whole share: among a bilingual user's 5,875 segments of long turns (many topics each, USE cosines
    # 0.1-0.25 for every one), memories in the other language outranked the one whose words answer
    # (issue 45, 1M tokens: any@10 0.588 -> 0.647). 0.5 found one more there but cost LoCoMo's Chinese
    # turns asked in English 2 questions of 231; 0.4 lowers no set (decisions/recall.md)
    full_match: float = 0.4


@dataclass(frozen=True, slots=True)
class BridgeRows:
    """One user's bridge vectors at one index version."""

    ids: tuple[str, ...]
    matrix: QuantisedRows  # one row per id
    languages: tuple[Lang, ...]
    present: frozenset[Lang]  # the languages among them
    _neighbours: np.ndarray | None = None  # `neighbours()`, made on first use
    _rows: dict[str, int] = field(default_factory=dict)  # id -> row, built once
    _langs: dict[str, Lang] = field(default_factory=dict)
    _last: tuple[bytes, np.ndarray] | None = None  # `cosine()`'s last query and answer (a search asks twice)

    def __len__(self) -> int:
        return len(self.ids)

    def neighbours(self, memories: dict[str, Memory]) -> np.ndarray:
        """For each row, the rows of the two memories before it and the one after it in its session
        (by time; equal times keep row order), -1 where there is none: shape (rows, 3), made once."""
        if self._neighbours is not None:
            return self._neighbours
        n = len(self.ids)
        found = np.full((n, 3), -1, dtype=np.int64)
        if n > 1:
            _, session = np.unique([memories[mid].session_id for mid in self.ids], return_inverse=True)
            created = np.fromiter((memories[mid].created_at for mid in self.ids), np.float64, n)
            order = np.lexsort((created, session))  # stable: by session, then time, then row
            at = session[order]
            for column, shift in enumerate((-2, -1, 1)):
                position = np.arange(n) + shift
                ok = (position >= 0) & (position < n)
                ok[ok] = at[position[ok]] == at[ok]
                found[order[ok], column] = order[position[ok]]
        object.__setattr__(self, "_neighbours", found)
        return found

    def blended_cosine(
        self, memories: dict[str, Memory], weight: float, query: Vectors, rows: Sequence[int]
    ) -> np.ndarray:
        """Cosine of `query` with each of `rows` blended with its neighbours (`neighbours`), `weight`
        each, re-normalised: the bridge's view of a turn in its conversation. Only the rows asked for
        (a search's candidates): blending every row of a user cost 10-70 ms at 2,000 memories."""
        picked = np.asarray(rows, dtype=np.int64)
        own = self.matrix.rows(picked)
        if weight and len(picked):
            around = self.neighbours(memories)[picked]
            present = (around >= 0).astype(np.float32)
            beside = self.matrix.rows(np.maximum(around, 0).ravel()).reshape(len(picked), 3, -1)
            own += weight * np.einsum("rk,rkd->rd", present, beside)
        own /= np.clip(np.linalg.norm(own, axis=1, keepdims=True), 1e-12, None)
        return np.asarray(own @ np.asarray(query, dtype=np.float32), dtype=np.float32)

    def row_of(self) -> dict[str, int]:
        if len(self._rows) != len(self.ids):
            self._rows.update((i, r) for r, i in enumerate(self.ids))
        return self._rows

    def cosine(self, query: Vectors) -> np.ndarray:
        """The query's cosine with every row (read-only: the same answer is given to the next call with
        this query, as a search asks twice)."""
        key = np.asarray(query, dtype=np.float32).tobytes()
        last = self._last
        if last is not None and last[0] == key:
            return last[1]
        sims = self.matrix.scores(query)
        sims.flags.writeable = False
        object.__setattr__(self, "_last", (key, sims))
        return sims

    def language_of(self) -> dict[str, Lang]:
        if len(self._langs) != len(self.ids):
            self._langs.update(zip(self.ids, self.languages, strict=True))
        return self._langs


def rows_from(
    memories: dict[str, Memory], vectors: dict[str, Vectors], previous: BridgeRows | None
) -> BridgeRows:
    """Rows for exactly the ids of `memories` that have a vector (previous rows reused)."""
    old = previous.row_of() if previous is not None else {}
    old_lang = previous.language_of() if previous is not None else {}
    ids: list[str] = []
    langs: list[Lang] = []
    fresh_at: list[int] = []  # positions of rows quantised here, and their vectors
    fresh: list[Vectors] = []
    kept_at: list[int] = []  # positions of previous rows kept (their codes as they are), and their rows
    kept: list[int] = []
    for mid, m in memories.items():
        if mid in vectors:
            fresh_at.append(len(ids))
            fresh.append(vectors[mid])
            langs.append(detect_language(m.content))
        elif previous is not None and mid in old:
            kept_at.append(len(ids))
            kept.append(old[mid])
            langs.append(old_lang[mid])
        else:
            continue
        ids.append(mid)
    made = QuantisedRows.of(np.asarray(fresh, dtype=np.float32)) if fresh else None
    width = made.dim if made is not None else previous.matrix.dim if previous is not None else 0
    codes = np.zeros((len(ids), width), dtype=np.int8)
    scales = np.ones(len(ids), dtype=np.float32)
    if made is not None:
        codes[fresh_at], scales[fresh_at] = made.codes, made.scales
    if previous is not None and kept:
        codes[kept_at], scales[kept_at] = previous.matrix.codes[kept], previous.matrix.scales[kept]
    return BridgeRows(tuple(ids), QuantisedRows(codes, scales), tuple(langs), frozenset(langs))


@dataclass(slots=True)
class _Entry:
    version: int
    rows: BridgeRows
    complete: bool
    checked_at: float


class BridgeCache:
    """LRU of per-user bridge rows, bounded by the total rows held."""

    def __init__(
        self,
        bridge: BridgeVectors,
        *,
        shared: SharedVectors | None = None,
        dimension: int = 512,
        max_rows: int = 200_000,
        retry_seconds: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._bridge = bridge
        self._shared = shared
        self._dimension = dimension
        self._max = max_rows
        self._retry = retry_seconds
        self._clock = clock
        self._items: OrderedDict[str, _Entry] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def holds(self, user_id: str) -> bool:
        with self._lock:
            return user_id in self._items

    async def everything(self, user_id: str) -> dict[str, Vectors] | None:
        """All of this user's bridge vectors (a user's first search in this worker reads them beside
        the keyword index, not after it); None if Chroma cannot say."""
        try:
            return await self._bridge.get(user_id)
        except StoreUnavailable:
            return None

    async def rows(
        self,
        user_id: str,
        version: int,
        memories: dict[str, Memory],
        prefetched: dict[str, Vectors] | None = None,
    ) -> BridgeRows | None:
        """The user's bridge rows for these memories (the keyword index's, at `version`), or None
        while the channel is incomplete for this user. `prefetched`: `everything()`, read already."""
        with self._lock:
            entry = self._items.get(user_id)
            if entry is not None:
                self._items.move_to_end(user_id)
        if entry is not None and entry.version == version:
            if entry.complete:
                return entry.rows
            if self._clock() - entry.checked_at < self._retry:
                return None
        previous = entry.rows if entry is not None else None
        have = set(previous.ids) if previous is not None else set()
        missing = [mid for mid in memories if mid not in have]
        fetched = dict(prefetched or {})
        still = [mid for mid in missing if mid not in fetched]  # all of them, unless prefetched
        if still:
            try:
                fetched.update(await self._fetch(user_id, still, memories))
            except StoreUnavailable as exc:  # rank by the main channel now; ask again next time
                log.warning("bridge vectors unavailable; ranking without them", extra={"reason": exc.reason})
                return None
        rows = rows_from(memories, fetched, previous)
        complete = len(rows) == len(memories)
        self._put(user_id, _Entry(version, rows, complete, self._clock()))
        return rows if complete else None

    async def _fetch(self, user_id: str, ids: list[str], memories: dict[str, Memory]) -> dict[str, Vectors]:
        """Vectors of `ids`: first those a chat turn's recall published for the exact text (a Redis
        MGET: the memory a turn just wrote is usually its own message), the rest from Chroma."""
        found: dict[str, Vectors] = {}
        if self._shared is not None:
            texts = [memories[mid].embed_text for mid in ids]
            published = await self._shared.fetch(user_id, texts, self._dimension)
            found = {ids[i]: v for i, v in published.items()}
        rest = [mid for mid in ids if mid not in found]
        if rest:
            found.update(await self._bridge.get(user_id, rest))
        return found

    def _put(self, user_id: str, entry: _Entry) -> None:
        with self._lock:
            old = self._items.pop(user_id, None)
            if old is not None:
                self._size -= len(old.rows)
            self._items[user_id] = entry
            self._size += len(entry.rows)
            while self._size > self._max and len(self._items) > 1:
                _, evicted = self._items.popitem(last=False)
                self._size -= len(evicted.rows)

    def languages(self, user_id: str) -> frozenset[Lang] | None:
        """The languages of the user's memories as this worker last saw them; None: not held here."""
        with self._lock:
            entry = self._items.get(user_id)
        return entry.rows.present if entry is not None else None

    def seed(self, user_id: str, version: int, rows: BridgeRows) -> None:
        """Hold `rows` (complete at `version`: a loaded index snapshot's) unless this worker already
        holds rows of this user; `rows()` brings them forward as it does its own."""
        with self._lock:
            if user_id in self._items:
                return
        self._put(user_id, _Entry(version, rows, True, self._clock()))

    def drop(self, user_id: str) -> None:
        with self._lock:
            old = self._items.pop(user_id, None)
            if old is not None:
                self._size -= len(old.rows)


def nearest(
    rows: BridgeRows,
    sims: np.ndarray,
    memories: dict[str, Memory],
    *,
    limit: int,
    keep: Callable[[Memory], bool],
) -> list[tuple[str, float]]:
    """The `limit` best rows by bridge cosine among those `keep` lets through (ties in row order). Only
    the best few rows are sorted, more when `keep` turns many away: sorting all of a 58,565-memory
    user's rows was ~5 ms a search (issue 45)."""
    out: list[tuple[str, float]] = []
    seen, wanted = 0, 4 * limit
    while seen < len(sims) and limit > 0:
        order = ranked(sims, wanted)
        for j in order[seen:].tolist():
            mid = rows.ids[j]
            if keep(memories[mid]):
                out.append((mid, float(sims[j])))
                if len(out) == limit:
                    return out
        seen, wanted = len(order), wanted * 4
    return out


@dataclass(frozen=True, slots=True)
class BridgeChannel:
    """What recall needs of the bridge: the model (its query view), the per-user rows, the weights,
    and where query vectors are published for the writer storing the same text."""

    embedder: Embedder
    cache: BridgeCache
    weights: BridgeWeights = BridgeWeights()
    shared: SharedVectors | None = None


def needs_bridge(query_language: Lang, rows: BridgeRows, weights: BridgeWeights) -> bool:
    """Whether this query gains anything from the bridge: its language has a bridge share, or some
    memory is in another language."""
    share = weights.zh if query_language == "zh" else weights.en
    return share > 0 or bool(rows.present - {query_language})


def cross_language(rows: BridgeRows, query_language: Lang, ids: Sequence[str]) -> set[str]:
    langs = rows.language_of()
    return {mid for mid in ids if langs.get(mid, query_language) != query_language}
