"""`MnemoClient`: the blocking client (httpx.Client). `AsyncMnemoClient` in mnemo_client.aio has the same
methods as coroutines; both build their requests with mnemo_client.calls."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

import httpx

from mnemo_client import calls
from mnemo_client.calls import Call, ChatMessage, Message, Timestamp
from mnemo_client.errors import ConnectionFailed
from mnemo_client.models import (
    ChatChunk,
    ChatCompletion,
    DeletedPage,
    Erasure,
    ForgetResult,
    HistoryEvent,
    IngestResult,
    Memory,
    MemoryPage,
    SearchResult,
    SessionState,
    history_of,
)

log = logging.getLogger("mnemo_client")
USER_AGENT = "mnemo-client-python/0.1.0"


def headers_for(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "User-Agent": USER_AGENT, "Accept": "application/json"}


def request_headers(call: Call, key: str | None) -> dict[str, str]:
    headers = {"Idempotency-Key": key} if key is not None else {}
    if call.if_match is not None:
        headers["If-Match"] = call.if_match
    if call.method == "POST" and call.path == "/v1/chat/completions" and call.body.get("stream"):
        headers["Accept"] = "text/event-stream"
    return headers


def idempotency_key(call: Call) -> str | None:
    """Every POST carries a key from its first attempt, so a retry is recognised as the same request
    (mnemo replays the recorded answer of `messages` and chat turns instead of doing them twice)."""
    if call.method != "POST":
        return None
    return call.idempotency_key or f"mnemo-py-{uuid.uuid4().hex}"


class MnemoClient:
    """mnemo's API over HTTP. `token` is a JWT for the user (or an admin). 429 and 503 answers (and a
    409 busy) are retried up to `max_retries` times, waiting what `Retry-After` says when that is at
    most `max_retry_wait` seconds; redirects are never followed."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 60.0,
        max_retries: int = 2,
        max_retry_wait: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self._http = httpx.Client(
            base_url=calls.check_base_url(base_url),
            headers=headers_for(token),
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            follow_redirects=False,
            transport=transport,
        )

    def __enter__(self) -> MnemoClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # -- memory ------------------------------------------------------------------------------------

    def ingest(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[Message],
        *,
        idempotency_key: str | None = None,
        time_zone: str | None = None,
    ) -> IngestResult:
        """Store messages as long-term memories; answers once they are searchable. `time_zone`: the
        user's IANA time zone ("Asia/Shanghai"), in which their "昨天" and "last Friday" are read."""
        return IngestResult.from_json(
            self._json(calls.ingest(user_id, session_id, messages, idempotency_key, time_zone))
        )

    def search(
        self,
        user_id: str,
        query: str,
        *,
        top_k: int = 5,
        session_id: str | None = None,
        exclude_session_id: str | None = None,
        topic: str | None = None,
        since: Timestamp | None = None,
        until: Timestamp | None = None,
        explain: bool = False,
        time_zone: str | None = None,
        min_relevance: float | None = None,
        tags: Sequence[str] | None = None,
    ) -> SearchResult:
        """The user's memories best matching `query`, best first; each hit's `relevance` (0 .. 1,
        calibrated, comparable across searches) says how likely it is about the query. Hits below
        `min_relevance` (default: the server's SEARCH_MIN_RELEVANCE) are left out; `tags` (profile tags,
        `#职业_教师`) keeps only memories stating every one."""
        call = calls.search(
            user_id,
            query,
            top_k=top_k,
            session_id=session_id,
            exclude_session_id=exclude_session_id,
            topic=topic,
            since=since,
            until=until,
            explain=explain,
            time_zone=time_zone,
            min_relevance=min_relevance,
            tags=tags,
        )
        return SearchResult.from_json(self._json(call))

    def list_memories(
        self,
        user_id: str,
        *,
        limit: int = 20,
        offset: int = 0,
        sort: Literal["recent", "importance"] = "recent",
        topic: str | None = None,
        session_id: str | None = None,
        source: Literal["user", "assistant"] | None = None,
        since: Timestamp | None = None,
        until: Timestamp | None = None,
        current_only: bool = False,
        tier: Literal["fact", "episodic"] | None = None,
        archive_tier: Literal["hot", "warm", "cold"] | None = None,
        tags: Sequence[str] | None = None,
    ) -> MemoryPage:
        """A page of memories, filtered by every criterion given; `tags` (profile tags) must all hold."""
        call = calls.list_memories(
            user_id,
            limit=limit,
            offset=offset,
            sort=sort,
            topic=topic,
            session_id=session_id,
            source=source,
            since=since,
            until=until,
            current_only=current_only,
            tier=tier,
            archive_tier=archive_tier,
            tags=tags,
        )
        return MemoryPage.from_json(self._json(call))

    def forget(
        self,
        user_id: str,
        *,
        topic: str | None = None,
        session_id: str | None = None,
        before: Timestamp | None = None,
        after: Timestamp | None = None,
        query: str | None = None,
        min_relevance: float | None = None,
        dry_run: bool = False,
        min_similarity: float | None = None,
    ) -> ForgetResult:
        """Delete the memories matching every given criterion (`dry_run`: only list them). By `query`,
        a memory goes when its relevance reaches `min_relevance` (0.5 .. 1, server default 0.7);
        `min_similarity` is deprecated (sent as min_relevance = max(0.7, min_similarity)). Forgotten
        memories stay restorable for a grace period (`list_deleted`, `restore_memory`)."""
        call = calls.forget(
            user_id,
            topic=topic,
            session_id=session_id,
            before=before,
            after=after,
            query=query,
            min_relevance=min_relevance,
            dry_run=dry_run,
            min_similarity=min_similarity,
        )
        return ForgetResult.from_json(self._json(call))

    def list_deleted(self, user_id: str, *, limit: int = 20, offset: int = 0) -> DeletedPage:
        """Deleted and forgotten memories that can still be restored, most recently deleted first."""
        return DeletedPage.from_json(self._json(calls.list_deleted(user_id, limit=limit, offset=offset)))

    def restore_memory(self, user_id: str, memory_id: str) -> Memory:
        """Bring a deleted or forgotten memory back (same id), searchable again; `ApiError` 404
        (`memory_not_found`) when it is not restorable (never deleted, restored, or its grace is over)."""
        return Memory.from_json(self._json(calls.restore_memory(user_id, memory_id)))

    def get_memory(self, user_id: str, memory_id: str) -> Memory:
        """One memory by id, in any archive tier, with its `version`."""
        return Memory.from_json(self._json(calls.get_memory(user_id, memory_id)))

    def edit_memory(
        self,
        user_id: str,
        memory_id: str,
        version: str,
        *,
        content: str | None = None,
        importance: float | None = None,
        pinned: bool | None = None,
        topic: str | None = calls.UNSET,
        valid_to: calls.Timestamp | None = calls.UNSET,
    ) -> Memory:
        """Correct a memory read with `get_memory` (its `version`): only what is given changes;
        `VersionMismatch`-style 412 (`ApiError` with code `version_mismatch`) when it changed since."""
        call = calls.edit_memory(
            user_id,
            memory_id,
            version,
            content=content,
            importance=importance,
            pinned=pinned,
            topic=topic,
            valid_to=valid_to,
        )
        return Memory.from_json(self._json(call))

    def memory_history(self, user_id: str, memory_id: str) -> list[HistoryEvent]:
        """Every event of the memory, oldest first."""
        return history_of(self._json(calls.memory_history(user_id, memory_id)))

    def delete_memory(self, user_id: str, memory_id: str) -> None:
        self._send(calls.delete_memory(user_id, memory_id)).close()

    def export(self, user_id: str) -> Mapping[str, Any]:
        """Everything mnemo holds about the user, as one JSON document."""
        return self._json(calls.export(user_id))

    def erase(self, user_id: str) -> Erasure:
        """GDPR erase of everything about the user (sends `confirm=<user_id>` as the server asks)."""
        return Erasure.from_json(self._json(calls.erase(user_id)))

    # -- sessions ----------------------------------------------------------------------------------

    def list_sessions(self, user_id: str) -> list[str]:
        data = self._json(calls.list_sessions(user_id))
        return list(calls.check_strings(data, "session_ids"))

    def get_session(self, user_id: str, session_id: str) -> SessionState:
        return SessionState.from_json(self._json(calls.get_session(user_id, session_id)))

    def delete_session(self, user_id: str, session_id: str) -> None:
        self._send(calls.delete_session(user_id, session_id)).close()

    # -- chat --------------------------------------------------------------------------------------

    def chat(
        self,
        messages: Sequence[ChatMessage],
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        model: str | None = None,
        idempotency_key: str | None = None,
        time_zone: str | None = None,
        **params: Any,
    ) -> ChatCompletion:
        """One chat turn that remembers; `debug.memory_ids` in the answer are what it recalled."""
        call = calls.chat(
            messages,
            stream=False,
            session_id=session_id,
            user_id=user_id,
            model=model,
            idempotency_key=idempotency_key,
            params=params,
            time_zone=time_zone,
        )
        response = self._send(call)
        replayed = response.headers.get("idempotent-replayed") == "true"
        return ChatCompletion.from_json(calls.expect_object(response), replayed=replayed)

    def chat_stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        model: str | None = None,
        idempotency_key: str | None = None,
        time_zone: str | None = None,
        **params: Any,
    ) -> Iterator[ChatChunk]:
        """The turn as it is generated (server-sent events); the last chunk carries `debug`. A failure
        after the stream started raises `StreamFailed` with mnemo's code."""
        call = calls.chat(
            messages,
            stream=True,
            session_id=session_id,
            user_id=user_id,
            model=model,
            idempotency_key=idempotency_key,
            params=params,
            time_zone=time_zone,
        )
        response = self._send(call, stream=True)
        try:
            for data in calls.sse_data(response.iter_lines()):
                chunk = calls.chunk_of(data)
                if chunk is None:
                    return
                yield chunk
        finally:
            response.close()

    # -- plumbing ----------------------------------------------------------------------------------

    def _json(self, call: Call) -> Mapping[str, Any]:
        return calls.expect_object(self._send(call))

    def _send(self, call: Call, *, stream: bool = False) -> httpx.Response:
        key = idempotency_key(call)
        attempt = 0
        while True:
            request = self._http.build_request(
                call.method,
                call.path,
                params=call.params,
                json=call.body,
                headers=request_headers(call, key),
            )
            try:
                response = self._http.send(request, stream=True)
            except httpx.TransportError as exc:
                if attempt >= self.max_retries:
                    raise ConnectionFailed(f"{call.method} {call.path}: {exc!r}") from exc
                log.warning("mnemo unreachable; retrying", extra={"attempt": attempt, "error": repr(exc)})
                time.sleep(calls.backoff(attempt))
                attempt += 1
                continue
            if response.is_success:
                if not stream:
                    response.read()
                return response
            delay = calls.retry_delay(response, attempt, self.max_retries, self.max_retry_wait)
            body = response.read()
            response.close()
            if delay is None:
                raise calls.error_of(response, body)
            log.info(
                "mnemo asked to retry",
                extra={"status": response.status_code, "attempt": attempt, "delay_seconds": delay},
            )
            time.sleep(delay)
            attempt += 1
