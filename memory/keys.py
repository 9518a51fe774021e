"""Every Redis key mnemo uses, built in one place: layout 2, cluster-safe.

A user's keys and the outbox partition that carries the user's turns share one hash tag, the partition
`p = blake2b(user) mod OUTBOX_PARTITIONS`:

    mnemo:{p0017}:u:{alice}:s:{s1}:buffer     a session key of alice (and summary, actions, lock, slots)
    mnemo:{p0017}:u:{alice}:ltm:version        long-term bookkeeping of alice (lock, changes, tombstones…)
    mnemo:{p0017}:outbox                       the partition's stream of chat turns for the writers
    mnemo:{p0017}:import                       the partition's stream of imported histories (read after)
    mnemo:{p0017}:erased:<hash of the id>      alice was erased (names no one)
    mnemo:{p0017}:lease                        which writer owns the partition
    mnemo:{p0017}:purges                       users whose deletes Chroma has yet to apply

Only the first `{...}` of a key is its hash tag, so every key of one user, and the outbox stream their
turn is appended to, sit in one Redis Cluster slot: the turn's MULTI/EXEC and every Lua script touch one
slot. The braces around the user and session ids delimit them (ids never contain braces), so a SCAN for
`alice` never matches `alice:x`. Global keys (audit, dead letters, the writers' registry, the layout
marker) are single keys, each used alone.

The partition count is part of the layout: every process must use the same one (`OUTBOX_PARTITIONS`).
The composition root sets it once with `use_partitions` and records it in Redis (`LAYOUT`), refusing to
start on a mismatch; changing it is a key migration, like layout 1 -> 2 (`python -m app.cli.migrate_keys`).
"""

from __future__ import annotations

import functools
import hashlib
import re

PREFIX = "mnemo"
LAYOUT_VERSION = 2
DEFAULT_PARTITIONS = 32
SESSION_PARTS = ("summary", "actions", "buffer", "lock")

_partitions = DEFAULT_PARTITIONS


def use_partitions(count: int) -> None:
    """Set the partition count for this process (the composition root does, once, at start-up)."""
    global _partitions
    if not 1 <= count <= 9999:
        raise ValueError(f"OUTBOX_PARTITIONS must be 1-9999, not {count}")
    _partitions = count
    _partition_of.cache_clear()


def partitions() -> int:
    return _partitions


@functools.lru_cache(maxsize=65536)
def _partition_of(user_id: str, count: int) -> int:
    digest = hashlib.blake2b(user_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def partition_of(user_id: str) -> int:
    """The outbox partition of a user: stable across processes and releases."""
    return _partition_of(user_id, _partitions)


def partition_tag(partition: int) -> str:
    return f"{PREFIX}:{{p{partition:04d}}}"


def user_prefix(user_id: str) -> str:
    return f"{partition_tag(partition_of(user_id))}:u:{{{user_id}}}"


def user_pattern(user_id: str) -> str:
    """SCAN pattern matching every key of one user (braces are glob-literal; ids never contain []*?{})."""
    return f"{user_prefix(user_id)}:*"


def users_pattern(id_prefix: str) -> str:
    """SCAN pattern matching the keys of every user whose id starts with `id_prefix`, in every partition
    (ids never contain glob characters). `user_of` reads the user back out of a matching key."""
    return f"{PREFIX}:{{p*}}:u:{{{id_prefix}*"


_USER_KEY_RE = re.compile(rf"{PREFIX}:\{{p[0-9]{{4}}\}}:u:\{{([^{{}}]+)\}}:")


def user_of(key: str) -> str | None:
    """The user a key belongs to (layout 2), or None for a key that is no user's."""
    found = _USER_KEY_RE.match(key)
    return found.group(1) if found else None


def session_prefix(user_id: str, session_id: str) -> str:
    return f"{user_prefix(user_id)}:s:{{{session_id}}}"


def sessions_pattern(user_id: str) -> str:
    """SCAN pattern for every session key of one user."""
    return f"{user_prefix(user_id)}:s:*"


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


# Long-term write outbox: one stream per partition, one consumer group across every writer.
OUTBOX_GROUP = "ltm-writers"


def outbox_stream(partition: int) -> str:
    return f"{partition_tag(partition)}:outbox"


def outbox_stream_of(user_id: str) -> str:
    """The stream that carries this user's turns (same slot as the user's keys)."""
    return outbox_stream(partition_of(user_id))


def import_stream(partition: int) -> str:
    """The partition's import lane: entries of whole histories imported (`POST /v1/memory/{user}/imports`),
    read by the writers only when the partition's chat stream has nothing for them (same slot)."""
    return f"{partition_tag(partition)}:import"


def import_stream_of(user_id: str) -> str:
    return import_stream(partition_of(user_id))


def import_job(user_id: str, import_id: str) -> str:
    """Hash: one import of this user (messages, entries, the range of its stream entries), for its status;
    under the user's prefix, so an erase removes it; expires (memory/outbox/stream.py IMPORT_JOB_TTL)."""
    return f"{user_prefix(user_id)}:import:{import_id}"


def partition_lease(partition: int) -> str:
    """Which writer reads this partition now (value: the writer's id; PX-expiring, renewed)."""
    return f"{partition_tag(partition)}:lease"


OUTBOX_DEAD_LETTERS = f"{PREFIX}:outbox:dead"
WRITERS = f"{PREFIX}:writers"  # sorted set: writer id -> last heartbeat (ms), how writers share partitions
LAYOUT = f"{PREFIX}:layout"  # hash: version, partitions


def dense_model(collection_prefix: str) -> str:
    """The model whose vectors the dense channel's collections of this prefix hold (a string; issue 44)."""
    return f"{PREFIX}:model:dense:{collection_prefix}"


def dense_switching(collection_prefix: str) -> str:
    """The dense model a switch in progress moves users to (a string, set by every process started with a
    previous model, dropped when the switch finishes): until then no process may start without one."""
    return f"{PREFIX}:model:dense:{collection_prefix}:switching"


def dense_switched(collection_prefix: str) -> str:
    """The dense model every user of this prefix was moved to by a finished switch (a string): a
    process configured with it needs no previous model to start (memory/longterm/dense_models.py)."""
    return f"{PREFIX}:model:dense:{collection_prefix}:switched"


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


def relations(user_id: str) -> str:
    """Hash: memory id -> what that memory says of entities and relations (memory/relations/store.py)."""
    return f"{user_prefix(user_id)}:rel:mem"


def relation_merges(user_id: str) -> str:
    """Hash: merge id -> one merge of two of the user's entities (memory/relations/store.py); a split
    deletes its field."""
    return f"{user_prefix(user_id)}:rel:merges"


def relations_version(user_id: str) -> str:
    """Counter moved by every change of `relations(user_id)`: a worker's cached graph is current at it."""
    return f"{user_prefix(user_id)}:rel:v"


def replica_ack(user_id: str) -> str:
    """A short-lived marker written right after a turn's commit, on the connection that then WAITs for
    the replicas (memory/redis_client.py ReplicaAck)."""
    return f"{user_prefix(user_id)}:ack"


def rate_limit(user_id: str) -> str:
    """Sorted set of this user's request times in the current window."""
    return f"{user_prefix(user_id)}:rl"


def model_usage(user_id: str) -> str:
    """Hash of this user's model use: `<purpose>:calls|in|out` counters and `since` (governance/usage.py)."""
    return f"{user_prefix(user_id)}:usage"


def ltm_claims(user_id: str) -> str:
    """Hash: claim key ("residence", "changed:发布窗口") -> JSON [[created_at, memory id], ...], the newest
    memories stating it (memory/write/claim_index.py): supersession's candidates past the in-process index."""
    return f"{user_prefix(user_id)}:ltm:claims"


def ltm_tombstones(user_id: str) -> str:
    """Hash: deleted memory id -> when. A late write (a redelivered outbox entry) must not revive it."""
    return f"{user_prefix(user_id)}:ltm:tombstones"


def ltm_history(user_id: str, memory_id: str) -> str:
    """Stream: the recorded events of one memory (edited, restored, deleted, ...), oldest first; the
    events a record itself says (created, merged, superseded) are read from the record."""
    return f"{user_prefix(user_id)}:ltm:history:{memory_id}"


def ltm_purging(user_id: str) -> str:
    """Hash: deleted memory id -> when, until Chroma has deleted it too. Reads hide these ids, so a
    delete answers before Chroma does (memory/longterm/deferred_deletes.py)."""
    return f"{user_prefix(user_id)}:ltm:purging"


def purge_queue(partition: int) -> str:
    """Sorted set: user id -> when their oldest unfinished purge was asked for. The writers holding the
    partition finish what a crashed or cut-off API worker left (memory/longterm/purges.py)."""
    return f"{partition_tag(partition)}:purges"


def purge_queue_of(user_id: str) -> str:
    return purge_queue(partition_of(user_id))


def ltm_purge_lock(user_id: str) -> str:
    """Held by a purge from its read of the hidden ids until Chroma deleted them, and by a restore while
    it stops hiding its id: a purge never deletes a memory restored after it read (deferred_deletes.py)."""
    return f"{user_prefix(user_id)}:ltm:purge-lock"


def ltm_restorable(user_id: str) -> str:
    """Hash: deleted memory id -> its record as it was (JSON: text, metadata, tier, who deleted it and
    how), restorable until the grace period ends (memory/longterm/restorable.py)."""
    return f"{user_prefix(user_id)}:ltm:restorable"


def ltm_restorable_at(user_id: str) -> str:
    """Sorted set: deleted memory id -> when it was deleted (the order and the grace of `ltm_restorable`)."""
    return f"{user_prefix(user_id)}:ltm:restorable:at"


def restorable_queue(partition: int) -> str:
    """Sorted set: user id -> when their oldest restorable memory's grace ends. The writers holding the
    partition remove restorable copies for good once it has (memory/longterm/restorable.py)."""
    return f"{partition_tag(partition)}:restorable"


def restorable_queue_of(user_id: str) -> str:
    return restorable_queue(partition_of(user_id))


def user_digest(user_id: str) -> str:
    return hashlib.blake2b(user_id.encode(), digest_size=16).hexdigest()


def erased_marker(user_id: str) -> str:
    """When this user was last erased. Outside the user's prefix (an erase deletes that) but in the same
    slot; keyed by a hash of the id, so no readable identifier of an erased user stays in Redis."""
    return f"{partition_tag(partition_of(user_id))}:erased:{user_digest(user_id)}"


# Governance: one append-only stream of who listed, exported, forgot, deleted or erased what.
AUDIT_STREAM = f"{PREFIX}:audit"


def ltm_changes(user_id: str) -> str:
    """Stream of this user's long-term writes and deletes (ids only), one entry per version: workers
    update their cached keyword index from it instead of rebuilding it."""
    return f"{user_prefix(user_id)}:ltm:changes"


def ltm_snapshot(user_id: str) -> str:
    """A columnar copy of this user's keyword index and vectors at one version (memory/recall/snapshot.py):
    what a worker's first search loads instead of reading every record from Chroma. Holds the user's
    words: erasure deletes it with the user's other keys, and every delete (forget, archival) drops it."""
    return f"{user_prefix(user_id)}:ltm:snapshot"


def ltm_snapshot_draft(user_id: str, token: str) -> str:
    """A snapshot's parts while they are written (`token`: the writer's, random); renamed to
    `ltm_snapshot` if the user did not change meanwhile, else deleted; expires within minutes if the
    writer died. Under the user's prefix: erasure deletes it too."""
    return f"{user_prefix(user_id)}:ltm:snapshot:draft:{token}"


def ltm_placement(user_id: str) -> str:
    """Hash: which Chroma server holds this user's long-term records (`at`), and while a rebalance moves
    them, the server being copied to (`to`) or the one whose copy is still to be deleted (`from`)."""
    return f"{user_prefix(user_id)}:ltm:placement"


def archive_state(user_id: str) -> str:
    """Hash: this user's archive version (`v`, bumped whenever warm or cold records change), whether
    cold rows exist (`cold`), and the move in progress (`move`, JSON: ids, tiers, phase, files), which
    readers use to answer every id from exactly one tier (memory/archive/tiers.py)."""
    return f"{user_prefix(user_id)}:archive"


def archive_cold_lock(user_id: str) -> str:
    """Held while this user's Parquet files are written or rewritten (deletes do not take `ltm_lock`)."""
    return f"{user_prefix(user_id)}:archive:cold-lock"


# Only one archival job runs at a time (python -m app.cli.archive, or the writer's daily schedule).
ARCHIVE_LOCK = f"{PREFIX}:archive:lock"
ARCHIVE_LAST_RUN = f"{PREFIX}:archive:last"  # hash: day (UTC, of the last scheduled run), at, summary

# Only one rebalance runs at a time (python -m app.cli.rebalance).
REBALANCE_LOCK = f"{PREFIX}:rebalance:lock"


def shared_vector(user_id: str, model: str, digest: str) -> str:
    """A recall query's embedding, for the writer that stores the same text (memory/longterm/shared_vectors.py)."""
    return f"{user_prefix(user_id)}:vec:{model}:{digest}"


class Legacy:
    """Layout 1 (before cluster mode), for the migration only: `mnemo:{<user>}:...` per user, one global
    `mnemo:outbox` stream, `mnemo:erased:<hash>` markers."""

    USER_KEYS = f"{PREFIX}:{{*}}:*"
    OUTBOX_STREAM = f"{PREFIX}:outbox"

    @staticmethod
    def erased_marker(user_id: str) -> str:
        return f"{PREFIX}:erased:{user_digest(user_id)}"

    @staticmethod
    def user_of(key: str) -> tuple[str, str] | None:
        """(user id, the rest after `mnemo:{user}:`) of a layout-1 user key, or None for any other key.
        Layout-2 keys (`mnemo:{pNNNN}:u:`, `:outbox`, `:erased:`, `:lease`) are not layout-1 keys."""
        head = f"{PREFIX}:{{"
        if not key.startswith(head) or "}:" not in key:
            return None
        user, rest = key[len(head) :].split("}:", 1)
        if rest.split(":", 1)[0] not in {"s", "ltm", "rl", "vec"}:
            return None
        return user, rest


# Erasure at rest: erases ask for a compaction of each store's files (memory/governance/compaction.py).
def compaction_pending(store: str) -> str:
    """Sorted set: one random token per erase not yet covered by a compaction, scored by Redis' clock."""
    return f"{PREFIX}:compaction:{store}:pending"


def compaction_lease(store: str) -> str:
    """Held by the one process compacting this store, so two workers never rewrite at once."""
    return f"{PREFIX}:compaction:{store}:lease"


def compaction_last(store: str) -> str:
    """Hash: started, finished, outcome of this store's last compaction (the window counts from it)."""
    return f"{PREFIX}:compaction:{store}:last"


def idempotency(user_id: str, key_digest: str) -> str:
    """What a request with an Idempotency-Key answered (memory/session/idempotency.py), under the user's
    prefix so an erase removes it; keyed by a digest of the client's key, never the key itself."""
    return f"{user_prefix(user_id)}:idem:{key_digest}"
