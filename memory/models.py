"""Domain types shared by the memory layer. Frozen dataclasses: no I/O, no framework."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Role = Literal["user", "assistant"]
SortOrder = Literal["recent", "importance"]
Tier = Literal["fact", "episodic"]
ArchiveTier = Literal["hot", "warm", "cold"]  # where a memory lives by age (memory/archive)


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message handed to the long-term write pipeline."""

    role: Role
    content: str
    name: str | None = None
    id: str | None = None
    timestamp: float | None = None  # epoch seconds; None means "when it arrived"


@dataclass(frozen=True, slots=True)
class Memory:
    """One long-term memory record as stored in the vector store."""

    id: str
    user_id: str
    content: str
    created_at: float  # epoch seconds
    session_id: str
    source: Role
    content_hash: str
    importance: float | None = None
    topic: str | None = None
    name: str | None = None
    source_message_ids: tuple[str, ...] = ()
    tier: Tier | None = None  # None: written by the naive pipeline
    entities: tuple[str, ...] = ()
    context: str = ""  # the preceding messages, indexed for keyword search (never returned)
    archive_tier: ArchiveTier = "hot"  # hot: the main collections; warm/cold: memory/archive

    @property
    def index_text(self) -> str:
        """What the keyword channel indexes: speaker, preceding context and the memory itself."""
        own = f"{self.name}: {self.content}" if self.name else self.content
        return f"{self.context} {own}".strip()

    @property
    def embed_text(self) -> str:
        return f"{self.name}: {self.content}" if self.name else self.content


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Metadata filters applied inside the vector store query."""

    session_id: str | None = None
    exclude_session_id: str | None = None
    topic: str | None = None
    since: float | None = None
    until: float | None = None


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    memory: Memory
    score: float
    similarity: float


@dataclass(frozen=True, slots=True)
class MemoryPage:
    total: int
    items: list[Memory] = field(default_factory=list)
