"""The keyword index updated in place of a rebuild gives exactly what a rebuild gives."""

from __future__ import annotations

import numpy as np

from harness.fakes import HashEmbedder
from memory.models import Memory
from memory.recall.keyword_index import BM25Index
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
]
QUERIES = ["Where does Anna work?", "我住在哪个城市", "吉他课是哪天", "insurance Monday", "花生"]
EMBED = HashEmbedder()


def memory(i: int, text: str, context: str = "") -> Memory:
    return Memory(
        id=f"m{i}",
        user_id="u",
        content=text,
        created_at=float(i),
        session_id="s",
        source="user",
        content_hash=f"h{i}",
        context=context,
    )


def build(memories: list[Memory]) -> BM25Index:
    return BM25Index(memories, EMBED.embed_sync([m.embed_text for m in memories]))


def results(index: BM25Index) -> list[list[tuple[str, float]]]:
    return [[(i, round(s, 9)) for i, s in index.search(tokenize(q), limit=5)] for q in QUERIES]


def test_update_equals_rebuild_for_adds_replacements_and_deletes() -> None:
    base = [memory(i, t) for i, t in enumerate(TEXTS[:5])]
    added = [memory(i, t) for i, t in enumerate(TEXTS[5:], start=5)]
    replaced = memory(1, "I moved to Berlin last May for a new job", context="我们聊到了搬家")
    index = build(base)

    updated = index.updated(
        [*added, replaced], EMBED.embed_sync([m.embed_text for m in [*added, replaced]]), deleted=["m2"]
    )
    expected = build([m for m in base if m.id not in {"m1", "m2"}] + [*added, replaced])

    assert sorted(updated.memories) == sorted(expected.memories)
    assert results(updated) == results(expected)
    q = EMBED.embed_sync(["Anna nurse Porto"])[0]
    ids = sorted(updated.memories)
    assert updated.cosine(ids, q) == expected.cosine(ids, q)
    # the original is untouched: a search running on it meanwhile sees a consistent index
    assert sorted(index.memories) == [f"m{i}" for i in range(5)]
    assert results(index) == results(build(base))


def test_update_without_vectors_keeps_keywords_but_drops_cosines() -> None:
    index = build([memory(i, t) for i, t in enumerate(TEXTS[:3])])
    updated = index.updated([memory(9, "Lisbon trams are yellow")], None, deleted=[])
    assert "m9" in dict(updated.search(tokenize("Lisbon"), limit=5))
    assert updated.cosine(["m0"], np.ones(64, dtype=np.float32)) == {}


def test_update_of_an_empty_index() -> None:
    empty = BM25Index([], np.zeros((0, 0), dtype=np.float32))
    m = memory(1, "我住在杭州")
    updated = empty.updated([m], EMBED.embed_sync([m.embed_text]), deleted=[])
    assert results(updated) == results(build([m]))
    q = EMBED.embed_sync(["杭州"])[0]
    assert updated.cosine(["m1"], q) == build([m]).cosine(["m1"], q)


def test_with_hashes_follows_updates() -> None:
    index = build([memory(i, t) for i, t in enumerate(TEXTS[:4])])
    assert [m.id for m in index.views.with_hashes(["h2", "h0", "nope", "h2"])] == ["m2", "m0"]
    later = index.updated([memory(9, TEXTS[6])], EMBED.embed_sync([TEXTS[6]]), deleted=["m0"])
    assert [m.id for m in later.views.with_hashes(["h0", "h9"])] == ["m9"]
    assert [m.id for m in index.views.with_hashes(["h0"])] == ["m0"]  # the old index is unchanged


def test_a_delete_only_update_keeps_every_vector() -> None:
    """A worker following a delete (no new records) must keep exact cosine in process: before, it lost
    every vector and sent that user's searches to Chroma."""
    base = [memory(i, t) for i, t in enumerate(TEXTS)]
    updated = build(base).updated([], None, deleted=["m1", "m4"])
    expected = build([m for m in base if m.id not in {"m1", "m4"}])
    assert updated.has_vectors
    for q in QUERIES:
        qv = EMBED.embed_sync([q])[0]
        assert [(m.id, round(s, 3)) for m, s in updated.nearest(qv, limit=5)] == [
            (m.id, round(s, 3)) for m, s in expected.nearest(qv, limit=5)
        ]
    assert results(updated) == results(expected)
    assert build(base).updated([], None, deleted=[m.id for m in base]).has_vectors  # emptied


def test_nearest_many_answers_as_nearest_does_for_each_query() -> None:
    index = build([memory(i, text) for i, text in enumerate(TEXTS)])
    queries = EMBED.embed_sync(["我住在杭州", "My sister Anna is a nurse", "something else entirely"])
    many = index.nearest_many(queries, limit=2)
    assert [[(m.id, round(s, 5)) for m, s in hits] for hits in many] == [
        [(m.id, round(s, 5)) for m, s in index.nearest(q, limit=2)] for q in queries
    ]
    assert BM25Index([]).nearest_many(queries, limit=1) == [[], [], []]


def test_cached_indexes_share_one_string_per_word_and_one_float_per_weight() -> None:
    """A worker's index cache holds each word once, however many memories repeat it (issue 29: the
    per-memory copies were most of an index's memory)."""
    index = build([memory(0, "my sister Anna lives in Porto"), memory(1, "Anna moved to Porto", "Anna")])
    first = {t: t for t in index._tf["m0"]}
    second = {t: t for t in index._tf["m1"]}
    assert first["porto"] is second["porto"]
    assert index._tf["m0"]["porto"] is index._tf["m1"]["porto"]  # both weigh 1.0
