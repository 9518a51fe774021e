"""Every Redis key mnemo uses, built in one place.

Per-user keys carry the user id in a Redis Cluster hash tag (`mnemo:{alice}:...`), so every key of one
user hashes to one slot and multi-key scripts stay cluster-safe.
"""

from __future__ import annotations

import hashlib

PREFIX = "mnemo"
SESSION_PARTS = ("summary", "actions", "buffer", "lock")


def user_prefix(user_id: str) -> str:
    return f"{PREFIX}:{{{user_id}}}"


def user_pattern(user_id: str) -> str:
    """SCAN pattern matching every key of one user (braces are glob-literal; ids never contain []*?)."""
    return f"{user_prefix(user_id)}:*"


def session_prefix(user_id: str, session_id: str) -> str:
    return f"{user_prefix(user_id)}:s:{session_id}"


def summary(user_id: str, session_id: str) -> str:
    return f"{session_prefix(user_id, session_id)}:summary"


def actions(user_id: str, session_id: str) -> str:
    return f"{session_prefix(user_id, session_id)}:actions"


def buffer(user_id: str, session_id: str) -> str:
    return f"{session_prefix(user_id, session_id)}:buffer"


def lock(user_id: str, session_id: str) -> str:
    return f"{session_prefix(user_id, session_id)}:lock"


def slot(user_id: str, session_id: str, name: str) -> str:
    return f"{session_prefix(user_id, session_id)}:slot:{name}"


def slot_pattern(user_id: str, session_id: str) -> str:
    return f"{session_prefix(user_id, session_id)}:slot:*"


def session_pattern(user_id: str, session_id: str) -> str:
    return f"{session_prefix(user_id, session_id)}:*"


# Long-term write outbox: one stream for all users, one consumer group across every worker.
OUTBOX_STREAM = f"{PREFIX}:outbox"
OUTBOX_GROUP = "ltm-writers"


# Long-term memory bookkeeping, per user.
def ltm_version(user_id: str) -> str:
    """Bumped on every long-term write or delete: keyword indexes cached in workers key on it."""
    return f"{user_prefix(user_id)}:ltm:version"


def ltm_lock(user_id: str) -> str:
    """Held around check-then-insert, so concurrent writes of one fact cannot both insert it."""
    return f"{user_prefix(user_id)}:ltm:lock"


def ltm_entities(user_id: str) -> str:
    """Hash: entity -> the session it was last mentioned in (first-mention-in-new-session anchors)."""
    return f"{user_prefix(user_id)}:ltm:entities"


def rate_limit(user_id: str) -> str:
    """Sorted set of this user's request times in the current window."""
    return f"{user_prefix(user_id)}:rl"


def ltm_tombstones(user_id: str) -> str:
    """Hash: deleted memory id -> when. A late write (a redelivered outbox entry) must not revive it."""
    return f"{user_prefix(user_id)}:ltm:tombstones"


def erased_marker(user_id: str) -> str:
    """When this user was last erased. Outside the user's prefix (an erase deletes that), keyed by a hash
    of the id, so no readable identifier of an erased user stays in Redis."""
    digest = hashlib.blake2b(user_id.encode(), digest_size=16).hexdigest()
    return f"{PREFIX}:erased:{digest}"


# Governance: one append-only stream of who listed, exported, forgot, deleted or erased what.
AUDIT_STREAM = f"{PREFIX}:audit"


def ltm_changes(user_id: str) -> str:
    """Stream of this user's long-term writes and deletes (ids only), one entry per version: workers
    update their cached keyword index from it instead of rebuilding it."""
    return f"{user_prefix(user_id)}:ltm:changes"


def ltm_placement(user_id: str) -> str:
    """Hash: which Chroma server holds this user's long-term records (`at`), and while a rebalance moves
    them, the server being copied to (`to`) or the one whose copy is still to be deleted (`from`)."""
    return f"{user_prefix(user_id)}:ltm:placement"


# Only one rebalance runs at a time (python -m app.cli.rebalance).
REBALANCE_LOCK = f"{PREFIX}:rebalance:lock"


def shared_vector(user_id: str, model: str, digest: str) -> str:
    """A recall query's embedding, for the writer that stores the same text (memory/shared_vectors.py)."""
    return f"{user_prefix(user_id)}:vec:{model}:{digest}"
