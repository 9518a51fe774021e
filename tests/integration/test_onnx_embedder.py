"""The int8 ONNX embedder against the torch sentence-transformers model it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from memory import SentenceTransformerEmbedder
from memory.embedding.base import Vectors
from memory.embedding.onnx import OnnxEmbedder, int8_model_path

pytestmark = pytest.mark.integration

SENTENCES = [
    "我住在杭州",
    "I moved to Berlin last May",
    "我对花生过敏",
    "I'm allergic to peanuts",
    "My daughter's name is Lily and she is seven",
    "我女儿叫小雨，今年七岁",
    "Remind me to call the dentist on Friday",
    "提醒我周五给牙医打电话",
    "I work as a data engineer at a logistics company",
    "我是一名护士，在市医院上夜班",
    "My favourite food is ramen",
    "我最喜欢吃火锅",
    "We are planning a trip to Osaka in October",
    "我们打算十月去厦门旅行",
    "I'm learning to play the violin",
    "我在学钢琴",
    "My order number is 4829301756",
    "ok thanks!",
    "我昨天跑了十公里，腿有点酸",
    "Can you recommend a good sci-fi novel? I loved The Three-Body Problem.",
]

# (query, the sentence both backends must rank first). English only: all-MiniLM-L6-v2's vocabulary maps
# most Chinese characters to [UNK] ("我住在杭州" -> 我 [UNK] [UNK] [UNK] 州), so neither backend ranks
# Chinese text meaningfully; for those the test only asks that the two backends score alike.
QUERIES = [
    ("Which city did I move to?", "I moved to Berlin last May"),
    ("What am I allergic to?", "I'm allergic to peanuts"),
    ("What instrument am I learning?", "I'm learning to play the violin"),
    ("What is my job?", "I work as a data engineer at a logistics company"),
    ("When should I call the dentist?", "Remind me to call the dentist on Friday"),
    ("What's my daughter's name?", "My daughter's name is Lily and she is seven"),
]
ZH_QUERIES = ["我住在哪里", "我对什么过敏？", "我喜欢吃什么？"]


@pytest.fixture(scope="module")
def onnx_embedder() -> OnnxEmbedder:
    return OnnxEmbedder()


@pytest.fixture(scope="module")
def torch_embedder() -> SentenceTransformerEmbedder:
    """The fp32 model through sentence-transformers (conftest's `embedder` is the ONNX one)."""
    return SentenceTransformerEmbedder(torch_threads=1, precision="fp32")


def _cosines(a: Vectors, b: Vectors) -> Vectors:
    return np.asarray((a * b).sum(axis=1), dtype=np.float32)


def test_model_file_is_installed() -> None:
    assert int8_model_path().is_file()


def test_shape_dtype_and_normalised(onnx_embedder: OnnxEmbedder) -> None:
    vectors = onnx_embedder.embed_sync(SENTENCES)
    assert onnx_embedder.dimension == 384
    assert vectors.shape == (len(SENTENCES), 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_empty_input(onnx_embedder: OnnxEmbedder) -> None:
    vectors = onnx_embedder.embed_sync([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


async def test_async_matches_sync(onnx_embedder: OnnxEmbedder) -> None:
    texts = SENTENCES[:5]
    np.testing.assert_allclose(await onnx_embedder.embed(texts), onnx_embedder.embed_sync(texts), atol=1e-6)


def test_batching_does_not_change_vectors(onnx_embedder: OnnxEmbedder) -> None:
    """Length-sorted, padded batches give the same vector as embedding each text alone."""
    together = onnx_embedder.embed_sync(SENTENCES)
    alone = np.vstack([onnx_embedder.embed_sync([s]) for s in SENTENCES])
    assert float(_cosines(together, alone).min()) > 0.9999


def test_agrees_with_torch_backend(
    torch_embedder: SentenceTransformerEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    torch_vectors = torch_embedder.embed_sync(SENTENCES)
    onnx_vectors = onnx_embedder.embed_sync(SENTENCES)
    cosines = _cosines(torch_vectors, onnx_vectors)
    assert float(cosines.mean()) >= 0.995, cosines
    assert float(cosines.min()) >= 0.99, cosines


def test_truncates_long_input_like_torch(
    torch_embedder: SentenceTransformerEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    long_text = " ".join(["I moved to Berlin last May and I love the parks there."] * 60)
    cosine = float(_cosines(torch_embedder.embed_sync([long_text]), onnx_embedder.embed_sync([long_text]))[0])
    assert cosine >= 0.99


def test_nearest_neighbour_ranking_agrees(
    torch_embedder: SentenceTransformerEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    queries = [q for q, _ in QUERIES]
    for backend in (torch_embedder, onnx_embedder):
        scores = backend.embed_sync(queries) @ backend.embed_sync(SENTENCES).T
        for (query, expected), row in zip(QUERIES, scores, strict=True):
            assert SENTENCES[int(np.argmax(row))] == expected, (type(backend).__name__, query)


def test_query_document_scores_agree(
    torch_embedder: SentenceTransformerEmbedder, onnx_embedder: OnnxEmbedder
) -> None:
    """Every query-document similarity (zh and en) moves by at most a hair between the backends."""
    queries = [q for q, _ in QUERIES] + ZH_QUERIES
    torch_scores = torch_embedder.embed_sync(queries) @ torch_embedder.embed_sync(SENTENCES).T
    onnx_scores = onnx_embedder.embed_sync(queries) @ onnx_embedder.embed_sync(SENTENCES).T
    assert float(np.abs(torch_scores - onnx_scores).max()) <= 0.02


def test_max_tokens_cuts_long_texts_and_keeps_short_ones_whole() -> None:
    """`max_tokens` (EMBEDDING_MAX_TOKENS): what lies past the cut does not change the vector; a text
    shorter than the cut is embedded as without it."""
    capped, full = OnnxEmbedder(max_tokens=32), OnnxEmbedder()
    head = (
        "I moved to Berlin last May for a new job at a logistics company, and my sister Anna came too; "
        "she teaches music at a school in Kreuzberg and plays the violin in an orchestra on weekends"
    )  # ~40 tokens
    long_a = head + " and we found a flat near the river with a small balcony for her plants."
    long_b = head + ". 后来我们又搬去了汉堡，因为她在那边找到了老师的工作。"
    a, b = capped.embed_sync([long_a, long_b])
    assert float(a @ b) == pytest.approx(1.0, abs=1e-5)  # only the first 32 tokens were read
    fa, fb = full.embed_sync([long_a, long_b])
    assert float(fa @ fb) < 0.99  # read whole, they differ
    short = "我对花生过敏"
    np.testing.assert_allclose(capped.embed_sync([short]), full.embed_sync([short]), atol=1e-6)
