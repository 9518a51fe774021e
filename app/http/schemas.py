"""The HTTP contract: request and response bodies. Timestamps in: epoch seconds or ISO 8601;
timestamps out: ISO 8601 UTC."""

from __future__ import annotations

import math
import time
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictBool,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from app.http.body import first_lone_surrogate
from app.http.ids import TAGS_MAX, Id, Tag
from memory.governance.audit import AuditRecord
from memory.governance.compaction import AtRest
from memory.governance.erasure import ErasurePreview, ErasureReceipt
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
from memory.service import FORGET_CAP, FORGET_MIN_RELEVANCE, ForgetMatch
from memory.session.store import SessionState
from memory.text.zones import MAX_NAME as MAX_ZONE_NAME
from memory.text.zones import known_zone

MAX_CONTENT_CHARS = 32_000
MAX_MESSAGES = 500
_MIN_TS = 0.0
_MAX_TS = 253402300799.0  # 9999-12-31T23:59:59Z


def parse_timestamp(value: Any) -> float:
    """Epoch seconds (int/float) or an ISO 8601 string; naive datetimes are taken as UTC."""
    if isinstance(value, bool):
        raise ValueError("timestamp must be epoch seconds or an ISO 8601 string")
    if isinstance(value, int | float):
        ts = float(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            ts = float(text)
        except ValueError:
            try:
                parsed = datetime.fromisoformat(text)
            except ValueError as exc:
                raise ValueError(f"timestamp {value!r} is neither epoch seconds nor ISO 8601") from exc
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=UTC)
            ts = parsed.timestamp()
    else:
        raise ValueError("timestamp must be epoch seconds or an ISO 8601 string")
    if not math.isfinite(ts) or not _MIN_TS <= ts <= _MAX_TS:
        raise ValueError("timestamp out of range (1970 .. 9999)")
    return ts


def iso_utc(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat().replace("+00:00", "Z")


Timestamp = Annotated[float, BeforeValidator(parse_timestamp)]


def parse_zone(value: Any) -> ZoneInfo:
    """An IANA time zone name ("Asia/Shanghai"), and nothing else: no path, offset or blank."""
    if not isinstance(value, str):
        raise ValueError("time_zone must be an IANA time zone name such as 'Asia/Shanghai'")
    return known_zone(value)


# the user's time zone: their "昨天", "last Friday" and "3月" are read in it (default: `TIME_ZONE`)
TimeZoneName = Annotated[
    ZoneInfo,
    BeforeValidator(parse_zone),
    PlainSerializer(lambda z: z.key, return_type=str),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": MAX_ZONE_NAME,
            "examples": ["Asia/Shanghai", "Europe/Berlin", "UTC"],
            "description": "an IANA time zone name: the user's calendar for 昨天, last Friday, 3月 (default: "
            "the deployment's TIME_ZONE)",
        }
    ),
]
Topic = Annotated[str, Field(min_length=1, max_length=64)]
_INVISIBLE = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})  # controls, format (zero-width, BOM), separators


def has_visible_text(text: str) -> bool:
    """False for text of nothing but whitespace, control and format characters: "", "   ", "\u3000"
    (ideographic space), "\u200b" (zero-width space), "\ufeff", "\x00" all say nothing."""
    return any(not ch.isspace() and unicodedata.category(ch) not in _INVISIBLE for ch in text)


class RequestBody(BaseModel):
    """Base of every request body (the model a route takes, not the ones nested in it): before any
    field is read, every string in the body, object keys included, must be well-formed Unicode. JSON
    can spell a lone surrogate (`"\\udfff"`) that no UTF-8 text holds; it would fail far away (hashing,
    the tokenizer, Redis) after work was done."""

    @model_validator(mode="before")
    @classmethod
    def _well_formed_unicode(cls, data: Any) -> Any:
        where = first_lone_surrogate(data)
        if where is not None:
            raise PydanticCustomError(
                "unicode_lone_surrogate",
                "text must be well-formed Unicode: {where} holds a lone surrogate",
                {"where": where},
            )
        return data


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StrictBody(RequestBody):
    model_config = ConfigDict(extra="forbid")


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


FORGET_MIN_SIMILARITY = 0.3
# the lowest relevance floor a forget may ask for (the default is memory.service.FORGET_MIN_RELEVANCE):
# below it, about one memory in two chosen would be unrelated (docs/benchmarks.md#relevance)
FORGET_LOWEST_RELEVANCE = 0.5
# a date criterion this far ahead of the server's clock is a typo (the year 9999), not a wish
FORGET_FUTURE_SLACK_SECONDS = 86_400.0


def says_something(query: str) -> bool:
    """A query that can mean something: one Chinese/Japanese/Korean character, or two letters or
    digits. "a", "7" or "?" can match nothing on purpose."""
    if any(unicodedata.category(ch) == "Lo" for ch in query):
        return True
    return sum(ch.isalnum() for ch in query) >= 2


class ForgetRequest(StrictBody):
    topic: Topic | None = None
    session_id: Id | None = None
    before: Timestamp | None = Field(None, description="epoch seconds or ISO 8601, at most a day ahead")
    after: Timestamp | None = Field(None, description="epoch seconds or ISO 8601, at most a day ahead")
    query: str | None = Field(None, min_length=1, max_length=4000)
    min_relevance: float | None = Field(
        None,
        ge=FORGET_LOWEST_RELEVANCE,
        le=1,
        strict=True,
        description=f"relevance a memory needs to be forgotten by `query`, {FORGET_LOWEST_RELEVANCE} .. 1 "
        f"(default {FORGET_MIN_RELEVANCE}); two channels must match it too",
    )
    min_similarity: float | None = Field(
        None,
        ge=FORGET_MIN_SIMILARITY,
        le=1,
        strict=True,
        json_schema_extra={"deprecated": True},  # (pydantic's deprecated=True warns on our own reads)
        description=f"deprecated, use min_relevance: accepted ({FORGET_MIN_SIMILARITY} .. 1) and read as "
        f"min_relevance = max({FORGET_MIN_RELEVANCE}, min_similarity)",
    )
    dry_run: bool = Field(
        True, strict=True, description="true (the default): only list what would go, and why"
    )
    expected_count: int | None = Field(
        None,
        ge=0,
        strict=True,  # "25" or true is no count: a count must be the number the preview showed
        le=1_000_000,
        description=f"the count the dry run showed: needed to delete more than {FORGET_CAP} at once, "
        "and nothing is deleted when the count differs",
    )

    @model_validator(mode="after")
    def _needs_a_criterion(self) -> ForgetRequest:
        if self.query is not None and not has_visible_text(self.query):
            raise ValueError("query must not be blank")
        if self.query is not None and not says_something(self.query):
            raise ValueError("query must hold a word: a Chinese character, or two letters or digits")
        if self.query is None and (self.min_relevance is not None or self.min_similarity is not None):
            raise ValueError("min_relevance and min_similarity need a query")
        if self.min_relevance is not None and self.min_similarity is not None:
            raise ValueError("give min_relevance or the deprecated min_similarity, not both")
        if all(v is None for v in (self.topic, self.session_id, self.before, self.after, self.query)):
            raise ValueError(
                "give at least one of topic, session_id, before, after, query (to erase everything, DELETE the user)"
            )
        latest = time.time() + FORGET_FUTURE_SLACK_SECONDS
        for name in ("before", "after"):
            value = getattr(self, name)
            if value is not None and value > latest:
                raise ValueError(f"{name} is in the future: forget only what was said until now")
        if self.before is not None and self.after is not None and self.after >= self.before:
            raise ValueError("after must be earlier than before: nothing lies between them")
        return self

    @property
    def relevance_floor(self) -> float:
        if self.min_relevance is not None:
            return self.min_relevance
        return max(FORGET_MIN_RELEVANCE, self.min_similarity or 0.0)


FORGET_PREVIEW_MAX = 500


class ForgetWhy(BaseModel):
    """Why a forget chose this memory."""

    by: Literal["query", "criteria", "superseded"] = Field(
        description="query: its meaning; criteria: topic/session/time alone; superseded: an older "
        "memory of one chosen (forgetting where I live forgets where I lived)"
    )
    relevance: float | None = None
    channels: dict[str, float] = Field(
        default_factory=dict,
        description="the channels that matched, each with its own measure (dense: MiniLM cosine, "
        "keyword: share of the query's words, bridge: multilingual cosine)",
    )
    words: list[str] = Field(default_factory=list, description="the query's words it holds")
    superseded_by: str | None = None

    @classmethod
    def of(cls, m: ForgetMatch) -> ForgetWhy:
        by: Literal["query", "criteria", "superseded"] = (
            "superseded"
            if m.superseded_by is not None
            else "query"
            if m.relevance is not None
            else "criteria"
        )
        return cls(
            by=by,
            relevance=round(m.relevance, 4) if m.relevance is not None else None,
            channels=dict(m.channels),
            words=list(m.words),
            superseded_by=m.superseded_by,
        )


class ForgetPreview(MemoryOut):
    why: ForgetWhy


class ForgetResponse(BaseModel):
    count: int
    ids: list[str]
    dry_run: bool
    memories: list[ForgetPreview] | None = Field(
        None,
        description=f"on a dry run, the memories that would go (the first {FORGET_PREVIEW_MAX} of `ids`), "
        "each with why it matched",
    )


class AtRestOut(BaseModel):
    state: Literal["none", "scheduled", "operator"] = Field(
        description="none: the store keeps no files; scheduled: rewritten automatically by `purged_by`; "
        "operator: gone once the operator runs `command` on the store's host"
    )
    purged_by: str | None = None
    command: str | None = None

    @classmethod
    def of(cls, at_rest: AtRest) -> AtRestOut:
        return cls(
            state=at_rest.state,
            purged_by=iso_utc(at_rest.purged_by) if at_rest.purged_by is not None else None,
            command=at_rest.command,
        )


class ErasureOut(BaseModel):
    deleted: dict[str, int]
    at: str
    at_rest_purged_by: str | None = Field(
        description="when no store's files (Redis AOF/RDB, Chroma's database and log) hold the erased "
        "data any more; null while an operator command is needed (see at_rest)"
    )
    at_rest: dict[str, AtRestOut]

    @classmethod
    def of(cls, receipt: ErasureReceipt) -> ErasureOut:
        by = receipt.at_rest_purged_by
        return cls(
            deleted=receipt.deleted,
            at=iso_utc(receipt.at),
            at_rest_purged_by=iso_utc(by) if by is not None else None,
            at_rest={store: AtRestOut.of(a) for store, a in receipt.at_rest.items()},
        )


class FoundUsersOut(BaseModel):
    prefix: str
    users: list[str] = Field(description="user ids starting with the prefix, in id order")
    more: bool = Field(description="more users have this prefix than `limit`: type more of the id")


class ErasePreviewOut(BaseModel):
    """What `DELETE /v1/memory/{user_id}?confirm=` would delete now; nothing is deleted to know it."""

    user_id: str
    held: bool = Field(description="false: no store holds anything for this id (a typo?)")
    memories: dict[str, int] = Field(description="long-term memories by archive tier: hot, warm, cold")
    memories_total: int
    kinds: dict[str, int] = Field(description="the same memories by kind: fact, episodic, unclassified")
    sessions: int = Field(description="sessions with short-term state")
    buffer_messages: int = Field(description="recent messages held in those sessions")
    histories: int = Field(description="memories with a recorded history (edits, restores, deletes)")
    redis_keys: int = Field(description="every Redis key under the user's prefix")
    outbox: int = Field(description="chat turns not yet written to long-term memory")
    dead_letters: int = Field(description="turns the writer could not read")

    @classmethod
    def of(cls, user_id: str, p: ErasurePreview) -> ErasePreviewOut:
        return cls(
            user_id=user_id,
            held=p.held,
            memories=p.memories,
            memories_total=sum(p.memories.values()),
            kinds=p.kinds,
            sessions=p.sessions,
            buffer_messages=p.buffer_messages,
            histories=p.histories,
            redis_keys=p.redis_keys,
            outbox=p.outbox,
            dead_letters=p.dead_letters,
        )


class ErrorBody(BaseModel):
    """The envelope of every non-2xx answer."""

    error: str
    detail: str
    request_id: str


class OpenAIError(BaseModel):
    message: str
    type: str
    code: str
    param: str | None


class OpenAIErrorBody(BaseModel):
    """The envelope of every non-2xx answer on `/v1/chat/*`, `/v1/models*` and `/v1/usage`."""

    error: OpenAIError
    request_id: str


def session_view(user_id: str, session_id: str, state: SessionState) -> dict[str, Any]:
    """Summary, mode, recent actions, message buffer and slots of one session, as JSON."""
    summary = state.summary
    return {
        "user_id": user_id,
        "session_id": session_id,
        "summary": None
        if summary is None
        else {
            "summary": summary.text,
            "last_update": iso_utc(summary.last_update),
            "version": summary.version,
        },
        "mode": state.mode,
        "actions": [
            {"action_type": a.action_type, "timestamp": iso_utc(a.timestamp), "content_hash": a.content_hash}
            for a in state.actions
        ],
        "buffer": [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "timestamp": iso_utc(m.timestamp),
                "name": m.name,
            }
            for m in state.buffer
        ],
        "slots": {
            name: {
                "raw": s.raw,
                "value": s.value,
                "updated_at": iso_utc(s.updated_at),
                "ttl_seconds": s.ttl_seconds,
            }
            for name, s in state.slots.items()
        },
    }


class SessionEntry(BaseModel):
    session_id: str
    short_term: bool = Field(description="the session holds short-term state (buffer, slots, summary)")
    memories: int = Field(description="long-term memories that came from it")


class SessionListResponse(BaseModel):
    session_ids: list[str] = Field(description="the sessions that hold short-term state")
    sessions: list[SessionEntry] = Field(
        description="every session: those holding short-term state and those long-term memories came "
        "from (written through /messages, or a chat whose short-term state expired)"
    )


class AuditEntryOut(BaseModel):
    id: str
    at: str
    action: str
    actor: str
    actor_role: str
    user_id: str
    count: int
    request_id: str
    details: dict[str, str]

    @classmethod
    def of(cls, r: AuditRecord) -> AuditEntryOut:
        e = r.event
        return cls(
            id=r.id,
            at=iso_utc(r.at),
            action=e.action,
            actor=e.actor,
            actor_role=e.actor_role,
            user_id=e.subject,
            count=e.count,
            request_id=e.request_id,
            details=dict(e.details),
        )


class AuditResponse(BaseModel):
    items: list[AuditEntryOut]
    next_before: str | None
