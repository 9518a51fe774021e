"""The `LongTermStore` over several Chroma servers: each user on exactly one, one `ChromaLongTermStore`
per server behind it, so retrieval, the write pipeline, erasure, export and forget work unchanged.

Where a user is: the placement recorded in Redis (`memory/longterm/placement.py`), else rendezvous
hashing over the servers that take new users (every configured server but the draining ones).

What each call reads, and why it is never routed by a stale placement after a move:

- **Writes and deletes** hold the user's long-term write lock (the write pipeline, `MemoryService`'s
  deletes, erasure), as does a rebalance from its copy to its switch. They read the placement from
  Redis every time, under that lock: they see the switch of any move that finished before they got it.
  A write records the placement of a user who has none (first write: rendezvous).
- **Reads** may use a placement cached in this process, but only while it is provably current: it is
  cached with the user's long-term version, read in the same transaction, and a switch bumps that
  version. The cache is used when this very task has read the same version within the last
  `trust_seconds` (retrieval reads the version on every search, `memory/longterm/versions.py` notes it),
  so a search costs no Redis round trip for routing; any other read (list, export, forget) reads the
  placement. A read routed just before a switch may still reach the old server: a rebalance deletes the
  old copy only after a grace period longer than `trust_seconds`.
- **Erasure** deletes the user on every server (a copy left by a crashed move is found too), so it
  needs every server up.
- **Export** re-reads the placement before each page and fails (503, an export cut short is invalid
  JSON) if the user moved in the middle, rather than mix two servers or miss records.

If Redis cannot be read, reads fall back to the last cached placement, else rendezvous (search keeps
working on what it can reach, as it does without versions); writes and deletes fail with the Redis
error, as their lock would.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Collection, Mapping, Sequence

from redis.exceptions import RedisError

from memory.embedding.base import Vectors
from memory.errors import StoreUnavailable
from memory.longterm.chroma import ChromaLongTermStore
from memory.longterm.dense_models import physical_name, same_model
from memory.longterm.placement import Placement, Placements, rendezvous
from memory.longterm.versions import observe, observed
from memory.models import Memory, SearchFilters

log = logging.getLogger(__name__)

TRUST_SECONDS = 1.0  # a version this task read less than this long ago vouches for a cached placement
CACHE_USERS = 65_536


class RoutingLongTermStore:
    def __init__(
        self,
        servers: Mapping[str, ChromaLongTermStore],
        placements: Placements,
        *,
        draining: Collection[str] = (),
        cache_users: int = CACHE_USERS,
        trust_seconds: float = TRUST_SECONDS,
        dense_model: str | None = None,
    ) -> None:
        """`servers`: name -> store, in configuration order. `draining`: servers that keep serving the
        users placed on them but take no new ones (rendezvous ignores them; a rebalance empties them).
        `dense_model`: the current dense model's tag, when `servers` holds the stores of more than one
        (a switch: memory/longterm/dense_models.py): only its stores take users, and vectors are
        checked against the model of the store they meet."""
        if not servers:
            raise ValueError("at least one Chroma server is required")
        unknown = set(draining) - {physical_name(name) for name in servers}
        if unknown:
            raise ValueError(f"draining servers {sorted(unknown)} are not configured")
        self._servers = dict(servers)
        self._candidates = [
            name
            for name, store in servers.items()
            if physical_name(name) not in set(draining)
            and (dense_model is None or same_model(store.dense_model, dense_model))
        ]
        if not self._candidates:
            raise ValueError("every Chroma server is draining: none would take new users")
        self.dense_model = dense_model
        self._placements = placements
        self._cache: OrderedDict[str, tuple[Placement, int]] = OrderedDict()
        self._cache_users = cache_users
        self.trust_seconds = trust_seconds

    # -- where users are ---------------------------------------------------------------------------

    @property
    def servers(self) -> Mapping[str, ChromaLongTermStore]:
        return self._servers

    @property
    def candidates(self) -> list[str]:
        """The servers rendezvous hashing chooses from (the configured ones minus the draining)."""
        return list(self._candidates)

    @property
    def placements(self) -> Placements:
        return self._placements

    def owner(self, user_id: str) -> str:
        """Where rendezvous hashing puts this user over the current servers."""
        return rendezvous(user_id, self._candidates, physical_name)

    def server(self, name: str) -> ChromaLongTermStore:
        store = self._servers.get(name)
        if store is None:
            raise StoreUnavailable(
                "chroma", f"a placement names Chroma server {name!r}, which is not configured here"
            )
        return store

    async def placement(self, user_id: str, *, fresh: bool = False) -> Placement:
        """The user's placement: cached while provably current (see the module docstring), else from
        Redis. `fresh` always asks Redis, and a Redis error propagates (writes and deletes)."""
        if not fresh:
            cached = self._cached(user_id)
            if cached is not None:
                return cached
        try:
            placement, version = await self._placements.read(user_id)
        except RedisError:
            if fresh:
                raise
            stale = self._cache.get(user_id)
            log.warning("placement unreadable; routing by the last known one or rendezvous")
            return stale[0] if stale is not None else Placement()
        self._remember(user_id, placement, version)
        observe(user_id, version)
        return placement

    async def server_of(self, user_id: str, *, fresh: bool = False) -> str:
        """The name of the server this user's reads go to."""
        return (await self.placement(user_id, fresh=fresh)).at or self.owner(user_id)

    def _cached(self, user_id: str) -> Placement | None:
        entry = self._cache.get(user_id)
        if entry is None:
            return None
        placement, version = entry
        if observed(user_id, self.trust_seconds) != version:
            return None
        self._cache.move_to_end(user_id)
        return placement

    def _remember(self, user_id: str, placement: Placement, version: int) -> None:
        self._cache[user_id] = (placement, version)
        self._cache.move_to_end(user_id)
        while len(self._cache) > self._cache_users:
            self._cache.popitem(last=False)

    def forget(self, user_id: str) -> None:
        self._cache.pop(user_id, None)

    async def _reader(self, user_id: str) -> ChromaLongTermStore:
        return self.server(await self.server_of(user_id))

    async def dense_model_of(self, user_id: str, *, fresh: bool = False) -> str:
        """The tag of the dense model this user's memories are embedded by (their store's). Read as
        the user's reads are routed: a search that asks after reading the version gets the model of
        the very store its index and its store query read."""
        return self.server(await self.server_of(user_id, fresh=fresh)).dense_model

    # -- LongTermStore -----------------------------------------------------------------------------

    async def upsert(
        self, memories: Sequence[Memory], embeddings: Vectors, *, models: Mapping[str, str] | None = None
    ) -> None:
        """Each user's memories to the user's server; a user without a placement gets one (rendezvous)
        before anything is stored. Callers hold the users' write locks (the write pipeline does).
        `models`: user -> the dense model that embedded their vectors, checked against their store's
        (`DenseModelChanged` before anything is stored)."""
        if not memories:
            return
        if len(memories) != len(embeddings):
            raise ValueError("one embedding per memory is required")
        users = sorted({m.user_id for m in memories})
        placed = await self._placements.claim({u: self.owner(u) for u in users})
        if models is not None:
            for user_id in users:
                self.server(placed[user_id]).check_model(user_id, models.get(user_id))
        rows: dict[str, list[int]] = {}
        for row, m in enumerate(memories):
            rows.setdefault(placed[m.user_id], []).append(row)
        await asyncio.gather(
            *(
                self.server(name).upsert([memories[r] for r in chosen], embeddings[chosen])
                for name, chosen in rows.items()
            )
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
        """`model`: the dense model that embedded `embedding`, checked against the user's store's."""
        store = await self._reader(user_id)
        store.check_model(user_id, model)
        return await store.query(
            user_id, embedding, n_results=n_results, filters=filters, user_rows=user_rows
        )

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
        store = await self._reader(user_id)
        store.check_model(user_id, model)
        return await store.query_with_vectors(
            user_id, embedding, n_results=n_results, filters=filters, user_rows=user_rows
        )

    async def get(
        self, user_id: str, *, ids: Sequence[str] | None = None, include_content: bool = True
    ) -> list[Memory]:
        store = await self._reader(user_id)
        return await store.get(user_id, ids=ids, include_content=include_content)

    async def find_by_hashes(self, user_id: str, hashes: Sequence[str]) -> list[Memory]:
        return await (await self._reader(user_id)).find_by_hashes(user_id, hashes)

    async def pages(self, user_id: str, page_size: int = 500) -> AsyncIterator[list[Memory]]:
        """Every memory of the user, a page at a time, from one server: the placement is re-read before
        each page, and a move in the middle fails the read (StoreUnavailable) instead of mixing servers."""
        first = await self.server_of(user_id, fresh=True)
        offset = 0
        while True:
            if offset and await self.server_of(user_id, fresh=True) != first:
                raise StoreUnavailable("chroma", "the user moved to another Chroma server during the read")
            memories, rows = await self.server(first).page(user_id, limit=page_size, offset=offset)
            if memories:
                yield memories
            if rows < page_size:
                return
            offset += page_size

    async def get_with_vectors(
        self, user_id: str, ids: Sequence[str] | None = None
    ) -> tuple[list[Memory], Vectors]:
        return await (await self._reader(user_id)).get_with_vectors(user_id, ids)

    async def embeddings(self, user_id: str, ids: Sequence[str]) -> dict[str, list[float]]:
        return await (await self._reader(user_id)).embeddings(user_id, ids)

    async def nearest(
        self, user_id: str, embeddings: Vectors, *, n_results: int = 1, model: str | None = None
    ) -> list[list[tuple[Memory, float]]]:
        """`model`: as for `query`."""
        store = await self._reader(user_id)
        store.check_model(user_id, model)
        return await store.nearest(user_id, embeddings, n_results=n_results)

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        """From the user's server, and from any copy an unfinished move left (best effort there: a
        rebalance deletes such a copy whole)."""
        if not ids:
            return
        placement = await self.placement(user_id, fresh=True)
        at = placement.at or self.owner(user_id)
        await self.server(at).delete(user_id, ids)
        for name in sorted(placement.copies):
            try:
                await self.server(name).delete(user_id, ids)
            except StoreUnavailable:
                log.warning("could not delete from a moving user's other copy", extra={"server": name})

    async def delete_user(self, user_id: str) -> int:
        """Every record of this user on every server (erasure: a copy anywhere must go). Fails if any
        server is down; nothing is skipped silently."""
        counts = await asyncio.gather(*(s.delete_user(user_id) for s in self._servers.values()))
        self.forget(user_id)
        return sum(counts)

    async def count(self, user_id: str) -> int:
        return await (await self._reader(user_id)).count(user_id)

    async def ping(self) -> None:
        """Every server answers (else StoreUnavailable naming those that did not)."""
        down = [name for name, ok in (await self.ping_each()).items() if not ok]
        if down:
            raise StoreUnavailable("chroma", f"servers down: {', '.join(down)}")

    async def ping_each(self, timeout_seconds: float = 2.0) -> dict[str, bool]:
        """name -> whether that server answered a heartbeat within the timeout, in configuration order."""

        async def one(store: ChromaLongTermStore) -> bool:
            try:
                await asyncio.wait_for(store.ping(), timeout_seconds)
            except Exception:
                return False
            return True

        results = await asyncio.gather(*(one(s) for s in self._servers.values()))
        return dict(zip(self._servers, results, strict=True))

    # -- tests and benchmarks ----------------------------------------------------------------------

    def collection_name(self, user_id: str) -> str:
        """The shard collection of this user (the same name on every server)."""
        return next(iter(self._servers.values())).collection_name(user_id)

    async def drop_collections(self) -> int:
        return sum(await asyncio.gather(*(s.drop_collections() for s in self._servers.values())))
