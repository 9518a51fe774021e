"""mnemo-client: Python client for mnemo (memory service for chatbots): the memory API, sessions and
chat with streaming, sync (`MnemoClient`) and async (`AsyncMnemoClient`) over httpx.

What it owns: building requests to mnemo's HTTP contract (docs/api.md) with checked, encoded ids,
retrying 429/503 with `Retry-After` and an `Idempotency-Key`, and reading answers into typed results
and typed errors. Framework integrations live in `mnemo_client.integrations` (optional extras). It
imports nothing of the server (`app`, `memory`): it is a separate package, usable anywhere.
"""

from mnemo_client.aio import AsyncMnemoClient
from mnemo_client.calls import ChatMessage, Message
from mnemo_client.client import MnemoClient
from mnemo_client.errors import (
    ApiError,
    BadRequest,
    Conflict,
    ConnectionFailed,
    ContractError,
    Forbidden,
    InvalidId,
    MnemoError,
    NotFound,
    RateLimited,
    ServerError,
    StreamFailed,
    Unauthorized,
    Unavailable,
    UpstreamFailed,
    VersionMismatch,
)
from mnemo_client.ids import is_valid_id
from mnemo_client.models import (
    ChatChunk,
    ChatCompletion,
    DeletedMemory,
    DeletedPage,
    Erasure,
    ForgetResult,
    HistoryEvent,
    IngestResult,
    Memory,
    MemoryPage,
    SearchHit,
    SearchResult,
    SessionState,
    Skipped,
    TurnDebug,
)

__all__ = [
    "ApiError",
    "AsyncMnemoClient",
    "BadRequest",
    "ChatChunk",
    "ChatCompletion",
    "ChatMessage",
    "Conflict",
    "ConnectionFailed",
    "ContractError",
    "DeletedMemory",
    "DeletedPage",
    "Erasure",
    "Forbidden",
    "ForgetResult",
    "HistoryEvent",
    "IngestResult",
    "InvalidId",
    "Memory",
    "MemoryPage",
    "Message",
    "MnemoClient",
    "MnemoError",
    "NotFound",
    "RateLimited",
    "SearchHit",
    "SearchResult",
    "ServerError",
    "SessionState",
    "Skipped",
    "StreamFailed",
    "TurnDebug",
    "Unauthorized",
    "Unavailable",
    "UpstreamFailed",
    "VersionMismatch",
    "is_valid_id",
]
