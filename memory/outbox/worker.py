"""The long-term writer's loop: read the partitions this writer leases, write, acknowledge, delete.

Each round takes up to `batch` entries from the held partitions (round robin), writes them through the
handler in rounds of one write per user (consecutive turns of a session coalesced), and only then
acknowledges and deletes them. A crash before the ack leaves entries pending; whoever holds the
partition's lease next claims them before reading anything new (memory/outbox/leases.py), so one user's
turns are written in order and, since memory ids are derived from message ids, never twice. An entry that
can never be processed (malformed) goes to a dead-letter stream instead of blocking its partition.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

from redis.exceptions import RedisError

from memory import keys
from memory.errors import MemoryBusy, StoreUnavailable
from memory.outbox.leases import PartitionLeases
from memory.outbox.stream import Outbox, OutboxEntry
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)
DEAD_LETTER_STREAM = keys.OUTBOX_DEAD_LETTERS
# failures that leave entries pending, to be retried with backoff (a store or Redis outage, a busy lock)
TRANSIENT = (StoreUnavailable, MemoryBusy, RedisError, OSError)
Read = tuple[str, str, dict[str, str]]  # (stream, entry id, fields)


Handler = Callable[[Sequence[OutboxEntry]], Awaitable[None]]  # at most one entry per user


def coalesce(items: Sequence[tuple[str, OutboxEntry]], limit: int) -> list[tuple[list[str], OutboxEntry]]:
    """Consecutive entries of one user and session become one write of all their messages (one lock,
    one embedding call, one round of store calls instead of one per turn): what a backlog needs.
    The merged entry keeps the first one's preceding messages (the later ones' are the earlier turns,
    now inside it) and the earliest enqueue time (so an erase after any of them drops the write)."""
    out: list[tuple[list[str], OutboxEntry]] = []
    for entry_id, entry in items:
        if out and len(out[-1][0]) < limit:
            ids, last = out[-1]
            if last.user_id == entry.user_id and last.session_id == entry.session_id:
                ids.append(entry_id)
                out[-1] = (ids, replace(last, messages=last.messages + entry.messages))
                continue
        out.append(([entry_id], entry))
    return out


class OutboxWorker:
    def __init__(
        self,
        outbox: Outbox,
        handler: Handler,
        *,
        consumer: str,
        batch: int = 64,
        idle_poll_seconds: float = 0.1,
        lease_ttl_ms: int = 30_000,
        max_backoff_seconds: float = 5.0,
        coalesce: int = 8,
    ) -> None:
        self._outbox = outbox
        self._handler = handler
        self._consumer = consumer
        self._batch = batch
        self._idle_poll = idle_poll_seconds
        self._max_backoff = max_backoff_seconds
        self._coalesce = coalesce
        self.leases = PartitionLeases(outbox.redis, consumer, ttl_ms=lease_ttl_ms)
        self._stopping = asyncio.Event()
        self._grouped: set[str] = set()  # streams whose consumer group this worker has made sure of
        self._claim: set[str] = set()  # streams newly leased: others' pending entries come first
        self._turn = 0  # round-robin start over the held partitions
        self._own_pending = True  # entries this writer read and has not acknowledged (after a restart too)
        self.processed = 0

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        """Loop until `stop()`: refresh leases when due; per held partition own pending entries first,
        then the previous holder's, then new ones; give the leases back on the way out."""
        backoff = 0.0
        idle = 0.0
        try:
            while not self._stopping.is_set():
                try:
                    if self.leases.due() or not self.leases.held:
                        await self._refresh_leases()
                    entries = await self._read()
                    if not entries:
                        idle = min(self._idle_poll, max(0.01, idle * 2))
                        await self._sleep(idle if self.leases.held else self.leases.refresh_every_seconds)
                        continue
                    idle = 0.0
                    await self._process(await self._parse(entries))
                    backoff = 0.0
                except TRANSIENT as exc:
                    self._own_pending = True
                    if "NOGROUP" in str(exc):
                        self._grouped.clear()
                    backoff = min(self._max_backoff, max(0.2, backoff * 2))
                    log.warning("outbox write deferred", extra={"reason": str(exc), "retry_in_s": backoff})
                    await self._sleep(backoff)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    self._own_pending = True
                    log.exception("outbox worker error")
                    await self._sleep(1.0)
        finally:
            if self._stopping.is_set():  # a clean stop hands the partitions over at once; a crash
                with contextlib.suppress(Exception):  # leaves them to expire (`lease_ttl_ms`)
                    await asyncio.shield(self.leases.release_all())

    async def _refresh_leases(self) -> None:
        _, acquired = await self.leases.refresh()
        for p in acquired:
            self._claim.add(keys.outbox_stream(p))

    async def _read(self) -> list[Read]:
        held = [keys.outbox_stream(p) for p in self.leases.held]
        if not held:
            return []
        self._turn = (self._turn + 1) % len(held)
        held = held[self._turn :] + held[: self._turn]
        redis, group = self._outbox.redis, self._outbox.group
        for stream in held:
            if stream not in self._grouped:
                await self._outbox.ensure_group(stream)
                self._grouped.add(stream)
        out: list[Read] = []
        for stream in list(self._claim & set(held)):
            claimed: Any = await redis.xautoclaim(
                stream, group, self._consumer, 0, start_id="0-0", count=self._batch
            )
            entries = [(str(i), dict(f)) for i, f in claimed[1] if f]
            gone = [str(i) for i in claimed[2]] if len(claimed) > 2 else []
            if gone:  # deleted while pending (erase, scrub): settle them
                await redis.xack(stream, group, *gone)
            if not entries:
                self._claim.discard(stream)  # nothing of the previous holder's left
            out += [(stream, i, f) for i, f in entries]
        if out:
            return out
        # own pending entries first (a round that failed, or read beyond the batch), then new ones
        for start in ("0", ">") if self._own_pending else (">",):
            async with redis.pipeline(transaction=False) as pipe:
                for stream in held:
                    pipe.xreadgroup(group, self._consumer, {stream: start}, count=self._batch)
                responses = await pipe.execute()
            for stream, response in zip(held, responses, strict=True):
                out += await self._items(stream, response)
            if start == "0" and not out:
                self._own_pending = False
            if out:
                break
        # what is read but not taken this round stays in this writer's pending list, in order
        self._own_pending = self._own_pending or len(out) > self._batch
        return out[: self._batch]

    async def _items(self, stream: str, response: Any) -> list[Read]:
        if not response:
            return []
        # RESP2 answers [[stream, entries]], RESP3 answers {stream: [entries]}
        items = response[stream][0] if isinstance(response, dict) else response[0][1]
        gone = [str(i) for i, f in items if not f]  # deleted while pending (erase, scrub): settle them
        if gone:
            await self._outbox.redis.xack(stream, self._outbox.group, *gone)
        return [(stream, str(i), dict(f)) for i, f in items if f]

    async def _process(self, entries: Sequence[tuple[str, str, OutboxEntry | None]]) -> None:
        """One handler call per round: the next write of every user in the batch (each user's entries
        in stream order, consecutive turns of a session coalesced), so one round costs one lock per
        user and one store call per collection, not one per user. A round that fails on a store
        outage stays pending and is retried; one that fails otherwise is retried entry by entry, so
        a single bad entry cannot hold back everyone else's."""
        by_user: dict[str, list[tuple[str, OutboxEntry]]] = {}
        stream_of: dict[str, str] = {}
        for stream, entry_id, entry in entries:
            if entry is not None:
                by_user.setdefault(entry.user_id, []).append((entry_id, entry))
                stream_of[entry.user_id] = stream
        queues = [coalesce(items, self._coalesce) for items in by_user.values()]
        for depth in range(max((len(q) for q in queues), default=0)):
            if self._stopping.is_set():  # shutting down: the rest stay pending for the next reader
                return
            round_ = [q[depth] for q in queues if depth < len(q)]
            try:
                await self._handler([entry for _, entry in round_])
            except TRANSIENT:
                raise
            except Exception:
                if len(round_) == 1:
                    raise
                log.exception("outbox round failed; retrying its entries one by one")
                await self._one_by_one(stream_of, round_)
                continue
            for ids, entry in round_:
                await self._ack(stream_of[entry.user_id], *ids)
            self.processed += sum(len(ids) for ids, _ in round_)

    async def _one_by_one(
        self, stream_of: dict[str, str], round_: Sequence[tuple[list[str], OutboxEntry]]
    ) -> None:
        failure: BaseException | None = None
        for ids, entry in round_:
            try:
                await self._handler([entry])
            except TRANSIENT:
                raise
            except Exception as exc:  # stays pending; the others are written
                failure = failure or exc
                continue
            await self._ack(stream_of[entry.user_id], *ids)
            self.processed += len(ids)
        if failure is not None:
            raise failure

    async def _parse(self, entries: Sequence[Read]) -> list[tuple[str, str, OutboxEntry | None]]:
        """Entries as read; a malformed one goes to the dead-letter stream (and is None here)."""
        out: list[tuple[str, str, OutboxEntry | None]] = []
        for stream, entry_id, fields in entries:
            try:
                out.append((stream, entry_id, OutboxEntry.from_fields(fields, entry_id)))
            except (KeyError, ValueError, TypeError):
                log.error("malformed outbox entry moved to dead letters", extra={"entry_id": entry_id})
                dead: dict[Any, Any] = {**fields, "source_id": entry_id, "source_stream": stream}
                await self._outbox.redis.xadd(DEAD_LETTER_STREAM, dead)
                await self._ack(stream, entry_id)
                out.append((stream, entry_id, None))
        return out

    async def _ack(self, stream: str, *entry_ids: str) -> None:
        redis: RedisClient = self._outbox.redis
        async with redis.pipeline(transaction=True) as pipe:
            pipe.xack(stream, self._outbox.group, *entry_ids)
            pipe.xdel(stream, *entry_ids)
            await pipe.execute()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    async def drain(self, timeout: float = 30.0) -> bool:
        """Wait until every partition is empty (tests and benchmarks)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            if await self._outbox.pending() == 0:
                return True
            await asyncio.sleep(0.05)
        return False
