"""What mnemo answers, as frozen dataclasses read strictly: a field this client relies on that is missing
or of another type raises `ContractError` (so a renamed field fails loudly, not as a silent None).
Fields mnemo documents as optional or newer (`skipped`, `archive_tier`, `tiers`) default when absent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mnemo_client.errors import ContractError

T = TypeVar("T")
Json = Mapping[str, Any]


def _get(data: object, key: str, kind: type[T] | tuple[type, ...], what: str) -> T:
    if not isinstance(data, Mapping):
        raise ContractError(f"{what}: expected an object, got {type(data).__name__}")
    if key not in data:
        raise ContractError(f"{what}: no field {key!r} (fields: {sorted(data)})")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        raise ContractError(f"{what}.{key}: expected {kind}, got {value!r}")
    return value  # type: ignore[return-value]


def _opt(data: Json, key: str, kind: type[T] | tuple[type, ...], what: str) -> T | None:
    if data.get(key) is None:
        return None
    return _get(data, key, kind, what)


def _strs(values: object, what: str) -> tuple[str, ...]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ContractError(f"{what}: expected a list of strings, got {values!r}")
    return tuple(values)


def _objects(data: object, key: str, what: str) -> list[Json]:
    items = _get(data, key, list, what)
    if not all(isinstance(i, Mapping) for i in items):
        raise ContractError(f"{what}.{key}: expected a list of objects")
    return items


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    content: str
    created_at: str
    session_id: str
    source: str
    importance: float | None
    topic: str | None
    tier: str | None
    source_message_ids: tuple[str, ...]
    valid_from: str | None
    valid_to: str | None
    superseded_by: str | None
    archive_tier: str
    version: str | None = None  # when read by id or edited: what an edit's If-Match names
    pinned: bool = False

    @classmethod
    def from_json(cls, data: Json) -> Memory:
        what = "memory"
        return cls(
            id=_get(data, "id", str, what),
            content=_get(data, "content", str, what),
            created_at=_get(data, "created_at", str, what),
            session_id=_get(data, "session_id", str, what),
            source=_get(data, "source", str, what),
            importance=_opt(data, "importance", (int, float), what),
            topic=_opt(data, "topic", str, what),
            tier=_opt(data, "tier", str, what),
            source_message_ids=_strs(data.get("source_message_ids", []), f"{what}.source_message_ids"),
            valid_from=_opt(data, "valid_from", str, what),
            valid_to=_opt(data, "valid_to", str, what),
            superseded_by=_opt(data, "superseded_by", str, what),
            archive_tier=_opt(data, "archive_tier", str, what) or "hot",
            version=_opt(data, "version", str, what),
            pinned=_opt(data, "pinned", bool, what) or False,
        )


@dataclass(frozen=True, slots=True)
class SearchHit:
    """`relevance`: how likely the memory is about the query, 0 .. 1, calibrated and comparable across
    searches (pick or show memories by it); `score` only orders the hits of one search."""

    memory: Memory
    relevance: float
    score: float
    similarity: float
    explain: Json | None = None

    @classmethod
    def from_json(cls, data: Json) -> SearchHit:
        return cls(
            memory=Memory.from_json(data),
            relevance=float(_get(data, "relevance", (int, float), "search hit")),
            score=float(_get(data, "score", (int, float), "search hit")),
            similarity=float(_get(data, "similarity", (int, float), "search hit")),
            explain=_opt(data, "explain", Mapping, "search hit"),
        )


@dataclass(frozen=True, slots=True)
class Skipped:
    index: int
    reason: str


@dataclass(frozen=True, slots=True)
class IngestResult:
    stored: int
    memories: tuple[Memory, ...]
    skipped: tuple[Skipped, ...] = ()

    @classmethod
    def from_json(cls, data: Json) -> IngestResult:
        what = "ingest answer"
        skipped = [
            Skipped(_get(s, "index", int, "skipped"), _get(s, "reason", str, "skipped"))
            for s in (_objects(data, "skipped", what) if data.get("skipped") is not None else [])
        ]
        return cls(
            stored=_get(data, "stored", int, what),
            memories=tuple(Memory.from_json(m) for m in _objects(data, "memories", what)),
            skipped=tuple(skipped),
        )


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: tuple[SearchHit, ...]
    tiers: Json | None = None

    @classmethod
    def from_json(cls, data: Json) -> SearchResult:
        return cls(
            hits=tuple(SearchHit.from_json(h) for h in _objects(data, "results", "search answer")),
            tiers=_opt(data, "tiers", Mapping, "search answer"),
        )


@dataclass(frozen=True, slots=True)
class MemoryPage:
    total: int
    items: tuple[Memory, ...]

    @classmethod
    def from_json(cls, data: Json) -> MemoryPage:
        return cls(
            total=_get(data, "total", int, "list answer"),
            items=tuple(Memory.from_json(m) for m in _objects(data, "items", "list answer")),
        )


@dataclass(frozen=True, slots=True)
class DeletedMemory:
    """A deleted or forgotten memory that can still be restored (`restore_memory`) until
    `restorable_until`; `how`: "deleted" (one by one) or "forgotten" (by criteria)."""

    memory: Memory
    deleted_at: str
    restorable_until: str
    how: str
    deleted_by: str

    @classmethod
    def from_json(cls, data: Json) -> DeletedMemory:
        what = "deleted memory"
        return cls(
            memory=Memory.from_json(data),
            deleted_at=_get(data, "deleted_at", str, what),
            restorable_until=_get(data, "restorable_until", str, what),
            how=_get(data, "how", str, what),
            deleted_by=_get(data, "deleted_by", str, what),
        )


@dataclass(frozen=True, slots=True)
class DeletedPage:
    """A page of restorable memories, most recently deleted first; `grace_seconds`: how long each stays
    restorable after its delete."""

    total: int
    grace_seconds: int
    items: tuple[DeletedMemory, ...]

    @classmethod
    def from_json(cls, data: Json) -> DeletedPage:
        what = "deleted list answer"
        return cls(
            total=_get(data, "total", int, what),
            grace_seconds=_get(data, "grace_seconds", int, what),
            items=tuple(DeletedMemory.from_json(m) for m in _objects(data, "items", what)),
        )


@dataclass(frozen=True, slots=True)
class ForgetResult:
    count: int
    ids: tuple[str, ...]
    dry_run: bool
    memories: tuple[Memory, ...] | None = None

    @classmethod
    def from_json(cls, data: Json) -> ForgetResult:
        what = "forget answer"
        preview = data.get("memories")
        return cls(
            count=_get(data, "count", int, what),
            ids=_strs(_get(data, "ids", list, what), f"{what}.ids"),
            dry_run=_get(data, "dry_run", bool, what),
            memories=None
            if preview is None
            else tuple(Memory.from_json(m) for m in _objects(data, "memories", what)),
        )


@dataclass(frozen=True, slots=True)
class HistoryEvent:
    """One event of a memory: created, merged, superseded, edited, restored or deleted."""

    event: str
    at: str
    actor: str
    role: str
    request_id: str
    detail: Mapping[str, Any]

    @classmethod
    def from_json(cls, data: Json) -> HistoryEvent:
        what = "history event"
        return cls(
            event=_get(data, "event", str, what),
            at=_get(data, "at", str, what),
            actor=_get(data, "actor", str, what),
            role=_get(data, "role", str, what),
            request_id=_get(data, "request_id", str, what),
            detail=_get(data, "detail", dict, what),
        )


def history_of(data: Json) -> list[HistoryEvent]:
    return [HistoryEvent.from_json(e) for e in _objects(data, "events", "history")]


@dataclass(frozen=True, slots=True)
class Erasure:
    deleted: Mapping[str, int]
    at: str
    at_rest_purged_by: str | None
    at_rest: Json = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Json) -> Erasure:
        what = "erase answer"
        return cls(
            deleted=dict(_get(data, "deleted", Mapping, what)),
            at=_get(data, "at", str, what),
            at_rest_purged_by=_opt(data, "at_rest_purged_by", str, what),
            at_rest=_opt(data, "at_rest", Mapping, what) or {},
        )


@dataclass(frozen=True, slots=True)
class SessionState:
    """One session's short-term state; `buffer` holds its recent messages ({id, role, content, ...})."""

    user_id: str
    session_id: str
    summary: Json | None
    mode: str | None
    actions: tuple[Json, ...]
    buffer: tuple[Json, ...]
    slots: Json

    @classmethod
    def from_json(cls, data: Json) -> SessionState:
        what = "session"
        return cls(
            user_id=_get(data, "user_id", str, what),
            session_id=_get(data, "session_id", str, what),
            summary=_opt(data, "summary", Mapping, what),
            mode=_opt(data, "mode", str, what),
            actions=tuple(_objects(data, "actions", what)),
            buffer=tuple(_objects(data, "buffer", what)),
            slots=_get(data, "slots", Mapping, what),
        )


@dataclass(frozen=True, slots=True)
class TurnDebug:
    """What mnemo did for a chat turn; `memory_ids` are the long-term memories it recalled."""

    memory_ids: tuple[str, ...]
    chroma_retrieved_count: int
    redis_summary_used: bool
    context_length: int
    total_tokens: int
    mode: str
    recall_degraded: str | None
    session_id: str

    @classmethod
    def from_json(cls, data: Json) -> TurnDebug:
        what = "debug"
        return cls(
            memory_ids=_strs(_get(data, "memory_ids", list, what), f"{what}.memory_ids"),
            chroma_retrieved_count=_get(data, "chroma_retrieved_count", int, what),
            redis_summary_used=_get(data, "redis_summary_used", bool, what),
            context_length=_get(data, "context_length", int, what),
            total_tokens=_get(data, "total_tokens", int, what),
            mode=_get(data, "mode", str, what),
            recall_degraded=_opt(data, "recall_degraded", str, what),
            session_id=_get(data, "session_id", str, what),
        )


@dataclass(frozen=True, slots=True)
class ChatCompletion:
    id: str
    model: str
    content: str
    finish_reason: str | None
    usage: Json
    debug: TurnDebug | None
    replayed: bool = False

    @classmethod
    def from_json(cls, data: Json, *, replayed: bool = False) -> ChatCompletion:
        what = "chat completion"
        choice = _objects(data, "choices", what)
        if not choice:
            raise ContractError(f"{what}: no choices")
        message = _get(choice[0], "message", Mapping, f"{what}.choices[0]")
        debug = _opt(data, "debug", Mapping, what)
        return cls(
            id=_get(data, "id", str, what),
            model=_get(data, "model", str, what),
            content=_get(message, "content", str, f"{what}.message"),
            finish_reason=_opt(choice[0], "finish_reason", str, what),
            usage=_get(data, "usage", Mapping, what),
            debug=None if debug is None else TurnDebug.from_json(debug),
            replayed=replayed,
        )


@dataclass(frozen=True, slots=True)
class ChatChunk:
    """One event of a streamed turn: `delta` is new text. The last chunk has `finish_reason`, the whole
    `response`, `usage` and `debug` (what was recalled)."""

    id: str
    delta: str
    finish_reason: str | None = None
    response: str | None = None
    usage: Json | None = None
    debug: TurnDebug | None = None

    @classmethod
    def from_json(cls, data: Json) -> ChatChunk:
        what = "chat chunk"
        choices = _objects(data, "choices", what)
        delta = _get(choices[0], "delta", Mapping, f"{what}.choices[0]") if choices else {}
        debug = _opt(data, "debug", Mapping, what)
        return cls(
            id=_get(data, "id", str, what),
            delta=_opt(delta, "content", str, f"{what}.delta") or "",
            finish_reason=_opt(choices[0], "finish_reason", str, what) if choices else None,
            response=_opt(data, "response", str, what),
            usage=_opt(data, "usage", Mapping, what),
            debug=None if debug is None else TurnDebug.from_json(debug),
        )
