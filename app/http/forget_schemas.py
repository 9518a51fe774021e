"""The forget call's bodies: `POST /v1/memory/{user_id}/forget` (criteria, relevance floors, the dry
run's preview and why each memory was chosen)."""

from __future__ import annotations

import time
import unicodedata
from typing import Literal

from pydantic import (
    BaseModel,
    Field,
    model_validator,
)

from app.http.fields import (
    StrictBody,
    Timestamp,
    Topic,
    has_visible_text,
)
from app.http.ids import Id
from app.http.schemas import MemoryOut
from memory.service import FORGET_CAP, FORGET_MIN_RELEVANCE, ForgetMatch

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
