"""A user's keyword postings in buckets of terms, readable one term at a time outside the worker.

A worker's first search of a 10M-token user (58,000 memories) waited for the whole snapshot: ~500 MB
read from Redis and decoded, seconds (issue 45). Its keyword channel needs only the query's terms: a
few dozen of the user's hundreds of thousands. The snapshot (memory/recall/snapshot.py, format 5) keeps
the columns (memory/recall/postings.py) grouped in buckets of terms instead of in one array: each term
goes to bucket `crc32(term) % buckets` (stable across processes, unlike `hash`), and each bucket is its
own element of the snapshot's Redis list, about `BUCKET_ENTRIES` entries (~100 KB). A whole load joins
the buckets back into the columns (their runs are copied as they are: the terms' order is the buckets',
which no search depends on). A search that cannot wait for the load reads the `Head` (each row's memory
id and length, the weights, the count and average length) and the buckets of its terms, and scores
them as the loaded index would: the same columns, the same BM25 (`ColumnPostings.bm25`).
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import orjson

from memory.recall.postings import ColumnPostings, RowIds, among
from memory.text.tokens import UNIGRAM

__all__ = [
    "BUCKET_ENTRIES",
    "Head",
    "bucket_count",
    "bucket_of",
    "head_of",
    "join",
    "Words",
    "read",
    "read_head",
    "split",
]

BUCKET_ENTRIES = 16_384  # entries a bucket holds on average: ~100 KB read per query term
_BUCKET = b"MNB1"
_HEAD = b"MNH1"


def bucket_count(entries: int) -> int:
    """How many buckets the columns of this many entries are split into (at least one)."""
    return max(1, -(-entries // BUCKET_ENTRIES))


def bucket_of(term: str, buckets: int) -> int:
    return zlib.crc32(term.encode("utf-8")) % buckets


def _framed(header: dict[str, object], *arrays: np.ndarray, magic: bytes) -> bytes:
    head = orjson.dumps(header)
    return b"".join([magic, struct.pack("<I", len(head)), head, *(a.tobytes() for a in arrays)])


def _unframed(raw: bytes | memoryview, magic: bytes) -> tuple[dict[str, object], memoryview]:
    if bytes(raw[:4]) != magic:
        raise ValueError("not an element of this kind")
    (size,) = struct.unpack_from("<I", raw, 4)
    header = orjson.loads(raw[8 : 8 + size])
    if not isinstance(header, dict):
        raise ValueError("a bucket's header is not an object")
    return header, memoryview(raw)[8 + size :]


def split(columns: ColumnPostings) -> list[bytes]:
    """The columns' runs as buckets: bucket k holds its terms (in the columns' order), each term's
    count of entries, then their entries' rows (int32) and weight codes."""
    terms, edges, owners, codes, _, _ = columns.arrays()
    count = bucket_count(len(owners))
    of_term = np.fromiter((bucket_of(t, count) for t in terms), dtype=np.int64, count=len(terms))
    order = np.argsort(of_term, kind="stable")
    starts = np.searchsorted(of_term[order], np.arange(count + 1))
    sizes = np.diff(edges)
    out: list[bytes] = []
    for k in range(count):
        held = order[starts[k] : starts[k + 1]]
        runs = [slice(int(edges[t]), int(edges[t + 1])) for t in held.tolist()]
        rows = np.concatenate([owners[r] for r in runs]) if runs else np.zeros(0, np.int32)
        weights = np.concatenate([codes[r] for r in runs]) if runs else np.zeros(0, codes.dtype)
        header = {"terms": [terms[t] for t in held.tolist()], "counts": sizes[held].tolist()}
        out.append(_framed(header, rows.astype(np.int32), weights, magic=_BUCKET))
    return out


def _runs(
    raw: bytes | memoryview, code_type: np.dtype
) -> tuple[list[str], list[int], np.ndarray, np.ndarray]:
    header, body = _unframed(raw, _BUCKET)
    terms, counts = header["terms"], header["counts"]
    if not isinstance(terms, list) or not isinstance(counts, list) or len(terms) != len(counts):
        raise ValueError("a bucket's terms and counts differ")
    total = sum(counts)
    rows = np.frombuffer(body[: 4 * total], dtype=np.int32)
    codes = np.frombuffer(body[4 * total :], dtype=code_type)
    if len(rows) != total or len(codes) != total:
        raise ValueError("a bucket's entries are not its counts'")
    return terms, counts, rows, codes


def join(
    buckets: Sequence[bytes | memoryview], code_type: np.dtype
) -> tuple[list[str], list[int], np.ndarray, np.ndarray]:
    """The columns again: every bucket's terms, the runs' edges, the entries' rows and codes (new
    arrays: nothing of the buckets is kept)."""
    terms: list[str] = []
    counts: list[int] = []
    rows: list[np.ndarray] = []
    codes: list[np.ndarray] = []
    for raw in buckets:
        t, c, r, w = _runs(raw, code_type)
        terms += t
        counts += c
        rows.append(r)
        codes.append(w)
    edges = [0, *np.cumsum(np.asarray(counts, dtype=np.int64)).tolist()]
    joined_rows = np.concatenate(rows) if rows else np.zeros(0, np.int32)
    joined_codes = np.concatenate(codes) if codes else np.zeros(0, code_type)
    return terms, edges, joined_rows, joined_codes


@dataclass(frozen=True, slots=True)
class Head:
    """What a search needs besides its terms' buckets: each row's memory id and length, the weights the
    codes point to, how many buckets there are, the average length as the index counts it."""

    ids: RowIds
    lengths: np.ndarray
    weights: np.ndarray
    code_type: np.dtype
    buckets: int
    avg_len: float

    def encode(self, params: Mapping[str, object]) -> bytes:
        """`params`: the index's BM25 parameters (a reader with others ignores the head)."""
        header = {
            "params": dict(params),
            "ids": self.ids.ids.tolist(),
            "buckets": self.buckets,
            "avg_len": self.avg_len,
            "codes": self.code_type.str,
        }
        return _framed(header, self.lengths.astype(np.float64), self.weights.astype(np.float64), magic=_HEAD)


def head_of(columns: ColumnPostings, avg_len: float) -> Head:
    _, _, owners, codes, values, lengths = columns.arrays()
    return Head(columns.rows, lengths, values, codes.dtype, bucket_count(len(owners)), avg_len)


def read_head(raw: bytes | memoryview, params: Mapping[str, object]) -> Head:
    """The head; ValueError when damaged or of other BM25 `params` than the reader's."""
    header, body = _unframed(raw, _HEAD)
    if header.get("params") != dict(params):
        raise ValueError("a head of other BM25 parameters")
    ids, buckets, avg_len, code_type = header["ids"], header["buckets"], header["avg_len"], header["codes"]
    if not isinstance(ids, list) or not isinstance(buckets, int) or not isinstance(code_type, str):
        raise ValueError("a head of another shape")
    if not isinstance(avg_len, float | int):
        raise ValueError("a head without its average length")
    lengths = np.frombuffer(body[: 8 * len(ids)], dtype=np.float64)
    weights = np.frombuffer(body[8 * len(ids) :], dtype=np.float64)
    if len(lengths) != len(ids):
        raise ValueError("a head's lengths are not its rows'")
    return Head(
        RowIds(np.asarray(ids, dtype=object)), lengths, weights, np.dtype(code_type), buckets, float(avg_len)
    )


@dataclass(frozen=True, slots=True)
class Words:
    """What a search read off its terms' buckets: the query's terms as asked (`tokens`, `weights`), its
    best memories by BM25 over every memory of the user (`hits`), and each term's rows (ascending)."""

    tokens: tuple[str, ...]
    weights: Mapping[str, float] | None
    hits: list[tuple[str, float]]
    runs: dict[str, np.ndarray]
    ids: RowIds
    idf: dict[str, float]  # each term read, over every memory of the user (as `InverseFrequencies`)

    def held(self, mids: Sequence[str], terms: Sequence[str]) -> list[set[str]]:
        """Which of `terms` each of `mids` holds in its words or its context, as the whole index says
        (a term not read: held by none; a memory written since the snapshot: holds none)."""
        rows = np.asarray([-1 if (r := self.ids.row_of(mid)) is None else r for mid in mids], dtype=np.int64)
        out: list[set[str]] = [set() for _ in mids]
        for term in terms:
            run = self.runs.get(term)
            if run is not None:
                for k in np.flatnonzero(among(rows, run)).tolist():
                    out[k].add(term)
        return out


def read(
    head: Head,
    buckets: Mapping[int, bytes],
    query_tokens: Iterable[str],
    *,
    weights: Mapping[str, float] | None,
    k1: float,
    b: float,
    unigram_weight: float,
    limit: int,
) -> Words:
    """The best `limit` memories by BM25 of the query's terms (`weights`: terms added at their weight,
    as `BM25Index.search` takes them), read off the terms' buckets (`buckets`: bucket -> its element;
    a term whose bucket is absent counts as unknown), and the terms' rows. Ties by id, as every index
    ranks them."""
    tokens = tuple(query_tokens)
    asked = dict.fromkeys(tokens, 1.0)
    for token, weight in (weights or {}).items():
        asked.setdefault(token, weight)
    wanted = {bucket_of(t, head.buckets) for t in asked}
    runs: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for k in wanted & buckets.keys():
        terms, counts, rows, codes = _runs(buckets[k], head.code_type)
        at = 0
        for term, n in zip(terms, counts, strict=True):
            if term in asked:
                runs[term] = rows[at : at + n], codes[at : at + n]
            at += n
    found = {t: rows for t, (rows, _) in runs.items()}
    n = max(1, len(head.ids))
    idfs = {t: math.log(1 + (n - len(rows) + 0.5) / (len(rows) + 0.5)) for t, rows in found.items()}
    if not runs:
        return Words(tokens, weights, [], found, head.ids, idfs)
    names = [t for t in asked if t in runs]  # the query's order, as the index sums them: the same floats
    scored: list[tuple[str, float]] = []
    for term in names:
        idf = idfs[term]
        if term.startswith(UNIGRAM):
            idf *= unigram_weight
        weight = asked[term]
        scored.append((term, idf * weight if weight != 1.0 else idf))
    sizes = [len(runs[t][0]) for t in names]
    columns = ColumnPostings(
        names,
        [0, *np.cumsum(sizes).tolist()],
        np.concatenate([runs[t][0] for t in names]),
        head.ids,
        np.concatenate([runs[t][1] for t in names]),
        head.weights.astype(object),  # not kept: no shared floats needed
        head.lengths,
    )
    by_row = columns.bm25(scored, k1=k1, b=b, avg_len=head.avg_len)
    best = sorted(columns.best(by_row, {}, limit), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return Words(tokens, weights, best, found, head.ids, idfs)
