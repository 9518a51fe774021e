"""`/mcp`: the MCP streamable HTTP transport inside the service.

Each request is authenticated and counted against the caller's rate limit exactly as an API request
is (`get_principal`); the tools then call the API in-process (an httpx client over ASGI into this
same app, with the caller's token), so they cannot do anything the token could not do over HTTP.
The API calls a tool makes are not counted again: one MCP request is one request of the budget.

Stateless mode with JSON responses: any worker can answer any request (sessions held in one
worker's memory would break behind `--workers 2` or a load balancer), and no server-to-client
stream is needed by these tools.

A request refused before it reaches the tools (no token, an expired or forged one, the rate limit, Redis
down) keeps its HTTP status and headers (401 with `WWW-Authenticate`, 429 and 503 with `Retry-After`)
and carries a JSON-RPC error as its body: the SDK's client shows that error (code = the HTTP status,
`data` = mnemo's error envelope) instead of a bare "Server returned an error response".
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import httpx
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from app.http.deps import get_principal
from app.http.errors import request_id_of
from app.mcp.api import MnemoApi
from app.mcp.tools import build_server

API_KEY = "mnemo_api"  # where a request's API client waits for its tools, in the request's state
COUNTED_KEY = "rate_limit_counted"  # set on the in-process API calls a tool makes (see get_principal)
INTERNAL_BASE_URL = "http://mnemo.internal"


def api_of_request(ctx: Context) -> MnemoApi:
    request = ctx.request_context.request
    if not isinstance(request, Request):
        raise RuntimeError("an MCP call over HTTP without its HTTP request")
    api: MnemoApi = getattr(request.state, API_KEY)
    return api


class _WithState:
    """The app, called in-process with the outer request's lifespan state (the ASGI host gives each
    request a copy of it; an in-process call has no host)."""

    def __init__(self, app: ASGIApp, state: dict[str, Any]) -> None:
        self._app = app
        self._state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope["state"] = {**self._state, COUNTED_KEY: True}
        await self._app(scope, receive, send)


class McpEndpoint:
    """The ASGI endpoint for `/mcp`; `lifespan` wraps the app's lifespan with the SDK's session manager."""

    def __init__(self) -> None:
        self.server = build_server(api_of_request)
        # creates the session manager. No Host/Origin allow-list (the SDK's DNS-rebinding guard): the
        # service runs under any host name, and every request needs a bearer token that a page on
        # another origin does not have (browsers never attach it by themselves)
        self.server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self._manager = self.server.session_manager

    def lifespan(
        self, inner: Callable[[Any], AbstractAsyncContextManager[Any]]
    ) -> Callable[[Any], AbstractAsyncContextManager[Any]]:
        @asynccontextmanager
        async def lifespan(app: Any) -> AsyncIterator[Any]:
            async with inner(app) as state, self._manager.run():
                yield state

        return lifespan

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            principal = await get_principal(request, request.headers.get("authorization"))
        except Exception as exc:
            await (await refused(request, exc))(scope, receive, send)
            return
        token = request.headers["authorization"].partition(" ")[2].strip()
        per_request = {"request_id", "rate_limit", "user_digest", API_KEY, COUNTED_KEY}
        state = {k: v for k, v in scope.get("state", {}).items() if k not in per_request}
        transport = httpx.ASGITransport(app=_WithState(scope["app"], state))
        async with httpx.AsyncClient(
            transport=transport, base_url=INTERNAL_BASE_URL, trust_env=False, timeout=60
        ) as client:
            setattr(
                request.state, API_KEY, MnemoApi(client, token, principal.user_id, request_id_of(request))
            )
            await self._manager.handle_request(scope, receive, send)


async def refused(request: Request, exc: Exception) -> JSONResponse:
    """The app's own answer to `exc` (its exception handler), as a JSON-RPC error at the same status
    and with the same headers. Raises `exc` again when the app has no handler for it (a bug: a 500)."""
    handlers: dict[Any, Any] = request.app.exception_handlers
    handler = next((handlers[t] for t in type(exc).__mro__ if t in handlers), None)
    if handler is None:
        raise exc
    answer = await handler(request, exc)
    envelope = json.loads(answer.body)
    headers = {k: v for k, v in answer.headers.items() if k not in ("content-length", "content-type")}
    error = {
        "code": answer.status_code,
        "message": f"{envelope.get('error')}: {envelope.get('detail')}",
        "data": {**envelope, "status": answer.status_code},
    }
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, answer.status_code, headers)
