"""What the sync and async clients share: each API call as a `Call` (method, encoded path, query, body),
the retry decision, the mapping of error answers to exceptions and the SSE reader. No I/O here."""

from __future__ import annotations

import email.utils
import json
import time
import warnings
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Required, TypedDict

import httpx

from mnemo_client.errors import ApiError, ContractError, ServerError, StreamFailed, error_class
from mnemo_client.ids import check_id, segment
from mnemo_client.models import ChatChunk

FORGET_MIN_RELEVANCE = 0.7  # the server's default relevance a forget by meaning needs

Timestamp = str | float | datetime
"""Epoch seconds, ISO 8601 text, or a datetime (naive means UTC, as the server reads it)."""


class Message(TypedDict, total=False):
    """A message to remember (`ingest`); `id` makes a re-send overwrite instead of add."""

    role: Required[Literal["user", "assistant"]]
    content: Required[str]
    id: str
    name: str
    timestamp: str | float


class ChatMessage(TypedDict, total=False):
    """An OpenAI-style chat message; mnemo keeps the conversation, so one user message is enough."""

    role: Required[Literal["system", "developer", "user", "assistant"]]
    content: Required[str]
    name: str


@dataclass(frozen=True, slots=True)
class Call:
    method: Literal["GET", "POST", "PATCH", "DELETE"]
    path: str
    params: Mapping[str, str | int | float | bool | Sequence[str]] | None = None
    body: Any = None
    idempotency_key: str | None = None
    session_header: str | None = None
    if_match: str | None = None  # an edit: the version it read


def _stamp(value: Timestamp) -> str | float:
    return value.isoformat() if isinstance(value, datetime) else value


def _given(**values: object) -> dict[str, Any]:
    return {k: _stamp(v) if isinstance(v, datetime) else v for k, v in values.items() if v is not None}


def _memory(user_id: str, *rest: str) -> str:
    return "/".join(["/v1/memory", segment(user_id, "user_id"), *rest])


def ingest(
    user_id: str,
    session_id: str,
    messages: Sequence[Message],
    idempotency_key: str | None,
    time_zone: str | None = None,
) -> Call:
    check_id(session_id, "session_id")
    for m in messages:
        if "id" in m:
            check_id(m["id"], "message id")
    body = {"session_id": session_id, "messages": [dict(m) for m in messages]} | _given(time_zone=time_zone)
    return Call("POST", _memory(user_id, "messages"), body=body, idempotency_key=idempotency_key)


def search(
    user_id: str,
    query: str,
    *,
    top_k: int,
    session_id: str | None,
    exclude_session_id: str | None,
    topic: str | None,
    since: Timestamp | None,
    until: Timestamp | None,
    explain: bool,
    time_zone: str | None = None,
    min_relevance: float | None = None,
    tags: Sequence[str] | None = None,
) -> Call:
    for sid in (session_id, exclude_session_id):
        if sid is not None:
            check_id(sid, "session_id")
    body = {"query": query, "top_k": top_k, "explain": explain} | _given(
        session_id=session_id,
        exclude_session_id=exclude_session_id,
        topic=topic,
        since=since,
        until=until,
        time_zone=time_zone,
        min_relevance=min_relevance,
        tags=_tags(tags),
    )
    return Call("POST", _memory(user_id, "search"), body=body)


def _tags(tags: Sequence[str] | None) -> list[str] | None:
    """Profile tags (`#职业_教师`, `#goal_ielts`) as a list; a lone string is refused, not split."""
    if tags is None:
        return None
    if isinstance(tags, str):
        raise TypeError("tags must be a list of tags, e.g. ['#职业_教师'], not one string")
    return list(tags) or None


def list_memories(
    user_id: str,
    *,
    limit: int,
    offset: int,
    sort: Literal["recent", "importance"],
    topic: str | None,
    session_id: str | None,
    source: Literal["user", "assistant"] | None,
    since: Timestamp | None,
    until: Timestamp | None,
    current_only: bool,
    tier: Literal["fact", "episodic"] | None = None,
    archive_tier: Literal["hot", "warm", "cold"] | None = None,
    tags: Sequence[str] | None = None,
) -> Call:
    if session_id is not None:
        check_id(session_id, "session_id")
    params: dict[str, Any] = {"limit": limit, "offset": offset, "sort": sort}
    params |= _given(topic=topic, session_id=session_id, source=source, since=since, until=until)
    params |= _given(tier=tier, archive_tier=archive_tier, tags=_tags(tags))
    if current_only:
        params["current_only"] = "true"
    return Call("GET", _memory(user_id, "list"), params=params)


def forget(
    user_id: str,
    *,
    topic: str | None,
    session_id: str | None,
    before: Timestamp | None,
    after: Timestamp | None,
    query: str | None,
    min_relevance: float | None,
    dry_run: bool,
    min_similarity: float | None = None,
) -> Call:
    """`min_similarity` is the server's deprecated name: sent as the `min_relevance` it stands for,
    max(FORGET_MIN_RELEVANCE, min_similarity)."""
    if session_id is not None:
        check_id(session_id, "session_id")
    if min_similarity is not None:
        if min_relevance is not None:
            raise ValueError("give min_relevance or the deprecated min_similarity, not both")
        warnings.warn("min_similarity is deprecated: use min_relevance", DeprecationWarning, stacklevel=3)
        min_relevance = max(FORGET_MIN_RELEVANCE, min_similarity)
    body = {"dry_run": dry_run} | _given(
        topic=topic,
        session_id=session_id,
        before=before,
        after=after,
        query=query,
        min_relevance=min_relevance,
    )
    return Call("POST", _memory(user_id, "forget"), body=body)


def list_deleted(user_id: str, *, limit: int, offset: int) -> Call:
    return Call("GET", _memory(user_id, "deleted"), params={"limit": limit, "offset": offset})


def restore_memory(user_id: str, memory_id: str) -> Call:
    return Call("POST", _memory(user_id, segment(memory_id, "memory_id"), "restore"))


def get_memory(user_id: str, memory_id: str) -> Call:
    return Call("GET", _memory(user_id, segment(memory_id, "memory_id")))


UNSET: Any = object()
"""The default of the fields an edit may clear: absent (unchanged), unlike None (cleared)."""


def edit_memory(
    user_id: str,
    memory_id: str,
    version: str,
    *,
    content: str | None = None,
    importance: float | None = None,
    pinned: bool | None = None,
    topic: str | None = UNSET,
    valid_to: Timestamp | None = UNSET,
) -> Call:
    """Only the fields given change; `topic` or `valid_to` given as None clears it."""
    body: dict[str, Any] = _given(content=content, importance=importance, pinned=pinned)
    if topic is not UNSET:
        body["topic"] = topic
    if valid_to is not UNSET:
        body["valid_to"] = _stamp(valid_to) if valid_to is not None else None
    if not body:
        raise ValueError("give content, importance, pinned, topic or valid_to")
    if not version or '"' in version:
        raise ValueError("version must be the memory's version as read (get_memory)")
    return Call(
        "PATCH", _memory(user_id, segment(memory_id, "memory_id")), body=body, if_match=f'"{version}"'
    )


def memory_history(user_id: str, memory_id: str) -> Call:
    return Call("GET", _memory(user_id, segment(memory_id, "memory_id"), "history"))


def delete_memory(user_id: str, memory_id: str) -> Call:
    return Call("DELETE", _memory(user_id, segment(memory_id, "memory_id")))


def export(user_id: str) -> Call:
    return Call("GET", _memory(user_id, "export"))


def erase(user_id: str) -> Call:
    # the server asks for the user id twice (path and `confirm`), so a mistyped path erases no one
    return Call("DELETE", _memory(user_id), params={"confirm": check_id(user_id, "user_id")})


def list_sessions(user_id: str) -> Call:
    return Call("GET", f"/v1/sessions/{segment(user_id, 'user_id')}")


def get_session(user_id: str, session_id: str) -> Call:
    return Call("GET", f"/v1/sessions/{segment(user_id, 'user_id')}/{segment(session_id, 'session_id')}")


def delete_session(user_id: str, session_id: str) -> Call:
    path = f"/v1/sessions/{segment(user_id, 'user_id')}/{segment(session_id, 'session_id')}"
    return Call("DELETE", path)


def chat(
    messages: Sequence[ChatMessage],
    *,
    stream: bool,
    session_id: str | None,
    user_id: str | None,
    model: str | None,
    idempotency_key: str | None,
    params: Mapping[str, Any],
    time_zone: str | None = None,
) -> Call:
    if session_id is not None:
        check_id(session_id, "session_id")
    if user_id is not None:
        check_id(user_id, "user_id")
    body = {"messages": [dict(m) for m in messages], "stream": stream}
    body |= _given(session_id=session_id, user_id=user_id, model=model, time_zone=time_zone) | dict(params)
    return Call("POST", "/v1/chat/completions", body=body, idempotency_key=idempotency_key)


# -- answers -----------------------------------------------------------------------------------------

RETRY_STATUSES = frozenset({429, 503})
BUSY_CODES = frozenset({"session_busy", "memory_busy"})


def retry_after(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (delta-seconds or an HTTP date), or None."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        when = email.utils.parsedate_to_datetime(value) if value else None
        return None if when is None else max(0.0, when.timestamp() - time.time())


def error_of(response: httpx.Response, body: bytes) -> ApiError:
    """The typed exception for a non-2xx answer (its body already read)."""
    status = response.status_code
    request_id = response.headers.get("x-request-id")
    if 300 <= status < 400:
        where = response.headers.get("location", "")
        detail = f"mnemo answered a redirect to {where!r}; this client never follows redirects"
        return ServerError(status, "unexpected_redirect", detail, request_id=request_id)
    code, detail = f"http_{status}", body[:500].decode("utf-8", "replace")
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
        code, detail = parsed["error"], str(parsed.get("detail", ""))
        request_id = str(parsed.get("request_id") or request_id or "") or None
    elif isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        # OpenAI's envelope, which /v1/chat/* and /v1/models answer with: mnemo's code is its `code`
        error = parsed["error"]
        code, detail = str(error.get("code") or code), str(error.get("message") or "")
        request_id = str(parsed.get("request_id") or request_id or "") or None
    return error_class(status)(status, code, detail, request_id=request_id, retry_after=retry_after(response))


def retry_delay(response: httpx.Response, attempt: int, max_retries: int, max_wait: float) -> float | None:
    """Seconds to wait before retrying this answer, or None to not retry. 429 and 503 are retried, and a
    409 busy answer (`Retry-After` set), waiting what `Retry-After` says (else a short backoff), while
    attempts remain and the wait is at most `max_wait`."""
    if attempt >= max_retries:
        return None
    wait = retry_after(response)
    busy = response.status_code == 409 and wait is not None
    if response.status_code not in RETRY_STATUSES and not busy:
        return None
    delay = wait if wait is not None else backoff(attempt)
    return delay if delay <= max_wait else None


def backoff(attempt: int) -> float:
    return float(min(8.0, 0.25 * 2**attempt))


def expect_object(response: httpx.Response) -> Mapping[str, Any]:
    try:
        data = response.json()
    except ValueError as exc:
        raise ContractError(f"{response.request.url.path}: the answer is not JSON") from exc
    if not isinstance(data, Mapping):
        raise ContractError(f"{response.request.url.path}: expected a JSON object")
    return data


class SseReader:
    """Lines in, the `data` of each server-sent event out (comments such as keep-alive pings skipped)."""

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        if line == "":
            return self.end()
        if line.startswith("data:"):
            self._data.append(line[5:].removeprefix(" "))
        return None

    def end(self) -> str | None:
        data, self._data = self._data, []
        return "\n".join(data) if data else None


def sse_data(lines: Iterable[str]) -> Iterator[str]:
    reader = SseReader()
    for line in lines:
        if (data := reader.feed(line)) is not None:
            yield data
    if (data := reader.end()) is not None:
        yield data


async def async_sse_data(lines: AsyncIterable[str]) -> AsyncIterator[str]:
    reader = SseReader()
    async for line in lines:
        if (data := reader.feed(line)) is not None:
            yield data
    if (data := reader.end()) is not None:
        yield data


def chunk_of(data: str) -> ChatChunk | None:
    """One SSE payload as a chunk; None for the closing `[DONE]`; an in-band error raises."""
    if data == "[DONE]":
        return None
    try:
        event = json.loads(data)
    except ValueError as exc:
        raise ContractError(f"a stream event is not JSON: {data[:200]!r}") from exc
    if isinstance(event, dict) and isinstance(event.get("error"), dict):
        err = event["error"]
        raise StreamFailed(str(err.get("code") or err.get("type") or "stream_error"), str(err.get("message")))
    if not isinstance(event, dict):
        raise ContractError(f"a stream event is not an object: {data[:200]!r}")
    return ChatChunk.from_json(event)


def check_base_url(base_url: str) -> str:
    url = httpx.URL(base_url)
    if url.scheme not in {"http", "https"} or not url.host:
        raise ValueError(f"base_url must be http(s)://host[:port][/prefix], got {base_url!r}")
    return base_url.rstrip("/")


def check_strings(data: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ContractError(f"expected {key!r} to be a list of strings, got {value!r}")
    return tuple(value)
