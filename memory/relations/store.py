"""Relation memory at rest: one Redis hash per user, `memory id -> record` (graph.py `Record`, JSON),
and a counter that moves with every change; under the user's hash tag (memory/keys.py), so the user's
erase (a SCAN of `keys.user_pattern`) deletes it and a cluster keeps it in the user's slot.

Each worker keeps the graph of its recent users in process, rebuilt when the counter moved (one GET per
search when nothing changed). Why this shape (docs/decisions.md, "Relation memory (issue 26)"): the
records are keyed by memory, so a delete or a forget is one HDEL and takes with it every entity,
relation and alias only that memory taught; traversal needs the whole neighbourhood of a handful of
entities per question, which an in-process adjacency answers in microseconds where per-entity Redis
sets would cost a round trip per hop.

A merge or a split is checked against the graph at one version and written by a script only while the
version is still that one (compare-and-set; every change of the records or the merges moves it), else
checked again on the graph that moved it: two merges racing (A into B, B into A) cannot both pass the
check, so the merges in force never make a cycle nor merge one entity twice (issue 39). The keys share
the user's hash tag, so the script runs on one slot's master in a cluster too.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import anyio.to_thread

from memory import keys
from memory.errors import EntityNotFound, MemoryBusy, MergeConflict, MergeRefused
from memory.models import Memory
from memory.redis_client import RedisClient
from memory.relations.extract import extract
from memory.relations.graph import Graph, Merge, Record
from memory.relations.lexicon import DOC_KINDS
from memory.relations.profile import attributes_of

log = logging.getLogger(__name__)
_IN_THREAD = 500  # records: build a larger graph in a worker thread
MAX_MERGES = 1000  # per user
DOCUMENT_KINDS = frozenset({*DOC_KINDS, "document"})
ATTEMPTS = 12  # a merge or split checked again when the user's relations moved meanwhile (then 409 busy)

# KEYS: merges hash, version counter. ARGV: the version checked at, merge id, merge JSON.
# 1 written; 0 the version moved (nothing written)
_MERGE = """
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('INCR', KEYS[2])
return 1
"""
# KEYS: merges hash, version counter. ARGV: the version checked at, the merge split, then the merges
# without effect that go with it. {0} the version moved; {1} no such merge; {2, its JSON} split
_SPLIT = """
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return {0} end
local raw = redis.call('HGET', KEYS[1], ARGV[2])
if not raw then return {1} end
redis.call('HDEL', KEYS[1], unpack(ARGV, 2))
redis.call('INCR', KEYS[2])
return {2, raw}
"""


def records_of(memories: Sequence[Memory]) -> dict[str, Record]:
    """The record of each memory (empty ones too: they clear an older record of an edited memory)."""
    out: dict[str, Record] = {}
    for m in memories:
        if not m.content:
            continue
        found = extract(m.content, said_at=m.created_at)
        # only the user's own words say who the user is ("I'm a teacher" from the assistant does not)
        attrs = attributes_of(m.content, found) if m.source == "user" else ()
        out[m.id] = Record.of(found, m.created_at, attrs)
    return out


class RelationStore:
    def __init__(self, redis: RedisClient, *, cached_records: int = 200_000) -> None:
        """`cached_records`: the graphs a worker keeps, counted in memory records (LRU by user). Measured
        (bench/relations.py): about 500 bytes per record in process, so 200,000 is about 100 MB; a user
        with 10,000 memories is about 5 MB."""
        self._redis = redis
        self._cached_records = cached_records
        self._graphs: OrderedDict[str, tuple[int, Graph]] = OrderedDict()
        self._merge = redis.register_script(_MERGE)
        self._split = redis.register_script(_SPLIT)

    async def index(self, user_id: str, memories: Sequence[Memory]) -> int:
        """Extract and store what these memories say (after their upsert); returns how many name
        something. A memory that names nothing (any more) has no record."""
        # extraction is pure CPU, about 10 ms a memory: the 80 segments of a 32,000-character message
        # would hold the event loop for a second (issue 39)
        made = await anyio.to_thread.run_sync(records_of, memories)
        keep = {mid: r.dumps() for mid, r in made.items() if r}
        drop = [m.id for m in memories if m.id not in keep]
        async with self._redis.pipeline(transaction=True) as pipe:
            if keep:
                pipe.hset(keys.relations(user_id), mapping=keep)  # type: ignore[arg-type]  # invariant keys
            if drop:
                pipe.hdel(keys.relations(user_id), *drop)
            pipe.incr(keys.relations_version(user_id))
            await pipe.execute()
        return len(keep)

    async def remove(self, user_id: str, memory_ids: Sequence[str]) -> None:
        """A deleted or forgotten memory takes its entities, relations, aliases and profile attributes
        with it; a merge goes too once no memory names one of its two entities any more (its ids are
        names: "person:anna")."""
        if not memory_ids:
            return
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(keys.relations(user_id), *memory_ids)
            pipe.incr(keys.relations_version(user_id))
            await pipe.execute()
        self._graphs.pop(user_id, None)
        merges = await self.merges(user_id)
        if merges:
            named = {e.id for r in (await self.records(user_id)).values() for e in r.entities}
            gone = [m.id for m in merges if m.source not in named or m.target not in named]
            if gone:
                async with self._redis.pipeline(transaction=True) as pipe:
                    pipe.hdel(keys.relation_merges(user_id), *gone)
                    pipe.incr(keys.relations_version(user_id))
                    await pipe.execute()
                log.info("merges dropped with their entities' last memories", extra={"merges": len(gone)})

    async def records(self, user_id: str) -> dict[str, Record]:
        raw = await self._read(user_id)
        return _parsed(raw) if len(raw) <= _IN_THREAD else await anyio.to_thread.run_sync(_parsed, raw)

    async def _read(self, user_id: str) -> Mapping[str | bytes, str | bytes]:
        """The user's records as stored (JSON), parsed by the caller."""
        return await self._redis.hgetall(keys.relations(user_id))

    async def graph(self, user_id: str) -> Graph:
        """The user's graph at the current version (cached per worker)."""
        return (await self._current(user_id))[1]

    async def _current(self, user_id: str) -> tuple[int, Graph]:
        """The version read first, then the graph: a write that lands in between moves the version on,
        so a script that finds the version unchanged finds the records and merges this graph holds."""
        version = int(await self._redis.get(keys.relations_version(user_id)) or 0)
        cached = self._graphs.get(user_id)
        if cached is not None and cached[0] == version:
            self._graphs.move_to_end(user_id)
            return cached
        started = time.perf_counter()
        raw, merges = await asyncio.gather(self._read(user_id), self.merges(user_id))
        # parsed and folded in a worker thread when large: a worker's first search of the user reads
        # its index snapshot meanwhile, on the event loop
        graph = (
            await anyio.to_thread.run_sync(_graph, raw, merges)
            if len(raw) > _IN_THREAD
            else _graph(raw, merges)
        )
        self._graphs[user_id] = (version, graph)
        self._graphs.move_to_end(user_id)
        held = sum(len(g.records) for _, g in self._graphs.values())
        while held > self._cached_records and len(self._graphs) > 1:
            _, (_, dropped) = self._graphs.popitem(last=False)
            held -= len(dropped.records)
        log.debug(
            "relation graph built",
            extra={
                "records": len(raw),
                "entities": len(graph),
                "ms": round((time.perf_counter() - started) * 1e3, 1),
            },
        )
        return version, graph

    async def merges(self, user_id: str) -> list[Merge]:
        raw = await self._redis.hgetall(keys.relation_merges(user_id))
        return sorted((Merge.loads(_text(k), v) for k, v in raw.items()), key=lambda m: (m.at, m.id))

    async def merge(self, user_id: str, source: str, target: str, *, actor: str, at: float) -> Merge:
        """Make `source` one with `target` (both exactly as the entity list names them): its names,
        memories and relations are the target's from now on, for what was written before and after.
        Checked and written atomically (`_MERGE`): MergeConflict when the merges in force say the two
        are one already or merged one of them away, also when another merge just did."""
        started = time.monotonic()
        for attempt in range(ATTEMPTS):
            version, graph = await self._current(user_id)
            _check_merge(graph, source, target)
            merge = Merge(f"mg-{secrets.token_hex(8)}", source, target, at, actor)
            keys_ = [keys.relation_merges(user_id), keys.relations_version(user_id)]
            if await self._merge(keys=keys_, args=[version, merge.id, merge.dumps()]):
                self._graphs.pop(user_id, None)
                log.info("entities merged", extra={"merge_id": merge.id, "attempts": attempt + 1})
                return merge
            await _backoff(attempt)
        raise MemoryBusy(user_id, time.monotonic() - started)

    async def split(self, user_id: str, merge_id: str) -> Merge:
        """Undo exactly the merge `merge_id`: its source is an entity of its own again. A merge left
        without effect that would take effect without this one goes with it (graph.py
        `Graph.undone_by_split`: data an older version let race); atomic like `merge`."""
        started = time.monotonic()
        for attempt in range(ATTEMPTS):
            version, graph = await self._current(user_id)
            drop = (
                await anyio.to_thread.run_sync(graph.undone_by_split, merge_id)
                if graph.void and any(m.id == merge_id for m in graph.merges)
                else [merge_id]
            )
            keys_ = [keys.relation_merges(user_id), keys.relations_version(user_id)]
            done = await self._split(keys=keys_, args=[version, *drop])
            if int(done[0]) == 1:
                raise EntityNotFound(f"merge {merge_id}")
            if int(done[0]) == 2:
                self._graphs.pop(user_id, None)
                log.info(
                    "entities split",
                    extra={"merge_id": merge_id, "without_effect": len(drop) - 1, "attempts": attempt + 1},
                )
                return Merge.loads(merge_id, done[1])
            await _backoff(attempt)
        raise MemoryBusy(user_id, time.monotonic() - started)

    def forget_user(self, user_id: str) -> None:
        self._graphs.pop(user_id, None)


def _check_merge(graph: Graph, source: str, target: str) -> None:
    """Whether `source` can be merged into `target` in this graph: two entities of their own, of one
    kind. MergeConflict when a merge in force stands in the way (the two are one already: a cycle, or
    the same merge again; one of them merged into a third), MergeRefused when the request itself is
    wrong (an alias the rules made, the same entity twice, another kind), EntityNotFound."""
    for entity_id, other in ((source, target), (target, source)):
        if entity_id in graph.nodes:
            continue
        stands_for = graph.resolve(entity_id)
        if stands_for == entity_id or stands_for not in graph.nodes:
            raise EntityNotFound(f"entity {entity_id}")
        by = graph.merged_by.get(entity_id)
        if by is None:  # an alias the rules made: "my sister" is Anna, Mel is Melanie
            raise MergeRefused(
                f"{entity_id} is an alias of {stands_for}: name the entity itself "
                f"({entity_id} 是 {stands_for} 的别名，请写实体本身的 id)"
            )
        merged = f"{entity_id} was merged into {by.target} (merge {by.id})"
        merged_zh = f"{entity_id} 已合并到 {by.target}（合并 {by.id}）"
        if stands_for == other and entity_id == source:
            raise MergeConflict(
                f"{merged}: it is one with {target} already ({merged_zh}，已与 {target} 是同一实体)"
            )
        if stands_for == other:
            raise MergeConflict(
                f"{merged}, which is one with {source}: merging {source} into it would make a cycle; "
                f"split that merge first ({merged_zh}，已与 {source} 是同一实体，再合并会形成循环，"
                f"请先拆分该合并)"
            )
        if entity_id == source:
            raise MergeConflict(
                f"{merged}: an entity is merged into one other; split that merge first "
                f"({merged_zh}，一个实体只能合并到一个实体，请先拆分该合并)"
            )
        raise MergeConflict(
            f"{merged}: merge into {stands_for}, or split that merge first "
            f"({merged_zh}，请合并到 {stands_for}，或先拆分该合并)"
        )
    if source == target:
        raise MergeRefused(f"an entity cannot be merged into itself (实体不能合并到自身): {source}")
    a, b = graph.nodes[source], graph.nodes[target]
    if _family(a.kind) != _family(b.kind):
        raise MergeRefused(
            f"a {a.kind} and a {b.kind} are not one entity (类型不同的实体不能合并): {source}, {target}"
        )
    if len(graph.merges) >= MAX_MERGES:
        raise MergeRefused(f"at most {MAX_MERGES} merges per user (每个用户最多 {MAX_MERGES} 次合并)")


async def _backoff(attempt: int) -> None:
    """A short random wait before checking again, longer after each try (two racing merges: the
    second finds the first's write on its next check)."""
    await asyncio.sleep(random.uniform(0, min(0.1, 0.002 * 2**attempt)))


def _family(kind: str) -> str:
    """Kinds that can be one entity: every document kind is a document."""
    return "document" if kind in DOCUMENT_KINDS else kind


def _parsed(raw: Mapping[str | bytes, str | bytes]) -> dict[str, Record]:
    return {_text(k): Record.loads(v) for k, v in raw.items()}


def _graph(raw: Mapping[str | bytes, str | bytes], merges: Sequence[Merge]) -> Graph:
    return Graph(_parsed(raw), merges)


def _text(value: str | bytes) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
