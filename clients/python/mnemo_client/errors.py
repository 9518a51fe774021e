"""Typed exceptions. Every error answer of mnemo is `{"error": code, "detail": ..., "request_id": ...}`;
`ApiError` carries those three, the status and `Retry-After`, and a subclass per kind of failure."""

from __future__ import annotations


class MnemoError(Exception):
    """Base of everything this client raises."""


class InvalidId(MnemoError, ValueError):
    """An id breaks mnemo's id rule; raised before anything is sent."""


class ContractError(MnemoError):
    """An answer that does not have the shape this client was built for (a field renamed or gone)."""


class ConnectionFailed(MnemoError):
    """mnemo could not be reached (after the retries)."""


class ApiError(MnemoError):
    """A non-2xx answer from mnemo."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.request_id = request_id
        self.retry_after = retry_after


class BadRequest(ApiError):
    """400 / 422: the request's shape (`validation_error`, `invalid_json`, `idempotency_key_reused`)."""


class Unauthorized(ApiError):
    """401: `missing_token`, `invalid_token`, `token_expired`."""


class Forbidden(ApiError):
    """403: another user's data without an admin token."""


class NotFound(ApiError):
    """404: `not_found` (route) or `memory_not_found`."""


class Conflict(ApiError):
    """409: `session_busy` / `memory_busy` (retried while `Retry-After` allows)."""


class VersionMismatch(ApiError):
    """412 `version_mismatch`: the memory changed since it was read (read it again, then edit); 428
    `precondition_required` is the same class (an edit without the version)."""


class RateLimited(ApiError):
    """429 `rate_limited`, with `retry_after`."""


class Unavailable(ApiError):
    """503: `not_ready`, `redis_unavailable`, `chroma_unavailable`, `archive_unavailable`."""


class UpstreamFailed(ApiError):
    """502 `upstream_error` / 504 `upstream_timeout`: the language model behind mnemo failed."""


class ServerError(ApiError):
    """500 `internal_error`, or an answer no other class fits (a redirect included)."""


class StreamFailed(MnemoError):
    """A streamed chat turn that failed after it started (the in-band error event)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    412: VersionMismatch,
    413: BadRequest,
    422: BadRequest,
    428: VersionMismatch,
    429: RateLimited,
    502: UpstreamFailed,
    503: Unavailable,
    504: UpstreamFailed,
}


def error_class(status: int) -> type[ApiError]:
    return _BY_STATUS.get(status, ServerError)
