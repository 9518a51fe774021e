"""The dense vectors of a write round's memories: each user's by the user's dense model (during a switch
not every user is on the current one: memory/longterm/dense_models.py), taken where they were already
computed (before the user's lock, by recall for the exact text, or ahead of the round by `warm`: the
writer embeds an import's next round while it stores this one), the rest in one call per model."""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from memory.embedding.base import Vectors
from memory.longterm.dense_models import DenseModel, DenseModels
from memory.longterm.shared_vectors import SharedVectors

# (user id, model tag, text) -> the vector computed before the user's lock
Early = dict[tuple[str, str, str], Vectors]
Rows = Sequence[tuple[str, DenseModel, Sequence[str]]]  # (user id, their model, texts)
WARM_MAX = 4096  # vectors embedded ahead of their round (`WriteVectors.warm`): ~6 MB of MiniLM's


class WriteVectors:
    def __init__(self, dense: DenseModels, shared: SharedVectors | None) -> None:
        """`shared`: recall's published query vectors (the current model's)."""
        self._dense = dense
        self._shared = shared
        # (user id, model tag, text) -> vector embedded ahead by `warm`, taken (once) by `vectors`
        self._warm: OrderedDict[tuple[str, str, str], Vectors] = OrderedDict()

    async def models(self, users: Sequence[str], *, fresh: bool) -> dict[str, DenseModel]:
        """Each user's dense model (`fresh`: read under the user's lock: exactly the store's)."""
        if not self._dense.switching:
            return dict.fromkeys(users, self._dense.current)
        found = await asyncio.gather(*(self._dense.for_user(u, fresh=fresh) for u in users))
        return dict(zip(users, found, strict=True))

    async def warm(self, rows: Rows) -> None:
        """Embed these texts ahead of the round that will write them (an import's next round, while
        this one is stored): that round takes them instead of embedding again. Bounded: the oldest
        are dropped past WARM_MAX (a round that never came)."""
        todo = [
            (user_id, model, [t for t in dict.fromkeys(texts) if (user_id, model.tag, t) not in self._warm])
            for user_id, model, texts in rows
        ]
        todo = [row for row in todo if row[2]]
        if not todo:
            return
        for (user_id, model, texts), array in zip(todo, await self.vectors(todo, {}), strict=True):
            for text, vector in zip(texts, array, strict=True):
                self._warm[(user_id, model.tag, text)] = vector
        while len(self._warm) > WARM_MAX:
            self._warm.popitem(last=False)

    async def early(self, rows: Rows) -> Early:
        """Before the lock: every text's vector (recall's where published), by (user, model, text)."""
        vectors = await self.vectors(rows, {})
        return {
            (user_id, model.tag, text): vector
            for (user_id, model, texts), array in zip(rows, vectors, strict=True)
            for text, vector in zip(texts, array, strict=True)
        }

    async def vectors(self, rows: Rows, early: Early) -> list[Vectors]:
        """Each row's vectors: those embedded before the lock by the same model, recall's where published
        for the exact text (the current model's only), the rest in one call per model."""
        known: list[dict[int, Vectors]] = [
            {j: early[(u, model.tag, text)] for j, text in enumerate(texts) if (u, model.tag, text) in early}
            for u, model, texts in rows
        ]
        if self._warm:
            for n, (u, model, texts) in enumerate(rows):
                for j, text in enumerate(texts):
                    warmed = self._warm.pop((u, model.tag, text), None)
                    if warmed is not None and j not in known[n]:
                        known[n][j] = warmed
        if self._shared is not None:
            shared = self._shared
            current = self._dense.current
            asked = [n for n, (_, m, t) in enumerate(rows) if m is current and len(known[n]) < len(t)]
            fetched = await asyncio.gather(
                *(shared.fetch(rows[n][0], rows[n][2], current.embedder.dimension) for n in asked)
            )
            for n, found in zip(asked, fetched, strict=True):
                known[n] = {**found, **known[n]}
        out = [np.empty((len(t), m.embedder.dimension), dtype=np.float32) for _, m, t in rows]
        for n, published in enumerate(known):
            for j, vector in published.items():
                out[n][j] = vector
        by_model: dict[int, list[tuple[int, int]]] = {}
        for n, (_, model, texts) in enumerate(rows):
            by_model.setdefault(id(model), []).extend((n, j) for j in range(len(texts)) if j not in known[n])
        for missing in by_model.values():
            if not missing:
                continue
            embedder = rows[missing[0][0]][1].embedder
            computed = await embedder.embed([rows[n][2][j] for n, j in missing])
            for row, (n, j) in enumerate(missing):
                out[n][j] = computed[row]
        return out
