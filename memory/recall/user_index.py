"""Each user's keyword index in this worker: the BM25 index (with the user's vectors and memories) at the
user's current version, brought forward through the change log, seeded from the user's snapshot on a
first search here, and saved as a snapshot after a full build (memory/recall/snapshot.py).

`HybridRetriever` (memory/recall/retrieval.py) reads every index through `UserIndexes`; a snapshot worth
saving waits for the search that computes the user's bridge rows, so the snapshot carries them too.

A user whose snapshot holds more than `background_past` memories (`IN_PROCESS_INDEX_MAX`) is loaded in
the background (`loading`): at 58,000 memories the read and decode take seconds, and the searches
meanwhile answer from the stores (memory/recall/cold_start.py) instead of waiting for it (issue 45).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection

import anyio.to_thread
import numpy as np
from redis.exceptions import RedisError

from memory.longterm.chroma import LongTermStore
from memory.longterm.versions import UNKNOWN, LtmVersions
from memory.models import Memory
from memory.recall.crosslingual import BridgeChannel, BridgeRows
from memory.recall.keyword_index import BM25Index, KeywordIndexCache
from memory.recall.postings import shared_texts
from memory.recall.snapshot import IndexSnapshots, decode, encode

log = logging.getLogger("memory.recall.retrieval")  # the retriever's logger, as before the split

MAX_INCREMENTAL = 200  # more changes than this (or than half the index) since the cached version: rebuild
LOAD_HELD_S = 2.0  # the longest a background load waits for the search that started it (`release`)


class UserIndexes:
    """The per-worker cache of users' keyword indexes and their snapshots."""

    def __init__(
        self,
        store: LongTermStore,
        versions: LtmVersions,
        cache: KeywordIndexCache,
        *,
        snapshots: IndexSnapshots | None = None,
        bridge: BridgeChannel | None = None,
        background_past: int | None = None,
    ) -> None:
        """`snapshots`: where a user's index is loaded from on a first search in this worker, and saved
        after a full build; None: always built from the store. `bridge`: the channel whose rows a
        snapshot seeds and carries (None: snapshots of the keyword index alone). `background_past`: a
        user whose snapshot holds more memories is loaded in the background (`loading`); None: never."""
        self._background_past = background_past
        self._loading: dict[str, tuple[asyncio.Task[None], int]] = {}
        self._held: dict[str, asyncio.Event] = {}  # loads waiting for their first search's answer
        self.cache = cache
        self._store = store
        self._versions = versions
        self.snapshots = snapshots
        self._bridge = bridge
        self._from_snapshot: dict[str, int] = {}  # users whose cached index came from a snapshot
        self._unsaved: dict[str, int] = {}  # users whose index at this version is worth a snapshot
        self._saving: set[asyncio.Task[None]] = set()

    async def index(self, user_id: str) -> BM25Index:
        """This user's index at the current version: cached, updated from the change log (only the
        changed memories are fetched and tokenised), or rebuilt from the store."""
        return (await self.versioned(user_id))[1]

    async def cached(self, user_id: str, ids: Collection[str]) -> list[Memory]:
        """Those of `ids` this worker's index holds at the user's current version (one Redis read, no
        store read): what a delete needs to know of a memory a search just showed. Absent ones may
        still exist (written since, archived, or no index here): callers ask the store for them."""
        latest = self.cache.latest(user_id)
        if latest is None:
            return []
        if await self._versions.get(user_id) != latest[0]:
            return []
        return [latest[1].memories[i] for i in ids if i in latest[1].memories]

    async def versioned(self, user_id: str) -> tuple[int, BM25Index]:
        """The user's current version and the index at it."""
        version = await self._versions.get(user_id)
        return version, await self._index_at(user_id, version)

    async def loading(self, user_id: str) -> int | None:
        """How many memories the user has when this worker is loading them in the background (the load
        is started here on a first search of a user whose snapshot holds more than `background_past`);
        None when the index is (or is to be) read inline: cached here, small, or without a snapshot."""
        held = self._loading.get(user_id)
        if held is not None:
            return held[1]
        if self._background_past is None or self.snapshots is None or self.cache.latest(user_id) is not None:
            return None
        try:
            memories = await self.snapshots.memories(user_id)
        except RedisError:
            return None  # the inline path reports Redis' state
        if memories is None or memories <= self._background_past or self.cache.latest(user_id) is not None:
            return None
        if user_id not in self._loading:
            self._held[user_id] = asyncio.Event()
            task = asyncio.create_task(self._load(user_id))
            self._loading[user_id] = (task, memories)
            task.add_done_callback(lambda _: self._loading.pop(user_id, None))
        return memories

    async def loaded(self, user_id: str) -> None:
        """Wait for this worker's background load of the user, if one runs (a search that cannot be
        answered meanwhile: its own reads would repeat the load's): released first."""
        self.release(user_id)
        held = self._loading.get(user_id)
        if held is not None:
            await asyncio.shield(held[0])

    def release(self, user_id: str) -> None:
        """Let this worker's background load of the user start: the search that started it has its
        answer (read from the stores, and slowed by the load's reading and decoding beside it: 19,080
        memories, ~1.1 s against ~0.35), or gave up. A load nobody releases starts after `LOAD_HELD_S`."""
        held = self._held.pop(user_id, None)
        if held is not None:
            held.set()

    async def _load(self, user_id: str) -> None:
        held = self._held.get(user_id)
        if held is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(held.wait(), LOAD_HELD_S)
            self._held.pop(user_id, None)
        try:
            await self.load_snapshot(user_id)
            await self.versioned(user_id)  # brought forward through the change log, or rebuilt
        except Exception:  # noqa: BLE001 - a background load failing costs speed: the next search retries
            log.warning("background load of a large user's index failed", exc_info=True)

    def save_if_unsaved(self, user_id: str, version: int, index: BM25Index, rows: BridgeRows | None) -> None:
        """Save the user's snapshot (in the background) if the index at `version` waited for its bridge
        `rows` to be worth one."""
        if self._unsaved.get(user_id) == version:
            del self._unsaved[user_id]
            self._save_later(user_id, version, index, rows)

    async def _index_at(self, user_id: str, version: int) -> BM25Index:
        if version != UNKNOWN:
            latest = self.cache.latest(user_id)
            if latest is None and await self.load_snapshot(user_id):
                latest = self.cache.latest(user_id)
            if latest is not None and latest[0] == version:
                return self.cache.get(user_id, version) or latest[1]
            if latest is not None and latest[0] < version:
                updated = await self._update(user_id, latest[0], latest[1], version)
                if updated is not None:
                    if self._from_snapshot.pop(user_id, None) is not None:
                        self._mark_unsaved(user_id, version, updated)  # the stored one is behind
                    return updated
        self._from_snapshot.pop(user_id, None)
        memories, vectors = await self._store.get_with_vectors(user_id)
        index = await anyio.to_thread.run_sync(lambda: BM25Index(shared_texts(memories), vectors))
        if version != UNKNOWN:
            self.cache.put(user_id, version, index)
            self._mark_unsaved(user_id, version, index)
        return index

    async def load_snapshot(self, user_id: str) -> bool:
        """Seed this worker's keyword index (and bridge rows) of the user from the user's snapshot, at
        the version it was taken at, when this worker holds no index of the user. The caller brings
        it forward through the change log like any cached index, or rebuilds when the log cannot."""
        if self.snapshots is None or self.cache.latest(user_id) is not None:
            return False
        try:
            raw = await self.snapshots.read(user_id)
        except RedisError:
            log.warning("index snapshot unavailable; building from the store", exc_info=True)
            return False
        if raw is None:
            return False
        snapshot = await anyio.to_thread.run_sync(decode, raw, self.snapshots.fingerprint)
        if snapshot is None or self.cache.latest(user_id) is not None:
            return False
        self.cache.put(user_id, snapshot.version, snapshot.index)
        if snapshot.bridge is not None and self._bridge is not None:
            self._bridge.cache.seed(user_id, snapshot.version, snapshot.bridge)
        self._from_snapshot[user_id] = snapshot.version
        if len(self._from_snapshot) > 10_000:  # bounded: only the next read of each user needs it
            self._from_snapshot.clear()
        return True

    def _mark_unsaved(self, user_id: str, version: int, index: BM25Index) -> None:
        if self.snapshots is None or not len(index) or len(index) < self.snapshots.min_memories:
            return
        if self._bridge is None:  # nothing more to wait for
            self._save_later(user_id, version, index, None)
            return
        self._unsaved[user_id] = version  # saved by the search that computes its bridge rows
        if len(self._unsaved) > 10_000:
            self._unsaved.clear()

    def _save_later(self, user_id: str, version: int, index: BM25Index, rows: BridgeRows | None) -> None:
        task = asyncio.create_task(self._save_snapshot(user_id, version, index, rows))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def _save_snapshot(
        self, user_id: str, version: int, index: BM25Index, rows: BridgeRows | None
    ) -> None:
        snapshots = self.snapshots
        if snapshots is None:
            return
        try:
            encoded = await anyio.to_thread.run_sync(encode, version, index, rows, snapshots.fingerprint)
            stored = await snapshots.write(user_id, version, encoded, memories=len(index))
        except (RedisError, TypeError, ValueError) as exc:  # a snapshot is an optimisation: never fatal
            log.warning("index snapshot not saved", extra={"reason": f"{type(exc).__name__}: {exc}"})
            return
        log.info(
            "index snapshot saved" if stored else "index snapshot not saved: the user changed since",
            extra={"memories": len(index), "bytes": len(encoded), "with_bridge": rows is not None},
        )

    async def _update(self, user_id: str, cached_at: int, index: BM25Index, version: int) -> BM25Index | None:
        changes = await self._versions.changes(user_id, cached_at, version)
        if changes is None or len(changes) > max(MAX_INCREMENTAL, len(index) // 2):
            return None
        if not len(changes):  # a version that changed no record (a move to another Chroma server)
            self.cache.put(user_id, version, index)
            return index
        logged = [changes.records[i] for i in sorted(changes.upserted) if i in changes.records]
        missing = sorted(i for i in changes.upserted if i not in changes.records)
        memories = [m for m, _ in logged]
        rows = [v for _, v in logged]
        if missing:  # written without records in the log (a large write): ask the store
            fetched, fetched_vectors = await self._store.get_with_vectors(user_id, missing)
            memories += fetched
            rows += list(fetched_vectors) if len(fetched) else []
        found = {m.id for m in memories}
        gone = changes.deleted | (changes.upserted - found)  # upserted, then deleted since
        vectors = np.asarray(rows, dtype=np.float32) if rows and len(rows) == len(memories) else None
        fresh = await anyio.to_thread.run_sync(index.updated, memories, vectors, gone)
        self.cache.put(user_id, version, fresh)
        return fresh


__all__ = ["LOAD_HELD_S", "MAX_INCREMENTAL", "UserIndexes"]
