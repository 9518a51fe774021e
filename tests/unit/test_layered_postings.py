"""A write's index (`BM25Index.updated`) changes only the postings of the terms it touches
(`LayeredPostings`), and is the index a whole rebuild makes: same postings in the same order, same
lengths, idf and search scores, from an index built in process or loaded from a snapshot."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest

from memory.models import Memory
from memory.recall.keyword_index import BM25Index, coverage
from memory.recall.postings import ColumnPostings, Delta, LayeredPostings, TermFrequencies
from memory.recall.snapshot import decode, encode
from memory.text.tokens import tokenize

EN = [
    "deploy",
    "window",
    "database",
    "replica",
    "cache",
    "queue",
    "nurse",
    "dentist",
    "Lisbon",
    "Porto",
    "guitar",
    "bullet",
    "points",
]
ZH = ["部署窗口", "数据库", "缓存", "队列", "护士", "牙医", "杭州", "吉他", "要点", "不吃辣"]
QUERIES = [
    "when is the deploy window",
    "我的牙医在哪里",
    "database replica cache",
    "要点 bullet points",
    "吉他",
]


def memory(i: int, rng: random.Random) -> Memory:
    words = rng.sample(EN, 4) + rng.sample(ZH, 2)
    context = " ".join(rng.sample(EN, 6) + rng.sample(ZH, 3)) if i % 3 else ""
    return Memory(
        id=f"m{i}",
        user_id="u",
        content=" ".join(words),
        created_at=1_700_000_000.0 + i,
        session_id="s",
        source="user",
        content_hash=f"h{i}",
        importance=0.5,
        context=context,
    )


def vectors(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)


def assert_same(index: BM25Index, rebuilt: BM25Index) -> None:
    assert list(index.memories) == list(rebuilt.memories)
    assert index._len == rebuilt._len
    assert index._idf == pytest.approx(rebuilt._idf)
    assert sorted(index._postings) == sorted(rebuilt._postings)
    for term in rebuilt._postings:
        assert index._postings[term] == rebuilt._postings[term], term
    for query in QUERIES:
        ours, theirs = index.search(tokenize(query), limit=10), rebuilt.search(tokenize(query), limit=10)
        assert [mid for mid, _ in ours] == [mid for mid, _ in theirs], query
        assert [s for _, s in ours] == pytest.approx([s for _, s in theirs]), query


def a_write(
    current: list[Memory], rng: random.Random, step: int
) -> tuple[list[Memory], list[Memory], list[str]]:
    """A random write over `current` (3 added; on odd steps 2 replaced with new words, zh and en; 2
    deleted): the memories after it, the ones it upserts and the ids it deletes."""
    added = [memory(100_000 * (step + 1) + k, rng) for k in range(3)]  # never an id written before
    replaced = [dataclasses.replace(m, content=m.content + " 杭州 Porto") for m in rng.sample(current, 2)]
    replaced_ids = {m.id for m in replaced}
    deleted = [m.id for m in rng.sample([m for m in current if m.id not in replaced_ids], 2)]
    upserted = added + replaced if step % 2 else added  # some writes only add (an import's)
    gone = set(deleted) | {m.id for m in upserted}
    return [m for m in current if m.id not in gone] + upserted, upserted, deleted


@pytest.mark.parametrize("start", ["built", "snapshot"])
def test_writes_give_the_index_a_rebuild_gives(start: str) -> None:
    rng = random.Random(45)
    current = [memory(i, rng) for i in range(40)]
    index = BM25Index(current, vectors(40, 0))
    if start == "snapshot":
        loaded = decode(encode(1, index, None, "f"), "f")
        assert loaded is not None
        index = loaded.index
        assert isinstance(index._postings, ColumnPostings)
    for step in range(12):
        current, upserted, deleted = a_write(current, rng, step)
        index = index.updated(upserted, vectors(len(upserted), step + 1), deleted)
        assert isinstance(index._postings, LayeredPostings)
        assert_same(index, BM25Index(current, vectors(len(current), 99)))


def test_a_write_never_changes_the_index_it_was_made_from() -> None:
    rng = random.Random(7)
    first = [memory(i, rng) for i in range(10)]
    index = BM25Index(first)
    before = {t: (list(ids), list(ws)) for t, (ids, ws) in index._postings.items()}
    replaced = dataclasses.replace(first[0], content="dentist 牙医 Lisbon")
    later = index.updated([memory(10, rng), replaced], None, ["m3"])
    assert {t: index._postings[t] for t in index._postings} == before
    assert "m3" in index.memories
    assert "m3" not in later.memories
    assert all("m3" not in later._postings[t][0] for t in later._postings)


def test_a_term_no_memory_holds_any_more_is_gone() -> None:
    only = Memory(
        id="x", user_id="u", content="xylophone 木琴", created_at=1.0, session_id="s", source="user",
        content_hash="hx", importance=0.5,
    )  # fmt: skip
    index = BM25Index([only, memory(1, random.Random(1))])
    assert "xylophon" in index._postings
    later = index.updated([], None, ["x"])
    assert "xylophon" not in later._postings
    assert "xylophon" not in later._idf
    assert later.search(tokenize("xylophone"), limit=5) == []
    assert later.known(tokenize("xylophone")) == 0.0


@pytest.mark.parametrize("limit", [1, 3, 10, 100])
def test_a_loaded_snapshot_scores_every_memory_as_the_built_index_does(limit: int) -> None:
    """The columns score all their terms in one numpy pass (`ColumnPostings.bm25`): the same floats as
    the built index's loop, the same ranks, ties (equal memories) in the same order, at any limit."""
    rng = random.Random(3)
    current = [memory(i, rng) for i in range(60)]
    current += [dataclasses.replace(current[5], id=f"twin{k}", content_hash=f"t{k}") for k in range(3)]
    built = BM25Index(current, vectors(len(current), 0))
    loaded = decode(encode(1, built, None, "f"), "f")
    assert loaded is not None
    assert isinstance(loaded.index._postings, ColumnPostings)
    for query in [*QUERIES, current[5].content]:
        ours = loaded.index.search(tokenize(query), limit=limit)
        theirs = built.search(tokenize(query), limit=limit)
        assert ours == theirs, query
        assert ours, query


def test_coverage_read_off_the_postings_is_the_tokenised_one() -> None:
    """A candidate's coverage (which query words its text holds, which only its context) is read off
    the postings: of an index built here, of a loaded snapshot's columns, and of one written to after
    loading; each the same as tokenising the memory and its context (zh and en, some without context)."""
    rng = random.Random(45)
    mems = [memory(i, rng) for i in range(60)]
    built = BM25Index(mems)
    loaded = decode(encode(1, built, None, "f"), "f")
    assert loaded is not None
    assert isinstance(loaded.index._postings, ColumnPostings)
    again = decode(encode(1, built, None, "f"), "f")
    assert again is not None
    written = again.index.updated([memory(i, rng) for i in range(60, 64)], None, ["m3"])
    for index in (built, loaded.index, written):
        mids = list(index.memories)
        unseen = math.log(1 + (len(mids) + 0.5) / 0.5)
        for query in [*QUERIES, "my dentist in Porto 杭州的护士", "xyzzy 啊啊"]:
            tokens = tokenize(query)
            expected = [
                coverage(
                    tokens,
                    set(tokenize(index.memories[mid].embed_text)),
                    set(tokenize(index.memories[mid].context)),
                    index._idf,
                    unseen,
                )
                for mid in mids
            ]
            assert index.coverage(mids, tokens) == expected
            assert any(c > 0 for c, _ in expected) or query.startswith("xyzzy")
    assert isinstance(loaded.index._tf, TermFrequencies)
    assert loaded.index._tf.rows_made == 0  # read off the columns: no term frequencies made for it


def test_a_write_after_a_load_makes_only_the_term_frequencies_of_what_it_removes() -> None:
    """A loaded snapshot's term frequencies are made a memory at a time: a write reads those of the
    memories it deletes or replaces, no other (made whole they were seconds and gigabytes at 58,565
    memories); the index it makes has every memory's, equal to a build's, zh and en."""
    rng = random.Random(11)
    mems = [memory(i, rng) for i in range(50)]
    built = BM25Index(mems)
    loaded = decode(encode(1, built, None, "f"), "f")
    assert loaded is not None
    before = loaded.index._tf
    assert isinstance(before, TermFrequencies)
    replaced = dataclasses.replace(mems[4], content="我的牙医在杭州 my dentist moved")
    new = memory(50, rng)
    later = loaded.index.updated([replaced, new], None, ["m7", "m9"])
    assert before.rows_made == 3  # m4 (replaced), m7, m9
    assert isinstance(later._postings, LayeredPostings)
    changed = later._postings.changed
    assert changed
    assert all(isinstance(d, Delta) for d in changed.values())  # no run made into lists
    expected = built.updated([replaced, new], None, ["m7", "m9"])
    assert list(later._tf) == [m for m in built.memories if m not in ("m4", "m7", "m9")] + ["m4", "m50"]
    assert "m7" not in later._tf
    assert "m7" in before  # the index it was made from is unchanged
    assert dict(later._tf.items()) == dict(expected._tf.items())
    assert_same(later, expected)
