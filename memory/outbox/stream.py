"""Durable hand-off of chat turns to long-term memory: a Redis Stream and a consumer group.

The chat path appends an entry (XADD) and returns. An `OutboxWorker` (the writer process, or every app
worker with OUTBOX_WORKER) reads the stream through one consumer group, up to 64 entries at a time,
writes them to the long-term store in rounds of one write per user, and only then acknowledges and
deletes the entries. A crash before the ack leaves the entry pending: the same consumer re-reads its
pending entries on restart, and other consumers claim entries idle for longer than `claim_idle_ms`.
An entry that can never be processed (malformed) goes to a dead-letter stream instead of blocking.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from memory import keys
from memory.errors import MemoryBusy, StoreUnavailable
from memory.models import Message

log = logging.getLogger(__name__)
DEAD_LETTER_STREAM = f"{keys.OUTBOX_STREAM}:dead"
# failures that leave entries pending, to be retried with backoff (a store or Redis outage, a busy lock)
TRANSIENT = (StoreUnavailable, MemoryBusy, RedisError, OSError)


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    user_id: str
    session_id: str
    messages: tuple[Message, ...]
    previous: tuple[Message, ...] = ()  # the messages just before (context, confirmations)
    enqueued_at: float | None = None  # from the stream entry id (Redis' clock); not a field of its own

    def to_fields(self) -> dict[str, str]:
        return {
            "user_id": self.user_id,
            "session_id": self.session_id,
            "messages": _dump(self.messages),
            "previous": _dump(self.previous),
        }

    @classmethod
    def from_fields(cls, fields: dict[str, str], entry_id: str | None = None) -> OutboxEntry:
        return cls(
            user_id=fields["user_id"],
            session_id=fields["session_id"],
            messages=_load(fields["messages"]),
            previous=_load(fields.get("previous", "[]")),
            enqueued_at=int(entry_id.split("-", 1)[0]) / 1000 if entry_id else None,
        )


def _dump(messages: tuple[Message, ...]) -> str:
    return json.dumps(
        [
            {"role": m.role, "content": m.content, "name": m.name, "id": m.id, "timestamp": m.timestamp}
            for m in messages
        ],
        ensure_ascii=False,
    )


def _load(raw: str) -> tuple[Message, ...]:
    return tuple(
        Message(
            role="assistant" if m["role"] == "assistant" else "user",
            content=m["content"],
            name=m.get("name"),
            id=m.get("id"),
            timestamp=m.get("timestamp"),
        )
        for m in json.loads(raw)
    )


class Outbox:
    def __init__(
        self, redis: Redis, *, stream: str = keys.OUTBOX_STREAM, group: str = keys.OUTBOX_GROUP
    ) -> None:
        self.redis = redis
        self.stream = stream
        self.group = group
        self.dead_letters = DEAD_LETTER_STREAM  # one for every outbox, as the worker writes it

    async def ensure_group(self) -> None:
        try:
            # id 0: entries appended before the group existed are processed too
            await self.redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def append(self, entry: OutboxEntry) -> str:
        return str(await self.redis.xadd(self.stream, entry.to_fields()))  # type: ignore[arg-type]

    async def pending(self) -> int:
        """Entries not yet written to long-term memory (acknowledged entries are deleted)."""
        return int(await self.redis.xlen(self.stream))

    async def wait_for_room(self, limit: int, max_wait: float, *, poll: float = 0.05) -> float:
        """Backpressure: while more than `limit` entries wait to be written, wait for the writer to
        catch up, at most `max_wait` seconds; returns the seconds waited. A chat turn is never refused
        or dropped here, only slowed; a Redis failure ends the wait (the append will report it).
        `limit` 0 never waits."""
        if limit <= 0:
            return 0.0
        loop = asyncio.get_running_loop()
        started = loop.time()
        waited = 0.0  # stays 0 when there was room at once
        while True:
            try:
                backlog = await self.pending()
            except (RedisError, OSError):
                return waited
            if backlog <= limit or waited >= max_wait:
                return waited
            await asyncio.sleep(poll)
            waited = loop.time() - started

    async def _fields_of(
        self, user_id: str, page: int = 500, *, stream: str | None = None
    ) -> AsyncIterator[tuple[str, dict[str, str]]]:
        """This user's raw entries not yet written, oldest first (a scan of the whole stream, in pages)."""
        start = "-"
        while True:
            batch: Any = await self.redis.xrange(stream or self.stream, min=start, count=page)
            for entry_id, fields in batch:
                if fields.get("user_id") == user_id:
                    yield str(entry_id), fields
            if len(batch) < page:
                return
            start = f"({batch[-1][0]}"

    async def entries_of(self, user_id: str) -> AsyncIterator[tuple[str, OutboxEntry]]:
        """This user's readable entries not yet written, oldest first."""
        async for entry_id, fields in self._fields_of(user_id):
            with contextlib.suppress(KeyError, ValueError, TypeError):
                yield entry_id, OutboxEntry.from_fields(fields, entry_id)

    async def drop_user(self, user_id: str) -> int:
        """Delete every pending entry of this user (erasure), unreadable ones included."""
        ids = [entry_id async for entry_id, _ in self._fields_of(user_id)]
        return int(await self.redis.xdel(self.stream, *ids)) if ids else 0

    async def drop_dead_letters(self, user_id: str) -> int:
        """Delete this user's entries from the dead-letter stream (erasure): a malformed turn is still
        the user's text."""
        ids = [entry_id async for entry_id, _ in self._fields_of(user_id, stream=self.dead_letters)]
        return int(await self.redis.xdel(self.dead_letters, *ids)) if ids else 0

    async def scrub(self, user_id: str, message_ids: Collection[str]) -> int:
        """Remove these messages from the user's pending entries (a deleted memory must not stay in,
        or come back from, the outbox). An entry left with no message is deleted, otherwise it is
        replaced by one without them. Returns how many entries changed."""
        if not message_ids:
            return 0
        changed = 0
        async for entry_id, entry in self.entries_of(user_id):
            kept = tuple(m for m in entry.messages if m.id not in message_ids)
            if len(kept) == len(entry.messages):
                continue
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.xdel(self.stream, entry_id)
                if kept:
                    pipe.xadd(self.stream, replace(entry, messages=kept).to_fields())  # type: ignore[arg-type]
                await pipe.execute()
            changed += 1
        return changed


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
        block_ms: int = 1000,
        claim_idle_ms: int = 30_000,
        max_backoff_seconds: float = 5.0,
        coalesce: int = 8,
    ) -> None:
        self._outbox = outbox
        self._handler = handler
        self._consumer = consumer
        self._batch = batch
        self._block_ms = block_ms
        self._claim_idle_ms = claim_idle_ms
        self._max_backoff = max_backoff_seconds
        self._coalesce = coalesce
        self._stopping = asyncio.Event()
        self.processed = 0

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        """Loop until `stop()`: own pending entries first, then claimed ones, then new ones."""
        redis, stream, group = self._outbox.redis, self._outbox.stream, self._outbox.group
        backoff = 0.0
        group_ready = False
        while not self._stopping.is_set():
            try:
                if not group_ready:  # once, and again only after Redis lost it (NOGROUP below)
                    await self._outbox.ensure_group()
                    group_ready = True
                entries = await self._read(redis, stream, group, "0", block=None)
                if not entries:
                    claimed: Any = await redis.xautoclaim(
                        stream, group, self._consumer, self._claim_idle_ms, start_id="0-0", count=self._batch
                    )
                    entries = [(i, f) for i, f in claimed[1] if f]
                if not entries:
                    entries = await self._read(redis, stream, group, ">", block=self._block_ms)
                await self._process(redis, stream, group, await self._parse(redis, stream, group, entries))
                backoff = 0.0
            except TRANSIENT as exc:
                if "NOGROUP" in str(exc):
                    group_ready = False
                backoff = min(self._max_backoff, max(0.2, backoff * 2))
                log.warning("outbox write deferred", extra={"reason": str(exc), "retry_in_s": backoff})
                await self._sleep(backoff)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("outbox worker error")
                await self._sleep(1.0)

    async def _read(
        self, redis: Redis, stream: str, group: str, start: str, *, block: int | None
    ) -> list[tuple[str, dict[str, str]]]:
        response: Any = await redis.xreadgroup(
            group, self._consumer, {stream: start}, count=self._batch, block=block
        )
        if not response:
            return []
        # RESP2 answers [[stream, entries]], RESP3 answers {stream: [entries]}
        items = response[stream][0] if isinstance(response, dict) else response[0][1]
        gone = [str(i) for i, f in items if not f]  # deleted while pending (erase, scrub): settle them
        if gone:
            await redis.xack(stream, group, *gone)
        return [(str(i), dict(f)) for i, f in items if f]

    async def _process(
        self, redis: Redis, stream: str, group: str, entries: Sequence[tuple[str, OutboxEntry | None]]
    ) -> None:
        """One handler call per round: the next write of every user in the batch (each user's entries
        in stream order, consecutive turns of a session coalesced), so one round costs one lock per
        user and one store call per collection, not one per user. A round that fails on a store
        outage stays pending and is retried; one that fails otherwise is retried entry by entry, so
        a single bad entry cannot hold back everyone else's."""
        by_user: dict[str, list[tuple[str, OutboxEntry]]] = {}
        for entry_id, entry in entries:
            if entry is not None:
                by_user.setdefault(entry.user_id, []).append((entry_id, entry))
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
                await self._one_by_one(redis, stream, group, round_)
                continue
            await self._ack(redis, stream, group, *(i for ids, _ in round_ for i in ids))
            self.processed += sum(len(ids) for ids, _ in round_)

    async def _one_by_one(
        self, redis: Redis, stream: str, group: str, round_: Sequence[tuple[list[str], OutboxEntry]]
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
            await self._ack(redis, stream, group, *ids)
            self.processed += len(ids)
        if failure is not None:
            raise failure

    async def _parse(
        self, redis: Redis, stream: str, group: str, entries: Sequence[tuple[str, dict[str, str]]]
    ) -> list[tuple[str, OutboxEntry | None]]:
        """Entries as read; a malformed one goes to the dead-letter stream (and is None here)."""
        out: list[tuple[str, OutboxEntry | None]] = []
        for entry_id, fields in entries:
            try:
                out.append((entry_id, OutboxEntry.from_fields(fields, entry_id)))
            except (KeyError, ValueError, TypeError):
                log.error("malformed outbox entry moved to dead letters", extra={"entry_id": entry_id})
                dead: dict[Any, Any] = {**fields, "source_id": entry_id}
                await redis.xadd(DEAD_LETTER_STREAM, dead)
                await self._ack(redis, stream, group, entry_id)
                out.append((entry_id, None))
        return out

    async def _ack(self, redis: Redis, stream: str, group: str, *entry_ids: str) -> None:
        async with redis.pipeline(transaction=True) as pipe:
            pipe.xack(stream, group, *entry_ids)
            pipe.xdel(stream, *entry_ids)
            await pipe.execute()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    async def drain(self, timeout: float = 30.0) -> bool:
        """Wait until the stream is empty (tests and benchmarks)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            if await self._outbox.pending() == 0:
                return True
            await asyncio.sleep(0.05)
        return False
