"""Long-term memory records on a Chroma server, sharded by a stable hash of the user id.

Every query is scoped to one user: their shard collection plus a `user_id` filter (wide_query.py).
We always pass our own embeddings; collections are created with `embedding_function=None`, so Chroma
never tries to download or run a model of its own. With several servers, `memory/longterm/routing.py`
puts one `ChromaLongTermStore` per server behind the same protocol; the raw-record methods at the end
(`ids_of`, `records`, `put_records`, `user_counts`) are what a rebalance copies with.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, TypeVar

import anyio.to_thread
import numpy as np
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from memory.embedding.base import Vectors
from memory.errors import StoreUnavailable
from memory.longterm.dense_models import DenseModelChanged, same_model
from memory.longterm.records import (
    Records,
    Where,
    _chroma_server_error,
    _deleter,
    _metadata_reader,
    _own_ids,
    _owners,
    _page_reader,
    _upserter,
    all_of,
    from_record,
    rows_of,
    to_metadata,
    where_for,
)
from memory.longterm.store import ErasableStore, LongTermStore
from memory.longterm.wide_query import COUNT_TTL_SECONDS, own_hits, wide_size
from memory.models import Memory, SearchFilters

T = TypeVar("T")

DELETE_PAGE = 200  # ids per delete request
# records a read of a user's whole set (or of many ids) takes per call: one call for a 10M-token user
# (28,000 memories of long turns, each with its context: ~300 MB) outlasted CHROMA_TIMEOUT_SECONDS, so
# no worker could build that user's index at all (issue 45)
READ_PAGE = 1_000
_PREFIX_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,40}$")


def shard_of(user_id: str, shards: int) -> int:
    """Stable across processes and releases (unlike `hash()`): blake2b of the UTF-8 user id."""
    digest = hashlib.blake2b(user_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


class ChromaLongTermStore:
    """`LongTermStore` on a Chroma server (sync `HttpClient`, every call in a worker thread).

    `client_factory` is called lazily and retried on the next call if it fails, so the service can
    start (and report not-ready) while Chroma is down, and recovers without a restart.
    """

    def __init__(
        self,
        client_factory: Callable[[], Any],
        *,
        shards: int,
        collection_prefix: str = "mnemo",
        hnsw: dict[str, int] | None = None,
        dense_model: str = "",
    ) -> None:
        """`hnsw`: HNSW parameters of the collections this store creates, beside `space: cosine`
        (Chroma's defaults when None; the bridge channel, read only by id, asks for a cheap index).
        `dense_model`: the tag of the model whose vectors these collections hold (`memory/longterm/
        dense_models.py`; empty: not said, as for the bridge's collections)."""
        if shards < 1:
            raise ValueError("shards must be >= 1")
        if not _PREFIX_RE.match(collection_prefix):
            raise ValueError(f"invalid collection prefix {collection_prefix!r}")
        self._client_factory = client_factory
        self._hnsw: dict[str, Any] = {"space": "cosine", **(hnsw or {})}
        self._client: Any = None
        self._shards = shards
        self._prefix = collection_prefix
        self.dense_model = dense_model
        self._collections: dict[str, Any] = {}
        self._counts: dict[str, tuple[float, int]] = {}  # collection -> (when counted, records)
        self._lock = threading.Lock()

    def check_model(self, user_id: str, model: str | None) -> None:
        """Vectors of `model` must not meet this store's of another (None: the caller does not say)."""
        if model is not None and self.dense_model and not same_model(model, self.dense_model):
            raise DenseModelChanged(user_id, model, self.dense_model)

    @property
    def shards(self) -> int:
        return self._shards

    def collection_name(self, user_id: str) -> str:
        return f"{self._prefix}-mem-{shard_of(user_id, self._shards):04d}"

    def collection_names(self) -> list[str]:
        return [f"{self._prefix}-mem-{i:04d}" for i in range(self._shards)]

    # -- sync internals (run in a worker thread) -------------------------------------------------

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = self._client_factory()
            return self._client

    def _call(self, user_id: str, op: Callable[[Any], T]) -> T:
        return self._call_on(self.collection_name(user_id), op)

    def _named(self, name: str) -> Any:
        cached = self._collections.get(name)
        if cached is not None:
            return cached
        collection = self._get_client().get_or_create_collection(
            name=name,
            embedding_function=None,
            configuration={"hnsw": dict(self._hnsw)},
        )
        self._collections[name] = collection
        return collection

    def _call_on(self, name: str, op: Callable[[Any], T]) -> T:
        from chromadb.errors import ChromaError, NotFoundError

        try:
            for attempt in Retrying(
                retry=retry_if_exception(_chroma_server_error),
                stop=stop_after_attempt(3),
                wait=wait_exponential_jitter(multiplier=0.05, max=0.3, jitter=0.05),
                reraise=True,
            ):
                with attempt:
                    try:
                        return op(self._named(name))
                    except NotFoundError:
                        # The collection was deleted behind our back (e.g. server data wiped): recreate once.
                        self._collections.pop(name, None)
                        return op(self._named(name))
            raise AssertionError("unreachable: the last attempt returns or raises")
        except ChromaError as exc:
            if exc.code() >= 500:
                raise StoreUnavailable("chroma", f"{type(exc).__name__}: {exc}") from exc
            raise
        except (ValueError, TypeError):
            raise
        except Exception as exc:  # transport errors (connection refused, timeouts)
            raise StoreUnavailable("chroma", f"{type(exc).__name__}: {exc}") from exc

    async def _run(self, user_id: str, op: Callable[[Any], T]) -> T:
        return await anyio.to_thread.run_sync(self._call, user_id, op)

    async def on_collection(self, user_id: str, op: Callable[[Any], T]) -> T:
        """`op` on this user's shard collection, in a worker thread, with the store's retries and error
        mapping: for channels kept beside the records in collections of their own (the bridge vectors)."""
        return await self._run(user_id, op)

    # -- LongTermStore -----------------------------------------------------------------------------

    async def upsert(
        self, memories: Sequence[Memory], embeddings: Vectors, *, models: Mapping[str, str] | None = None
    ) -> None:
        """Memories of one or several users: one call per shard collection they fall in."""
        if not memories:
            return
        for user_id, model in (models or {}).items():
            self.check_model(user_id, model)
        if len(memories) != len(embeddings):
            raise ValueError("one embedding per memory is required")
        by_collection: dict[str, list[int]] = {}
        for row, m in enumerate(memories):
            by_collection.setdefault(self.collection_name(m.user_id), []).append(row)
        for rows in by_collection.values():
            await self._run(
                memories[rows[0]].user_id, _upserter([memories[r] for r in rows], embeddings[rows])
            )

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
        """Nearest memories of one user as `(memory, cosine similarity)`, most similar first."""
        hits, _ = await self._nearest(user_id, embedding, n_results, filters, model, user_rows, vectors=False)
        return hits

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
        """`query`, each hit's stored vector read in the same call (a provisional index: memory/recall/
        cold_start.py)."""
        return await self._nearest(user_id, embedding, n_results, filters, model, user_rows, vectors=True)

    async def _nearest(
        self,
        user_id: str,
        embedding: Sequence[float],
        n_results: int,
        filters: SearchFilters,
        model: str | None,
        user_rows: int | None,
        *,
        vectors: bool,
    ) -> tuple[list[tuple[Memory, float]], Vectors]:
        self.check_model(user_id, model)
        where = where_for(user_id, filters)
        if filters.ids is not None and not filters.ids:
            return [], np.zeros((0, 0), dtype=np.float32)  # the filter selects no memory (no tag matched)
        only = sorted(filters.ids) if filters.ids is not None else None
        vector = [list(map(float, embedding))]
        include = ["documents", "metadatas", "distances", *(["embeddings"] if vectors else [])]
        if user_rows and only is None and where == where_for(user_id):
            wide = await self._query_wide(user_id, vector, n_results, user_rows, include)
            if wide is not None:
                return wide
        result = await self._run(
            user_id,
            lambda c: c.query(
                query_embeddings=vector, n_results=n_results, where=where, ids=only, include=include
            ),
        )
        return own_hits(user_id, result)

    async def _query_wide(
        self, user_id: str, vector: list[list[float]], n_results: int, user_rows: int, include: list[str]
    ) -> tuple[list[tuple[Memory, float]], Vectors] | None:
        """The user's nearest without the `user_id` filter, when they hold most of their collection
        (memory/longterm/wide_query.py); None when the filtered query must answer."""
        name = self.collection_name(user_id)
        counted = self._counts.get(name)
        if counted is None or time.monotonic() - counted[0] > COUNT_TTL_SECONDS:
            counted = (time.monotonic(), int(await self._run(user_id, lambda c: c.count())))
            self._counts[name] = counted
        k = wide_size(n_results, user_rows, counted[1])
        if k is None:
            return None
        result = await self._run(
            user_id, lambda c: c.query(query_embeddings=vector, n_results=k, include=include)
        )
        hits, rows = own_hits(user_id, result, filtered=False)
        if len(hits) >= n_results or k >= counted[1]:
            return hits[:n_results], rows[:n_results]
        return None

    async def get(
        self, user_id: str, *, ids: Sequence[str] | None = None, include_content: bool = True
    ) -> list[Memory]:
        """The user's memories (or those of `ids` that exist), read as `get_with_vectors` reads them: in
        pages of `READ_PAGE` (the list of a 10M-token user, 58,000 records, in one call outlasted
        Chroma's read timeout: a 503 for every list of that user)."""
        include = ["metadatas", "documents"] if include_content else ["metadatas"]
        memories, _ = await self._read(user_id, ids, include)
        return memories

    async def pages(self, user_id: str, page_size: int = 500) -> AsyncIterator[list[Memory]]:
        """Every memory of the user, `page_size` at a time (export: never the whole user at once)."""
        offset = 0
        while True:
            memories, rows = await self.page(user_id, limit=page_size, offset=offset)
            if rows:
                yield memories
            if rows < page_size:
                return
            offset += page_size

    async def page(self, user_id: str, *, limit: int, offset: int) -> tuple[list[Memory], int]:
        """One page of the user's memories, and how many rows Chroma returned for it."""
        result = await self._run(user_id, _page_reader(where_for(user_id), limit, offset))
        ids = result["ids"]
        docs = result.get("documents") or [None] * len(ids)
        metas = result.get("metadatas") or [{}] * len(ids)
        return [m for _, m in rows_of(user_id, ids, docs, metas)], len(ids)

    async def get_with_vectors(
        self, user_id: str, ids: Sequence[str] | None = None
    ) -> tuple[list[Memory], Vectors]:
        """Every memory of the user (or those of `ids` that exist) with its stored vector, to build or
        update in-process indexes. What changed after the caller's version is the change log's to apply."""
        return await self._read(user_id, ids, ["metadatas", "documents", "embeddings"])

    async def _read(
        self, user_id: str, ids: Sequence[str] | None, include: list[str]
    ) -> tuple[list[Memory], Vectors]:
        """`READ_PAGE` records a call. The whole set is read in pages by offset; a delete between two
        pages shifts the records after it, so one may pass unread: the user's ids are listed after the
        last page (one call without documents or vectors) and any not read are read then."""
        where = where_for(user_id)
        memories: list[Memory] = []
        blocks: list[np.ndarray] = []
        seen: set[str] = set()

        def take(result: Any) -> int:
            ids_out = result["ids"]
            docs = result.get("documents") or [None] * len(ids_out)
            metas = result.get("metadatas") or [{}] * len(ids_out)
            raw = result.get("embeddings")
            vectors = np.asarray(raw if raw is not None and len(raw) else np.zeros((0, 0)), dtype=np.float32)
            rows = [(row, m) for row, m in rows_of(user_id, ids_out, docs, metas) if m.id not in seen]
            seen.update(m.id for _, m in rows)
            memories.extend(m for _, m in rows)
            if len(vectors):
                blocks.append(vectors[[row for row, _ in rows]] if len(rows) < len(ids_out) else vectors)
            return len(ids_out)

        def read(**page: Any) -> Callable[[Any], Any]:
            if "ids" in page:  # by id: the user's rows kept by `take` (see `embeddings`)
                return lambda c: c.get(include=include, **page)
            return lambda c: c.get(where=where, include=include, **page)

        if ids is None:
            offset = 0
            while take(await self._run(user_id, read(limit=READ_PAGE, offset=offset))) == READ_PAGE:
                offset += READ_PAGE
            if offset:  # several pages: what a delete between two of them shifted past the reader
                ids = [i for i in await self.ids_of(user_id) if i not in seen]
        id_list = list(ids or ())
        for start in range(0, len(id_list), READ_PAGE):
            take(await self._run(user_id, read(ids=id_list[start : start + READ_PAGE])))
        vectors = np.concatenate(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
        return memories, vectors

    async def find_by_hashes(self, user_id: str, hashes: Sequence[str]) -> list[Memory]:
        """Memories of this user whose content hash is one of `hashes` (exact-duplicate check)."""
        if not hashes:
            return []
        where = all_of([{"user_id": user_id}, {"content_hash": {"$in": sorted(set(hashes))}}])
        result = await self._run(user_id, lambda c: c.get(where=where, include=["metadatas", "documents"]))
        docs = result.get("documents") or [None] * len(result["ids"])
        metas = result.get("metadatas") or [{}] * len(result["ids"])
        return [m for _, m in rows_of(user_id, result["ids"], docs, metas)]

    async def embeddings(self, user_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        if not ids:
            return {}
        # by id without the `user_id` filter, the user's rows kept here: chromadb 1.5.9 evaluates a
        # filter beside ids once per id over the collection (220 ids of 25,000 records: 3.5 s, 0.15 s
        # without it, `bench/chroma_where.py`)
        include = ["embeddings", "metadatas"]
        result = await self._run(user_id, lambda c: c.get(ids=list(ids), include=include))
        vectors, mine = result.get("embeddings"), set(_own_ids(user_id, result))
        if vectors is None:
            return {}
        return {i: [float(x) for x in v] for i, v in zip(result["ids"], vectors, strict=True) if i in mine}

    async def nearest(
        self, user_id: str, embeddings: Vectors, *, n_results: int = 1, model: str | None = None
    ) -> list[list[tuple[Memory, float]]]:
        """For each vector, this user's nearest memories as (memory, cosine similarity)."""
        self.check_model(user_id, model)
        if len(embeddings) == 0:
            return []
        where = where_for(user_id)
        result = await self._run(
            user_id,
            lambda c: c.query(
                query_embeddings=[[float(x) for x in v] for v in embeddings],
                n_results=n_results,
                where=where,
                include=["documents", "metadatas", "distances"],
            ),
        )
        out: list[list[tuple[Memory, float]]] = []
        for ids, docs, metas, dists in zip(
            result["ids"], result["documents"], result["metadatas"], result["distances"], strict=True
        ):
            out.append([(m, 1.0 - float(dists[row])) for row, m in rows_of(user_id, ids, docs, metas)])
        return out

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """These ids of this user, `DELETE_PAGE` a request: one request of a few thousand ids outlasted
        the client's timeout on a loaded server (bench/served_models.py --dense-switch-only: the source
        copy of a moved 2,000-memory user), each page gets the whole timeout."""
        id_list = list(ids)
        for start in range(0, len(id_list), DELETE_PAGE):
            page = id_list[start : start + DELETE_PAGE]
            # read by id, then delete only the user's: a filter beside ids costs a scan per id (`embeddings`)
            mine = _own_ids(user_id, await self._run(user_id, _owners(page)))
            if mine:
                await self._run(user_id, _deleter(mine))

    async def delete_user(self, user_id: str) -> int:
        """Delete every record of this user (only theirs: the shard collection is shared), a page of
        ids a request (`delete`)."""
        ids = await self.ids_of(user_id)
        await self.delete(user_id, ids)
        return len(ids)

    async def count(self, user_id: str) -> int:
        return len(await self.ids_of(user_id))

    # -- raw records, for moving users between servers ---------------------------------------------

    async def ids_before(self, user_id: str, before: float, *, limit: int) -> list[str]:
        """Up to `limit` ids of this user's records created before `before` (what an archive move takes),
        pinned ones left out (read from the metadata: records written before pinning carry no key, and a
        `$ne` filter would leave those out too)."""
        where = all_of([{"user_id": user_id}, {"created_at": {"$lt": float(before)}}])
        result = await self._run(user_id, lambda c: c.get(where=where, include=["metadatas"]))
        metas = result.get("metadatas") or [{} for _ in result["ids"]]
        ids = [
            i for i, meta in zip(result["ids"], metas, strict=True) if (meta or {}).get("pinned") is not True
        ]
        return ids[:limit]

    async def ids_of(self, user_id: str) -> list[str]:
        """Every record id this user has here."""
        where = where_for(user_id)
        result = await self._run(user_id, lambda c: c.get(where=where, include=[]))
        return list(result["ids"])

    async def records(
        self,
        user_id: str,
        *,
        limit: int | None = None,
        offset: int = 0,
        ids: Sequence[str] | None = None,
        vectors: bool = True,
    ) -> Records:
        """A page of this user's records with documents, metadata and vectors, as stored (or, with
        `ids`, those of them that exist). `vectors` False: without them (a copy that embeds the texts
        again, a comparison of texts), a fraction of the bytes."""
        id_list = list(ids) if ids is not None else None
        where = where_for(user_id) if id_list is None else None  # by id: the user's kept below
        result = await self._run(
            user_id,
            lambda c: c.get(
                ids=id_list,
                where=where,
                include=["documents", "metadatas", "embeddings"] if vectors else ["documents", "metadatas"],
                limit=limit,
                offset=offset or None,
            ),
        )
        raw_ids = list(result["ids"])
        docs = result.get("documents") or [None] * len(raw_ids)
        metas = result.get("metadatas") or [{}] * len(raw_ids)
        raw = result.get("embeddings")
        matrix = np.asarray(raw if raw is not None and len(raw) else np.zeros((0, 0)), dtype=np.float32)
        keep = [row for row, m in enumerate(metas) if dict(m or {}).get("user_id") == user_id]
        return Records(
            ids=[raw_ids[r] for r in keep],
            documents=[docs[r] for r in keep],
            metadatas=[dict(metas[r]) for r in keep],
            embeddings=matrix[keep] if len(matrix) else np.zeros((0, 0), dtype=np.float32),
            rows=len(raw_ids),
        )

    async def put_records(self, user_id: str, records: Records) -> None:
        """Store records read by `records` (from this server or another) unchanged."""
        if not records.ids:
            return
        if any(m.get("user_id") != user_id for m in records.metadatas):
            raise ValueError("every record must be this user's")
        await self._run(
            user_id,
            lambda c: c.upsert(
                ids=list(records.ids),
                embeddings=records.embeddings,
                # records without documents (the bridge channel's vectors) are stored without them
                documents=list(records.documents) if any(d is not None for d in records.documents) else None,
                metadatas=list(records.metadatas),
            ),
        )

    async def user_counts(self, page_size: int = 1000) -> dict[str, int]:
        """Records per user id over every collection of this store that exists on the server (a page
        of metadata at a time). A rebalance finds the users a server holds with it."""

        def _existing() -> list[str]:
            from chromadb.errors import NotFoundError

            client = self._get_client()
            found = []
            for name in self.collection_names():
                try:
                    self._collections[name] = client.get_collection(name, embedding_function=None)
                except NotFoundError:
                    continue
                found.append(name)
            return found

        try:
            names = await anyio.to_thread.run_sync(_existing)
        except Exception as exc:
            raise StoreUnavailable("chroma", f"{type(exc).__name__}: {exc}") from exc
        counts: dict[str, int] = {}
        for name in names:
            offset = 0
            while True:
                result = await anyio.to_thread.run_sync(
                    self._call_on, name, _metadata_reader(page_size, offset)
                )
                for meta in result.get("metadatas") or []:
                    user = (meta or {}).get("user_id")
                    if isinstance(user, str):
                        counts[user] = counts.get(user, 0) + 1
                if len(result["ids"]) < page_size:
                    break
                offset += page_size
        return counts

    async def ping(self) -> None:
        def _heartbeat() -> None:
            try:
                self._get_client().heartbeat()
            except Exception as exc:
                raise StoreUnavailable("chroma", f"{type(exc).__name__}: {exc}") from exc

        await anyio.to_thread.run_sync(_heartbeat)

    async def drop_collections(self) -> int:
        """Delete every collection under this store's prefix (tests and benchmarks only)."""

        def _drop() -> int:
            client = self._get_client()
            names = set(self.collection_names())
            dropped = 0
            for col in client.list_collections():
                name = col if isinstance(col, str) else col.name
                if name in names:
                    client.delete_collection(name)
                    dropped += 1
            self._collections.clear()
            return dropped

        return await anyio.to_thread.run_sync(_drop)


# the record codec moved to records.py (issue 43); its names stay importable from here
__all__ = [
    "ChromaLongTermStore",
    "ErasableStore",
    "LongTermStore",
    "Records",
    "Where",
    "all_of",
    "from_record",
    "rows_of",
    "shard_of",
    "to_metadata",
    "where_for",
]
