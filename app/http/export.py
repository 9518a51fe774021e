"""The export document, encoded as it is read: a JSON object streamed in small chunks.

Shape: {"format", "user_id", "exported_at", "memories": [...], "sessions": [...],
"pending_writes": [...], "history": {memory id: [event]}, "relations": {memory id: {said_at, entities,
relations, aliases, profile}}, "entities": [...], "entity_merges": [...], "profile": {current, past},
"counts": {...}}. `relations` is what relation memory extracted from each memory; `entities`, `entity_merges` and
`profile` are what it folds them into (the graph, the merges in force, the user's own entity). `history` holds the
recorded events (edits, restores, deletes); what a record says of itself is in the memory. Counts come last because they are only known at the end.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio

from app.http.account_schemas import session_view
from app.http.fields import iso_utc
from app.http.schemas import memory_fields
from memory.errors import REDIS_UNAVAILABLE, StoreUnavailable
from memory.governance.export import UserExport
from memory.longterm.history import HistoryEvent
from memory.models import Memory
from memory.outbox.stream import OutboxEntry
from memory.relations.graph import Merge, Node, Record
from memory.relations.profile import ProfileEntry
from monitoring import metrics

log = logging.getLogger(__name__)
_STORE_DOWN: tuple[type[Exception], ...] = (*REDIS_UNAVAILABLE, StoreUnavailable)
FORMAT = "mnemo-export/1"


def memory_record(m: Memory, embedded_by: list[str] | None = None) -> dict[str, Any]:
    """A memory with its provenance: where it came from, how it was scored, what it is indexed with
    (`embedded_by`: the models holding a vector of it; the vectors are left out)."""
    return {
        **memory_fields(m),
        "speaker_name": m.name,
        "tier": m.tier,
        "entities": list(m.entities),
        "context": m.context,
        "content_hash": m.content_hash,
        "facts": [list(f) for f in m.facts],  # what it states; valid_from/valid_to/superseded_by: the chain
        "embedded_by": embedded_by or [],
    }


def pending_record(entry: OutboxEntry) -> dict[str, Any]:
    return {
        "session_id": entry.session_id,
        "enqueued_at": iso_utc(entry.enqueued_at) if entry.enqueued_at is not None else None,
        "messages": [
            {
                "id": m.id,
                "role": m.role,
                "name": m.name,
                "content": m.content,
                "timestamp": iso_utc(m.timestamp) if m.timestamp is not None else None,
            }
            for m in entry.messages
        ],
    }


def history_record(e: HistoryEvent) -> dict[str, Any]:
    return {
        "event": e.kind,
        "at": iso_utc(e.at),
        "actor": e.actor,
        "role": e.role,
        "request_id": e.request_id,
        "detail": dict(e.detail),
    }


def relation_record(rec: Record) -> dict[str, Any]:
    return {
        "said_at": iso_utc(rec.said_at),
        "entities": [{"id": e.id, "kind": e.kind, "name": e.name} for e in rec.entities],
        "relations": [
            {"subject": s, "relation": r, "object": o, "when": w or None} for s, r, o, w in rec.relations
        ],
        "aliases": [{"alias": a, "entity": b} for a, b in rec.aliases],
        "profile": [{"category": a.category, "key": a.key, "value": a.value} for a in rec.attrs],
    }


def entity_record(node: Node) -> dict[str, Any]:
    return {
        "id": node.id,
        "kind": node.kind,
        "name": node.name,
        "aliases": sorted(node.aliases),
        "memory_ids": sorted(node.memories),
    }


def merge_record(m: Merge) -> dict[str, Any]:
    return {"id": m.id, "source": m.source, "target": m.target, "at": iso_utc(m.at), "actor": m.actor}


def profile_record(e: ProfileEntry) -> dict[str, Any]:
    return {
        "category": e.category,
        "key": e.key,
        "value": e.value,
        "tags": list(e.tags),
        "said_at": iso_utc(e.said_at),
        "valid_to": iso_utc(e.valid_to) if e.valid_to is not None else None,
        "memory_ids": list(e.memory_ids),
    }


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


async def export_document(
    exporter: UserExport,
    user_id: str,
    first_page: list[Memory] | None,
    rest: AsyncIterator[list[Memory]],
    on_done: Callable[[Mapping[str, int], bool], Awaitable[None]],
    *,
    session_ids: list[str] | None = None,
    pending: Sequence[OutboxEntry] = (),
) -> AsyncIterator[str]:
    """Chunks of the document. `pending`, `first_page` and `session_ids` were read before the response
    started, in that order (so an outage of Chroma or Redis at the start is a clean 503, and a write
    finishing meanwhile is in `pending` or in the memories, maybe both, never in neither); `on_done(counts, complete)` runs at
    the end, also after a disconnect."""
    counts = {"memories": 0, "sessions": 0, "pending_writes": 0}
    complete = False
    try:
        head = {"format": FORMAT, "user_id": user_id, "exported_at": iso_utc(time.time())}
        yield _dump(head)[:-1] + ',"memories":['
        sep = ""
        if first_page:
            models = await exporter.embedded_by(user_id, first_page)
            yield ",".join(_dump(memory_record(m, models.get(m.id))) for m in first_page)
            sep = ","
            counts["memories"] += len(first_page)
        async for page in rest:
            models = await exporter.embedded_by(user_id, page)
            yield sep + ",".join(_dump(memory_record(m, models.get(m.id))) for m in page)
            sep = ","
            counts["memories"] += len(page)
        yield '],"sessions":['
        sep = ""
        async for part in exporter.sessions(user_id, session_ids):
            yield sep + _dump(session_view(user_id, part.session_id, part.state))
            sep = ","
            counts["sessions"] += 1
        yield '],"pending_writes":['
        sep = ""
        for entry in pending:
            yield sep + _dump(pending_record(entry))
            sep = ","
            counts["pending_writes"] += 1
        yield '],"history":{'
        sep = ""
        counts["history_events"] = 0
        for memory_id, events in (await exporter.histories(user_id)).items():
            yield sep + _dump(memory_id) + ":" + _dump([history_record(e) for e in events])
            sep = ","
            counts["history_events"] += len(events)
        yield '},"relations":{'
        sep = ""
        counts["relations"] = 0
        for memory_id, rec in (await exporter.relations(user_id)).items():
            yield sep + _dump(memory_id) + ":" + _dump(relation_record(rec))
            sep = ","
            counts["relations"] += len(rec.relations)
        graph = await exporter.entity_graph(user_id)
        yield '},"entities":['
        yield ",".join(_dump(entity_record(n)) for n in sorted(graph.nodes.values(), key=lambda n: n.id))
        yield '],"entity_merges":' + _dump([merge_record(m) for m in graph.merges])
        profile = graph.profile()
        yield ',"profile":' + _dump(
            {
                "current": [profile_record(e) for e in profile.current],
                "past": [profile_record(e) for e in profile.past],
            }
        )
        counts["entities"] = len(graph.nodes)
        counts["entity_merges"] = len(graph.merges)
        yield ',"counts":' + _dump(counts) + "}"
        complete = True
    except _STORE_DOWN as exc:
        # the status line went out with the first byte: the only honest signal left is a document that
        # does not parse (it never closes), rather than an error raised into the server mid-body
        metrics.STORE_UNAVAILABLE.labels(exc.store if isinstance(exc, StoreUnavailable) else "redis").inc()
        log.warning("export cut short: a store became unavailable", extra={"reason": f"{type(exc).__name__}"})
    finally:
        with anyio.CancelScope(shield=True):  # also when the client went away mid-stream
            await on_done(counts, complete)
