"""The HTTP contract's shared parts: timestamps (in: epoch seconds or ISO 8601; out: ISO 8601 UTC),
time zones, visible text, the request-body bases every body builds on, and the two error envelopes."""

from __future__ import annotations

import math
import unicodedata
from datetime import UTC, datetime
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from app.http.body import first_lone_surrogate
from memory.text.zones import MAX_NAME as MAX_ZONE_NAME
from memory.text.zones import known_zone

MAX_CONTENT_CHARS = 32_000
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
