"""What a request body may be: UTF-8 JSON (a UTF-8 byte order mark is tolerated) nested at most
`MAX_JSON_DEPTH` levels, whose every string is well-formed Unicode.

Reading is strict where `json.loads(bytes)` is lenient: it guesses UTF-16 and UTF-32 from the first bytes
and accepts them, and it fails with RecursionError (a 400 `bad_request` from FastAPI) on deep nesting.
Here every unreadable body raises `json.JSONDecodeError`, which FastAPI turns into the one 400
`invalid_json`. Lone surrogates (`"\\udfff"` is valid JSON, but no UTF-8 text) are found by
`first_lone_surrogate`, which the request models call, so they answer 422 `validation_error` after
authentication like every other field error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

MAX_JSON_DEPTH = 64
_BOM = "\ufeff"


def parse_json_body(body: bytes) -> Any:
    """The body's JSON value; `json.JSONDecodeError` (with a reason a client can act on) otherwise."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise json.JSONDecodeError(f"body is not UTF-8 ({exc.reason} at byte {exc.start})", "", 0) from exc
    if "\x00" in text:  # never valid in JSON text: what UTF-16 or UTF-32 looks like read as UTF-8
        raise json.JSONDecodeError("body is not UTF-8 JSON (NUL bytes: UTF-16 or UTF-32?)", "", 0)
    text = text.removeprefix(_BOM)
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise json.JSONDecodeError(f"nested deeper than {MAX_JSON_DEPTH} levels", "", 0) from exc
    if json_depth(value) > MAX_JSON_DEPTH:
        raise json.JSONDecodeError(f"nested deeper than {MAX_JSON_DEPTH} levels", "", 0)
    return value


def json_depth(value: Any) -> int:
    """Levels of arrays and objects (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_JSON_DEPTH:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def _is_well_formed(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def first_lone_surrogate(value: Any) -> str | None:
    """The dotted path of the first string (object keys included) holding a lone surrogate, or None."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if not _is_well_formed(node):
                return path or "body"
        elif isinstance(node, dict):
            for key, child in node.items():
                if not _is_well_formed(str(key)):
                    return f"{path or 'body'} (a key)"  # never the key itself: it cannot be encoded
                stack.append((child, f"{path}.{key}" if path else str(key)))
        elif isinstance(node, list):
            stack.extend((child, f"{path}.{i}" if path else str(i)) for i, child in enumerate(node))
    return None


class StrictJSONRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = parse_json_body(await self.body())
        return self._json


class StrictJSONRoute(APIRoute):
    """Every route of the app: its body is read by `parse_json_body`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJSONRequest(request.scope, request.receive))

        return strict
