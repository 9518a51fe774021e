"""The only test doubles: a deterministic embedder for pure unit tests and the archive benchmark."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from memory.embedding.base import Vectors


class HashEmbedder:
    """Bag of hashed character bigrams, L2-normalised: similar strings get similar vectors."""

    def __init__(self, dimension: int = 64) -> None:
        self._dimension = dimension

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            folded = text.casefold()
            for i in range(max(1, len(folded) - 1)):
                gram = folded[i : i + 2].encode("utf-8")
                bucket = int.from_bytes(hashlib.blake2b(gram, digest_size=4).digest(), "big")
                out[row, bucket % self._dimension] += 1.0
            norm = float(np.linalg.norm(out[row]))
            if norm:
                out[row] /= norm
        return out

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return self.embed_sync(texts)
