"""The bridge channel: one multilingual vector per memory, beside its MiniLM record.

all-MiniLM-L6-v2 (the main channel) is an English model; a multilingual model (USE v3,
`memory/embedding/multilingual.py`) gives each memory a second vector that a question in the other
language lands near. Bridge vectors live in a collection of their own on the user's Chroma server
(`<prefix>-xl-mem-0000`): id = the memory id, no document, metadata
`user_id` and `model` (the model that made the vector; a vector of another model is never read).

`BridgedStore` is the routing store with the channel kept in step: every upsert embeds the memories'
text with the bridge model too (taking the query vector recall published for the same text, as the
main channel does) and stores both; deletes and erasure remove both. A rebalance moves a user's bridge
vectors with their records, copied as stored (`Rebalancer(companions=...)`,
`memory/longterm/rebalance.py`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from memory.embedding.base import Embedder, Vectors
from memory.errors import StoreUnavailable
from memory.longterm.chroma import ChromaLongTermStore
from memory.longterm.placement import Placements
from memory.longterm.routing import RoutingLongTermStore
from memory.longterm.shared_vectors import SharedVectors
from memory.models import Memory

log = logging.getLogger(__name__)

BRIDGE_SUFFIX = "xl"
# Bridge vectors are read by id only (recall ranks them in process), never by Chroma's nearest-neighbour
# search, so their collections get the cheapest HNSW graph Chroma builds (it always builds one).
BRIDGE_HNSW = {"ef_construction": 8, "max_neighbors": 4}
# One bridge collection per server, not one per shard: the writer's round then costs one bridge upsert
# per server instead of one per shard collection (Chroma charges ~6 ms a call), and reads are by id.
BRIDGE_SHARDS = 1
PREPARED_MAX = 4096  # bridge vectors computed ahead of their upsert (`BridgedStore.prepare`)


def bridge_prefix(collection_prefix: str) -> str:
    """The collection prefix of the bridge channel for a store prefix (`mnemo` -> `mnemo-xl`)."""
    return f"{collection_prefix}-{BRIDGE_SUFFIX}"


def _upserter(ids: list[str], vectors: Vectors, metas: list[dict[str, Any]]) -> Callable[[Any], Any]:
    return lambda c: c.upsert(ids=ids, embeddings=vectors, metadatas=metas)


def _distinct(stores: Iterable[ChromaLongTermStore]) -> list[ChromaLongTermStore]:
    """Each store once (during a dense model switch, two server names share a server's bridge store)."""
    return list({id(s): s for s in stores}.values())


class BridgeVectors:
    """Bridge vectors on every configured server, each user's on the server the routing store names."""

    def __init__(self, routing: RoutingLongTermStore, servers: Mapping[str, ChromaLongTermStore], model: str):
        """`servers`: name -> a store opened with `bridge_prefix(prefix)` on that server (same shards)."""
        self._routing = routing
        self._servers = dict(servers)
        self.model = model

    def _on(self, name: str) -> ChromaLongTermStore:
        """The bridge store on server `name`; a placement naming a server not configured here is a 503,
        as the routing store's (`RoutingLongTermStore.server`), not a KeyError."""
        store = self._servers.get(name)
        if store is None:
            raise StoreUnavailable(
                "chroma", f"a placement names Chroma server {name!r}, which is not configured here"
            )
        return store

    @property
    def servers(self) -> Mapping[str, ChromaLongTermStore]:
        return self._servers

    async def put_on(self, server: str, memories: Sequence[Memory], vectors: Vectors) -> None:
        """Store vectors on `server` for memories whose records go there: one upsert per shard
        collection (a Chroma upsert costs its server ~6 ms plus ~1 ms per record)."""
        store = self._on(server)
        by_collection: dict[str, list[int]] = {}
        for row, m in enumerate(memories):
            by_collection.setdefault(store.collection_name(m.user_id), []).append(row)
        for rows in by_collection.values():
            ids = [memories[r].id for r in rows]
            metas = [{"user_id": memories[r].user_id, "model": self.model} for r in rows]
            batch = np.asarray(vectors[rows], dtype=np.float32)
            await store.on_collection(memories[rows[0]].user_id, _upserter(ids, batch, metas))

    async def get(self, user_id: str, ids: Sequence[str] | None = None) -> dict[str, Vectors]:
        """This user's bridge vectors of the current model (of `ids`, or all), from the user's server."""
        id_list = list(ids) if ids is not None else None
        if id_list == []:
            return {}
        server = await self._routing.server_of(user_id)
        if id_list is None:
            where = {"$and": [{"user_id": user_id}, {"model": self.model}]}
            every: Any = await self._on(server).on_collection(
                user_id, lambda c: c.get(where=where, include=["embeddings"])
            )
            return vectors_by_id(every)
        # by id without the filter, the user's rows of this model kept here (a filter beside ids costs
        # chromadb 1.5.9 a scan per id: memory/longterm/records.py `_own_ids`)
        result: Any = await self._on(server).on_collection(
            user_id, lambda c: c.get(ids=id_list, include=["embeddings", "metadatas"])
        )
        found = vectors_by_id(result)
        return {i: found[i] for i in self._own(user_id, result) if i in found}

    async def held(self, user_id: str, ids: Sequence[str]) -> set[str]:
        """Which of `ids` have a bridge vector of the current model (no vectors read)."""
        if not ids:
            return set()
        server = await self._routing.server_of(user_id)
        id_list = list(ids)
        result: Any = await self._on(server).on_collection(
            user_id, lambda c: c.get(ids=id_list, include=["metadatas"])
        )
        return set(self._own(user_id, result))

    def _own(self, user_id: str, result: Any) -> list[str]:
        """The ids of a read by id that hold this user's vector of the current model."""
        metas = result.get("metadatas") or [{}] * len(result["ids"])
        return [
            i
            for i, m in zip(result["ids"], metas, strict=True)
            if (m or {}).get("user_id") == user_id and (m or {}).get("model") == self.model
        ]

    async def ids(self, user_id: str) -> set[str]:
        """Ids holding a vector of the current model on the user's server (reembed's progress)."""
        server = await self._routing.server_of(user_id, fresh=True)
        where = {"$and": [{"user_id": user_id}, {"model": self.model}]}
        result: Any = await self._on(server).on_collection(user_id, lambda c: c.get(where=where, include=[]))
        return set(result["ids"])

    async def delete(self, user_id: str, ids: Sequence[str], servers: Collection[str]) -> None:
        if not ids:
            return
        for store in _distinct(self._on(name) for name in servers):
            await store.delete(user_id, ids)  # a page of ids a request

    async def delete_user(self, user_id: str) -> int:
        """Every bridge vector of this user, of any model, on every server."""
        stores = _distinct(self._servers.values())
        return sum(await asyncio.gather(*(s.delete_user(user_id) for s in stores)))

    async def drop_collections(self) -> int:
        return sum(await asyncio.gather(*(s.drop_collections() for s in _distinct(self._servers.values()))))


class BridgedStore(RoutingLongTermStore):
    """The routing store with the bridge channel written, deleted and erased with every record."""

    def __init__(
        self,
        servers: Mapping[str, ChromaLongTermStore],
        placements: Placements,
        *,
        bridge_servers: Mapping[str, ChromaLongTermStore],
        embedder: Embedder,
        model: str,
        shared: SharedVectors | None = None,
        draining: Collection[str] = (),
        dense_model: str | None = None,
    ) -> None:
        """`embedder`: the bridge model (its write view); `shared`: where recall publishes its bridge
        query vectors, so a chat turn's text is embedded once per channel, not twice; `bridge_servers`:
        keyed as `servers` (a dense model switch: both models' stores of a server share one)."""
        super().__init__(servers, placements, draining=draining, dense_model=dense_model)
        self.bridge = BridgeVectors(self, bridge_servers, model)
        self._bridge_embedder = embedder
        self._bridge_shared = shared
        # vectors `prepare` computed for the upsert that follows it: (user id, text) -> vector
        self._prepared: dict[tuple[str, str], Vectors] = {}

    async def prepare(self, memories: Sequence[Memory]) -> None:
        """Embed the memories' bridge text now, for the upsert that follows: the writer calls this
        while the main model embeds the same memories, so the two models run side by side (one
        thread each) instead of one after the other. What no upsert takes (a write that failed in
        between) is dropped once PREPARED_MAX vectors wait."""
        texts = list(dict.fromkeys((m.user_id, m.embed_text) for m in memories))
        texts = [t for t in texts if t not in self._prepared]
        if not texts:
            return
        vectors = await self._bridge_embedder.embed([text for _, text in texts])
        for key, vector in zip(texts, vectors, strict=True):
            self._prepared[key] = vector
        while len(self._prepared) > PREPARED_MAX:
            del self._prepared[next(iter(self._prepared))]

    @property
    def bridge_embedder(self) -> Embedder:
        return self._bridge_embedder

    async def bridge_vectors(self, memories: Sequence[Memory]) -> Vectors:
        """Bridge vectors of the memories' text (name-prefixed, as the main channel embeds it)."""
        # the text as the main channel embeds it; with its context instead, cross-lingual recall fell
        # (docs/decisions.md, how the bridge is fused)
        texts = [m.embed_text for m in memories]
        dimension = self._bridge_embedder.dimension
        out = np.empty((len(texts), dimension), dtype=np.float32)
        known: dict[int, Vectors] = {}
        computed: list[int] = []  # rows embedded by this process (prepared ahead, or now)
        for row, m in enumerate(memories):
            prepared = self._prepared.pop((m.user_id, texts[row]), None)
            if prepared is not None:
                known[row] = prepared
                computed.append(row)
        if self._bridge_shared is not None and len(known) < len(texts):
            by_user: dict[str, list[int]] = {}
            for row, m in enumerate(memories):
                if row not in known:
                    by_user.setdefault(m.user_id, []).append(row)
            shared = self._bridge_shared
            founds = await asyncio.gather(
                *(shared.fetch(u, [texts[r] for r in rows], dimension) for u, rows in by_user.items())
            )
            for rows, found in zip(by_user.values(), founds, strict=True):
                known.update({rows[j]: v for j, v in found.items()})
        for row, vector in known.items():
            out[row] = vector
        missing = [row for row in range(len(texts)) if row not in known]
        if missing:
            out[missing] = await self._bridge_embedder.embed([texts[r] for r in missing])
            computed += missing
        if computed and self._bridge_shared is not None:
            # the next search of these users ranks them: from Redis, not a Chroma read
            by_owner: dict[str, list[int]] = {}
            for row in computed:
                by_owner.setdefault(memories[row].user_id, []).append(row)
            shared = self._bridge_shared
            await asyncio.gather(
                *(shared.publish_many(u, [texts[r] for r in rows], out[rows]) for u, rows in by_owner.items())
            )
        return out

    async def upsert(
        self, memories: Sequence[Memory], embeddings: Vectors, *, models: Mapping[str, str] | None = None
    ) -> None:
        """Both channels, each user's on the user's server (placed as the routing store places them).
        The bridge model runs while the main upserts are in Chroma's hands. A bridge failure fails the
        write, which the outbox retries (an upsert is idempotent). `models`: as the routing store's."""
        if not memories:
            return
        if len(memories) != len(embeddings):
            raise ValueError("one embedding per memory is required")
        users = sorted({m.user_id for m in memories})
        placed = await self.placements.claim({u: self.owner(u) for u in users})
        for user_id in users if models is not None else ():
            self.server(placed[user_id]).check_model(user_id, (models or {}).get(user_id))
        rows: dict[str, list[int]] = {}
        for row, m in enumerate(memories):
            rows.setdefault(placed[m.user_id], []).append(row)

        async def bridge_side() -> None:
            vectors = await self.bridge_vectors(memories)
            await asyncio.gather(
                *(
                    self.bridge.put_on(name, [memories[r] for r in chosen], vectors[chosen])
                    for name, chosen in rows.items()
                )
            )

        await asyncio.gather(
            bridge_side(),
            *(
                self.server(name).upsert([memories[r] for r in chosen], embeddings[chosen])
                for name, chosen in rows.items()
            ),
        )

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """The records, then their bridge vectors on every server: a rebalance moves records, not bridge
        vectors, so an earlier server of this user may still hold some."""
        await super().delete(user_id, ids)
        await self.bridge.delete(user_id, ids, list(self.bridge.servers))

    async def delete_user(self, user_id: str) -> int:
        records = await super().delete_user(user_id)
        await self.bridge.delete_user(user_id)
        return records

    async def drop_collections(self) -> int:
        return await super().drop_collections() + await self.bridge.drop_collections()


def vectors_by_id(result: Any) -> dict[str, Vectors]:
    """A Chroma `get` answer as {id: vector}. Under concurrent upserts Chroma has answered ids without
    their embeddings (seen in CI: 20 concurrent turns of one session, 1 id and an empty embeddings
    array); such an answer pairs nothing, and the caller ranks without the bridge until it asks again."""
    ids = list(result.get("ids") or [])
    raw = result.get("embeddings")
    if raw is None or not ids:
        return {}
    matrix = np.asarray(raw, dtype=np.float32)
    if matrix.ndim != 2 or len(matrix) != len(ids):
        log.warning(
            "bridge vectors answered without their embeddings", extra={"ids": len(ids), "rows": len(matrix)}
        )
        return {}
    return {i: matrix[row] for row, i in enumerate(ids)}
