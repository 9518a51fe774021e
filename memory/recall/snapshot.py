"""Index snapshots: a user's keyword index, MiniLM vectors and bridge rows at one version, in Redis.

A worker's first search of a user used to read every record with its vectors from Chroma, then the
bridge vectors, and tokenise everything into the BM25 index (~0.9 s at 2,000 memories, issue 29). A
snapshot holds what that produces, columnar: the memories' fields as one JSON list (each distinct
context once: a long turn's segments share the turn's), the postings as the columns a worker holds
(each term's run of memory rows and weight codes into a table of the distinct weights:
memory/recall/postings.py), each memory's length, the MiniLM vectors and the bridge rows as a worker
holds them (int8 codes and a scale per row: memory/recall/dense_rows.py), in one binary value (kept in
Redis as a list of parts of at most 64 MiB, `PART_BYTES`). The postings follow the payload in buckets
of terms, each its own element of the list, after a head (memory/recall/term_buckets.py): a search
that cannot wait for the load reads its terms' buckets alone (`IndexSnapshots.terms`). Loading it is
one Redis LRANGE, `np.frombuffer`, the memories, and the buckets joined into columns: no Chroma read,
no tokenising, no sort. A snapshot of an index no write changed is its columns as they are; of a
written one, new columns (memory/recall/term_rows.py, `compact`).

Freshness is the keyword cache's own: a loaded snapshot enters the worker's cache at the version it
was taken at, and the next read of the user's version brings it forward through the change log
(`LtmVersions.changes`), exactly as a cached index that fell behind; when the log cannot say (trimmed,
expired, or a delete cleared it) the index is rebuilt from the store. A snapshot is written only when
its version is still the user's current one (checked in the same Lua script as the SET), and every
delete (`LtmVersions.bump` with deleted ids: delete, forget, archival, erasure's purge) deletes it in
the same script that clears the change log, because it holds every memory's words. Erasure deletes
it with the user's other keys (it is under the user's prefix, in the user's hash slot). It is derived
data: export leaves it out.

A snapshot whose format, fields, BM25 parameters or model fingerprint differ from this process's is
ignored (the user is built from the store, and the new build replaces it).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import secrets
import struct
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from redis.client import NEVER_DECODE

from memory import keys
from memory.models import Memory
from memory.recall import term_buckets
from memory.recall.crosslingual import BridgeRows
from memory.recall.dense_rows import QuantisedRows
from memory.recall.keyword_index import BM25Index, BM25Params
from memory.recall.postings import ColumnPostings, RowIds, TermFrequencies, shared_weight
from memory.recall.term_rows import TermRows
from memory.redis_client import RedisClient
from memory.text.language import Lang

log = logging.getLogger(__name__)

# 2: weights as a table and codes, and each memory's length stored; 3: the MiniLM and bridge vectors as
# int8 codes and scales, each distinct context once (a format 2 snapshot is not read: the user is built
# from the store and snapshotted anew); 4: the postings as the columns a worker holds (each term's run
# of memory rows and weight codes) instead of each memory's terms and their order by term: 6 bytes an
# entry instead of 10, and a load that copies them; 5: those runs in buckets of terms after the payload,
# each its own element of the Redis list, with a head (ids, lengths) before them, so that a search reads
# its terms alone (memory/recall/term_buckets.py). Formats 3 and 4 are still read.
FORMAT = 5
_READ = (3, 4, 5)
_MAGIC = b"MNS1"
# The end of a format 5 snapshot: each element after the payload (the head, then the buckets), then
# the payload's size, the elements' count and this mark: `write` stores each as its own list element
_TRAILER = b"MNSX"
_FIELDS = tuple(f.name for f in dataclasses.fields(Memory))
_TUPLE_FIELDS = frozenset({"source_message_ids", "entities"})
_DEFAULT_PARAMS = BM25Params()

# A snapshot is stored as a Redis list of parts of at most this size: one value is bounded by Redis'
# `proto-max-bulk-len` (512 MB by default) and a 10M-token user's snapshot is ~700 MB (issue 45); parts
# also keep each command's copy short. One key still: every delete of it (a delete's script, erasure,
# a rebalance) is unchanged.
PART_BYTES = 64 * 1024 * 1024
# How long the parts being written may outlive a writer that died before it stored them
DRAFT_TTL_MS = 10 * 60 * 1000
# The list's last element: how many memories the snapshot holds, so that a worker learns a user's size
# without reading the parts (a user past `IN_PROCESS_INDEX_MAX` is loaded in the background:
# memory/recall/user_index.py). Not part of the payload: `read` drops it.
_META = b"MNSM"

# The snapshot's size: its list's length and, when its last element is the meta element, that element.
# LINDEX copies the last element inside Redis: a snapshot written before the meta element existed and
# longer than one part pays one part's copy here until it is saved again.
_SIZE = """
local n = redis.call('LLEN', KEYS[1])
if n < 2 then
    return {n, false}
end
local last = redis.call('LINDEX', KEYS[1], -1)
if string.sub(last, 1, 4) ~= ARGV[1] then
    return {n, false}
end
return {n, last}
"""

# The parts are pushed to a draft key first (several commands); this makes the draft the snapshot only
# when the user's version is still the one it was taken at: a snapshot taken before an erase (which
# deletes the version key) or overtaken by a write is never stored, and its draft is dropped at once.
_SAVE = """
local current = redis.call('GET', KEYS[1]) or '0'
if current ~= ARGV[1] or redis.call('EXISTS', KEYS[3]) == 0 then
    redis.call('DEL', KEYS[3])
    return 0
end
redis.call('RENAME', KEYS[3], KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"""


# The head and the buckets of the terms whose crc32 are ARGV[2:], read where the meta element says
# (after the payload's parts): the meta element, the head, then each bucket's number and element.
_TERMS = """
local last = redis.call('LINDEX', KEYS[1], -1)
if not last or string.sub(last, 1, 4) ~= ARGV[1] then
    return false
end
local ok, meta = pcall(cjson.decode, string.sub(last, 5))
if not ok or type(meta) ~= 'table' or type(meta['parts']) ~= 'number' or type(meta['buckets']) ~= 'number'
        or meta['buckets'] < 1 then
    return false
end
local parts, buckets = meta['parts'], meta['buckets']
local out = {last, redis.call('LINDEX', KEYS[1], parts)}
local seen = {}
for i = 2, #ARGV do
    local k = tonumber(ARGV[i]) % buckets
    if not seen[k] then
        seen[k] = true
        out[#out + 1] = tostring(k)
        out[#out + 1] = redis.call('LINDEX', KEYS[1], parts + 1 + k)
    end
end
return out
"""


@dataclass(frozen=True, slots=True)
class Snapshot:
    version: int
    index: BM25Index
    bridge: BridgeRows | None  # None: the bridge rows were not complete when it was taken


def encode(version: int, index: BM25Index, bridge: BridgeRows | None, fingerprint: str) -> bytes:
    """The snapshot as bytes (read back with `NEVER_DECODE`: the Redis clients here decode text)."""
    memories, columns, lengths, vectors = index.stored()
    contexts: dict[str, int] = {}  # each distinct context once (a long turn's segments share the turn's)
    segments: dict[str, np.ndarray] = {"lengths": np.ascontiguousarray(lengths, dtype=np.float64)}
    extras: list[bytes] = []
    code_type = None
    if columns is not None:  # none: no memory has a word
        _, _, _, codes, table, _ = columns.arrays()
        segments["weight_table"] = table
        code_type = codes.dtype.str
        avg_len = (sum(lengths.tolist()) / max(1, len(memories))) or 1.0  # as the index sums them
        cold = term_buckets.head_of(columns, avg_len).encode(dataclasses.asdict(index.params))
        extras = [cold, *term_buckets.split(columns)]
    if vectors is not None:
        segments["vector_codes"] = np.ascontiguousarray(vectors.codes, dtype=np.int8)
        segments["vector_scales"] = np.ascontiguousarray(vectors.scales, dtype=np.float32)
    bridge_langs: list[str] | None = None
    if bridge is not None:
        position = {m.id: i for i, m in enumerate(memories)}
        if all(mid in position for mid in bridge.ids):
            segments["bridge_rows"] = np.asarray([position[mid] for mid in bridge.ids], dtype=np.int32)
            segments["bridge_codes"] = np.ascontiguousarray(bridge.matrix.codes, dtype=np.int8)
            segments["bridge_scales"] = np.ascontiguousarray(bridge.matrix.scales, dtype=np.float32)
            bridge_langs = list(bridge.languages)
    layout: dict[str, list[Any]] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, array in segments.items():
        raw = array.tobytes()
        layout[name] = [offset, len(raw), array.dtype.str, list(array.shape)]
        blobs.append(raw)
        offset += len(raw)
    header = {
        "format": FORMAT,
        "version": version,
        "fingerprint": fingerprint,
        "params": dataclasses.asdict(index.params),
        "fields": list(_FIELDS),
        "memories": [_row(m, contexts) for m in memories],
        "contexts": list(contexts),
        "buckets": len(extras) - 1 if extras else 0,
        "code_type": code_type,
        "segments": layout,
        "bridge_langs": bridge_langs,
    }
    head = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    payload = [_MAGIC, struct.pack("<I", len(head)), head, *blobs]
    size = sum(len(p) for p in payload)
    sizes = np.asarray([len(e) for e in extras], dtype=np.uint64).tobytes()
    trailer = sizes + struct.pack("<QI", size, len(extras)) + _TRAILER
    return b"".join([*payload, *extras, trailer])


def elements(encoded: bytes) -> tuple[memoryview, list[memoryview], memoryview]:
    """A snapshot's payload, the elements after it (a format 5 snapshot's head and buckets) and its
    trailer (empty when it has none: an older format's value is its payload alone)."""
    view = memoryview(encoded)
    if len(encoded) < 16 or encoded[-4:] != _TRAILER:
        return view, [], view[len(view) :]
    size, count = struct.unpack_from("<QI", encoded, len(encoded) - 16)
    start = len(encoded) - 16 - 8 * count
    if start < 0 or size > start:
        return view, [], view[len(view) :]
    sizes = np.frombuffer(view[start : start + 8 * count], dtype=np.uint64).tolist()
    if size + sum(sizes) != start:
        return view, [], view[len(view) :]
    out: list[memoryview] = []
    at = size
    for n in sizes:
        out.append(view[at : at + n])
        at += n
    return view[:size], out, view[start:]


def decode(raw: bytes, fingerprint: str, params: BM25Params = _DEFAULT_PARAMS) -> Snapshot | None:
    """The snapshot, or None when it is not one this process can use (format, fields, parameters,
    models, or a damaged value)."""
    try:
        payload, extras, _ = elements(raw)
        split = _split(payload)
        if split is None:
            return None
        header, body = split
        if (
            header.get("format") not in _READ
            or header.get("fingerprint") != fingerprint
            or tuple(header.get("fields", ())) != _FIELDS
            or header.get("params") != dataclasses.asdict(params)
        ):
            return None

        def segment(name: str) -> np.ndarray | None:
            spec = header["segments"].get(name)
            if spec is None:
                return None
            offset, length, dtype, shape = spec
            return np.frombuffer(body[offset : offset + length], dtype=np.dtype(dtype)).reshape(shape)

        def kept(name: str) -> np.ndarray | None:
            """A copy, for what the index holds on to: a view would keep the whole payload alive."""
            array = segment(name)
            return None if array is None else array.copy()

        texts: dict[str, str] = {}  # one string per distinct repeated text (session, source, ...)
        contexts = header["contexts"]
        memories = [_memory(row, texts, contexts) for row in header["memories"]]
        lengths = segment("lengths")
        if lengths is None or len(lengths) != len(memories):
            return None
        memory_ids = [m.id for m in memories]
        if header["format"] == FORMAT:
            words = _buckets(header, segment, memory_ids, extras)
        else:
            words = (_columns if header["format"] == 4 else _rows)(header, segment, memory_ids)
        if words is None:
            return None
        tfs, postings = words
        vector_codes, vector_scales = kept("vector_codes"), kept("vector_scales")
        vectors = None
        if vector_codes is not None and vector_scales is not None:
            vectors = QuantisedRows(vector_codes, vector_scales)
        index = BM25Index.from_parts(memories, tfs, vectors, params, postings or {}, lengths.tolist())
        bridge = None
        rows, langs = segment("bridge_rows"), header.get("bridge_langs")
        bridge_codes, bridge_scales = kept("bridge_codes"), kept("bridge_scales")
        if rows is not None and bridge_codes is not None and bridge_scales is not None and langs is not None:
            languages: tuple[Lang, ...] = tuple(langs)
            ids = tuple(memories[i].id for i in rows.tolist())
            bridge = BridgeRows(
                ids, QuantisedRows(bridge_codes, bridge_scales), languages, frozenset(languages)
            )
        return Snapshot(int(header["version"]), index, bridge)
    except (ValueError, KeyError, TypeError, IndexError, struct.error, UnicodeDecodeError):
        log.warning("index snapshot unreadable; building from the store", exc_info=True)
        return None


Segment = Callable[[str], np.ndarray | None]


def _buckets(
    header: dict[str, Any], segment: Segment, ids: list[str], extras: list[memoryview]
) -> tuple[TermFrequencies, ColumnPostings | None] | None:
    """A format 5 snapshot's postings: its buckets joined into columns (new arrays)."""
    count, code_type = header["buckets"], header["code_type"]
    if not count:
        return TermFrequencies(RowIds(np.asarray(ids, dtype=object)), None), None
    if len(extras) != count + 1 or not isinstance(code_type, str):
        return None
    vocab, edges, owners, codes = term_buckets.join(extras[1:], np.dtype(code_type))
    return _held(vocab, np.asarray(edges, dtype=np.int64), owners, codes, segment, ids, copy=False)


def _columns(
    header: dict[str, Any], segment: Segment, ids: list[str]
) -> tuple[TermFrequencies, ColumnPostings | None] | None:
    """A format 4 snapshot's postings: its columns, copied (a view would keep the payload alive)."""
    vocab = header["vocab"]
    if not vocab:
        return TermFrequencies(RowIds(np.asarray(ids, dtype=object)), None), None
    edges, owners, codes = (segment(n) for n in ("edges", "owners", "weight_codes"))
    if edges is None or owners is None or codes is None:
        return None
    return _held(vocab, edges, owners, codes, segment, ids, copy=True)


def _held(
    vocab: list[str],
    edges: np.ndarray,
    owners: np.ndarray,
    codes: np.ndarray,
    segment: Segment,
    ids: list[str],
    *,
    copy: bool,
) -> tuple[TermFrequencies, ColumnPostings | None] | None:
    """Columns of these arrays, checked (None: damaged); `copy`: they are views of the payload."""
    rows = RowIds(np.asarray(ids, dtype=object))
    table = segment("weight_table")
    if table is None or not vocab:
        return None
    if len(edges) != len(vocab) + 1 or edges[0] != 0 or edges[-1] != len(owners) or len(codes) != len(owners):
        return None
    if (
        np.any(np.diff(edges) <= 0)
        or owners.min() < 0
        or owners.max() >= len(ids)
        or codes.max() >= len(table)
    ):
        return None  # damaged: a search would read past an array, or a run would be empty
    columns = ColumnPostings(
        [sys.intern(w) for w in vocab],
        edges.tolist(),
        owners.copy() if copy else owners,
        rows,
        codes.copy() if copy else codes,
        np.asarray([shared_weight(w) for w in table.tolist()], dtype=object),  # one object per weight
        np.asarray(segment("lengths"), dtype=np.float64),
    )
    return TermFrequencies(rows, columns), columns


def _rows(
    header: dict[str, Any], segment: Segment, ids: list[str]
) -> tuple[TermFrequencies, ColumnPostings | None] | None:
    """A format 3 snapshot's postings: each memory's terms, and their order by term."""
    indptr, terms = segment("indptr"), segment("terms")
    codes, table = segment("weight_codes"), segment("weight_table")
    lengths, order = segment("lengths"), segment("by_term")
    if indptr is None or terms is None or codes is None or table is None or lengths is None:
        return None
    if len(indptr) != len(ids) + 1 or len(codes) != len(terms):
        return None
    if len(terms) and (order is None or len(order) != len(terms)):
        return None
    return TermRows(header["vocab"], indptr, terms, codes, table, lengths, order).held(ids)


def _split(payload: bytes | memoryview) -> tuple[dict[str, Any], memoryview] | None:
    if not isinstance(payload, bytes | memoryview) or bytes(payload[:4]) != _MAGIC:
        return None
    (head_len,) = struct.unpack_from("<I", payload, 4)
    header = orjson.loads(payload[8 : 8 + head_len])  # a worker's first search: twice json's speed
    return (header, memoryview(payload)[8 + head_len :]) if isinstance(header, dict) else None


def fingerprint_of(raw: bytes) -> str | None:
    """The model fingerprint a snapshot was taken with (benchmarks, diagnostics)."""
    try:
        split = _split(raw)
    except (ValueError, struct.error, UnicodeDecodeError):
        return None
    value = split[0].get("fingerprint") if split is not None else None
    return value if isinstance(value, str) else None


_TUPLE_AT = tuple(i for i, f in enumerate(_FIELDS) if f in _TUPLE_FIELDS)
_FACTS_AT = _FIELDS.index("facts")
_CONTEXT_AT = _FIELDS.index("context")
# short texts many memories repeat, held once
_SHARED_AT = tuple(_FIELDS.index(f) for f in ("user_id", "session_id", "source", "topic", "tier"))


def _row(m: Memory, contexts: dict[str, int]) -> list[Any]:
    """A memory's fields, its context as its place among the snapshot's distinct contexts: a long
    turn's ~6 segments each have the turn's context (the turns around it, ~6,000 characters), and
    decoding a copy for each was 41.5 MiB of strings that were freed at once but not given back (the
    worker's RSS stayed 90 MiB above what it held, issue 45)."""
    row = [getattr(m, f) for f in _FIELDS]
    row[_CONTEXT_AT] = contexts.setdefault(m.context, len(contexts))
    return row


def _memory(row: list[Any], texts: dict[str, str], contexts: list[str]) -> Memory:
    if len(row) != len(_FIELDS):
        raise ValueError("a snapshot row of another shape")
    row[_CONTEXT_AT] = contexts[row[_CONTEXT_AT]]
    for i in _SHARED_AT:
        if isinstance(row[i], str):
            row[i] = texts.setdefault(row[i], row[i])
    for i in _TUPLE_AT:
        row[i] = tuple(row[i])
    row[_FACTS_AT] = tuple((k, v) for k, v in row[_FACTS_AT])
    return Memory(*row)


class IndexSnapshots:
    """Where snapshots live (Redis, under the user's keys) and when they are worth one.

    `min_memories`: users with fewer memories are not snapshotted (their build is cheap);
    `ttl_seconds`: an unused snapshot expires (a user idle that long is built from the store);
    `fingerprint`: the embedding models in use, so that a snapshot of other vectors is never loaded."""

    def __init__(
        self,
        redis: RedisClient,
        *,
        fingerprint: str,
        min_memories: int = 500,
        ttl_seconds: int = 7 * 86_400,
        part_bytes: int = PART_BYTES,
    ) -> None:
        self._redis = redis
        self._save = redis.register_script(_SAVE)
        self._size = redis.register_script(_SIZE)
        self.fingerprint = fingerprint
        self.min_memories = min_memories
        self._ttl_ms = ttl_seconds * 1000
        self._part_bytes = part_bytes

    async def read(self, user_id: str) -> bytes | None:
        """The stored snapshot, undecoded (binary: the client's text decoding is skipped for it). A
        value of another type under the key (an older release's) raises `ResponseError`, a RedisError:
        the caller builds from the store, and the next save replaces it."""
        parts: Any = await self._redis.execute_command(
            "LRANGE", keys.ltm_snapshot(user_id), 0, -1, **{NEVER_DECODE: []}
        )
        if isinstance(parts, list) and parts and parts[-1][:4] == _META:
            parts = parts[:-1]
        if not isinstance(parts, list) or not parts:
            return None
        return parts[0] if len(parts) == 1 else b"".join(parts)

    async def memories(self, user_id: str) -> int | None:
        """How many memories the user's snapshot holds (one short Redis call, no part read); None when
        there is no snapshot, or it was written without the count."""
        found: Any = await self._size(keys=[keys.ltm_snapshot(user_id)], args=[_META])
        if not isinstance(found, list) or len(found) != 2 or not found[1]:
            return None
        raw = found[1].encode() if isinstance(found[1], str) else found[1]
        try:
            meta = orjson.loads(raw[len(_META) :])
        except orjson.JSONDecodeError:
            return None
        count = meta.get("memories") if isinstance(meta, dict) else None
        return count if isinstance(count, int) else None

    async def write(self, user_id: str, version: int, encoded: bytes, *, memories: int | None = None) -> bool:
        """Store `encoded` (taken at `version`) if `version` is still the user's current one; `memories`:
        how many it holds, kept beside the parts for `memories()` and, with where the head and buckets
        are, for `terms()` (None: not kept). The payload goes in parts of at most `part_bytes`, each
        element after it (head, buckets, trailer) as its own list element: joined, they are `encoded`."""
        draft = keys.ltm_snapshot_draft(user_id, secrets.token_hex(8))
        payload, extras, trailer = elements(encoded)
        parts = [
            payload[at : at + self._part_bytes] for at in range(0, max(1, len(payload)), self._part_bytes)
        ]
        batches: list[list[memoryview]] = [[p] for p in parts]
        size = self._part_bytes
        for element in [*extras, trailer] if extras else []:
            if size + len(element) > self._part_bytes:  # a command of at most a part's bytes
                batches.append([])
                size = 0
            batches[-1].append(element)
            size += len(element)
        for batch in batches:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.rpush(draft, *(bytes(e) for e in batch))
                pipe.pexpire(draft, DRAFT_TTL_MS)
                await pipe.execute()
        if memories is not None:
            meta = {"memories": memories, "version": version, "parts": len(parts), "buckets": len(extras) - 1}
            await self._redis.rpush(draft, _META + orjson.dumps(meta))
        stored = await self._save(
            keys=[keys.ltm_version(user_id), keys.ltm_snapshot(user_id), draft],
            args=[str(version), self._ttl_ms],
        )
        return bool(stored)

    async def terms(
        self, user_id: str, tokens: Iterable[str]
    ) -> tuple[term_buckets.Head, dict[int, bytes]] | None:
        """The head of the user's snapshot and the buckets of these terms (bucket -> its element), in one
        Redis call (a snapshot replaced meanwhile cannot mix two); None when the snapshot has no
        buckets (none, an older format, written without its count) or they are not this process's."""
        crcs = [str(term_buckets.bucket_of(t, 2**32)) for t in dict.fromkeys(tokens)]
        found: Any = await self._redis.execute_command(
            "EVAL", _TERMS, 1, keys.ltm_snapshot(user_id), _META, *crcs, **{NEVER_DECODE: []}
        )
        if not isinstance(found, list) or len(found) < 2 or not found[1]:
            return None
        try:
            head = term_buckets.read_head(found[1], dataclasses.asdict(_DEFAULT_PARAMS))
            buckets = {int(k): raw for k, raw in zip(found[2::2], found[3::2], strict=True) if raw}
        except (ValueError, KeyError, TypeError, struct.error, orjson.JSONDecodeError):
            log.warning("index snapshot's buckets unreadable", exc_info=True)
            return None
        return head, buckets
