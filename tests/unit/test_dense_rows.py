"""The in-process dense rows as int8 codes with a scale per row (memory/recall/dense_rows.py): their
cosines and top-k against float32's, the exact top-k order of `ranked`, the dense model filter, and a
snapshot that keeps the codes; and the index's other compact parts of issue 45 (coverage by hashed
words, contexts held once)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.fakes import HashEmbedder
from memory.models import Memory
from memory.recall import snapshot
from memory.recall.dense_rows import QuantisedRows, ranked
from memory.recall.keyword_index import BM25Index, coverage, words_of
from memory.recall.postings import shared_texts
from memory.text.tokens import tokenize

TEXTS = [
    "我住在杭州，在一家银行做数据分析",
    "I moved to Lisbon last May for a new job",
    "我对花生过敏，记住这个",
    "My sister Anna is a nurse in Porto",
    "提醒我周五下午三点给王老师打电话",
    "Remind me to renew the car insurance on Monday",
    "我最近在学吉他，每周二上课",
    "Anna's husband works at the hospital in Porto too",
    "部署窗口改到了周四晚上十点",
    "The staging database listens on port 6543",
]
QUERIES = ["Where does Anna work?", "我住在哪个城市", "吉他课是哪天", "insurance Monday", "数据库端口"]
EMBED = HashEmbedder()


def memory(i: int, text: str) -> Memory:
    return Memory(
        id=f"m{i}",
        user_id="u",
        content=text,
        created_at=float(i),
        session_id="s",
        source="user",
        content_hash=f"h{i}",
    )


def unit(rows: int, dim: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return np.asarray(m / np.linalg.norm(m, axis=1, keepdims=True), dtype=np.float32)


def test_scores_are_float32_within_the_quantisation_bound() -> None:
    # the texts' own vectors (Chinese and English), then random unit rows past one block of 1,024
    texts = EMBED.embed_sync(TEXTS)
    cases = [(texts, EMBED.embed_sync(QUERIES)), (unit(2_500, 384, 1), unit(3, 384, 3))]
    cases.append((unit(1_100, 512, 2), unit(3, 512, 4)))
    for matrix, queries in cases:
        rows = QuantisedRows.of(matrix)
        assert rows.nbytes == matrix.shape[0] * (matrix.shape[1] + 4)
        for q in queries:
            exact = matrix @ q
            got = rows.scores(q)
            assert got.dtype == np.float32
            assert np.all(np.abs(got - exact) <= rows.error_bound(q) + 1e-6)
            assert np.abs(got - exact).max() < 3e-3  # in practice far inside the bound
        # the dequantised rows are the codes' values, and many queries answer as one
        np.testing.assert_allclose(rows.rows([0, 2]) @ matrix[0], rows.scores(matrix[0])[[0, 2]], atol=1e-5)
        many = rows.scores_many(matrix[:3])
        for k in range(3):
            np.testing.assert_allclose(many[k], rows.scores(matrix[k]), atol=1e-6)


def test_a_zero_row_and_an_empty_matrix() -> None:
    rows = QuantisedRows.of(np.array([[0.0, 0.0, 0.0], [0.6, -0.8, 0.0]], dtype=np.float32))
    np.testing.assert_allclose(
        rows.scores(np.array([0.6, -0.8, 0.0], dtype=np.float32)), [0.0, 1.0], atol=1e-2
    )
    assert len(QuantisedRows.of(np.zeros((0, 0), dtype=np.float32))) == 0
    assert QuantisedRows.of([]).scores(np.zeros(0, dtype=np.float32)).shape == (0,)
    with pytest.raises(ValueError, match="int8"):
        QuantisedRows(np.zeros((2, 3), dtype=np.float16), np.ones(2, dtype=np.float32))


def test_ranked_is_the_stable_argsort_prefix_ties_included() -> None:
    rng = np.random.default_rng(5)
    for _ in range(50):
        sims = rng.integers(0, 6, size=40).astype(np.float32)  # many ties
        for limit in (0, 1, 3, 7, 39, 40, 60):
            assert ranked(sims, limit).tolist() == np.argsort(-sims, kind="stable")[:limit].tolist()


def _index(models: list[str | None] | None = None) -> tuple[BM25Index, np.ndarray]:
    mems = [memory(i, t) for i, t in enumerate(TEXTS)]
    vectors = EMBED.embed_sync(TEXTS)
    return BM25Index(mems, vectors, models=models), vectors


def test_nearest_top_k_matches_float32_within_tolerance_zh_and_en() -> None:
    index, vectors = _index()
    for text in QUERIES:
        q = EMBED.embed_sync([text])[0]
        exact = vectors @ q
        found = index.nearest(q, limit=4)
        bound = float(QuantisedRows.of(vectors).error_bound(q).max())
        kth = np.sort(exact)[::-1][3]
        for m, sim in found:
            i = int(m.id[1:])
            assert abs(sim - exact[i]) <= bound + 1e-6
            assert exact[i] >= kth - 2 * bound - 1e-6  # nothing ranked in that float32 would not have
        # the order is by the quantised cosine, best first, and `cosine` gives the same values
        sims = [s for _, s in found]
        assert sims == sorted(sims, reverse=True)
        assert index.cosine([m.id for m, _ in found], q) == pytest.approx(
            {m.id: s for m, s in found}, abs=1e-6
        )


def test_nearest_with_keep_looks_past_the_first_candidates() -> None:
    mems = [memory(i, f"{TEXTS[i % len(TEXTS)]} ({i})") for i in range(300)]
    vectors = unit(300, 64, 9)
    index = BM25Index(mems, vectors)
    q = vectors[7]
    odd_late = [m for m in mems if int(m.id[1:]) % 2 and int(m.id[1:]) > 250]
    wanted = {m.id for m in odd_late}
    found = index.nearest(q, limit=20, keep=lambda m: m.id in wanted)
    sims = QuantisedRows.of(vectors).scores(q)
    expected = sorted(wanted, key=lambda mid: (-sims[int(mid[1:])], int(mid[1:])))[:20]
    assert [m.id for m, _ in found] == expected
    assert index.nearest(q, limit=5, keep=lambda m: False) == []


def test_the_model_filter_leaves_out_rows_of_another_model() -> None:
    tags: list[str | None] = ["minilm", "http:e5", None] * 3 + ["minilm"]
    index, vectors = _index(tags)
    for text in QUERIES:
        q = EMBED.embed_sync([text])[0]
        found = index.nearest(q, limit=10, model="minilm")
        assert {m.id for m, _ in found} == {f"m{i}" for i, t in enumerate(tags) if t != "http:e5"}
        everything = index.nearest(q, limit=10)
        assert len(everything) == 10
        kept = [(m.id, s) for m, s in everything if tags[int(m.id[1:])] != "http:e5"]
        assert [(m.id, s) for m, s in found] == kept  # the same cosines and order, rows left out
        cos = index.cosine([f"m{i}" for i in range(10)], q, model="http:e5")
        assert set(cos) == {f"m{i}" for i, t in enumerate(tags) if t != "minilm"}


def test_updates_keep_the_codes_of_unchanged_rows() -> None:
    index, vectors = _index()
    fresh = memory(20, "新的记忆：我搬到了成都")
    updated = index.updated([fresh], EMBED.embed_sync([fresh.embed_text]), deleted=["m3"])
    q = EMBED.embed_sync(["成都"])[0]
    ids = [f"m{i}" for i in range(10) if i != 3]
    assert updated.cosine(ids, q) == index.cosine(ids, q)
    rebuilt = BM25Index([*(m for m in index.memories.values() if m.id != "m3"), fresh], None)
    assert not rebuilt.has_vectors
    assert "m20" in updated.vectors_of(["m20", "nope"])


def test_a_snapshot_keeps_the_codes_and_an_older_format_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    index, _ = _index(None)
    raw = snapshot.encode(3, index, None, "f")
    loaded = snapshot.decode(raw, "f")
    assert loaded is not None
    mine, theirs = loaded.index.parts()[2], index.parts()[2]
    assert mine is not None
    assert theirs is not None
    assert np.array_equal(mine.codes, theirs.codes)
    assert np.array_equal(mine.scales, theirs.scales)
    q = EMBED.embed_sync(["我住在哪个城市"])[0]
    assert [(m.id, s) for m, s in loaded.index.nearest(q, limit=5)] == [
        (m.id, s) for m, s in index.nearest(q, limit=5)
    ]
    monkeypatch.setattr(snapshot, "FORMAT", 2)  # a worker of the float16 format wrote it
    older = snapshot.encode(3, index, None, "f")
    monkeypatch.undo()
    assert snapshot.decode(older, "f") is None


def test_coverage_by_hashed_words_is_coverage_by_the_words() -> None:
    """`BM25Index.coverage` reads a memory's words and its context's as sorted hashes (issue 45: their
    frozensets were most of a worker's memory for users of long turns): the same answer as the sets."""
    mems = [
        Memory(
            id=f"c{i}",
            user_id="u",
            content=text,
            created_at=float(i),
            session_id="s",
            source="user",
            content_hash=f"c{i}",
            context=TEXTS[(i + 3) % len(TEXTS)] + " " + TEXTS[(i + 5) % len(TEXTS)],
        )
        for i, text in enumerate(TEXTS)
    ]
    index = BM25Index(mems, EMBED.embed_sync([m.embed_text for m in mems]))
    for q in [*QUERIES, "Anna Porto nurse hospital", "杭州 银行 数据 吉他", "xyzzy plugh", ""]:
        tokens = tokenize(q)
        for m in mems:
            expected = coverage(
                tokens,
                words_of(m.embed_text),
                words_of(m.context),
                index._idf,
                math.log(1 + (len(mems) + 0.5) / 0.5),
            )
            assert index.coverage([m.id], tokens) == [expected]


def test_contexts_are_held_once() -> None:
    context = "我们上周聊到了部署窗口和数据库端口 " * 20
    mems = [
        Memory(
            id=f"s{i}",
            user_id="u",
            content=text,
            created_at=float(i),
            session_id="s",
            source="user",
            content_hash=f"s{i}",
            context="".join(list(context)),  # equal, not the same object
        )
        for i, text in enumerate(TEXTS[:4])
    ]
    assert mems[0].context is not mems[1].context
    shared = shared_texts(mems)
    assert shared == mems
    assert all(m.context is shared[0].context for m in shared)
    index = BM25Index(mems, EMBED.embed_sync([m.embed_text for m in mems]))
    loaded = snapshot.decode(snapshot.encode(1, index, None, "f"), "f")
    assert loaded is not None
    held = list(loaded.index.memories.values())
    assert held == mems
    assert all(m.context is held[0].context for m in held)
    assert all(m.user_id is held[0].user_id for m in held)


def test_a_vector_from_the_change_log_gets_the_codes_of_the_store_s() -> None:
    """The change log carries float16 vectors, the store float32: both quantise to the same codes, so an
    index brought forward through the log ranks as a fresh build does (to the bit)."""
    matrix = np.concatenate([unit(500, 384, 11), EMBED.embed_sync(TEXTS)[:, :64].repeat(6, axis=1)])
    stored, logged = QuantisedRows.of(matrix), QuantisedRows.of(matrix.astype(np.float16))
    assert np.array_equal(stored.codes, logged.codes)
    assert np.array_equal(stored.scales, logged.scales)
