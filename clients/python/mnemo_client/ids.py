"""The id rule, checked before any URL is built, and the path encoding that keeps an id one segment.

mnemo's rule (app/http/ids.py on the server): 1-128 characters of `[A-Za-z0-9_.@:|+-]`, and not made of
dots only. A bad id raises `InvalidId` here and is never sent. Each path segment is percent-encoded
with nothing left safe, and "." becomes "%2E" too, so no URL normaliser (httpx, fetch, a proxy) can
read a segment as a "." or ".." step and send the request to another route.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from mnemo_client.errors import InvalidId

ID_RULE = "1-128 characters of [A-Za-z0-9_.@:|+-], not only dots"
_ID_RE = re.compile(r"[A-Za-z0-9_.@:|+-]{1,128}", re.ASCII)


def is_valid_id(value: object) -> bool:
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None and value.strip(".") != ""


def check_id(value: object, what: str = "id") -> str:
    if not is_valid_id(value):
        raise InvalidId(f"{what} must be {ID_RULE}, got {value!r}")
    assert isinstance(value, str)
    return value


def segment(value: object, what: str = "id") -> str:
    """One checked id as one encoded path segment."""
    return quote(check_id(value, what), safe="").replace(".", "%2E")
