"""One error envelope for every non-2xx answer: {"error": code, "detail": message, "request_id": id}.

`ERROR_CODES` is the registry of every code the service answers with and its status; the error table
in docs/api.md is checked against it (tests/unit/test_error_codes.py), and so is every code the source
can emit.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.http.openai_errors import PARAM_STATE_KEY
from memory.errors import (
    REDIS_UNAVAILABLE,
    IdempotencyConflict,
    MemoryBusy,
    MemoryNotFound,
    SessionBusy,
    SessionLockLost,
    StoreUnavailable,
    UpstreamFailed,
    VersionMismatch,
)
from monitoring import metrics

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-ID"
STORED_HEADER = "Mnemo-Write-Stored"  # on a 503 that interrupted a write after it was stored

ERROR_CODES: Mapping[str, int] = MappingProxyType(
    {
        "invalid_json": 400,
        "cors_refused": 400,
        "invalid_header": 400,
        "invalid_request": 400,  # answered by the HTTP protocol itself (app/http/protocol.py)
        "missing_token": 401,
        "invalid_token": 401,
        "token_expired": 401,
        "forbidden": 403,
        "not_found": 404,
        "memory_not_found": 404,
        "model_not_found": 404,
        "method_not_allowed": 405,
        "session_busy": 409,
        "session_lock_lost": 409,
        "version_mismatch": 412,
        "memory_busy": 409,
        "merge_conflict": 409,
        "payload_too_large": 413,
        "precondition_required": 428,
        "validation_error": 422,
        "idempotency_key_reused": 422,
        "confirmation_required": 422,
        "rate_limited": 429,
        "import_lane_full": 429,
        "internal_error": 500,
        "upstream_error": 502,
        "not_ready": 503,
        "chroma_unavailable": 503,
        "embeddings_unavailable": 503,
        "archive_unavailable": 503,
        "redis_unavailable": 503,
        "upstream_timeout": 504,
    }
)
"""Every error code and its status: the contract. docs/api.md's error table lists exactly these."""


class ServiceError(Exception):
    """Base of every error the HTTP layer answers with; subclasses fix status and code."""

    status_code = 500
    code = "internal_error"

    def __init__(
        self, detail: str, *, code: str | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code
        self.headers = dict(headers or {})


class Unauthorized(ServiceError):
    status_code = 401
    code = "invalid_token"

    def __init__(self, detail: str, *, code: str | None = None) -> None:
        super().__init__(detail, code=code, headers={"WWW-Authenticate": "Bearer"})


class Forbidden(ServiceError):
    status_code = 403
    code = "forbidden"


class NotFound(ServiceError):
    status_code = 404
    code = "not_found"


class ValidationFailed(ServiceError):
    """A 422 a route decides (a rule across parameters that no one parameter's type can say)."""

    status_code = 422
    code = "validation_error"


class Conflict(ServiceError):
    """409: the request contradicts the state it would change (a merge of entities the merges in force
    already made one, or merged away)."""

    status_code = 409
    code = "merge_conflict"


class InvalidHeader(ServiceError):
    """400: a request header that is malformed (it names the header), not merely stale."""

    status_code = 400
    code = "invalid_header"


class ConfirmationRequired(ServiceError):
    """422: a destructive call that must name its target twice (the erase: `?confirm=<user id>`)."""

    status_code = 422
    code = "confirmation_required"


class PreconditionRequired(ServiceError):
    """428: an edit must say which version it read (`If-Match`)."""

    status_code = 428
    code = "precondition_required"


class PayloadTooLarge(ServiceError):
    status_code = 413
    code = "payload_too_large"


class RateLimited(ServiceError):
    status_code = 429
    code = "rate_limited"


class ImportLaneFull(ServiceError):
    """429: the import lane of the user's partition holds more than IMPORT_MAX_PENDING_ENTRIES."""

    status_code = 429
    code = "import_lane_full"


class ServiceUnavailable(ServiceError):
    """503, always with `Retry-After`."""

    status_code = 503
    code = "not_ready"
    retry_after_seconds = 5

    def __init__(
        self, detail: str, *, code: str | None = None, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(
            detail, code=code, headers={"Retry-After": str(self.retry_after_seconds), **(headers or {})}
        )


def request_id_of(request: Request) -> str:
    return str(getattr(request.state, "request_id", "") or "")


def envelope(
    status_code: int,
    code: str,
    detail: str,
    request_id: str,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    response_headers = dict(headers or {})
    if request_id:
        response_headers[REQUEST_ID_HEADER] = request_id
    return JSONResponse(
        status_code=status_code,
        content={"error": code, "detail": detail, "request_id": request_id},
        headers=response_headers,
    )


# The HTTPExceptions Starlette and FastAPI raise on mnemo's routes (unknown route, wrong method, a body
# that could not be read, the body limit); any other status would be a bug, answered as one (500).
_HTTP_CODES = {
    400: "invalid_json",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
}


def _first_param(errors: Sequence[Any]) -> str | None:
    """The request field the first error names (`messages.0.role`, `temperature`), for OpenAI's `param`."""
    for err in errors:
        loc = [str(p) for p in err.get("loc", ()) if p not in {"body", "query", "path", "header"}]
        if loc:
            return ".".join(loc)
    return None


def _describe_validation(errors: Sequence[Any]) -> tuple[str, str]:
    """(code, detail) for pydantic errors: 'invalid_json' when the body is not JSON at all."""
    parts: list[str] = []
    for err in errors:
        if err.get("type") == "json_invalid":
            return "invalid_json", f"request body is not valid JSON: {err.get('ctx', {}).get('error', '')}"
        loc = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
        parts.append(f"{loc}: {err.get('msg', 'invalid')}")
    detail = "; ".join(parts) or "invalid request"
    return "validation_error", detail[:2000]


async def _service_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ServiceError)
    return envelope(exc.status_code, exc.code, exc.detail, request_id_of(request), exc.headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    code, detail = _describe_validation(exc.errors())
    setattr(request.state, PARAM_STATE_KEY, _first_param(exc.errors()))
    return envelope(ERROR_CODES[code], code, detail, request_id_of(request))


async def _http_exception(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code)
    if code is None:
        log.error("unexpected HTTPException", extra={"status": exc.status_code, "detail": str(exc.detail)})
        return envelope(500, "internal_error", "internal server error", request_id_of(request))
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    return envelope(exc.status_code, code, detail, request_id_of(request), exc.headers)


async def _memory_not_found(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemoryNotFound)
    return envelope(404, "memory_not_found", str(exc), request_id_of(request))


# Seconds a client should wait after a 503 naming the store: a Redis restart from AOF or a replica's
# promotion takes seconds (and stale pooled connections are retried here, not by the client).
RETRY_AFTER_SECONDS = {"redis": 2, "chroma": 5, "embeddings": 5}


async def _store_unavailable(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StoreUnavailable)
    log.warning("store unavailable", extra={"store": exc.store, "reason": exc.reason})
    metrics.STORE_UNAVAILABLE.labels(exc.store).inc()
    detail = f"{exc.store} is unavailable; try again shortly"
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS.get(exc.store, 5))}
    if exc.stored:
        detail = (
            f"{exc.store} is unavailable, but what you sent was stored: it is searchable once {exc.store} is "
            "back, and a retry is safe (it overwrites the same memories) (已保存；服务恢复后即可检索，重试不会重复)"
        )
        headers[STORED_HEADER] = "true"
    return envelope(503, f"{exc.store}_unavailable", detail, request_id_of(request), headers)


async def _redis_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """Any of memory.errors.REDIS_UNAVAILABLE, wherever it was raised: 503, never a 500."""
    return await _store_unavailable(request, StoreUnavailable("redis", f"{type(exc).__name__}: {exc}"))


async def _version_mismatch(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, VersionMismatch)
    return envelope(412, "version_mismatch", str(exc), request_id_of(request), {"ETag": f'"{exc.current}"'})


async def _idempotency_conflict(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, IdempotencyConflict)
    return envelope(422, "idempotency_key_reused", str(exc), request_id_of(request))


async def _session_busy(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SessionBusy)
    return envelope(409, "session_busy", str(exc), request_id_of(request), {"Retry-After": "1"})


async def _session_lock_lost(request: Request, exc: Exception) -> JSONResponse:
    """A turn that outlived its session lock (or whose session was deleted meanwhile): not an outage,
    and no Retry-After: a retry at once would only repeat what let the lock expire."""
    assert isinstance(exc, SessionLockLost)
    log.warning("turn not saved: its session lock was lost before the commit")
    return envelope(409, "session_lock_lost", str(exc), request_id_of(request))


async def _memory_busy(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemoryBusy)
    return envelope(409, "memory_busy", str(exc), request_id_of(request), {"Retry-After": "1"})


async def _upstream_failed(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, UpstreamFailed)
    log.warning("upstream LLM failed", extra={"reason": exc.reason, "timeout": exc.timeout})
    if exc.timeout:
        return envelope(
            504,
            "upstream_timeout",
            f"the language model did not answer in time: {exc.reason}",
            request_id_of(request),
        )
    return envelope(502, "upstream_error", f"the language model failed: {exc.reason}", request_id_of(request))


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_exception)
    app.add_exception_handler(MemoryNotFound, _memory_not_found)
    app.add_exception_handler(StoreUnavailable, _store_unavailable)
    for redis_error in REDIS_UNAVAILABLE:
        app.add_exception_handler(redis_error, _redis_unavailable)
    app.add_exception_handler(IdempotencyConflict, _idempotency_conflict)
    app.add_exception_handler(VersionMismatch, _version_mismatch)
    app.add_exception_handler(SessionBusy, _session_busy)
    app.add_exception_handler(SessionLockLost, _session_lock_lost)
    app.add_exception_handler(MemoryBusy, _memory_busy)
    app.add_exception_handler(UpstreamFailed, _upstream_failed)


def _error_body_schema() -> dict[int | str, dict[str, object]]:
    from app.http.fields import ErrorBody

    return {
        status: {"model": ErrorBody, "description": "error envelope"}
        for status in sorted(set(ERROR_CODES.values()))
    }


ErrorBodyResponses = _error_body_schema()


def _openai_error_body_schema() -> dict[int | str, dict[str, object]]:
    from app.http.fields import OpenAIErrorBody

    return {
        status: {"model": OpenAIErrorBody, "description": "OpenAI's error envelope (mnemo's code in `code`)"}
        for status in sorted(set(ERROR_CODES.values()))
    }


# the OpenAI-compatible routes document the envelope they answer with (app/http/openai_errors.py)
OpenAIErrorResponses = _openai_error_body_schema()
