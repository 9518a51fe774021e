"""Domain errors. The HTTP layer maps them to status codes; nothing here knows about HTTP."""

from redis import exceptions as redis_errors

# Redis errors that mean "Redis cannot serve this now", not "this request or mnemo is wrong": refused,
# reset, closed or lost connections, timeouts, a server still loading its dataset (BusyLoadingError is
# a ConnectionError), no free pooled connection, a replica answering READONLY or MASTERDOWN during a
# failover, a cluster that is down or asks to try again, a server out of memory, and a cluster whose
# topology is in flux: redirections that ran out ("TTL exhausted"), a slot no node serves, a MOVED that
# a transaction's retries did not get past (a transaction answered by a node that no longer owns the
# slot, while the failover is still spreading). The domain lets them propagate; the HTTP layer answers
# them 503 `redis_unavailable` with Retry-After, in one place.
REDIS_UNAVAILABLE: tuple[type[Exception], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.ReadOnlyError,
    redis_errors.ClusterError,  # ClusterDownError and MasterDownError are ones
    redis_errors.TryAgainError,
    redis_errors.OutOfMemoryError,
    redis_errors.AskError,  # MovedError is one
    redis_errors.SlotNotCoveredError,
)


class MemoryError_(Exception):  # noqa: N801 - avoid shadowing the builtin MemoryError
    """Base class of every error raised by the memory layer."""


class MemoryNotFound(MemoryError_):
    def __init__(self, memory_id: str) -> None:
        super().__init__(f"no memory {memory_id!r} for this user")
        self.memory_id = memory_id


class VersionMismatch(MemoryError_):
    """An edit named a version of the memory that is no longer its current one."""

    def __init__(self, memory_id: str, current: str) -> None:
        super().__init__(f"memory {memory_id!r} changed since it was read: its version is now {current}")
        self.memory_id = memory_id
        self.current = current


class StoreUnavailable(MemoryError_):
    """A backing store (Chroma, Redis) could not be reached or answered with a server error."""

    def __init__(self, store: str, reason: str, *, stored: bool = False) -> None:
        """`stored`: the failure came after the write it interrupted was stored (a long-term write whose
        version bump or lock release failed): the answer says so, and that a retry is safe."""
        super().__init__(f"{store} unavailable: {reason}")
        self.store = store
        self.reason = reason
        self.stored = stored


class EmbeddingUnavailable(StoreUnavailable):
    """The embedding model (a server over HTTP) could not embed: down, timing out, its circuit open, or
    answering vectors of another size than configured (refused, never stored or ranked). A write that
    needs it answers 503 with Retry-After; a search degrades to its keyword channel."""

    def __init__(self, reason: str) -> None:
        super().__init__("embeddings", reason)


class SessionBusy(MemoryError_):
    """Another turn holds the session lock and did not release it within the bounded wait."""

    def __init__(self, session_id: str, waited_seconds: float) -> None:
        super().__init__(f"session {session_id!r} is busy with another turn (waited {waited_seconds:g}s)")
        self.session_id = session_id


class SessionLockLost(MemoryError_):
    """A turn's session lock was no longer its own at the commit: it expired (the turn outlived it) or
    was deleted (the session deleted or reset meanwhile). Nothing of the turn was written."""

    def __init__(self, session_id: str) -> None:
        super().__init__(
            f"session {session_id!r}: the turn was not saved, its session lock expired or was taken "
            "before the commit"
        )
        self.session_id = session_id


class MemoryBusy(MemoryError_):
    """Another write of this user's long-term memory (or a rebalance moving the user) held its lock past
    the bounded wait."""

    def __init__(self, user_id: str, waited_seconds: float) -> None:
        super().__init__(f"long-term memory is busy with another write (waited {waited_seconds:g}s)")
        self.user_id = user_id


class UpstreamFailed(MemoryError_):
    """The language model could not produce an answer. `timeout` distinguishes 504 from 502."""

    def __init__(self, reason: str, *, timeout: bool = False, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.timeout = timeout
        self.status = status


class IdempotencyConflict(MemoryError_):
    """An Idempotency-Key already recorded for a request with a different body."""

    def __init__(self) -> None:
        super().__init__("this Idempotency-Key was already used for a request with a different body")


class ForgetNotConfirmed(MemoryError_):
    """A forget would delete more memories than one call may without confirmation, or not the number
    the caller confirmed (`expected_count`, the count its dry run showed): nothing was deleted."""

    def __init__(self, count: int, cap: int, expected: int | None) -> None:
        if expected is None:
            reason = (
                f"this forget would delete {count} memories, more than {cap} at once: run it with "
                f"dry_run=true, check the list, then send expected_count={count} "
                f"(一次最多删除{cap}条；请先预览，确认后带上 expected_count={count})"
            )
        else:
            reason = (
                f"this forget now matches {count} memories, not the {expected} confirmed: run the dry "
                f"run again (匹配数量已从{expected}变为{count}，请重新预览)"
            )
        super().__init__(reason)
        self.count = count
        self.cap = cap
        self.expected = expected


class EntityNotFound(MemoryError_):
    """Relation memory: no entity (or no merge) with that exact id for this user."""

    def __init__(self, what: str) -> None:
        super().__init__(f"no {what} for this user (该用户没有 {what})")
        self.what = what


class MergeRefused(MemoryError_):
    """Relation memory: a merge of two entities that cannot be one (another kind, the same entity, an
    alias instead of the entity it stands for). The message says why, in English and Chinese."""


class MergeConflict(MemoryError_):
    """Relation memory: a merge the merges in force contradict: the two entities are one already (it
    would close a cycle), or one of them was merged into another entity (split that merge first). The
    message says which merge, in English and Chinese."""
