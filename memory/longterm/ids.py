"""Ids and hashes of memories: deterministic where the client gives a message id."""

from __future__ import annotations

import hashlib
import unicodedata
import uuid

from memory.models import Message


def content_hash(text: str) -> str:
    """Hash of the text after Unicode NFKC, case folding and whitespace collapsing."""
    normalised = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()[:32]


def memory_id_for(user_id: str, session_id: str, message: Message) -> str:
    """Deterministic for messages that carry a client id (so a retried request overwrites, never
    duplicates); random otherwise."""
    if message.id is None:
        return f"mem_{uuid.uuid4().hex}"
    key = "\x1f".join((user_id, session_id, message.id))
    return f"mem_{hashlib.sha256(key.encode('utf-8')).hexdigest()[:32]}"
