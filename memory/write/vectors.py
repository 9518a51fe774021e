"""The dense vectors of a write round's memories: each user's by the user's dense model (during a switch
not every user is on the current one: memory/longterm/dense_models.py), taken where they were already
computed (before the user's lock, or by recall for the exact text), the rest in one call per model."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from memory.embedding.base import Vectors
from memory.longterm.dense_models import DenseModel, DenseModels
from memory.longterm.shared_vectors import SharedVectors

# (user id, model tag, text) -> the vector computed before the user's lock
Early = dict[tuple[str, str, str], Vectors]
Rows = Sequence[tuple[str, DenseModel, Sequence[str]]]  # (user id, their model, texts)


class WriteVectors:
    def __init__(self, dense: DenseModels, shared: SharedVectors | None) -> None:
        """`shared`: recall's published query vectors (the current model's)."""
        self._dense = dense
        self._shared = shared

    async def models(self, users: Sequence[str], *, fresh: bool) -> dict[str, DenseModel]:
        """Each user's dense model (`fresh`: read under the user's lock: exactly the store's)."""
        if not self._dense.switching:
            return dict.fromkeys(users, self._dense.current)
        found = await asyncio.gather(*(self._dense.for_user(u, fresh=fresh) for u in users))
        return dict(zip(users, found, strict=True))

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
