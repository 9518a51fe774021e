"""Domain errors. The HTTP layer maps them to status codes; nothing here knows about HTTP."""


class MemoryError_(Exception):  # noqa: N801 - avoid shadowing the builtin MemoryError
    """Base class of every error raised by the memory layer."""


class MemoryNotFound(MemoryError_):
    def __init__(self, memory_id: str) -> None:
        super().__init__(f"no memory {memory_id!r} for this user")
        self.memory_id = memory_id


class StoreUnavailable(MemoryError_):
    """A backing store (Chroma, Redis) could not be reached or answered with a server error."""

    def __init__(self, store: str, reason: str) -> None:
        super().__init__(f"{store} unavailable: {reason}")
        self.store = store
        self.reason = reason


class SessionBusy(MemoryError_):
    """Another turn holds the session lock and did not release it within the bounded wait."""

    def __init__(self, session_id: str, waited_seconds: float) -> None:
        super().__init__(f"session {session_id!r} is busy with another turn (waited {waited_seconds:g}s)")
        self.session_id = session_id


class MemoryBusy(MemoryError_):
    """Another write or delete of this user's long-term memory held its lock past the bounded wait."""

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
