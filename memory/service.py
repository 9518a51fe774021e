"""The long-term memory use cases: ingest messages, search, list, delete.

This is the foundation pipeline: every message becomes one memory and search ranks by cosine
similarity alone. Later stages (write policy, hybrid recall, reranking) plug in behind the same calls.
"""

from __future__ import annotations

import hashlib
import time
import unicodedata
import uuid
from collections.abc import Callable, Sequence

from memory.embeddings import Embedder
from memory.errors import MemoryNotFound
from memory.long_term_store import LongTermStore
from memory.models import Memory, MemoryPage, Message, ScoredMemory, SearchFilters, SortOrder
from memory.outbox import OutboxEntry

Clock = Callable[[], float]


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


class MemoryService:
    def __init__(self, store: LongTermStore, embedder: Embedder, *, clock: Clock = time.time) -> None:
        self._store = store
        self._embedder = embedder
        self._clock = clock

    async def ingest(self, user_id: str, session_id: str, messages: Sequence[Message]) -> list[Memory]:
        """Store the messages; returns once they are searchable."""
        now = self._clock()
        memories = [
            Memory(
                id=memory_id_for(user_id, session_id, m),
                user_id=user_id,
                content=m.content.strip(),
                created_at=m.timestamp if m.timestamp is not None else now,
                session_id=session_id,
                source=m.role,
                content_hash=content_hash(m.content),
                name=m.name,
                source_message_ids=(m.id,) if m.id is not None else (),
            )
            for m in messages
        ]
        if not memories:
            return []
        vectors = await self._embedder.embed([m.content for m in memories])
        await self._store.upsert(memories, vectors)
        return memories

    async def ingest_entry(self, entry: OutboxEntry) -> None:
        """Outbox handler: idempotent, because chat turns carry message ids."""
        await self.ingest(entry.user_id, entry.session_id, entry.messages)

    async def search(
        self,
        user_id: str,
        query: str,
        *,
        top_k: int = 5,
        filters: SearchFilters | None = None,
        as_of: float | None = None,
    ) -> list[ScoredMemory]:
        """Best `top_k` memories for `query`. `as_of` is "now" for time-aware ranking (unused by the
        similarity-only ranking of this stage, accepted so the contract is stable)."""
        del as_of
        vectors = await self._embedder.embed([query])
        hits = await self._store.query(
            user_id, vectors[0].tolist(), n_results=top_k, filters=filters or SearchFilters()
        )
        ranked = [ScoredMemory(memory=m, score=sim, similarity=sim) for m, sim in hits]
        ranked.sort(key=lambda s: s.score, reverse=True)
        return ranked[:top_k]

    async def list(self, user_id: str, *, limit: int, offset: int, sort: SortOrder) -> MemoryPage:
        headers = await self._store.get(user_id, include_content=False)
        if sort == "importance":
            headers.sort(key=lambda m: (m.importance or 0.0, m.created_at), reverse=True)
        else:
            headers.sort(key=lambda m: (m.created_at, m.id), reverse=True)
        page_ids = [m.id for m in headers[offset : offset + limit]]
        full = {m.id: m for m in await self._store.get(user_id, ids=page_ids)}
        return MemoryPage(total=len(headers), items=[full[i] for i in page_ids if i in full])

    async def delete(self, user_id: str, memory_id: str) -> None:
        found = await self._store.get(user_id, ids=[memory_id], include_content=False)
        if not found:
            raise MemoryNotFound(memory_id)
        await self._store.delete(user_id, [memory_id])
