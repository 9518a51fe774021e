"""Applies supersession to one user's write round, under the user's lock (called by policy.py).

The round's memories that state an attribute (`Memory.facts`, from supersession.py) are compared with
the user's stored memories stating the same attribute (found in the in-process index, or among the 20
nearest in the vector store for users too large for one) and with each other, in time order: an older
memory whose claim a newer one replaces gets `superseded_by` (the newer id) and `valid_to` (when the
newer one became true). A memory written late about an earlier time is itself marked superseded by the
newer stored one. Nothing is deleted; the old memories changed are returned after the round's own, with
their vectors, so the same upsert stores them.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from memory.embedding.base import Vectors
from memory.errors import REDIS_UNAVAILABLE
from memory.longterm.chroma import LongTermStore
from memory.models import Memory
from memory.recall.keyword_index import BM25Index
from memory.text.tokens import tokenize
from memory.write.claim_index import ClaimIndex
from memory.write.supersession import HABIT, habit_tokens, supersedes
from monitoring import metrics

NEAREST = 20  # vector-store candidates per claiming memory when there is no in-process index


def superseded(old: Memory, new: Memory) -> Memory:
    return replace(old, superseded_by=new.id, valid_to=new.valid_since)


def _replaceable(old: Memory, key: str, pool: dict[str, Memory]) -> bool:
    """Not yet superseded, or superseded by a memory that says nothing about `key` ("我在图书馆当管理员"
    replaced by "我在绿叶药房工作" as to the employer is still the last word on the job until "现在做数据
    分析" comes): the newest replacement then holds the pointer, so recall lifts the memory about the
    job for a question about the job. A chain of the same attribute (杭州 → 苏州 → 南京) is kept."""
    if old.superseded_by is None:
        return True
    by = pool.get(old.superseded_by)
    return by is not None and all(k != key for k, _ in by.facts)


def _same_speaker(a: Memory, b: Memory) -> bool:
    return a.source == "user" and b.source == "user" and (a.name or "") == (b.name or "")


log = logging.getLogger(__name__)


class Superseder:
    def __init__(
        self, store: LongTermStore, *, in_process_max: int, claims: ClaimIndex | None = None
    ) -> None:
        """`claims`: which memories state each claim, recorded as they are stored (`remember`), read for a
        user past `in_process_max` beside the vector neighbours (memory/write/claim_index.py)."""
        self._store = store
        self._in_process_max = in_process_max
        self._claims = claims

    async def remember(self, user_id: str, stored: Sequence[Memory]) -> None:
        """Record the claims of memories just stored (under the user's write lock). Best effort: the
        write is stored and its version bumped; without this record its claims are found, as before,
        among the vector neighbours only."""
        if self._claims is None:
            return
        try:
            await self._claims.add(user_id, stored)
        except REDIS_UNAVAILABLE as exc:
            log.warning("claims not recorded", extra={"reason": f"{type(exc).__name__}: {exc}"})

    async def apply(
        self, user_id: str, index: BM25Index | None, memories: Sequence[Memory], vectors: Vectors
    ) -> tuple[list[Memory], Vectors]:
        claiming = [i for i, m in enumerate(memories) if m.facts]
        if not claiming:
            return list(memories), vectors
        batch = {m.id for m in memories}
        stored = {
            m.id: m
            for m in await self._candidates(
                user_id, index, [memories[i] for i in claiming], vectors[claiming]
            )
            if m.id not in batch
        }
        pool: dict[str, Memory] = dict(stored)
        changed: set[str] = set()
        count = 0
        for i in sorted(range(len(memories)), key=lambda i: (memories[i].valid_since, i)):
            m = memories[i]
            for key, value in m.facts:
                for o in list(pool.values()):
                    if o.id == m.id or not _same_speaker(o, m):
                        continue
                    if key == HABIT:
                        words = habit_tokens(value)
                        if (
                            words
                            and o.superseded_by is None
                            and o.valid_since < m.valid_since
                            and all(k != HABIT for k, _ in o.facts)
                            and words <= set(tokenize(o.content))
                        ):
                            pool[o.id] = superseded(o, m)
                            changed.add(o.id)
                            count += 1
                        continue
                    old_value = next((v for k, v in o.facts if k == key), None)
                    if old_value is None:
                        continue
                    if o.valid_since <= m.valid_since:
                        if _replaceable(o, key, pool) and supersedes((key, value), (key, old_value)):
                            pool[o.id] = superseded(o, m)
                            changed.add(o.id)
                            count += 1
                    elif m.superseded_by is None and supersedes((key, old_value), (key, value)):
                        m = superseded(m, o)  # written late: a newer stored memory already replaced it
                        count += 1
            pool[m.id] = m
        if count:
            metrics.SUPERSESSIONS.labels("rule").inc(count)
        out = [pool[m.id] for m in memories]
        touched = sorted(mid for mid in changed if mid in stored)
        if not touched:
            return out, vectors
        found = await self._vectors(user_id, index, touched)
        touched = [mid for mid in touched if mid in found]
        if not touched:
            return out, vectors
        extra = np.asarray([found[mid] for mid in touched], dtype=np.float32).reshape(len(touched), -1)
        return [*out, *(pool[mid] for mid in touched)], np.concatenate([vectors, extra])

    async def mark(
        self,
        user_id: str,
        index: BM25Index | None,
        memories: Sequence[Memory],
        vectors: Vectors,
        decided: Sequence[tuple[Memory, Memory]],
    ) -> tuple[list[Memory], Vectors]:
        """The judge's verdicts: each (new, old) pair's old memory superseded by the new one, appended
        with its vector (unless it already is in the round's list)."""
        out = list(memories)
        position = {m.id: i for i, m in enumerate(out)}
        extra: list[Memory] = []
        for new, old in decided:
            if old.id in position:
                if out[position[old.id]].superseded_by is None:
                    out[position[old.id]] = superseded(out[position[old.id]], new)
            elif all(e.id != old.id for e in extra):
                extra.append(superseded(old, new))
        counted = len(extra) + sum(1 for m, o in zip(out, memories, strict=True) if m is not o)
        if counted:
            metrics.SUPERSESSIONS.labels("llm").inc(counted)
        if not extra:
            return out, vectors
        found = await self._vectors(user_id, index, [m.id for m in extra])
        extra = [m for m in extra if m.id in found]
        if not extra:
            return out, vectors
        rows = np.asarray([found[m.id] for m in extra], dtype=np.float32).reshape(len(extra), -1)
        return [*out, *extra], np.concatenate([vectors, rows])

    async def _candidates(
        self, user_id: str, index: BM25Index | None, claiming: Sequence[Memory], vectors: Vectors
    ) -> list[Memory]:
        """Stored memories that may state what `claiming` states."""
        keys = {k for m in claiming for k, _ in m.facts if k != HABIT}
        habits = [habit_tokens(v) for m in claiming for k, v in m.facts if k == HABIT]
        if index is not None and len(index) <= self._in_process_max:
            found = {m.id: m for m in index.views.with_fact_keys(keys)}
            for words in habits:
                for mid, _ in index.search(sorted(words), limit=10):
                    found.setdefault(mid, index.memories[mid])
            return list(found.values())
        rows = await self._store.nearest(user_id, vectors, n_results=NEAREST)
        found = {m.id: m for row in rows for m, _ in row}
        if self._claims is not None:  # a restatement inside a long turn is seldom near the last one
            stating = [i for i in await self._claims.ids(user_id, keys) if i not in found]
            if stating:
                found.update((m.id, m) for m in await self._store.get(user_id, ids=stating))
        return list(found.values())

    async def _vectors(self, user_id: str, index: BM25Index | None, ids: list[str]) -> dict[str, np.ndarray]:
        found = index.vectors_of(ids) if index is not None else {}
        missing = [i for i in ids if i not in found]
        if missing:
            for mid, vec in (await self._store.embeddings(user_id, missing)).items():
                found[mid] = np.asarray(vec, dtype=np.float32)
        return found
