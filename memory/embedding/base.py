"""The embedding seam: every embedder maps texts to L2-normalised float32 vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Maps texts to L2-normalised vectors (cosine similarity == dot product)."""

    @property
    def dimension(self) -> int: ...

    async def embed(self, texts: Sequence[str]) -> Vectors: ...
