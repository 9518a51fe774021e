"""Relation memory at rest: one Redis hash per user, `memory id -> record` (graph.py `Record`, JSON),
and a counter that moves with every change; under the user's hash tag (memory/keys.py), so the user's
erase (a SCAN of `keys.user_pattern`) deletes it and a cluster keeps it in the user's slot.

Each worker keeps the graph of its recent users in process, rebuilt when the counter moved (one GET per
search when nothing changed). Why this shape (docs/decisions.md, "Relation memory (issue 26)"): the
records are keyed by memory, so a delete or a forget is one HDEL and takes with it every entity,
relation and alias only that memory taught; traversal needs the whole neighbourhood of a handful of
entities per question, which an in-process adjacency answers in microseconds where per-entity Redis
sets would cost a round trip per hop.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence

import anyio.to_thread

from memory import keys
from memory.errors import EntityNotFound, MergeRefused
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

    async def index(self, user_id: str, memories: Sequence[Memory]) -> int:
        """Extract and store what these memories say (after their upsert); returns how many name
        something. A memory that names nothing (any more) has no record."""
        made = records_of(memories)
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
        version = int(await self._redis.get(keys.relations_version(user_id)) or 0)
        cached = self._graphs.get(user_id)
        if cached is not None and cached[0] == version:
            self._graphs.move_to_end(user_id)
            return cached[1]
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
        return graph

    async def merges(self, user_id: str) -> list[Merge]:
        raw = await self._redis.hgetall(keys.relation_merges(user_id))
        return sorted((Merge.loads(_text(k), v) for k, v in raw.items()), key=lambda m: (m.at, m.id))

    async def merge(self, user_id: str, source: str, target: str, *, actor: str, at: float) -> Merge:
        """Make `source` one with `target` (both exactly as the entity list names them): its names,
        memories and relations are the target's from now on, for what was written before and after."""
        graph = await self.graph(user_id)
        for entity_id in (source, target):
            if entity_id not in graph.nodes:
                stands_for = graph.resolve(entity_id)
                if stands_for != entity_id and stands_for in graph.nodes:
                    raise MergeRefused(
                        f"{entity_id} is an alias of {stands_for}: name the entity itself "
                        f"({entity_id} 是 {stands_for} 的别名，请写实体本身的 id)"
                    )
                raise EntityNotFound(f"entity {entity_id}")
        if source == target:
            raise MergeRefused(f"an entity cannot be merged into itself (实体不能合并到自身): {source}")
        a, b = graph.nodes[source], graph.nodes[target]
        if _family(a.kind) != _family(b.kind):
            raise MergeRefused(
                f"a {a.kind} and a {b.kind} are not one entity (类型不同的实体不能合并): {source}, {target}"
            )
        if len(graph.merges) >= MAX_MERGES:
            raise MergeRefused(f"at most {MAX_MERGES} merges per user (每个用户最多 {MAX_MERGES} 次合并)")
        merge = Merge(f"mg-{secrets.token_hex(8)}", source, target, at, actor)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hset(keys.relation_merges(user_id), merge.id, merge.dumps())
            pipe.incr(keys.relations_version(user_id))
            await pipe.execute()
        self._graphs.pop(user_id, None)
        log.info("entities merged", extra={"merge_id": merge.id})
        return merge

    async def split(self, user_id: str, merge_id: str) -> Merge:
        """Undo exactly the merge `merge_id`: its source is an entity of its own again."""
        raw = await self._redis.hget(keys.relation_merges(user_id), merge_id)
        if raw is None:
            raise EntityNotFound(f"merge {merge_id}")
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.hdel(keys.relation_merges(user_id), merge_id)
            pipe.incr(keys.relations_version(user_id))
            await pipe.execute()
        self._graphs.pop(user_id, None)
        log.info("entities split", extra={"merge_id": merge_id})
        return Merge.loads(merge_id, raw)

    def forget_user(self, user_id: str) -> None:
        self._graphs.pop(user_id, None)


def _family(kind: str) -> str:
    """Kinds that can be one entity: every document kind is a document."""
    return "document" if kind in DOCUMENT_KINDS else kind


def _parsed(raw: Mapping[str | bytes, str | bytes]) -> dict[str, Record]:
    return {_text(k): Record.loads(v) for k, v in raw.items()}


def _graph(raw: Mapping[str | bytes, str | bytes], merges: Sequence[Merge]) -> Graph:
    return Graph(_parsed(raw), merges)


def _text(value: str | bytes) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else value
