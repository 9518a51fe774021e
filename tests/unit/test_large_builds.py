"""A build past `COLUMNS_FROM` memories keeps its term frequencies and postings as arrays, as a loaded
snapshot does (memory/recall/term_rows.py), and is the index a build of dicts and lists makes: the same
postings, lengths, idf, scores, coverage and snapshot bytes, before and after writes, zh and en. The
limit is lowered here so that small sets take that path."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from memory.models import Memory
from memory.recall import keyword_index
from memory.recall.keyword_index import BM25Index
from memory.recall.postings import ColumnPostings, LayeredPostings, TermFrequencies
from memory.recall.snapshot import decode, encode
from memory.text.tokens import tokenize
from tests.unit.test_layered_postings import QUERIES, a_write, memory, vectors

MORE = [*QUERIES, "my dentist in Porto 杭州的护士", "队列 queue replica", "xyzzy 啊啊"]


def both(
    mems: list[Memory], vecs: np.ndarray | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[BM25Index, BM25Index]:
    """The same memories built as arrays (the limit lowered) and as dicts (the limit above them)."""
    monkeypatch.setattr(keyword_index, "COLUMNS_FROM", 10)
    arrays = BM25Index(mems, vecs)
    monkeypatch.setattr(keyword_index, "COLUMNS_FROM", 10**9)
    dicts = BM25Index(mems, vecs)
    monkeypatch.setattr(keyword_index, "COLUMNS_FROM", 10)
    return arrays, dicts


def assert_same(ours: BM25Index, theirs: BM25Index) -> None:
    assert list(ours.memories) == list(theirs.memories)
    assert ours._len == theirs._len
    assert dict(ours._idf) == dict(theirs._idf)  # the same floats: the same formula over the same counts
    assert sorted(ours._postings) == sorted(theirs._postings)
    for term in theirs._postings:
        assert ours._postings[term] == theirs._postings[term], term
    mids = list(theirs.memories)
    for query in MORE:
        tokens = tokenize(query)
        for limit in (1, 5, 100):
            assert ours.search(tokens, limit=limit) == theirs.search(tokens, limit=limit), query
        assert ours.coverage(mids, tokens) == theirs.coverage(mids, tokens), query
        assert ours.known(tokens) == theirs.known(tokens), query
        assert ours.scores_of(tokens, mids) == theirs.scores_of(tokens, mids), query


def test_a_large_build_holds_arrays_and_is_the_build_of_dicts(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(45)
    mems = [memory(i, rng) for i in range(60)]
    arrays, dicts = both(mems, vectors(60, 0), monkeypatch)
    assert isinstance(arrays._postings, ColumnPostings)
    assert isinstance(arrays._tf, TermFrequencies)
    assert isinstance(dicts._tf, dict)
    assert_same(arrays, dicts)
    assert any(arrays.search(tokenize(q), limit=5) for q in QUERIES)  # the searches compared found some
    assert arrays._tf.rows_made == 0  # searched without a memory's dict
    for mid in dicts.memories:
        assert arrays._tf[mid] == dicts._tf[mid]
    query = vectors(1, 7)[0]
    assert arrays.nearest(query, limit=10) == dicts.nearest(query, limit=10)


def test_its_snapshot_is_made_without_dicts_and_loads_as_the_build(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(8)
    mems = [memory(i, rng) for i in range(40)]
    arrays, dicts = both(mems, vectors(40, 1), monkeypatch)
    raw = encode(3, arrays, None, "f")
    assert isinstance(arrays._tf, TermFrequencies)
    assert arrays._tf.rows_made == 0  # saved from the build's columns, by row
    loaded = decode(raw, "f")
    assert loaded is not None
    assert_same(loaded.index, dicts)
    assert encode(3, loaded.index, None, "f") == raw  # a loaded index saves the bytes it was loaded from
    assert loaded.index.parts()[1] == dicts.parts()[1]  # every memory's term frequencies, off the columns


@pytest.mark.parametrize("compact_after", [10**9, 9])
def test_writes_to_a_large_build_give_the_index_a_rebuild_gives(
    compact_after: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes that add, replace (new words) and delete, zh and en; with `compact_after` lowered, every
    few writes make new columns (`COMPACT_AFTER`): the same index either way."""
    monkeypatch.setattr(keyword_index, "COMPACT_AFTER", compact_after)
    rng = random.Random(45)
    current = [memory(i, rng) for i in range(40)]
    arrays, _ = both(current, vectors(40, 0), monkeypatch)
    index = arrays
    compactions = 0
    for step in range(8):
        current, upserted, deleted = a_write(current, rng, step)
        index = index.updated(upserted, vectors(len(upserted), step + 1), deleted)
        assert isinstance(index._tf, TermFrequencies)
        written = len(index._tf.own) + len(index._tf.removed)
        if isinstance(index._postings, ColumnPostings):  # compacted by this write
            compactions += 1
            assert written == 0
        else:
            assert isinstance(index._postings, LayeredPostings)
            assert 0 < written < compact_after
        _, rebuilt = both(current, vectors(len(current), 99), monkeypatch)
        assert_same(index, rebuilt)
        saved = decode(encode(step, index, None, "f"), "f")  # a save of the written index
        assert saved is not None
        assert_same(saved.index, rebuilt)
        assert all(mid not in index._tf for mid in deleted)
        assert {mid: index._tf[mid] for mid in index.memories} == {
            mid: rebuilt._tf[mid] for mid in rebuilt.memories
        }
    assert compactions >= 2 if compact_after < 100 else compactions == 0
    assert isinstance(arrays._postings, ColumnPostings)  # the build itself never changed
    assert len(arrays.memories) == 40


def test_a_supersession_reads_no_words_of_the_statements_it_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed fact marks the old statements superseded (the same words, other fields): the write
    knows their words without reading them off the columns; a changed text is read off them."""
    rng = random.Random(21)
    mems = [memory(i, rng) for i in range(40)]
    arrays, _ = both(mems, vectors(40, 2), monkeypatch)
    assert isinstance(arrays._tf, TermFrequencies)
    marked = [dataclasses.replace(mems[k], superseded_by="m39") for k in (3, 17)]
    edited = dataclasses.replace(mems[5], content="我搬到杭州了 moved to Hangzhou")
    later = arrays.updated([*marked, edited], vectors(3, 3), ["m8"])
    assert arrays._tf.rows_made == 2  # m5's old words and m8's: not m3's or m17's
    current = [m for m in mems if m.id not in {"m3", "m17", "m5", "m8"}] + [*marked, edited]
    _, rebuilt = both(current, vectors(len(current), 4), monkeypatch)
    assert_same(later, rebuilt)


def test_an_index_of_dicts_that_writes_grow_past_the_limit_is_held_as_arrays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = random.Random(5)
    current = [memory(i, rng) for i in range(30)]
    monkeypatch.setattr(keyword_index, "COLUMNS_FROM", 10**9)
    index = BM25Index(current, vectors(30, 5))
    assert isinstance(index._tf, dict)
    for step in range(3):  # 30 -> 33 (dicts) -> 36 (arrays from here) -> 39
        monkeypatch.setattr(keyword_index, "COLUMNS_FROM", 34)  # `both` below sets it
        added = [memory(30 + 3 * step + k, rng) for k in range(3)]
        current += added
        index = index.updated(added, vectors(3, step), [])
        assert isinstance(index._tf, TermFrequencies) == (len(current) >= 34)
        _, rebuilt = both(current, vectors(len(current), 6), monkeypatch)
        assert_same(index, rebuilt)
