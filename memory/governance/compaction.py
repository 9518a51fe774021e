"""Erasure that reaches the disk: after an erase, rewrite the files each store keeps, within a stated bound.

Deleting a key or a record does not remove its bytes from disk. Measured (tests/integration/
test_erase_at_rest.py greps the data directories):

- **Redis** keeps deleted keys in its append-only file until the AOF is rewritten, and in `dump.rdb`
  until the next snapshot. A stream entry removed with XDEL stays, bytes and all, inside its listpack
  node until every entry of that node is deleted, and both the RDB file and the AOF's RDB preamble store
  nodes as they are: an erased user's outbox turn sharing a node with a pending turn of someone else
  survives BGREWRITEAOF. So the Redis job first rebuilds the outbox streams from their live entries
  (`_REBUILD_STREAM`, one atomic script keeping ids, consumer group, pending entries and counters), then
  runs BGREWRITEAOF (AOF on) and BGSAVE (RDB in use) and waits for both to finish.
- **Chroma 1.5.9** (single node, SQLite) keeps every write in its `embeddings_queue` log until the
  collection's HNSW index is persisted (every `hnsw:sync_threshold` = 1000 operations): the log rows of
  a deleted record keep its document and metadata. Deleted rows leave their bytes in free pages (the
  server runs without `secure_delete`), and the FTS5 trigram index keeps postings of deleted documents
  until its segments are merged. `chroma vacuum` purges the log only below the persisted index and then
  runs VACUUM, so the rows of recent writes stay. The Chroma job (`ChromaFiles`) deletes the log rows
  that a later delete of the same record made obsolete (replaying the log without them gives the same
  index: the delete of an id the index never had is skipped), merges the FTS5 index ('optimize'), runs
  VACUUM (which rewrites every page) and truncates a WAL if the database uses one. It needs the
  persist directory on the local disk; SQLite serialises it with the running server.

Erases do not each rewrite: an erase adds a request per store (`CompactionQueue.request`), and a
`Compactor` runs a store's job at most once per `window` (the first erase after a quiet window runs at
once), under a Redis lease so that of several workers only one rewrites. A run covers every request
made before it started. The bound an erase receipt states is `window + timeout` (+ one tick).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio.to_thread
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError, ResponseError

from memory import keys
from memory.locks import LockTimeout, RedisLocks
from memory.outbox.stream import Outbox
from memory.redis_client import RedisClient, server_time
from monitoring import metrics

log = logging.getLogger(__name__)

Store = Literal["redis", "chroma"]
STORES: tuple[Store, ...] = ("redis", "chroma")
AtRestState = Literal["none", "scheduled", "operator"]
OPERATOR_COMMAND = "python -m app.cli.compact --chroma-path <Chroma persist directory>"


def deleting_streams() -> list[str]:
    """The streams whose entries mnemo deletes one by one: every outbox partition (chat turns and import
    lane) and the dead letters (the audit stream is append-only)."""
    return [*Outbox.streams(), *Outbox.import_streams(), keys.OUTBOX_DEAD_LETTERS]


class CompactionError(RuntimeError):
    pass


# ------------------------------------------------------------------------------------------ the queue


class CompactionQueue:
    """Requests for compaction, per store, in Redis: a sorted set of random tokens (no user id) scored by
    Redis' clock; the last run of each store; a lease per store."""

    def __init__(self, redis: RedisClient) -> None:
        self._redis = redis
        self._locks = RedisLocks(redis)

    async def now(self) -> float:
        return await server_time(self._redis, keys.compaction_pending("redis"))

    async def request(self, stores: Iterable[Store]) -> float:
        """Ask for a compaction of these stores; returns the request time (Redis' clock)."""
        at = await self.now()
        async with self._redis.pipeline(transaction=False) as pipe:
            for store in stores:
                pipe.zadd(keys.compaction_pending(store), {secrets.token_hex(8): at})
            await pipe.execute()
        return at

    async def oldest(self, store: Store) -> float | None:
        """Time of the oldest request not yet covered by a run."""
        first: Any = await self._redis.zrange(keys.compaction_pending(store), 0, 0, withscores=True)
        return float(first[0][1]) if first else None

    async def pending(self, store: Store) -> int:
        return int(await self._redis.zcard(keys.compaction_pending(store)))

    async def last(self, store: Store) -> dict[str, str]:
        raw: Any = await self._redis.hgetall(keys.compaction_last(store))
        return {str(k): str(v) for k, v in raw.items()}

    async def record(self, store: Store, *, started: float, outcome: str) -> None:
        """A run that started at `started` finished: on success it covers every earlier request."""
        async with self._redis.pipeline(transaction=True) as pipe:
            if outcome == "ok":
                pipe.zremrangebyscore(keys.compaction_pending(store), "-inf", started)
            pipe.hset(
                keys.compaction_last(store),
                mapping={
                    "started": f"{started:.6f}",
                    "finished": f"{await self.now():.6f}",
                    "outcome": outcome,
                },
            )
            await pipe.execute()

    def lease(self, store: Store, *, ttl_seconds: int, wait_seconds: float) -> Any:
        """The store's lease (kept alive while held; it expires if the holder dies)."""
        return self._locks.hold(
            keys.compaction_lease(store), ttl_seconds=ttl_seconds, wait_seconds=wait_seconds
        )


# ------------------------------------------------------------------------------------------ what a receipt says


@dataclass(frozen=True, slots=True)
class AtRest:
    """When one store's files no longer hold the erased data."""

    state: AtRestState  # none: the store keeps no files; scheduled: automatic, by `purged_by`; operator
    purged_by: float | None = None
    command: str | None = None


@dataclass(frozen=True, slots=True)
class AtRestPolicy:
    window_seconds: float = 300.0
    timeout_seconds: float = 300.0
    tick_seconds: float = 5.0
    chroma_automatic: bool = False  # a compactor here reaches Chroma's persist directory
    operator_command: str = OPERATOR_COMMAND

    @property
    def bound_seconds(self) -> float:
        """From an erase to its files being rewritten: a run starts within a window (+ a tick), and a run
        that takes longer than the timeout counts as failed."""
        return self.window_seconds + self.timeout_seconds + self.tick_seconds

    def plan(self, at: float, *, redis_persists: bool) -> dict[Store, AtRest]:
        by = at + self.bound_seconds
        redis = AtRest("scheduled", by) if redis_persists else AtRest("none", at)
        chroma = (
            AtRest("scheduled", by)
            if self.chroma_automatic
            else AtRest("operator", command=self.operator_command)
        )
        return {"redis": redis, "chroma": chroma}


# ------------------------------------------------------------------------------------------ Redis


# Rebuild a stream from its live entries, so that no listpack node keeps the bytes of deleted ones.
# Keeps entry ids, the last id, the entries-added and max-deleted counters, every consumer group's last
# delivered id and entries-read, its consumers, and each pending entry with its consumer, idle time and
# delivery count (XCLAIM ... FORCE). Atomic: no XADD or XACK can interleave. Returns the live entries.
_REBUILD_STREAM = """
local function field(arr, name)
  for i = 1, #arr, 2 do if arr[i] == name then return arr[i + 1] end end
  return nil
end
if redis.call('TYPE', KEYS[1]).ok ~= 'stream' then return -1 end
local info = redis.call('XINFO', 'STREAM', KEYS[1])
local length = tonumber(field(info, 'length'))
if length == 0 then return 0 end  -- an empty stream has no nodes left
local groups = {}
for _, g in ipairs(redis.call('XINFO', 'GROUPS', KEYS[1])) do
  local name = field(g, 'name')
  groups[#groups + 1] = {
    name = name,
    last = field(g, 'last-delivered-id'),
    read = field(g, 'entries-read'),
    consumers = redis.call('XINFO', 'CONSUMERS', KEYS[1], name),
    pending = redis.call('XPENDING', KEYS[1], name, '-', '+', length + 1000000),
  }
end
local entries = redis.call('XRANGE', KEYS[1], '-', '+')
redis.call('DEL', KEYS[1])
for _, e in ipairs(entries) do
  redis.call('XADD', KEYS[1], e[1], unpack(e[2]))
end
redis.call('XSETID', KEYS[1], field(info, 'last-generated-id'),
  'ENTRIESADDED', field(info, 'entries-added'), 'MAXDELETEDID', field(info, 'max-deleted-entry-id'))
for _, g in ipairs(groups) do
  if type(g.read) == 'number' then
    redis.call('XGROUP', 'CREATE', KEYS[1], g.name, g.last, 'ENTRIESREAD', g.read)
  else
    redis.call('XGROUP', 'CREATE', KEYS[1], g.name, g.last)
  end
  for _, c in ipairs(g.consumers) do
    redis.call('XGROUP', 'CREATECONSUMER', KEYS[1], g.name, field(c, 'name'))
  end
  for _, p in ipairs(g.pending) do
    redis.call('XCLAIM', KEYS[1], g.name, p[2], 0, p[1], 'IDLE', p[3], 'RETRYCOUNT', p[4], 'FORCE', 'JUSTID')
  end
end
return #entries
"""


@dataclass(frozen=True, slots=True)
class RedisPersistence:
    aof: bool
    rdb: bool

    @property
    def any(self) -> bool:
        return self.aof or self.rdb


class RedisFiles:
    """The Redis job. On one server: `ServerFiles`. On a cluster, on every node: each master rebuilds
    the streams of its own slots, and masters and replicas alike rewrite their own files (a replica's
    AOF holds what it replicated)."""

    def __init__(self, redis: RedisClient, *, poll_seconds: float = 0.1) -> None:
        self._redis = redis
        self._poll = poll_seconds

    async def rebuild_streams(self, streams: Iterable[str] | None = None) -> int:
        if isinstance(self._redis, Redis):
            return await ServerFiles(self._redis, poll_seconds=self._poll).rebuild_streams(streams)
        total = 0
        for node, client in self._nodes():
            try:
                if node.server_type == "primary":
                    total += await ServerFiles(client).rebuild_streams(self._streams_of(node, streams))
            finally:
                await client.aclose()
        return total

    async def run(self, timeout: float) -> RedisPersistence:
        if isinstance(self._redis, Redis):
            return await ServerFiles(self._redis, poll_seconds=self._poll).run(timeout)
        found = RedisPersistence(aof=False, rdb=False)
        for node, client in self._nodes(timeout):
            try:
                streams = self._streams_of(node, None) if node.server_type == "primary" else []
                done = await ServerFiles(client, poll_seconds=self._poll).run(timeout, streams)
            finally:
                await client.aclose()
            found = RedisPersistence(aof=found.aof or done.aof, rdb=found.rdb or done.rdb)
        return found

    async def persistence(self) -> RedisPersistence:
        """What the server keeps on disk (on a cluster: the first master's; nodes are set up alike)."""
        if isinstance(self._redis, Redis):
            return await ServerFiles(self._redis, poll_seconds=self._poll).persistence()
        _, client = self._nodes(primaries_only=True)[0]
        try:
            return await ServerFiles(client).persistence()
        finally:
            await client.aclose()

    def _nodes(self, timeout: float = 30.0, *, primaries_only: bool = False) -> list[tuple[Any, Redis]]:
        """A client of its own per node (closed by the caller): jobs that must run on one node each."""
        assert isinstance(self._redis, RedisCluster)
        return [
            (node, Redis(host=node.host, port=int(node.port), decode_responses=True, socket_timeout=timeout))
            for node in self._redis.get_nodes()
            if not primaries_only or node.server_type == "primary"
        ]

    def _streams_of(self, node: Any, streams: Iterable[str] | None) -> list[str]:
        assert isinstance(self._redis, RedisCluster)
        wanted = deleting_streams() if streams is None else list(streams)
        return [s for s in wanted if self._redis.get_node_from_key(s) is node]


class ServerFiles:
    """The Redis job on one server: rebuild the streams mnemo deletes from, then rewrite its AOF and
    RDB file."""

    def __init__(self, redis: Redis, *, poll_seconds: float = 0.1) -> None:
        self._redis = redis
        self._rebuild = redis.register_script(_REBUILD_STREAM)
        self._poll = poll_seconds

    async def persistence(self) -> RedisPersistence:
        """AOF when it is on; RDB when snapshots are configured, a snapshot was taken since start, or the
        configuration cannot be read (managed Redis without CONFIG: assume a file exists)."""
        info: Any = await self._redis.info("persistence")
        aof = int(info.get("aof_enabled", 0)) == 1
        try:
            save: Any = await self._redis.config_get("save")
            rdb = bool(str(save.get("save", "")).strip()) or int(info.get("rdb_saves", 0)) > 0
        except ResponseError:
            rdb = True
        return RedisPersistence(aof=aof, rdb=rdb)

    async def rebuild_streams(self, streams: Iterable[str] | None = None) -> int:
        total = 0
        for stream in deleting_streams() if streams is None else streams:
            total += max(0, int(await self._rebuild(keys=[stream])))
        return total

    async def run(self, timeout: float, streams: Iterable[str] | None = None) -> RedisPersistence:
        rebuilt = await self.rebuild_streams(streams)
        persistence = await self.persistence()
        deadline = time.monotonic() + timeout
        if persistence.aof:
            await self._check_aof_gc()
            await self._bgrewriteaof(deadline)
        if persistence.rdb:
            await self._bgsave(deadline)
        log.info(
            "redis files rewritten",
            extra={"aof": persistence.aof, "rdb": persistence.rdb, "stream_entries_rebuilt": rebuilt},
        )
        return persistence

    async def _check_aof_gc(self) -> None:
        with contextlib.suppress(ResponseError):
            gc: Any = await self._redis.config_get("aof-disable-auto-gc")
            if str(gc.get("aof-disable-auto-gc", "no")) == "yes":
                raise CompactionError(
                    "aof-disable-auto-gc is yes: Redis keeps the AOF files a rewrite replaces"
                )

    async def _info(self) -> Any:
        return await self._redis.info("persistence")

    async def _bgrewriteaof(self, deadline: float) -> None:
        await self._wait(
            deadline, lambda i: not int(i["aof_rewrite_in_progress"]) and not int(i["aof_rewrite_scheduled"])
        )
        before = int((await self._info()).get("aof_rewrites", 0))
        while True:  # a rewrite that started before the erase does not count
            try:
                await self._redis.bgrewriteaof()
                break
            except ResponseError as exc:
                if "in progress" not in str(exc) or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(self._poll)
        info = await self._wait(
            deadline,
            lambda i: (
                int(i.get("aof_rewrites", before + 1)) > before
                and not int(i["aof_rewrite_in_progress"])
                and not int(i["aof_rewrite_scheduled"])
            ),
        )
        if info.get("aof_last_bgrewrite_status") != "ok":
            raise CompactionError(f"BGREWRITEAOF failed: {info.get('aof_last_bgrewrite_status')}")

    async def _bgsave(self, deadline: float) -> None:
        # a snapshot already running may have forked before the erase: wait for it, then take ours
        await self._wait(deadline, lambda i: not int(i["rdb_bgsave_in_progress"]))
        before = int((await self._info()).get("rdb_saves", 0))
        started = await self._redis.lastsave()
        while True:
            try:
                await self._redis.bgsave(schedule=True)  # after a running AOF rewrite, if any
                break
            except ResponseError as exc:  # an automatic snapshot started meanwhile
                if "in progress" not in str(exc) or time.monotonic() > deadline:
                    raise
                await asyncio.sleep(self._poll)

        def done(i: Any) -> bool:
            if int(i["rdb_bgsave_in_progress"]):
                return False
            if "rdb_saves" in i:
                return int(i["rdb_saves"]) > before
            return int(i["rdb_last_save_time"]) > started.timestamp()

        info = await self._wait(deadline, done)
        if info.get("rdb_last_bgsave_status") != "ok":
            raise CompactionError(f"BGSAVE failed: {info.get('rdb_last_bgsave_status')}")

    async def _wait(self, deadline: float, done: Callable[[Any], bool]) -> Any:
        while True:
            info = await self._info()
            if done(info):
                return info
            if time.monotonic() > deadline:
                raise CompactionError("Redis did not finish rewriting its files in time")
            await asyncio.sleep(self._poll)


# ------------------------------------------------------------------------------------------ Chroma

_DELETE_CODE = 3  # chroma rust/log/src/sqlite_log.rs operation_to_code: Add 0, Update 1, Upsert 2, Delete 3
_OBSOLETE_LOG_ROWS = (
    "CREATE TEMP TABLE mnemo_deleted AS SELECT topic, id, MAX(seq_id) AS seq_id FROM embeddings_queue "
    f"WHERE operation = {_DELETE_CODE} GROUP BY topic, id",
    "CREATE INDEX temp.mnemo_deleted_key ON mnemo_deleted(topic, id)",
    f"DELETE FROM embeddings_queue WHERE operation != {_DELETE_CODE} AND seq_id < ("
    "SELECT d.seq_id FROM mnemo_deleted d WHERE d.topic = embeddings_queue.topic AND d.id = embeddings_queue.id)",
)
_REQUIRED = {
    "embeddings_queue": {"seq_id", "topic", "id", "operation", "metadata"},
    "embedding_fulltext_search": set(),
}


@dataclass(frozen=True, slots=True)
class ChromaCompaction:
    log_rows_purged: int
    bytes_before: int
    bytes_after: int


class ChromaFiles:
    """The Chroma job on a persist directory on this machine's disk (the server may keep running)."""

    def __init__(self, path: str | Path, *, busy_timeout_seconds: float = 60.0) -> None:
        self.path = Path(path)
        self._busy = busy_timeout_seconds

    @property
    def sqlite_path(self) -> Path:
        return self.path / "chroma.sqlite3"

    async def run(self) -> ChromaCompaction:
        return await anyio.to_thread.run_sync(self.compact)

    def compact(self) -> ChromaCompaction:
        if not self.sqlite_path.is_file():
            raise CompactionError(f"{self.sqlite_path} not found: not a Chroma persist directory")
        before = _dir_bytes(self.path)
        db = sqlite3.connect(self.sqlite_path, timeout=self._busy, isolation_level=None)
        try:
            self._check_schema(db)
            db.execute("PRAGMA secure_delete = ON")  # our own deletes zero their bytes at once
            db.execute("BEGIN IMMEDIATE")
            try:
                for statement in _OBSOLETE_LOG_ROWS[:2]:
                    db.execute(statement)
                purged = db.execute(_OBSOLETE_LOG_ROWS[2]).rowcount
                db.execute("DROP TABLE temp.mnemo_deleted")
                # merge the full-text index: drops the postings (trigrams) of deleted documents
                db.execute(
                    "INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')"
                )
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("VACUUM")  # rebuilds the file: no free page or freeblock keeps old bytes
            if str(db.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
                busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                if busy:
                    raise CompactionError("WAL checkpoint blocked by a reader; run again")
        finally:
            db.close()
        result = ChromaCompaction(purged, before, _dir_bytes(self.path))
        log.info(
            "chroma files compacted",
            extra={
                "path": str(self.path),
                "log_rows_purged": purged,
                "bytes_before": before,
                "bytes_after": result.bytes_after,
            },
        )
        return result

    @staticmethod
    def _check_schema(db: sqlite3.Connection) -> None:
        for table, columns in _REQUIRED.items():
            found = {str(row[1]) for row in db.execute(f'PRAGMA table_info("{table}")')}
            if not found or not columns <= found:
                raise CompactionError(
                    f"Chroma schema changed ({table}: {sorted(found)}): this compaction is written for chromadb 1.5.9"
                )


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


# ------------------------------------------------------------------------------------------ the loop

Job = Callable[[], Awaitable[object]]


class Compactor:
    """Runs each store's job when it has requests, at most once per window, under the store's lease."""

    def __init__(
        self,
        queue: CompactionQueue,
        jobs: Mapping[Store, Job],
        *,
        window_seconds: float,
        timeout_seconds: float,
        tick_seconds: float = 5.0,
        retry_seconds: float = 30.0,
    ) -> None:
        self._queue = queue
        self._jobs = dict(jobs)
        self._window = window_seconds
        self._timeout = timeout_seconds
        self._tick = tick_seconds
        self._retry = min(retry_seconds, window_seconds)
        self._stopping = asyncio.Event()

    @property
    def stores(self) -> tuple[Store, ...]:
        return tuple(self._jobs)

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        while not self._stopping.is_set():
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:  # Redis down: the requests wait in Redis
                log.warning("compaction check failed", extra={"reason": str(exc)})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), timeout=self._tick)

    async def tick(self) -> dict[Store, str]:
        """Runs the stores that are due; returns store -> outcome for those that ran."""
        out: dict[Store, str] = {}
        for store in self._jobs:
            now = await self._queue.now()
            oldest = await self._queue.oldest(store)
            metrics.ERASURE_PENDING_AGE.labels(store).set(0.0 if oldest is None else max(0.0, now - oldest))
            if oldest is None or not self._due(await self._queue.last(store), now):
                continue
            outcome = await self.run_store(store, wait_seconds=0.0)
            if outcome is not None:
                out[store] = outcome
        return out

    def _due(self, last: Mapping[str, str], now: float) -> bool:
        if not last:
            return True
        wait = self._window if last.get("outcome") == "ok" else self._retry
        return now - float(last.get("started", "0")) >= wait

    async def run_store(self, store: Store, *, wait_seconds: float) -> str | None:
        """One run now, whatever the window (the operator command); None if another process holds the
        lease and did not release it within `wait_seconds`."""
        try:
            async with self._queue.lease(
                store, ttl_seconds=max(30, int(self._timeout)), wait_seconds=wait_seconds
            ):
                started = await self._queue.now()
                clock = time.monotonic()
                outcome = "ok"
                try:
                    await asyncio.wait_for(self._jobs[store](), timeout=self._timeout)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    outcome = "failed"
                    log.error(
                        "compaction failed", extra={"store": store, "reason": f"{type(exc).__name__}: {exc}"}
                    )
                metrics.ERASURE_COMPACTIONS.labels(store, outcome).inc()
                metrics.ERASURE_COMPACTION_DURATION.labels(store).observe(time.monotonic() - clock)
                await self._queue.record(store, started=started, outcome=outcome)
                if outcome == "ok":
                    metrics.ERASURE_PENDING_AGE.labels(store).set(0.0)
                return outcome
        except LockTimeout:
            return None
