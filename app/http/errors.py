"""One error envelope for every non-2xx answer: {"error": code, "detail": message, "request_id": id}."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memory.errors import (
    REDIS_UNAVAILABLE,
    IdempotencyConflict,
    MemoryBusy,
    MemoryNotFound,
    SessionBusy,
    StoreUnavailable,
    UpstreamFailed,
)
from monitoring import metrics

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "X-Request-ID"


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


class BadRequest(ServiceError):
    status_code = 400
    code = "bad_request"


class Unauthorized(ServiceError):
    status_code = 401
    code = "unauthorized"

    def __init__(self, detail: str, *, code: str | None = None) -> None:
        super().__init__(detail, code=code, headers={"WWW-Authenticate": "Bearer"})


class Forbidden(ServiceError):
    status_code = 403
    code = "forbidden"


class NotFound(ServiceError):
    status_code = 404
    code = "not_found"


class PayloadTooLarge(ServiceError):
    status_code = 413
    code = "payload_too_large"


class RateLimited(ServiceError):
    status_code = 429
    code = "rate_limited"


class ServiceUnavailable(ServiceError):
    status_code = 503
    code = "service_unavailable"


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


_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


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
    status = 400 if code == "invalid_json" else 422
    return envelope(status, code, detail, request_id_of(request))


async def _http_exception(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    return envelope(exc.status_code, code, detail, request_id_of(request), exc.headers)


async def _memory_not_found(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MemoryNotFound)
    return envelope(404, "memory_not_found", str(exc), request_id_of(request))


# Seconds a client should wait after a 503 naming the store: a Redis restart from AOF or a replica's
# promotion takes seconds (and stale pooled connections are retried here, not by the client).
RETRY_AFTER_SECONDS = {"redis": 2, "chroma": 5}


async def _store_unavailable(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StoreUnavailable)
    log.warning("store unavailable", extra={"store": exc.store, "reason": exc.reason})
    metrics.STORE_UNAVAILABLE.labels(exc.store).inc()
    return envelope(
        503,
        f"{exc.store}_unavailable",
        f"{exc.store} is unavailable; try again shortly",
        request_id_of(request),
        {"Retry-After": str(RETRY_AFTER_SECONDS.get(exc.store, 5))},
    )


async def _redis_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """Any of memory.errors.REDIS_UNAVAILABLE, wherever it was raised: 503, never a 500."""
    return await _store_unavailable(request, StoreUnavailable("redis", f"{type(exc).__name__}: {exc}"))


async def _idempotency_conflict(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, IdempotencyConflict)
    return envelope(422, "idempotency_key_reused", str(exc), request_id_of(request))


async def _session_busy(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SessionBusy)
    return envelope(409, "session_busy", str(exc), request_id_of(request), {"Retry-After": "1"})


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
    app.add_exception_handler(SessionBusy, _session_busy)
    app.add_exception_handler(MemoryBusy, _memory_busy)
    app.add_exception_handler(UpstreamFailed, _upstream_failed)


def _error_body_schema() -> dict[int | str, dict[str, object]]:
    from app.http.schemas import ErrorBody

    return {
        status: {"model": ErrorBody, "description": "error envelope"}
        for status in (400, 401, 403, 404, 409, 413, 422, 429, 502, 503, 504)
    }


ErrorBodyResponses = _error_body_schema()
