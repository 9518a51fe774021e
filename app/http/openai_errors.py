"""OpenAI's error envelope on the OpenAI-compatible routes (`/v1/chat/*`, `/v1/models*`, `/v1/usage`).

The SDKs and front ends built on OpenAI's protocol read `{"error": {"message", "type", "code", "param"}}`
and map the status to an exception class (401 AuthenticationError, 404 NotFoundError, 429
RateLimitError...). Every error there is first answered in mnemo's envelope (`app/http/errors.py`, by
the handlers and middleware every route shares); this pure ASGI middleware, outermost, rewrites it:
`code` keeps mnemo's code, `message` its detail, `param` the request field a validation error names,
and `request_id` stays at the top level. Headers (`Retry-After`, `WWW-Authenticate`, `X-Request-ID`,
CORS) pass unchanged. The rest of the API keeps mnemo's envelope.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

OPENAI_PREFIXES = ("/v1/chat/", "/v1/models", "/v1/usage")
PARAM_STATE_KEY = "openai_error_param"  # set by the validation handler: the field the error names


def is_openai_path(path: str) -> bool:
    return any(path == p.rstrip("/") or path.startswith(p) for p in OPENAI_PREFIXES)


def error_type(status: int) -> str:
    """OpenAI's `type` for a status: what its SDKs and front ends switch on."""
    if status == 401:
        return "authentication_error"
    if status == 403:
        return "permission_error"
    if status == 429:
        return "rate_limit_error"
    if status >= 500:
        return "server_error"
    return "invalid_request_error"


def openai_body(status: int, envelope: dict[str, Any], param: str | None) -> dict[str, Any]:
    """mnemo's `{"error": code, "detail", "request_id"}` in OpenAI's shape (request_id kept)."""
    mnemo_code = str(envelope.get("error") or "internal_error")
    return {
        "error": {
            "message": str(envelope.get("detail") or mnemo_code),
            "type": error_type(status),
            "code": mnemo_code,
            "param": param,
        },
        "request_id": str(envelope.get("request_id") or ""),
    }


class OpenAIErrorMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not is_openai_path(str(scope.get("path", ""))):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def rewrite(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                content_type = dict(message.get("headers", [])).get(b"content-type", b"")
                if message["status"] >= 400 and content_type.startswith(b"application/json"):
                    start = message  # held until the whole body is read
                    return
                await send(message)
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body", False):
                return
            body = b"".join(chunks)
            try:
                envelope = json.loads(body)
            except ValueError:
                envelope = None
            if isinstance(envelope, dict) and isinstance(envelope.get("error"), str):
                param = scope.get("state", {}).get(PARAM_STATE_KEY)
                body = json.dumps(
                    openai_body(start["status"], envelope, param if isinstance(param, str) else None),
                    ensure_ascii=False,
                ).encode()
            headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body, "more_body": False})

        await self.app(scope, receive, rewrite)
