"""The memory console's static page at `/console` (assets in app/console/static). No token is needed
to load the page; everything it shows comes from the API, called with the token the person signs in with."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Message, Receive, Scope, Send

from app.console import STATIC_DIR

# The page runs only its own scripts and talks only to this origin; the token it holds never leaves
# in a Referer, and no other site may frame it.
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' blob:; "
        b"frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
    (b"referrer-policy", b"no-referrer"),
    (b"x-content-type-options", b"nosniff"),
    (b"cache-control", b"no-cache"),
]


class ConsoleFiles:
    """StaticFiles over the console's assets (index.html at `/console/`), with the security headers."""

    def __init__(self) -> None:
        self._files = StaticFiles(directory=STATIC_DIR, html=True)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        await self._files(scope, receive, with_headers)


async def console_home(request: Request) -> RedirectResponse:
    """`/console` -> `/console/`: the page's relative asset paths need the trailing slash. The API itself
    never redirects (app/main.py); this is a static page, for a person typing the address."""
    return RedirectResponse("/console/", status_code=308)
