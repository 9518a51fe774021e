"""Per-user long-term write versions in Redis, with a log of what each version changed.

Every write and delete moves the user's version forward and appends `{prev, v, up, del}` (memory ids,
never content) to a short per-user stream, in one Lua script. A worker holding a keyword index built
at version `a` that sees version `b` follows the log from `b` back to `a` and applies just those
changes; when the chain is broken (log trimmed, user erased) it rebuilds from the store.

Versions come from Redis' clock (microseconds, and always above the previous one), so they are never
reused: after an erase deletes the counter, new versions still exceed every version a worker may
have cached for that user, and a stale index can never pass for a current one.

A change is acknowledged only once its version is recorded: `bump` raises `StoreUnavailable` when Redis
does not take it (the caller answers 503 and the client retries the idempotent write), because a change
without a version is invisible to every worker whose cached index is at the current version: a write
that search never finds, a delete that search still finds. A failed bump is also retried in the
background (`VersionRepairs`) until Redis takes it, so what the store already holds converges even when
the client never retries.

A big write (an import's round) is logged as ids only; the process that wrote it keeps its records
by (user, version) for a while (`WRITTEN_KEPT`), so its own indexes follow the log without reading back
from the store what it has just written there.

Moving a user to another Chroma server bumps the version too (in the same transaction as the placement
switch), so the version a task has just read also says whether a placement cached at that version is
still current (`observe`/`observed`, used by `memory/longterm/routing.py`).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterPipeline
from redis.exceptions import RedisError

from memory import keys
from memory.embedding.base import Vectors
from memory.errors import StoreUnavailable
from memory.longterm.chroma import from_record, to_metadata
from memory.models import Memory
from memory.redis_client import RedisClient
from monitoring import metrics

log = logging.getLogger(__name__)
UNKNOWN = -1
CHANGES_KEPT = 32  # entries per user; a worker further behind than this rebuilds
CHANGES_TTL_MS = 15 * 60 * 1000  # the log of a user idle this long goes; workers then rebuild
MAX_RECORDS_BYTES = 64 * 1024  # larger writes log ids only; workers fetch those from the store
MAX_LOGGED_RECORDS = 32
# Records of this process's own recent writes, by (user, version), for what the log carries as ids only
# (a big write): this process's indexes take them from here instead of reading the store
WRITTEN_KEPT = 1024  # a few rounds of an import: a process follows its own writes a round or two behind

# A delete clears the log first: it carries the text of written memories, and a deleted one must not
# linger there (workers behind the delete rebuild, which is rare and cheap). For the same reason it
# deletes the user's index snapshot (KEYS[3], memory/recall/snapshot.py), which holds every memory's
# words: the next full build writes a new one; and the user's claim index (KEYS[4],
# memory/write/claim_index.py), whose keys are words of what was said: later writes record theirs again.
_BUMP = """
local prev = tonumber(redis.call('GET', KEYS[1]) or '0')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local v = math.max(prev + 1, now)
local vs = string.format('%d', v)
redis.call('SET', KEYS[1], vs)
if ARGV[2] ~= '[]' then
    redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*',
    'prev', string.format('%d', prev), 'v', vs, 'up', ARGV[1], 'del', ARGV[2], 'data', ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return vs
"""


# The version this task read last: (user id, version, monotonic time). One entry, replaced (never
# mutated): a context is copied into child tasks, and a mutable value would leak between requests.
_OBSERVED: ContextVar[tuple[str, int, float] | None] = ContextVar("ltm_version_observed", default=None)


def observe(user_id: str, version: int) -> None:
    """Note that this task has just read `version` for `user_id` from Redis."""
    if version != UNKNOWN:
        _OBSERVED.set((user_id, version, time.monotonic()))


def observed(user_id: str, within_seconds: float) -> int | None:
    """The version of `user_id` this task read less than `within_seconds` ago, if it did."""
    seen = _OBSERVED.get()
    if seen is None or seen[0] != user_id or time.monotonic() - seen[2] > within_seconds:
        return None
    return seen[1]


@dataclass(frozen=True, slots=True)
class Changes:
    """Net effect of a run of versions: ids to (re)load, ids to drop, and the written records the log
    carried (so a worker need not ask the store for them)."""

    upserted: frozenset[str]
    deleted: frozenset[str]
    records: dict[str, tuple[Memory, Vectors]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.upserted) + len(self.deleted)


class LtmVersions:
    def __init__(self, redis: RedisClient, *, repair_backoff: tuple[float, float] = (0.2, 1.0)) -> None:
        self._redis = redis
        self._bump = redis.register_script(_BUMP)
        self.repairs = VersionRepairs(self._bump_once, backoff=repair_backoff)
        # what this process wrote at each of its recent versions (versions are never reused: Redis'
        # clock): a big write's records are logged as ids only, and the writer that has just written
        # them read them back from Chroma for its own index, every round of an import (issue 45)
        self._written: OrderedDict[tuple[str, int], dict[str, tuple[Memory, Vectors]]] = OrderedDict()
        self._written_count = 0

    async def get(self, user_id: str) -> int:
        """The current version; UNKNOWN when Redis cannot say (callers then must not trust a cache)."""
        try:
            raw = await self._redis.get(keys.ltm_version(user_id))
        except RedisError:
            log.warning("ltm version unavailable; keyword index will be rebuilt", exc_info=True)
            return UNKNOWN
        version = int(raw) if raw is not None else 0
        observe(user_id, version)
        return version

    async def bump(
        self,
        user_id: str,
        *,
        upserted: Sequence[str] = (),
        deleted: Sequence[str] = (),
        records: Sequence[tuple[Memory, Vectors]] = (),
    ) -> int:
        """Record a change; returns the new version. `records` are the written memories with their
        vectors, logged so other workers update without a store read. Raises `StoreUnavailable` when
        Redis does not take it: the change must not be acknowledged (module docstring); a background
        retry records it (ids only) once Redis is back."""
        try:
            version = await self._bump_once(user_id, upserted, deleted, records)
        except RedisError as exc:
            metrics.LTM_VERSION_BUMPS_FAILED.labels("failed").inc()
            log.warning(
                "could not bump ltm version: change not acknowledged, retried in the background",
                extra={"reason": f"{type(exc).__name__}: {exc}"},
            )
            self.repairs.add(user_id, upserted, deleted)
            raise StoreUnavailable("redis", f"the change's version was not recorded: {exc}") from exc
        if records:
            self._remember(user_id, version, records)
        return version

    def _remember(self, user_id: str, version: int, records: Sequence[tuple[Memory, Vectors]]) -> None:
        """Keep `records` as a store read would give them (the stored fields only), bounded."""
        self._written[(user_id, version)] = {
            m.id: (from_record(m.id, m.content, to_metadata(m)), v) for m, v in records
        }
        self._written_count += len(records)
        while self._written_count > WRITTEN_KEPT and len(self._written) > 1:
            _, gone = self._written.popitem(last=False)
            self._written_count -= len(gone)

    async def _bump_once(
        self,
        user_id: str,
        upserted: Sequence[str],
        deleted: Sequence[str],
        records: Sequence[tuple[Memory, Vectors]] = (),
    ) -> int:
        raw = await self._bump(keys=_bump_keys(user_id), args=_bump_args(upserted, deleted, records))
        return int(raw)

    async def queue_bump(
        self, pipe: Pipeline | ClusterPipeline, user_id: str, *, upserted: Sequence[str] = ()
    ) -> None:
        """Queue a bump on `pipe` (a transaction), so it commits with whatever else the pipeline holds
        (the placement switch of a rebalance). Its result is the new version. EVAL, not EVALSHA: a
        script missing from the server's cache would fail inside MULTI while the rest applies."""
        bump_keys = _bump_keys(user_id)
        pipe.eval(_BUMP, len(bump_keys), *bump_keys, *_bump_args(upserted, (), ()))

    async def changes(self, user_id: str, since: int, until: int, *, max_steps: int = 64) -> Changes | None:
        """What changed from version `since` to `until`, or None when the log cannot say."""
        if until <= since:
            return None
        try:
            raw: Any = await self._redis.xrevrange(keys.ltm_changes(user_id), count=max_steps)
        except RedisError:
            return None
        by_version = {int(f["v"]): f for _, f in raw if "v" in f and "prev" in f}
        chain: list[dict[str, str]] = []
        at = until
        while at != since:
            entry = by_version.get(at)
            if entry is None:
                return None
            chain.append(entry)
            at = int(entry["prev"])
            if at < since:
                return None
        upserted: set[str] = set()
        deleted: set[str] = set()
        records: dict[str, tuple[Memory, Vectors]] = {}
        for entry in reversed(chain):  # oldest first: the last word on an id wins
            logged = _decode(entry.get("data", "[]")) or self._written.get((user_id, int(entry["v"])), {})
            for i in json.loads(entry["up"]):
                upserted.add(i)
                deleted.discard(i)
                if i in logged:
                    records[i] = logged[i]
                else:
                    records.pop(i, None)
            for i in json.loads(entry["del"]):
                deleted.add(i)
                upserted.discard(i)
                records.pop(i, None)
        return Changes(frozenset(upserted), frozenset(deleted), records)


Bump = Callable[[str, Sequence[str], Sequence[str]], Awaitable[int]]


class VersionRepairs:
    """The version bumps that failed in this process, retried with backoff until Redis takes them. Ids
    only (no records): workers fetch those memories from the store. A pending change of a user merges
    with the next failed one. What a crash of this process loses here is covered by the 503 its caller
    answered: the client retries the write."""

    def __init__(self, bump: Bump, *, backoff: tuple[float, float]) -> None:
        self._bump = bump
        self._first, self._max = backoff
        self._pending: dict[str, tuple[set[str], set[str]]] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def pending(self) -> dict[str, tuple[frozenset[str], frozenset[str]]]:
        """user id -> (upserted, deleted) ids not yet recorded."""
        return {u: (frozenset(up), frozenset(gone)) for u, (up, gone) in self._pending.items()}

    def add(self, user_id: str, upserted: Sequence[str], deleted: Sequence[str]) -> None:
        up, gone = self._pending.setdefault(user_id, (set(), set()))
        up.update(upserted)
        up.difference_update(deleted)
        gone.update(deleted)
        gone.difference_update(upserted)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run(), name="ltm-version-repairs")

    async def _run(self) -> None:
        delay = self._first
        while self._pending:
            await asyncio.sleep(delay)
            for user_id in list(self._pending):
                up, gone = self._pending[user_id]
                sent_up, sent_gone = set(up), set(gone)  # `add` may grow the sets while this waits
                try:
                    await self._bump(user_id, sorted(sent_up), sorted(sent_gone))
                except RedisError:
                    break  # Redis is still away: wait longer, then try every user again
                up -= sent_up
                gone -= sent_gone
                if not up and not gone:
                    del self._pending[user_id]
                metrics.LTM_VERSION_BUMPS_FAILED.labels("repaired").inc()
                changes = len(sent_up) + len(sent_gone)
                log.info("ltm version bumped after a Redis failure", extra={"changes": changes})
            delay = min(self._max, delay * 2) if self._pending else self._first


def _bump_keys(user_id: str) -> list[str]:
    return [
        keys.ltm_version(user_id),
        keys.ltm_changes(user_id),
        keys.ltm_snapshot(user_id),
        keys.ltm_claims(user_id),
    ]


def _bump_args(
    upserted: Sequence[str], deleted: Sequence[str], records: Sequence[tuple[Memory, Vectors]]
) -> list[str | int]:
    # a big write (a bulk import) logs ids only: encoding it would cost more than the read it saves
    data = _encode(records) if len(records) <= MAX_LOGGED_RECORDS else "[]"
    return [
        json.dumps(list(upserted)),
        json.dumps(list(deleted)),
        CHANGES_KEPT,
        data if len(data) <= MAX_RECORDS_BYTES else "[]",
        CHANGES_TTL_MS,
    ]


def _encode(records: Sequence[tuple[Memory, Vectors]]) -> str:
    return json.dumps(
        [
            {
                "id": m.id,
                "doc": m.content,
                "meta": to_metadata(m),
                "vec": base64.b64encode(np.asarray(v, dtype=np.float16).tobytes()).decode(),
            }
            for m, v in records
        ],
        ensure_ascii=False,
    )


def _decode(raw: str) -> dict[str, tuple[Memory, Vectors]]:
    out: dict[str, tuple[Memory, Vectors]] = {}
    try:
        for item in json.loads(raw):
            vec = np.frombuffer(base64.b64decode(item["vec"]), dtype=np.float16).astype(np.float32)
            out[item["id"]] = (from_record(item["id"], item["doc"], item["meta"]), vec)
    except (ValueError, KeyError, TypeError):
        return {}  # an unreadable log entry only costs a store read
    return out
