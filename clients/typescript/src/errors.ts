/**
 * Typed errors. Every error answer of mnemo is `{"error": code, "detail", "request_id"}`; `ApiError`
 * carries those, the HTTP status and `Retry-After` (seconds), with a subclass per kind of failure.
 */

export class MnemoError extends Error {
  override name = "MnemoError";
}

/** An id breaks mnemo's id rule; thrown before anything is sent. */
export class InvalidIdError extends MnemoError {
  override name = "InvalidIdError";
}

/** An answer without the shape this client was built for (a field renamed or gone). */
export class ContractError extends MnemoError {
  override name = "ContractError";
}

/** mnemo could not be reached (network failure, or a browser refusing the response under CORS). */
export class MnemoConnectionError extends MnemoError {
  override name = "MnemoConnectionError";
}

/** A streamed turn that failed after it started (mnemo's in-band error event). */
export class StreamError extends MnemoError {
  override name = "StreamError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

export interface ApiErrorInit {
  status: number;
  code: string;
  detail: string;
  requestId: string | null;
  retryAfter: number | null;
}

/** A non-2xx answer from mnemo. */
export class ApiError extends MnemoError {
  override name = "ApiError";
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly requestId: string | null;
  /** Seconds mnemo asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: number | null;

  constructor(init: ApiErrorInit) {
    super(`${init.status} ${init.code}: ${init.detail}`);
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }
}

/** 400 / 413 / 422: `validation_error`, `invalid_json`, `payload_too_large`, `idempotency_key_reused`. */
export class BadRequestError extends ApiError {
  override name = "BadRequestError";
}
/** 401: `missing_token`, `invalid_token`, `token_expired`. */
export class UnauthorizedError extends ApiError {
  override name = "UnauthorizedError";
}
/** 403: another user's data without an admin token. */
export class ForbiddenError extends ApiError {
  override name = "ForbiddenError";
}
/** 404: `not_found` or `memory_not_found`. */
export class NotFoundError extends ApiError {
  override name = "NotFoundError";
}
/** 409: `session_busy` / `memory_busy`. */
export class ConflictError extends ApiError {
  override name = "ConflictError";
}
/** 412 `version_mismatch` (the memory changed since it was read) and 428 `precondition_required`. */
export class VersionMismatchError extends ApiError {
  override name = "VersionMismatchError";
}
/** 429 `rate_limited`. */
export class RateLimitedError extends ApiError {
  override name = "RateLimitedError";
}
/** 503: `not_ready`, `redis_unavailable`, `chroma_unavailable`, `archive_unavailable`. */
export class UnavailableError extends ApiError {
  override name = "UnavailableError";
}
/** 502 / 504: the language model behind mnemo failed. */
export class UpstreamError extends ApiError {
  override name = "UpstreamError";
}
/** 500, a redirect, or any status no other class fits. */
export class ServerError extends ApiError {
  override name = "ServerError";
}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  412: VersionMismatchError,
  413: BadRequestError,
  422: BadRequestError,
  428: VersionMismatchError,
  429: RateLimitedError,
  502: UpstreamError,
  503: UnavailableError,
  504: UpstreamError,
};

export function apiError(init: ApiErrorInit): ApiError {
  const Kind = BY_STATUS[init.status] ?? ServerError;
  return new Kind(init);
}
