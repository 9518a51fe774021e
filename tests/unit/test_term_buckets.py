"""A snapshot's postings in buckets of terms (memory/recall/term_buckets.py): read one term at a time,
they score as the index they were taken of; joined, they are its columns again. zh and en; the bucket
size is lowered so that a few hundred memories make many buckets."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from memory.recall import keyword_index, snapshot, term_buckets
from memory.recall.keyword_index import BM25Index, BM25Params
from memory.recall.snapshot import decode, encode
from memory.text.tokens import tokenize
from tests.unit.test_layered_postings import QUERIES, a_write, memory, vectors

ASKED = [*QUERIES, "my dentist in Porto 杭州的护士", "队列 queue replica", "xyzzy 啊啊", "deploy 部署 window"]
PARAMS = BM25Params()


def buckets_of(index: BM25Index) -> tuple[term_buckets.Head, dict[int, bytes]]:
    _, extras, _ = snapshot.elements(encode(3, index, None, "m"))
    head = term_buckets.read_head(extras[0], dataclasses.asdict(PARAMS))
    return head, {k: bytes(raw) for k, raw in enumerate(extras[1:])}


def searched(
    head: term_buckets.Head,
    buckets: dict[int, bytes],
    query: str,
    limit: int,
    weights: dict[str, float] | None = None,
) -> list[tuple[str, float]]:
    return term_buckets.read(
        head,
        buckets,
        tokenize(query),
        weights=weights,
        k1=PARAMS.k1,
        b=PARAMS.b,
        unigram_weight=PARAMS.unigram_weight,
        limit=limit,
    ).hits


@pytest.fixture
def small_buckets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(term_buckets, "BUCKET_ENTRIES", 64)


@pytest.mark.parametrize("columns_from", [10, 10**9])  # built as columns, and as dicts
def test_a_search_of_its_terms_buckets_is_the_index_search(
    small_buckets: None, monkeypatch: pytest.MonkeyPatch, columns_from: int
) -> None:
    monkeypatch.setattr(keyword_index, "COLUMNS_FROM", columns_from)
    rng = random.Random(45)
    index = BM25Index([memory(i, rng) for i in range(300)], vectors(300, 1))
    head, buckets = buckets_of(index)
    assert head.buckets == len(buckets) > 20
    for query in ASKED:
        wanted = {term_buckets.bucket_of(t, head.buckets) for t in tokenize(query)}
        only = {k: raw for k, raw in buckets.items() if k in wanted}  # what a search reads
        for limit in (1, 10, 400):
            assert searched(head, only, query, limit) == index.search(tokenize(query), limit=limit), query
    translated = {"牙医": 0.5, "dentist": 0.5}  # the bilingual lexicon's added terms, at their weight
    assert searched(head, buckets, "my dentist 我的牙医", 10, translated) == index.search(
        tokenize("my dentist 我的牙医"), limit=10, weights=translated
    )
    missing = {k: raw for k, raw in buckets.items() if k != term_buckets.bucket_of("deploy", head.buckets)}
    assert searched(head, missing, "deploy", 10) == []  # its bucket not read: an unknown word


def test_joined_buckets_are_the_columns_again_after_writes(
    small_buckets: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A written index's snapshot (compacted columns) in buckets loads as the index: every search and
    every memory's words the same, and its buckets score as it does."""
    monkeypatch.setattr(keyword_index, "COLUMNS_FROM", 10)
    rng = random.Random(7)
    current = [memory(i, rng) for i in range(200)]
    index = BM25Index(current, vectors(200, 2))
    for step in range(3):
        current, upserted, deleted = a_write(current, rng, step)
        index = index.updated(upserted, vectors(len(upserted), step + 3), deleted)
    loaded = decode(encode(4, index, None, "m"), "m")
    assert loaded is not None
    assert loaded.index.parts()[1] == index.parts()[1]
    head, buckets = buckets_of(index)
    for query in ASKED:
        tokens = tokenize(query)
        assert loaded.index.search(tokens, limit=10) == index.search(tokens, limit=10), query
        assert searched(head, buckets, query, 10) == index.search(tokens, limit=10), query


def test_a_head_of_other_parameters_or_damaged_is_refused() -> None:
    rng = random.Random(3)
    index = BM25Index([memory(i, rng) for i in range(20)], None)
    _, extras, _ = snapshot.elements(encode(1, index, None, "m"))
    with pytest.raises(ValueError, match="parameters"):
        term_buckets.read_head(extras[0], dataclasses.asdict(BM25Params(k1=1.5)))
    with pytest.raises(ValueError, match="kind"):
        term_buckets.read_head(bytes(extras[1]), dataclasses.asdict(PARAMS))  # a bucket, not a head
    head = term_buckets.read_head(extras[0], dataclasses.asdict(PARAMS))
    assert list(head.ids.ids) == list(index.memories)
    assert np.array_equal(head.lengths, [index._len[mid] for mid in index.memories])


def test_an_index_without_words_has_no_buckets() -> None:
    """A snapshot of memories without an indexable word (punctuation only): no head, no buckets."""
    rng = random.Random(3)
    blank = [dataclasses.replace(memory(i, rng), content="……!?", context="") for i in range(3)]
    raw = encode(1, BM25Index(blank, None), None, "m")
    assert snapshot.elements(raw)[1] == []
    loaded = decode(raw, "m")
    assert loaded is not None
    assert list(loaded.index.memories) == [m.id for m in blank]
