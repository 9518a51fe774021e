"""The snapshot format alone (memory/recall/snapshot.py): what is decoded is the index that was encoded."""

from __future__ import annotations

import json
import struct
import sys
from typing import Any

import numpy as np
import pytest

from memory.models import Memory
from memory.recall import snapshot
from memory.recall.crosslingual import BridgeRows
from memory.recall.dense_rows import QuantisedRows
from memory.recall.keyword_index import BM25Index, BM25Params
from memory.recall.postings import ColumnPostings
from memory.recall.snapshot import decode, encode, fingerprint_of
from memory.recall.term_rows import TermRows
from memory.text.language import Lang
from memory.text.tokens import tokenize

TEXTS = [
    ("I moved to Lisbon last March for a new job as a nurse.", "Where are you living now?"),
    ("我上个三月搬到了杭州，新工作是老师。", ""),
    ("My sister Anna lives in Porto; she's a nurse too.", "Tell me about your family."),
    ("我最喜欢吃火锅，每个周末都吃。", "你喜欢吃什么？"),
    ("Remind me to call Maria about the insurance on Friday.", ""),
]


def memories() -> list[Memory]:
    return [
        Memory(
            id=f"m{i}",
            user_id="u",
            content=text,
            created_at=1_700_000_000.0 + i,
            session_id=f"s{i % 2}",
            source="user",
            content_hash=f"h{i}",
            importance=0.5,
            name="Ann" if i == 2 else None,
            source_message_ids=(f"msg{i}",),
            tier="fact",
            entities=("Lisbon",) if i == 0 else (),
            context=context,
            facts=(("residence", "lisbon"),) if i == 0 else (),
            superseded_by="m1" if i == 0 else None,
        )
        for i, (text, context) in enumerate(TEXTS)
    ]


def index_and_rows() -> tuple[BM25Index, BridgeRows]:
    rng = np.random.default_rng(7)
    mems = memories()
    index = BM25Index(mems, rng.standard_normal((len(mems), 8)).astype(np.float32))
    bridge = rng.standard_normal((len(mems), 6)).astype(np.float16)
    langs: tuple[Lang, ...] = ("en", "zh", "en", "zh", "en")
    return index, BridgeRows(tuple(m.id for m in mems), QuantisedRows.of(bridge), langs, frozenset(langs))


def test_a_decoded_snapshot_is_the_encoded_index() -> None:
    index, rows = index_and_rows()
    raw = encode(42, index, rows, "models-a")
    assert fingerprint_of(raw) == "models-a"
    loaded = decode(raw, "models-a")
    assert loaded is not None
    assert loaded.version == 42
    assert loaded.index.memories == index.memories
    assert list(loaded.index.memories) == list(index.memories)
    assert loaded.index.parts()[1] == index.parts()[1]  # term frequencies
    matrix, original = loaded.index.parts()[2], index.parts()[2]
    assert matrix is not None
    assert original is not None
    assert np.array_equal(matrix.codes, original.codes)
    assert np.array_equal(matrix.scales, original.scales)
    for query in ("Where does Anna live?", "我搬到哪里了", "nurse Lisbon", "火锅"):
        tokens = tokenize(query)
        assert loaded.index.search(tokens, limit=10) == index.search(tokens, limit=10)
        assert loaded.index.known(tokens) == index.known(tokens)
    assert loaded.index.views.chains() == index.views.chains()
    assert loaded.index.views.with_fact_keys(["residence"]) == index.views.with_fact_keys(["residence"])
    assert loaded.bridge is not None
    assert loaded.bridge.ids == rows.ids
    assert loaded.bridge.languages == rows.languages
    assert np.array_equal(loaded.bridge.matrix.codes, rows.matrix.codes)
    assert np.array_equal(loaded.bridge.matrix.scales, rows.matrix.scales)


def test_a_loaded_index_does_not_hold_the_payload() -> None:
    """The index keeps copies of the arrays it needs, not views into the value read from Redis: a
    view would keep the whole payload (2.8 MB per 1,000 memories) alive as long as the user's index is
    cached. (A view holds a reference to the bytes it views.)"""
    index, rows = index_and_rows()
    raw = encode(9, index, rows, "m")
    before = sys.getrefcount(raw)
    loaded = decode(raw, "m")
    assert loaded is not None
    assert sys.getrefcount(raw) == before
    assert loaded.index.parts()[1] == index.parts()[1]  # its term frequencies, made from the copies


def test_a_snapshot_of_other_models_or_parameters_or_a_damaged_one_is_not_used() -> None:
    index, rows = index_and_rows()
    raw = encode(1, index, rows, "models-a")
    assert decode(raw, "models-b") is None
    assert decode(raw, "models-a", BM25Params(k1=1.5)) is None
    assert decode(raw[: len(raw) // 2], "models-a") is None
    assert decode(b"not a snapshot", "models-a") is None


def test_without_bridge_rows_the_snapshot_has_none() -> None:
    index, _ = index_and_rows()
    loaded = decode(encode(3, index, None, "m"), "m")
    assert loaded is not None
    assert loaded.bridge is None
    assert loaded.index.memories == index.memories


def test_a_loaded_index_searches_and_updates_as_the_built_one() -> None:
    """Searched first (a loaded index makes its per-memory term frequencies only when a write or a
    snapshot needs them), then updated by a write and a delete: the same as the built index each time."""
    index, rows = index_and_rows()
    loaded = decode(encode(7, index, rows, "m"), "m")
    assert loaded is not None
    queries = ("Where does Anna live?", "我搬到哪里了", "nurse Lisbon insurance", "火锅 周末")
    for query in queries:
        assert loaded.index.search(tokenize(query), limit=10) == index.search(tokenize(query), limit=10)
        ids = ["m0", "m2", "m4", "absent"]  # relation memory's linked candidates
        assert loaded.index.scores_of(tokenize(query), ids) == index.scores_of(tokenize(query), ids)
    extra = Memory(
        id="m9",
        user_id="u",
        content="Anna moved from Porto to Lisbon, 她也搬到了里斯本。",
        created_at=1.0,
        session_id="s9",
        source="user",
        content_hash="h9",
    )
    vector = np.ones((1, 8), dtype=np.float32)
    after_loaded = loaded.index.updated([extra], vector, ["m3"])
    after_built = index.updated([extra], vector, ["m3"])
    assert list(after_loaded.memories) == list(after_built.memories)
    for query in (*queries, "Anna Lisbon 里斯本"):
        tokens = tokenize(query)
        assert after_loaded.search(tokens, limit=10) == after_built.search(tokens, limit=10)
    assert after_loaded.parts()[1] == after_built.parts()[1]


def test_a_memory_without_words_keeps_its_place() -> None:
    """A memory whose text has no indexable word (only punctuation) has an empty row in the CSR
    arrays: its neighbours' lengths and postings stay theirs."""
    mems = memories()
    mems.insert(
        2,
        Memory(
            id="m7",
            user_id="u",
            content="……!?",
            created_at=1.0,
            session_id="s",
            source="user",
            content_hash="h7",
        ),
    )
    index = BM25Index(mems, None)
    loaded = decode(encode(1, index, None, "m"), "m")
    assert loaded is not None
    for query in ("Anna nurse", "火锅", "Lisbon"):
        assert loaded.index.search(tokenize(query), limit=10) == index.search(tokenize(query), limit=10)
    assert loaded.index.parts()[1] == index.parts()[1]


def as_format_3(raw: bytes, index: BM25Index) -> bytes:
    """`raw` (format 5) as the format before it wrote it: each memory's terms (CSR by memory) and their
    order by term, instead of the columns; the other segments as they were."""
    split = snapshot._split(raw)
    assert split is not None
    header, body = split
    rows = TermRows.of(index.parts()[1])
    words = {
        "indptr": rows.indptr,
        "terms": rows.terms,
        "weight_codes": rows.codes,
        "weight_table": rows.table,
        "lengths": rows.lengths,
        "by_term": rows.order(),
    }
    return rewritten(raw, header, body, words, {"format": 3, "vocab": list(rows.vocab)})


def rewritten(
    raw: bytes,
    header: dict[str, Any],
    body: memoryview,
    words: dict[str, np.ndarray],
    changes: dict[str, Any],
) -> bytes:
    """A payload of `header` (with `changes`) whose segments are `words` and those of `body` the words
    do not replace (the postings of the format `raw` is in dropped)."""
    postings = ("edges", "owners", "weight_codes", "weight_table", "lengths")
    segments = {
        name: np.frombuffer(body[offset : offset + length], dtype=np.dtype(dtype)).reshape(shape)
        for name, (offset, length, dtype, shape) in header["segments"].items()
        if name not in postings or (name == "lengths" and name not in words)
    }
    layout, blobs, offset = {}, [], 0
    for name, array in {**words, **segments}.items():
        blob = array.tobytes()
        layout[name] = [offset, len(blob), array.dtype.str, list(array.shape)]
        blobs.append(blob)
        offset += len(blob)
    kept = {k: v for k, v in header.items() if k not in ("buckets", "code_type")}
    head = json.dumps({**kept, **changes, "segments": layout}).encode()
    return b"".join([raw[:4], struct.pack("<I", len(head)), head, *blobs])


def as_format_4(raw: bytes) -> bytes:
    """`raw` (format 5) as format 4 wrote it: the columns as segments of the payload and the vocabulary
    in its header, no head, buckets or trailer."""
    loaded = decode(raw, "m")
    assert loaded is not None
    columns = loaded.index._postings
    assert isinstance(columns, ColumnPostings)
    vocab, edges, owners, codes, table, _ = columns.arrays()
    payload, _, _ = snapshot.elements(raw)
    split = snapshot._split(payload)
    assert split is not None
    header, body = split
    words = {"edges": edges, "owners": owners, "weight_codes": codes, "weight_table": table}
    return rewritten(raw, header, body, words, {"format": 4, "vocab": vocab})


@pytest.mark.parametrize("older", [3, 4])
def test_a_snapshot_of_a_format_before_is_read(older: int) -> None:
    """A format 3 or 4 snapshot (written before this version: no buckets) loads as the index it was
    taken of: an upgrade does not make every large user's first search read the store."""
    index, rows = index_and_rows()
    raw = encode(5, index, rows, "m")
    old = as_format_3(raw, index) if older == 3 else as_format_4(raw)
    assert snapshot.elements(old)[1] == []
    loaded = decode(old, "m")
    assert loaded is not None
    assert loaded.index.parts()[1] == index.parts()[1]
    for query in ("Where does Anna live?", "我搬到哪里了", "nurse Lisbon", "火锅"):
        tokens = tokenize(query)
        assert loaded.index.search(tokens, limit=10) == index.search(tokens, limit=10)
    assert loaded.bridge is not None
    assert loaded.bridge.ids == rows.ids


def test_a_snapshot_whose_columns_point_past_its_memories_is_not_used() -> None:
    """A bucket whose entry names a row past the memories, or a bucket missing, is refused: a search
    would read past an array."""
    index, rows = index_and_rows()
    raw = encode(5, index, rows, "m")
    payload, extras, _ = snapshot.elements(raw)
    assert len(extras) == 2  # the head and one bucket (5 memories)
    damaged = bytearray(raw)
    bucket = bytes(extras[1])
    (size,) = struct.unpack_from("<I", bucket, 4)
    start = len(payload) + len(extras[0]) + 8 + size  # the bucket's first entry's row
    damaged[start : start + 4] = struct.pack("<i", 999)  # past the 5 memories
    assert decode(bytes(damaged), "m") is None
    trailer = struct.pack("<QQI", len(extras[0]), len(payload), 1) + b"MNSX"
    assert decode(bytes(payload) + bytes(extras[0]) + trailer, "m") is None  # the bucket dropped
