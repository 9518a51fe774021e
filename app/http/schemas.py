"""The memory API's bodies: messages in, memories out, search, edits, history and undo. Shared
field types and bases live in app/http/fields.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    StrictBool,
    model_validator,
)

from app.http.fields import (
    MAX_CONTENT_CHARS,
    Strict,
    StrictBody,
    Timestamp,
    TimeZoneName,
    Topic,
    has_visible_text,
    iso_utc,
)
from app.http.ids import TAGS_MAX, Id, Tag
from memory.longterm.restorable import Deleted
from memory.models import (
    ArchiveTier,
    Evidence,
    Memory,
    Message,
    ScoreBreakdown,
    ScoredMemory,
    SearchFilters,
)
from memory.session.store import SessionState

MAX_MESSAGES = 500


class MessageIn(Strict):
    role: Literal["user", "assistant"]
    content: str = Field(
        max_length=MAX_CONTENT_CHARS,
        description="a blank message (empty, whitespace or invisible characters only) is skipped and "
        "named in the answer's `skipped`; it never fails the batch",
    )
    name: str | None = Field(None, min_length=1, max_length=128)
    id: Id | None = None
    timestamp: Timestamp | None = None

    @property
    def blank(self) -> bool:
        return not has_visible_text(self.content)

    def to_domain(self) -> Message:
        return Message(
            role=self.role, content=self.content, name=self.name, id=self.id, timestamp=self.timestamp
        )


class IngestRequest(StrictBody):
    session_id: Id
    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    time_zone: TimeZoneName | None = None

    @model_validator(mode="after")
    def _unique_ids(self) -> IngestRequest:
        ids = [m.id for m in self.messages if m.id is not None]
        if len(ids) != len(set(ids)):
            raise ValueError("message ids must be unique within a request")
        return self


class SearchRequest(StrictBody):
    query: str = Field(min_length=1, max_length=4000)
    top_k: int = Field(5, ge=1, le=100, strict=True)
    session_id: Id | None = None
    exclude_session_id: Id | None = None
    topic: Topic | None = None
    since: Timestamp | None = None
    until: Timestamp | None = None
    as_of: Timestamp | None = None
    time_zone: TimeZoneName | None = None
    explain: bool = Field(
        False, strict=True, description="add each hit's score breakdown and the source messages it came from"
    )
    # archive tiers (docs/memory.md#hot-warm-and-cold-tiers); none given: hot + warm, and cold when they
    # find nothing relevant (`tier` is the write policy's fact/episodic elsewhere, hence the names)
    archive_tier: ArchiveTier | None = None
    tiers: list[ArchiveTier] | None = Field(None, min_length=1, max_length=3)
    min_relevance: float | None = Field(
        None,
        ge=0,
        le=1,
        strict=True,
        description="leave out hits whose relevance is below this (0 .. 1; default: the server's "
        "SEARCH_MIN_RELEVANCE); 0 returns every candidate, however unrelated",
    )
    tags: list[Tag] | None = Field(
        None,
        min_length=1,
        max_length=TAGS_MAX,
        description="profile tags (#职业_教师, #goal_ielts): only memories stating every one of them",
    )

    @model_validator(mode="after")
    def _check(self) -> SearchRequest:
        if not has_visible_text(self.query):
            raise ValueError("query must not be blank")
        if self.archive_tier is not None and self.tiers is not None:
            raise ValueError("give archive_tier or tiers, not both")
        if self.since is not None and self.until is not None and self.since > self.until:
            raise ValueError("since must not be after until")
        return self

    @property
    def chosen_tiers(self) -> list[ArchiveTier] | None:
        return [self.archive_tier] if self.archive_tier is not None else self.tiers

    def filters(self) -> SearchFilters:
        return SearchFilters(
            session_id=self.session_id,
            exclude_session_id=self.exclude_session_id,
            topic=self.topic,
            since=self.since,
            until=self.until,
        )


class MemoryOut(BaseModel):
    id: str
    content: str
    created_at: str
    session_id: str
    source: Literal["user", "assistant"]
    importance: float | None
    topic: str | None
    tier: Literal["fact", "episodic"] | None = None
    source_message_ids: list[str]
    valid_from: str  # when what it says became true (its creation, unless told otherwise)
    valid_to: str | None  # when a newer memory replaced it; None while it is current
    superseded_by: str | None  # the id of that newer memory
    archive_tier: ArchiveTier = Field("hot", description="where it is stored: hot, warm or cold (by age)")
    pinned: bool = Field(False, description="a person said to keep it: never archived by age")

    @classmethod
    def of(cls, m: Memory) -> MemoryOut:
        return cls(**memory_fields(m))


class MemoryDetail(MemoryOut):
    version: str = Field(description="the record's version: send it back as If-Match to edit the memory")


class MemoryPatch(StrictBody):
    """The fields to change; only those given change. `topic` or `valid_to` set to null clears it."""

    content: str | None = Field(None, min_length=1, max_length=MAX_CONTENT_CHARS)
    importance: float | None = Field(None, ge=0, le=1, strict=True)
    pinned: StrictBool | None = None
    topic: Topic | None = None
    valid_to: Timestamp | None = Field(
        None, description="no longer true since (epoch seconds or ISO 8601); null: true again"
    )

    @model_validator(mode="after")
    def _something(self) -> MemoryPatch:
        given = self.model_fields_set
        if not given:
            raise ValueError("give at least one of content, importance, pinned, topic, valid_to")
        for name in ("content", "importance", "pinned"):
            if name in given and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null")
        if self.content is not None and not has_visible_text(self.content):
            raise ValueError("content must not be blank")
        if self.content is not None and "\x00" in self.content:
            # an edit is the exact text a person wants kept: a NUL would be cleaned away unseen
            raise ValueError("content must not hold a NUL character (\\u0000)")
        return self

    def changes(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.model_fields_set}


class HistoryEventOut(BaseModel):
    event: Literal["created", "merged", "superseded", "edited", "restored", "archived", "deleted"]
    at: str
    actor: str = Field(description="who acted: a token's subject, or 'mnemo' for what the service did")
    role: str = Field(description="user, admin or system")
    request_id: str
    detail: dict[str, Any]


class HistoryOut(BaseModel):
    memory_id: str
    events: list[HistoryEventOut] = Field(description="oldest first")


def memory_fields(m: Memory) -> dict[str, Any]:
    return {
        "id": m.id,
        "content": m.content,
        "created_at": iso_utc(m.created_at),
        "session_id": m.session_id,
        "source": m.source,
        "importance": m.importance,
        "topic": m.topic,
        "tier": m.tier,
        "source_message_ids": list(m.source_message_ids),
        "valid_from": iso_utc(m.valid_since),
        "valid_to": iso_utc(m.valid_to) if m.valid_to is not None else None,
        "superseded_by": m.superseded_by,
        "archive_tier": m.archive_tier,
        "pinned": m.pinned,
    }


class EvidenceOut(BaseModel):
    """What the hit's `relevance` was computed from: each channel's absolute measure for this memory
    (docs/memory.md#relevance)."""

    query_language: Literal["zh", "en"]
    memory_language: Literal["zh", "en"]
    cosine: float = Field(description="MiniLM cosine (counts only when query and memory are English)")
    coverage: float = Field(description="idf-weighted share of the query's words the memory holds")
    bridge: float | None = Field(description="multilingual bridge cosine; null: the channel took no part")
    attribute: bool = Field(description="states the attribute the question asks about")
    category: bool = Field(
        False,
        description="states a value of the category of the user's life the question asks about (a hobby)",
    )
    words: list[str] = Field(description="the query's words found in it (stems, CJK bigrams)")
    known: float = Field(description="share of the query's words the user ever wrote (any memory)")
    fused: float = Field(description="the ranking's fused value, relative to this search's candidates")

    @classmethod
    def of(cls, e: Evidence) -> EvidenceOut:
        return cls(
            query_language=e.query_language,
            memory_language=e.memory_language,
            cosine=round(e.cosine, 6),
            coverage=round(e.coverage, 6),
            bridge=round(e.bridge, 6) if e.bridge is not None else None,
            attribute=e.attribute,
            category=e.category,
            words=list(e.words),
            known=round(e.known, 6),
            fused=round(e.fused, 6),
        )


class ScoreExplained(BaseModel):
    """score = fused · recency_factor · validity_factor, fused = dense + keyword + bridge + Σ boosts;
    see docs/memory.md (recall and ranking, facts that change). `bridge`: the multilingual channel's
    part (0 when it took no part). `evidence`: what the hit's calibrated `relevance` comes from."""

    dense: float
    keyword: float
    bridge: float
    bm25: float
    boosts: dict[str, float]
    fused: float
    recency: float
    recency_factor: float
    demoted: bool
    in_month: bool
    validity_factor: float  # 1 unless facts that change moved it (superseded, or lifted to its old self)
    superseded: bool
    evidence: EvidenceOut | None = None
    links: list[
        str
    ] = []  # relation memory: the path that linked it to the question ("Q-2024-031 → approved")

    @classmethod
    def of(cls, b: ScoreBreakdown, evidence: Evidence | None = None) -> ScoreExplained:
        fused = b.dense + b.keyword + b.bridge + sum(b.boosts.values())
        return cls(
            dense=round(b.dense, 6),
            keyword=round(b.keyword, 6),
            bridge=round(b.bridge, 6),
            bm25=round(b.bm25, 6),
            boosts={k: round(v, 6) for k, v in b.boosts.items()},
            fused=round(fused, 6),
            recency=round(b.recency, 6),
            recency_factor=round(b.recency_factor, 6),
            demoted=b.demoted,
            in_month=b.in_month,
            validity_factor=round(b.validity_factor, 6),
            superseded=b.superseded,
            evidence=EvidenceOut.of(evidence) if evidence is not None else None,
            links=list(b.links),
        )


class SourceMessageOut(BaseModel):
    """A message a memory came from; `content` is null once the session's buffer no longer holds it
    (mnemo keeps the memory, redacted, not the raw messages)."""

    id: str
    session_id: str
    role: str | None = None
    content: str | None = None
    timestamp: str | None = None


class SearchHit(MemoryOut):
    relevance: float = Field(
        description="the probability that this memory is relevant to the query, 0 .. 1, calibrated on "
        "labelled zh/en pairs (docs/memory.md#relevance); comparable across searches"
    )
    score: float = Field(description="the ranking score: orders the hits of this search, nothing more")
    similarity: float
    explain: ScoreExplained | None = Field(None, description="with `explain: true` (hybrid pipeline)")
    source_messages: list[SourceMessageOut] | None = Field(None, description="with `explain: true`")

    @classmethod
    def of_scored(
        cls, s: ScoredMemory, *, explain: bool = False, buffers: Mapping[str, SessionState] | None = None
    ) -> SearchHit:
        hit = cls(
            **memory_fields(s.memory),
            relevance=round(s.relevance, 4),
            score=round(s.score, 6),
            similarity=round(s.similarity, 6),
        )
        if explain:
            hit.explain = ScoreExplained.of(s.breakdown, s.evidence) if s.breakdown is not None else None
            hit.source_messages = source_messages(s.memory, (buffers or {}).get(s.memory.session_id))
        return hit


def source_messages(m: Memory, session: SessionState | None) -> list[SourceMessageOut]:
    held = {b.id: b for b in session.buffer} if session is not None else {}
    out = []
    for mid in m.source_message_ids:
        b = held.get(mid)
        out.append(
            SourceMessageOut(id=mid, session_id=m.session_id)
            if b is None
            else SourceMessageOut(
                id=mid,
                session_id=m.session_id,
                role=b.role,
                content=b.content,
                timestamp=iso_utc(b.timestamp),
            )
        )
    return out


class SkippedMessage(BaseModel):
    index: int = Field(description="the message's position in the request, from 0")
    reason: Literal["blank", "small_talk", "question"] = Field(
        description="blank: nothing but whitespace or invisible characters; small_talk: an acknowledgement, "
        "thanks, greeting or laughter only (好的，我记住了 / Sure, noted!); question: a user's question that only "
        "asks (我住在哪个城市？ / what's my dog's name?). The last two are the write policy's: they still serve "
        "as context of the messages around them, and make no memory"
    )


class IngestResponse(BaseModel):
    stored: int
    memories: list[MemoryOut]
    skipped: list[SkippedMessage] = Field(
        default_factory=list, description="messages of the request that were not stored, and why"
    )


class ImportAccepted(BaseModel):
    """An import queued on the import lane (202): durable, written to long-term memory in the background."""

    import_id: str
    messages: int = Field(description="messages queued (blank ones are skipped, as by /messages)")
    entries: int = Field(description="entries of the import lane they were cut into (8 messages each)")
    status_url: str


class ImportStatus(BaseModel):
    import_id: str
    messages: int
    entries: int
    pending_entries: int = Field(description="this import's entries not yet written to long-term memory")
    done: bool = Field(description="every entry written: the imported memories are searchable")


class TiersOut(BaseModel):
    searched: list[ArchiveTier] = Field(description="the archive tiers this search covered")
    choice: Literal["requested", "default", "cold_fallback"] = Field(
        description="requested: the request named them; default: hot + warm; cold_fallback: hot + warm "
        "found nothing relevant, so cold was searched too"
    )
    detail: str = Field(description="why, in words (e.g. the best similarity against the threshold)")


class SearchResponse(BaseModel):
    results: list[SearchHit]
    tiers: TiersOut | None = None
    degraded: str | None = Field(
        None,
        description="set when a model was down and the search ranked by keywords alone "
        "(embeddings_unavailable); null otherwise",
    )


class ListResponse(BaseModel):
    total: int
    items: list[MemoryOut]


# Forget by meaning below this cosine selects memories unrelated to the query (MiniLM puts unrelated
# sentences at 0.0-0.3): such a threshold cannot be meant, so it is refused rather than obeyed.
# `min_similarity` is deprecated (docs/api.md#forget): it can only raise the relevance floor.
class DeletedMemoryOut(MemoryOut):
    """A deleted or forgotten memory that can still be restored (`archive_tier`: where it was)."""

    deleted_at: str
    restorable_until: str = Field(description="after this, the memory is gone for good")
    how: Literal["deleted", "forgotten"] = Field(description="deleted one by one, or forgotten by criteria")
    deleted_by: str = Field(description="who deleted it: a token's subject")

    @classmethod
    def of_deleted(cls, d: Deleted) -> DeletedMemoryOut:
        return cls(
            **memory_fields(d.memory),
            deleted_at=iso_utc(d.deleted_at),
            restorable_until=iso_utc(d.restorable_until),
            how=d.how,
            deleted_by=d.actor,
        )


class DeletedListResponse(BaseModel):
    total: int
    grace_seconds: int = Field(
        description="how long a deleted memory stays restorable (RESTORE_GRACE_SECONDS)"
    )
    items: list[DeletedMemoryOut] = Field(description="most recently deleted first")
