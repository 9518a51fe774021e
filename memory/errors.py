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
