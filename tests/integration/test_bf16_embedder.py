"""MiniLM with bfloat16 weights (EMBEDDING_BACKEND=torch, EMBEDDING_PRECISION=bf16|auto) against the
fp32 model: the vectors a deployment stores must not move by more than the int8 graph's do."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from app.composition import build_embedder
from memory import SentenceTransformerEmbedder
from memory.embedding.base import Vectors
from memory.embedding.onnx import OnnxEmbedder
from memory.embedding.sentence_transformer import native_bf16
from tests.conftest import make_settings
from tests.integration.test_onnx_embedder import QUERIES, SENTENCES, ZH_QUERIES

pytestmark = pytest.mark.integration

# a long turn's segments, English and Chinese mixed, as an import embeds them
LONG = [
    "I refactored the ingestion service last sprint: the Kafka consumer now batches 500 records, "
    "commits offsets after the Postgres upsert, and retries with exponential backoff up to 5 times.",
    "我们把部署从 Jenkins 迁移到了 GitHub Actions，构建时间从二十分钟降到了八分钟，缓存了 pip 和 npm 的依赖。",
    "Always answer me in bullet points, and keep code samples under twenty lines please.",
    "以后回答我的时候请用要点列出来，代码示例不要超过二十行。",
]


@pytest.fixture(scope="module")
def fp32() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(torch_threads=1, precision="fp32")


@pytest.fixture(scope="module")
def bf16() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder(torch_threads=1, precision="bf16")


def _cosines(a: Vectors, b: Vectors) -> Vectors:
    return np.asarray((a * b).sum(axis=1), dtype=np.float32)


def test_bf16_vectors_stay_at_the_fp32_ones(
    fp32: SentenceTransformerEmbedder, bf16: SentenceTransformerEmbedder
) -> None:
    texts = SENTENCES + LONG
    ours, reference = bf16.embed_sync(texts), fp32.embed_sync(texts)
    assert bf16.precision == "bf16"
    assert fp32.precision == "fp32"
    assert ours.dtype == np.float32
    assert ours.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)  # pooled in fp32
    cosines = _cosines(ours, reference)
    assert float(cosines.min()) >= 0.9995, cosines
    assert float(cosines.min()) < 0.99999, "the weights are not in bf16: the vectors are fp32's"
    # closer to fp32 than the int8 graph every deployment already stores
    int8 = _cosines(OnnxEmbedder(threads=1).embed_sync(texts), reference)
    assert float(cosines.mean()) > float(int8.mean()), (cosines.mean(), int8.mean())


def test_bf16_ranks_like_fp32(fp32: SentenceTransformerEmbedder, bf16: SentenceTransformerEmbedder) -> None:
    queries = [q for q, _ in QUERIES] + ZH_QUERIES
    ours = bf16.embed_sync(queries) @ bf16.embed_sync(SENTENCES).T
    reference = fp32.embed_sync(queries) @ fp32.embed_sync(SENTENCES).T
    assert float(np.abs(ours - reference).max()) <= 0.005
    for (query, expected), row in zip(QUERIES, ours[: len(QUERIES)], strict=True):
        assert SENTENCES[int(np.argmax(row))] == expected, query


async def test_longer_slices_give_the_same_vectors(bf16: SentenceTransformerEmbedder) -> None:
    """`embed` cuts a long list into slices (three times the int8 graph's tokens in bf16): the vectors
    are those of one synchronous call, in order."""
    texts = (LONG * 6) + SENTENCES
    together = await bf16.embed(texts)
    alone = bf16.embed_sync(texts)
    assert float(_cosines(together, alone).min()) > 0.9999


def test_auto_takes_bf16_only_where_the_cpu_has_it() -> None:
    """EMBEDDING_PRECISION=auto (the default): bf16 where the CPU multiplies it natively, else fp32;
    the ONNX backend ignores it."""
    settings = make_settings("redis://127.0.0.1:1", "http://127.0.0.1:1", embedding_backend="torch")
    auto = build_embedder(settings)
    assert isinstance(auto, SentenceTransformerEmbedder)
    assert auto.precision == ("bf16" if native_bf16() else "fp32")
    forced = build_embedder(settings.model_copy(update={"embedding_precision": "fp32"}))
    assert isinstance(forced, SentenceTransformerEmbedder)
    assert forced.precision == "fp32"
    onnx = build_embedder(settings.model_copy(update={"embedding_backend": "onnx"}))
    assert isinstance(onnx, OnnxEmbedder)


def test_an_unknown_precision_is_refused() -> None:
    with pytest.raises(ValueError, match="embedding_precision"):
        make_settings("redis://127.0.0.1:1", "http://127.0.0.1:1", embedding_precision="int4")


def test_bf16_inputs_come_in_few_shapes(bf16: SentenceTransformerEmbedder) -> None:
    """oneDNN keeps a kernel per input shape (with its weights reordered for it): padded to their
    longest text, a writer's calls grew the process by 700 MB in 400 calls; padded to a multiple of 32
    tokens, a call's length is one of 8 up to the model's 256 (4 at the service's 128) whatever the texts."""
    lengths: set[int] = set()

    def seen(_module: object, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        features = args[0] if args else kwargs["features"]
        lengths.add(int(features["input_ids"].shape[1]))

    handle = bf16._model[0].register_forward_pre_hook(seen, with_kwargs=True)
    try:
        for n in range(1, 40, 3):
            bf16.embed_sync([" ".join(["部署窗口 deploy window"] * n), "ok"])
    finally:
        handle.remove()
    assert lengths
    assert all(length % 32 == 0 for length in lengths), lengths
    assert max(lengths) <= 256
