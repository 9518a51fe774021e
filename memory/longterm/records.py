"""How a Memory is kept as a Chroma record and read back (split from chroma.py, issue 43): its metadata,
the `where` clauses of a user and of search filters, the rows of a page, and `Records`, a batch of ids with
their documents, metadata and vectors (what moves between servers and tiers). Pure.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from memory.embedding.base import Vectors
from memory.models import ArchiveTier, Memory, SearchFilters

log = logging.getLogger("memory.longterm.chroma")  # the name its lines always had


Where = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Records:
    """One user's records exactly as Chroma holds them (what a rebalance copies between servers)."""

    ids: list[str]
    documents: list[str | None]
    metadatas: list[dict[str, Any]]
    embeddings: Vectors
    rows: int  # rows Chroma returned, before rows without this user's metadata were dropped

    def __len__(self) -> int:
        return len(self.ids)

    def only(self, ids: set[str]) -> Records:
        """The records whose id is in `ids` (`rows` unchanged: it counts what Chroma returned)."""
        keep = [r for r, i in enumerate(self.ids) if i in ids]
        if len(keep) == len(self.ids):
            return self
        return Records(
            ids=[self.ids[r] for r in keep],
            documents=[self.documents[r] for r in keep],
            metadatas=[self.metadatas[r] for r in keep],
            embeddings=self.embeddings[keep]
            if len(keep) and len(self.embeddings)  # read without vectors: none to keep
            else np.zeros((0, 0), dtype=np.float32),
            rows=self.rows,
        )

    def embed_texts(self) -> list[str]:
        """What the writer embeds for each record's memory (`Memory.embed_text`), in order."""
        return [
            from_record(i, d, m).embed_text
            for i, d, m in zip(self.ids, self.documents, self.metadatas, strict=True)
        ]

    def with_embeddings(self, embeddings: Vectors) -> Records:
        """The same records with other vectors (another dense model's), one per record."""
        if len(embeddings) != len(self.ids):
            raise ValueError(f"{len(embeddings)} vectors for {len(self.ids)} records")
        return Records(
            ids=self.ids,
            documents=self.documents,
            metadatas=self.metadatas,
            embeddings=np.asarray(embeddings, dtype=np.float32),
            rows=self.rows,
        )


def all_of(conditions: Sequence[Where]) -> Where:
    """Chroma needs an explicit `$and` as soon as there is more than one condition."""
    if not conditions:
        raise ValueError("at least one condition is required")
    if len(conditions) == 1:
        return dict(conditions[0])
    return {"$and": list(conditions)}


def where_for(user_id: str, filters: SearchFilters | None = None) -> Where:
    conditions: list[Where] = [{"user_id": user_id}]
    if filters is not None:
        if filters.session_id is not None:
            conditions.append({"session_id": filters.session_id})
        if filters.exclude_session_id is not None:
            conditions.append({"session_id": {"$ne": filters.exclude_session_id}})
        if filters.topic is not None:
            conditions.append({"topic": filters.topic})
        if filters.since is not None:
            conditions.append({"created_at": {"$gte": filters.since}})
        if filters.until is not None:
            conditions.append({"created_at": {"$lte": filters.until}})
    return all_of(conditions)


def to_metadata(memory: Memory) -> dict[str, Any]:
    """Every key is always written and lists travel as JSON strings: with chromadb 1.5.9 we saw a record
    without an array key come back carrying another record's array value (tests/integration)."""
    return {
        "user_id": memory.user_id,
        "session_id": memory.session_id,
        "source": memory.source,
        "created_at": float(memory.created_at),
        "content_hash": memory.content_hash,
        "importance": float(memory.importance) if memory.importance is not None else -1.0,
        "topic": memory.topic or "",
        "name": memory.name or "",
        "source_message_ids": json.dumps(list(memory.source_message_ids), ensure_ascii=False),
        "tier": memory.tier or "",
        "entities": json.dumps(list(memory.entities), ensure_ascii=False),
        "context": memory.context,
        "facts": json.dumps([list(f) for f in memory.facts], ensure_ascii=False),
        "valid_from": float(memory.valid_since),
        "valid_to": float(memory.valid_to) if memory.valid_to is not None else -1.0,
        "superseded_by": memory.superseded_by or "",
        "pinned": memory.pinned,
    }


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return (value,) if value else ()
    return tuple(str(x) for x in value or ())


def _chroma_server_error(exc: BaseException) -> bool:
    """Chroma answered, with an internal error: worth two quick retries. chromadb 1.5.9 sometimes fails
    a read right after a write to a new collection ("Error creating hnsw segment reader: Nothing found
    on disk", seen once in the test suite); the next attempt succeeds. A server that cannot be reached
    is not retried here: recall degrades at once and the outbox retries writes with backoff."""
    from chromadb.errors import ChromaError

    return isinstance(exc, ChromaError) and exc.code() >= 500


def _own_ids(user_id: str, result: Any) -> list[str]:
    """The ids of a read by id (no `user_id` filter: chromadb 1.5.9 evaluates a filter beside ids once
    per id over the collection, 3.5 s for 220 ids at 25,000 records) that are this user's records."""
    metas = result.get("metadatas") or [{}] * len(result["ids"])
    return [i for i, m in zip(result["ids"], metas, strict=True) if (m or {}).get("user_id") == user_id]


def _owners(ids: list[str]) -> Callable[[Any], Any]:
    return lambda c: c.get(ids=ids, include=["metadatas"])


def _deleter(ids: list[str]) -> Callable[[Any], Any]:
    return lambda c: c.delete(ids=ids)


def _page_reader(where: Where, limit: int, offset: int) -> Callable[[Any], Any]:
    return lambda c: c.get(where=where, include=["metadatas", "documents"], limit=limit, offset=offset)


def _metadata_reader(limit: int, offset: int) -> Callable[[Any], Any]:
    return lambda c: c.get(include=["metadatas"], limit=limit, offset=offset)


def _upserter(memories: Sequence[Memory], embeddings: Vectors) -> Callable[[Any], Any]:
    return lambda c: c.upsert(
        ids=[m.id for m in memories],
        embeddings=embeddings,
        documents=[m.content for m in memories],
        metadatas=[to_metadata(m) for m in memories],
    )


def rows_of(
    user_id: str, ids: Sequence[str], docs: Sequence[Any], metas: Sequence[Any]
) -> list[tuple[int, Memory]]:
    """(row, memory) for the rows that are this user's records. Under load, chromadb 1.5.9 answered a
    `user_id`-filtered query with a record that a concurrent delete had just removed, its metadata
    empty (a 500 in the locust run); such rows are skipped, and so would be any other user's."""
    out: list[tuple[int, Memory]] = []
    for row, (i, d, m) in enumerate(zip(ids, docs, metas, strict=True)):
        meta = dict(m or {})
        if meta.get("user_id") == user_id:
            out.append((row, from_record(i, d, meta)))
        else:
            log.warning("chroma returned a record without this user's metadata; skipped", extra={"id": i})
    return out


def _archive_tier(value: Any) -> ArchiveTier:
    return "warm" if value == "warm" else ("cold" if value == "cold" else "hot")


def from_record(memory_id: str, document: str | None, meta: dict[str, Any]) -> Memory:
    importance = meta.get("importance")
    tier = meta.get("tier")
    return Memory(
        id=memory_id,
        user_id=str(meta["user_id"]),
        content=document or "",
        created_at=float(meta["created_at"]),
        session_id=str(meta["session_id"]),
        source="assistant" if meta.get("source") == "assistant" else "user",
        content_hash=str(meta.get("content_hash", "")),
        importance=float(importance) if importance is not None and importance >= 0 else None,
        topic=meta.get("topic") or None,
        name=meta.get("name") or None,
        source_message_ids=_strings(meta.get("source_message_ids")),
        tier="fact" if tier == "fact" else ("episodic" if tier == "episodic" else None),
        entities=_strings(meta.get("entities")),
        context=str(meta.get("context") or ""),
        facts=_facts(meta.get("facts")),
        valid_from=_valid_from(meta.get("valid_from"), float(meta["created_at"])),
        valid_to=_float_or_none(meta.get("valid_to")),
        superseded_by=str(meta.get("superseded_by") or "") or None,
        archive_tier=_archive_tier(meta.get("archive_tier")),
        pinned=meta.get("pinned") is True,
    )


def _valid_from(value: Any, created_at: float) -> float | None:
    """None when it is the creation time (the default), so records round-trip."""
    since = _float_or_none(value)
    return None if since is None or since == created_at else since


def _float_or_none(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and value >= 0 else None


def _facts(value: Any) -> tuple[tuple[str, str], ...]:
    try:
        raw = json.loads(value) if isinstance(value, str) else (value or [])
    except ValueError:
        return ()
    return tuple((str(f[0]), str(f[1])) for f in raw if isinstance(f, list | tuple) and len(f) == 2)
