"""Cross-origin access for browser front ends (docs/operations.md#cors-browser-front-ends): Starlette's CORSMiddleware,
configured from settings, with mnemo's error envelope on a refused preflight.

It is the outermost middleware, so every answer a browser may need to read carries the CORS headers:
a 401 (`WWW-Authenticate`), 403, 413, 429 (`Retry-After`, `X-RateLimit-*`), 503 (`Retry-After`) and the
last-resort 500 as well as the successes. Without them a browser hides the whole response from the page,
which then sees only "Failed to fetch" and cannot tell a bad token from an outage.

Why Starlette's middleware and not our own: it already answers preflights for every route (including
unknown paths, which then 404 as usual), mirrors an allowed origin with `Vary: Origin`, and checks the
requested method and headers against lists; what it lacks is the envelope (its refusal is plain text)
and a request id, both added here by overriding one method.
"""

from __future__ import annotations

import uuid

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp

from app.http.errors import REQUEST_ID_HEADER, envelope
from app.http.ids import is_valid_id
from app.settings import Settings

ALLOWED_METHODS = ("GET", "POST", "PATCH", "DELETE")
# every request header a client of the API sends (Content-Type is CORS-safelisted, listed for clarity),
# plus what the MCP endpoint's streamable HTTP transport reads
ALLOWED_HEADERS = (
    "Authorization",
    "Content-Type",
    "Idempotency-Key",
    "If-Match",
    "X-Session-ID",
    "X-Request-ID",
    "Mcp-Session-Id",
    "Mcp-Protocol-Version",
    "Last-Event-ID",
)
# response headers a page may read besides the CORS-safelisted ones (Content-Type, Content-Length...)
EXPOSED_HEADERS = (
    "Retry-After",
    "X-Request-ID",
    "Idempotent-Replayed",
    "ETag",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
    "WWW-Authenticate",
    "Content-Disposition",
    "Mcp-Session-Id",
)


class CorsMiddleware(CORSMiddleware):
    """CORSMiddleware whose preflight answers carry `X-Request-ID`, and whose refusals (an origin,
    method or header not allowed) are the `cors_refused` envelope instead of plain text."""

    def __init__(self, app: ASGIApp, *, settings: Settings) -> None:
        super().__init__(
            app,
            allow_origins=settings.cors_origins,
            allow_methods=ALLOWED_METHODS,
            allow_headers=ALLOWED_HEADERS,
            allow_credentials=settings.cors_allow_credentials,
            expose_headers=EXPOSED_HEADERS,
            max_age=settings.cors_max_age_seconds,
        )

    def preflight_response(self, request_headers: Headers) -> Response:
        answer = super().preflight_response(request_headers)
        given = request_headers.get("x-request-id", "")
        request_id = given if is_valid_id(given) else uuid.uuid4().hex
        headers = {
            k: v for k, v in answer.headers.items() if k.lower() not in {"content-length", "content-type"}
        }
        headers[REQUEST_ID_HEADER] = request_id
        if answer.status_code == 200:
            return Response(status_code=204, headers=headers)
        refused = bytes(answer.body).decode().removeprefix("Disallowed CORS ")
        detail = (
            f"cross-origin request refused ({refused} not allowed); "
            "the origins a browser may call from are set with CORS_ALLOW_ORIGINS"
        )
        return envelope(400, "cors_refused", detail, request_id, headers)
