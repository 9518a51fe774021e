"""Pure ASGI middleware: request ids, request body limit, last-resort 500 envelope."""

from __future__ import annotations

import json
import logging
import uuid

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.http.ids import is_valid_id

log = logging.getLogger(__name__)


def _json_error(status: int, code: str, detail: str, request_id: str) -> tuple[Message, Message]:
    body = json.dumps({"error": code, "detail": detail, "request_id": request_id}).encode()
    start: Message = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"x-request-id", request_id.encode()),
        ],
    }
    return start, {"type": "http.response.body", "body": body}


class RequestContextMiddleware:
    """Gives every request an id (the client's `X-Request-ID` when it follows the id rule, else a new one),
    echoes it on every response, refuses bodies over `max_body_bytes` with 413, and turns an
    unhandled exception into the 500 envelope instead of a bare text response."""

    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        request_id = ""
        for name, value in scope.get("headers", []):
            if name == b"x-request-id":
                candidate = value.decode("latin-1")
                if is_valid_id(candidate):
                    request_id = candidate
                break
        request_id = request_id or uuid.uuid4().hex
        # A per-request copy: servers are meant to copy the lifespan state for each request, but not every
        # ASGI host does, and per-request values (request id, rate-limit decision) must never leak.
        scope["state"] = {**scope.get("state", {}), "request_id": request_id}

        too_large = f"request body exceeds {self.max_body_bytes} bytes"
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = -1
                if declared > self.max_body_bytes:
                    for message in _json_error(413, "payload_too_large", too_large, request_id):
                        await send(message)
                    return

        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    # FastAPI re-raises HTTPException from body reading unchanged, so the regular
                    # handler renders the 413 envelope.
                    raise HTTPException(status_code=413, detail=too_large)
            return message

        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
                headers.append((b"x-request-id", request_id.encode()))
                decision = scope.get("state", {}).get("rate_limit")
                if decision is not None:
                    headers += [
                        (b"x-ratelimit-limit", str(decision.limit).encode()),
                        (b"x-ratelimit-remaining", str(decision.remaining).encode()),
                        (b"x-ratelimit-reset", str(decision.reset_seconds).encode()),
                    ]
                message = {**message, "headers": headers}
            await send(message)

        try:
            await self.app(scope, limited_receive, send_with_id)
        except Exception as exc:
            if started:
                raise
            if isinstance(exc, HTTPException) and exc.status_code == 413:
                messages = _json_error(413, "payload_too_large", too_large, request_id)
            else:
                log.exception("unhandled error", extra={"request_id": request_id})
                messages = _json_error(500, "internal_error", "internal server error", request_id)
            for message in messages:
                await send(message)
