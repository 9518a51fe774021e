"""What retrieval, ingestion and erasure need from a vector store: the protocols every long-term store
implements (memory/longterm/chroma.py on one Chroma server, routing.py over several, deferred_deletes.py
hiding what a purge has not removed yet)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Protocol

from memory.embedding.base import Vectors
from memory.models import Memory, SearchFilters

__all__ = ["ErasableStore", "LongTermStore"]


class LongTermStore(Protocol):
    """What retrieval and ingestion need from a vector store."""

    async def upsert(
        self, memories: Sequence[Memory], embeddings: Vectors, *, models: Mapping[str, str] | None = None
    ) -> None:
        """Store (or replace) memories, of one or several users, with their embeddings. `models`: user ->
        the dense model that embedded their vectors; a store of another model refuses them
        (`memory/longterm/dense_models.py`)."""
        ...

    async def query(
        self,
        user_id: str,
        embedding: Sequence[float],
        *,
        n_results: int,
        filters: SearchFilters,
        model: str | None = None,
        user_rows: int | None = None,
    ) -> list[tuple[Memory, float]]:
        """`user_rows`: the user's memories as the caller counts them (a large user: no metadata filter)."""
        ...

    async def query_with_vectors(
        self,
        user_id: str,
        embedding: Sequence[float],
        *,
        n_results: int,
        filters: SearchFilters,
        model: str | None = None,
        user_rows: int | None = None,
    ) -> tuple[list[tuple[Memory, float]], Vectors]:
        """`query`, with each hit's stored vector in the same call (row i is hit i's)."""
        ...

    async def get(
        self, user_id: str, *, ids: Sequence[str] | None = None, include_content: bool = True
    ) -> list[Memory]: ...

    async def find_by_hashes(self, user_id: str, hashes: Sequence[str]) -> list[Memory]: ...

    def pages(self, user_id: str, page_size: int = 500) -> AsyncIterator[list[Memory]]: ...

    async def get_with_vectors(
        self, user_id: str, ids: Sequence[str] | None = None
    ) -> tuple[list[Memory], Vectors]: ...

    async def embeddings(self, user_id: str, ids: Sequence[str]) -> dict[str, list[float]]: ...

    async def nearest(
        self, user_id: str, embeddings: Vectors, *, n_results: int = 1, model: str | None = None
    ) -> list[list[tuple[Memory, float]]]: ...

    async def delete(self, user_id: str, ids: Sequence[str]) -> None: ...

    async def count(self, user_id: str) -> int: ...

    async def ping(self) -> None: ...


class ErasableStore(LongTermStore, Protocol):
    """A store erasure can empty of one user."""

    async def delete_user(self, user_id: str) -> int: ...
