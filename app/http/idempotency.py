"""The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header), as routes read it.

A key is 1-255 visible ASCII characters, bare or as a quoted structured-field string ("..."). The
request's fingerprint covers the route, the acting user and the parsed body, so the same key sent
with another body (or for another user) is recognised as a different request: 422.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Header

from app.http.errors import BadRequest
from memory.session.idempotency import MAX_KEY_LENGTH, IdempotencyKey, fingerprint

REPLAYED_HEADER = "Idempotent-Replayed"
_KEY_RE = re.compile(rf"^[\x21-\x7e]{{1,{MAX_KEY_LENGTH}}}$")

IdempotencyHeader = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        description="makes a retry of this request safe: the same key gets the recorded answer",
    ),
]


def idempotency_key(raw: str | None, *request: object) -> IdempotencyKey | None:
    """The parsed key with the fingerprint of `request` (route, user, body...), or None without one."""
    if raw is None:
        return None
    key = raw.strip()
    if len(key) >= 2 and key[0] == key[-1] == '"':
        key = key[1:-1]
    if not _KEY_RE.match(key):
        raise BadRequest(
            f"Idempotency-Key must be 1-{MAX_KEY_LENGTH} visible ASCII characters", code="validation_error"
        )
    return IdempotencyKey(key, fingerprint(*request))
