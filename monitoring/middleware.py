"""Pure ASGI middleware: request metrics and one structured access-log line per request.

It wraps everything else, so even answers the inner layers make on their own (413, 500) are counted.
Labels use the matched route's template (`/v1/memory/{user_id}/search`), never the raw path; requests
that match no route share the label `unmatched`. The log line carries the request id, route, status,
duration and a keyed hash of the caller's user id (set by the auth dependency), never the id itself.
"""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from monitoring import metrics

log = logging.getLogger("mnemo.access")
QUIET_ROUTES = frozenset({"/healthz", "/readyz", "/metrics"})  # logged at DEBUG: probes every few seconds


class MetricsMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        request_id = ""

        async def observe(message: Message) -> None:
            nonlocal status, request_id
            if message["type"] == "http.response.start":
                status = int(message["status"])
                for name, value in message.get("headers", []):
                    if name.lower() == b"x-request-id":
                        request_id = value.decode("latin-1")
            await send(message)

        try:
            await self.app(scope, receive, observe)
        finally:
            elapsed = time.perf_counter() - started
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            method = scope.get("method", "GET")
            metrics.HTTP_REQUESTS.labels(route, method, str(status)).inc()
            metrics.HTTP_DURATION.labels(route, method).observe(elapsed)
            state = scope.get("state") or {}
            log.log(
                logging.DEBUG if route in QUIET_ROUTES else logging.INFO,
                "request",
                extra={
                    "request_id": request_id or state.get("request_id", ""),
                    "method": method,
                    "route": route,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 2),
                    "user": state.get("user_digest"),
                },
            )
