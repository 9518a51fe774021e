"""The Idempotency-Key request header (draft-ietf-httpapi-idempotency-key-header), as routes read it.

A key is 1-255 visible ASCII characters, bare or as a quoted structured-field string ("..."). The
request's fingerprint covers the route, the acting user and the parsed body, so the same key sent
with another body (or for another user) is recognised as a different request: 422.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Header

from app.http.ids import IdempotencyKeyValue
from memory.session.idempotency import IdempotencyKey, fingerprint

REPLAYED_HEADER = "Idempotent-Replayed"

IdempotencyHeader = Annotated[
    IdempotencyKeyValue | None,
    Header(
        alias="Idempotency-Key",
        description="makes a retry of this request safe: the same key gets the recorded answer",
    ),
]


def idempotency_key(key: str | None, *request: object) -> IdempotencyKey | None:
    """The (validated) key with the fingerprint of `request` (route, user, body...), or None."""
    return None if key is None else IdempotencyKey(key, fingerprint(*request))
