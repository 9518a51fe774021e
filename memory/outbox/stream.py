"""Durable hand-off of chat turns to long-term memory: one Redis Stream per outbox partition.

The chat path appends an entry (XADD, in the turn's MULTI/EXEC) to the stream of the user's partition,
which shares the user's hash slot (memory/keys.py), and returns. The writers (`memory/outbox/worker.py`)
read the partitions through one consumer group and delete each entry once it is in long-term memory,
so what is in a stream is exactly what is not yet written. A user's entries live in their partition's
streams only: erase, scrub and export read those, never the others.

Each partition has a second stream in the same slot, its import lane (`keys.import_stream`): a whole
history imported at once (`append_import`) is cut into entries of the chat path's size there, with a job
record for its status. The writers read a partition's import lane only when its chat stream has nothing
for them (memory/outbox/worker.py), so an import never delays a chat turn's write.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from collections.abc import AsyncIterator, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from redis.exceptions import RedisError, ResponseError

from memory import keys
from memory.models import Message
from memory.redis_client import RedisClient, ReplicaAck

log = logging.getLogger(__name__)
IMPORT_CHUNK = 8  # messages per import entry: a chat turn's size, so the writers' rounds stay as short
IMPORT_PREVIOUS = 2  # messages before each chunk, carried as its context (as a chat turn's `previous`)
IMPORT_JOB_TTL_SECONDS = 7 * 86_400  # how long an import's status can be asked for


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    user_id: str
    session_id: str
    messages: tuple[Message, ...]
    previous: tuple[Message, ...] = ()  # the messages just before (context, confirmations)
    enqueued_at: float | None = None  # from the stream entry id (Redis' clock); not a field of its own
    # the user's IANA time zone when the turn named one ("Asia/Shanghai"): its relative dates are
    # resolved in it by the writer; None: the deployment's `TIME_ZONE`
    time_zone: str | None = None
    import_id: str | None = None  # an entry of an import (the import lane), not a chat turn

    def to_fields(self) -> dict[str, str]:
        fields = {
            "user_id": self.user_id,
            "session_id": self.session_id,
            "messages": _dump(self.messages),
            "previous": _dump(self.previous),
        }
        if self.enqueued_at is not None:  # re-appended (scrub, migration): keep the original time
            fields["enqueued_at"] = repr(self.enqueued_at)
        if self.time_zone is not None:
            fields["time_zone"] = self.time_zone
        if self.import_id is not None:
            fields["import_id"] = self.import_id
        return fields

    @classmethod
    def from_fields(cls, fields: dict[str, str], entry_id: str | None = None) -> OutboxEntry:
        return cls(
            user_id=fields["user_id"],
            session_id=fields["session_id"],
            messages=_load(fields["messages"]),
            previous=_load(fields.get("previous", "[]")),
            enqueued_at=_enqueued_at(fields, entry_id),
            time_zone=fields.get("time_zone"),
            import_id=fields.get("import_id"),
        )


@dataclass(frozen=True, slots=True)
class ImportJob:
    """One import as its status tells it: what it queued, and how many of its entries are still to be
    written."""

    import_id: str
    messages: int
    entries: int
    pending_entries: int

    @property
    def done(self) -> bool:
        return self.pending_entries == 0


def import_entries(
    user_id: str,
    session_id: str,
    messages: Sequence[Message],
    *,
    import_id: str,
    time_zone: str | None = None,
) -> list[OutboxEntry]:
    """A history as the chat path would have queued it: chunks of `IMPORT_CHUNK` messages, each with the
    `IMPORT_PREVIOUS` messages before it as its context."""
    return [
        OutboxEntry(
            user_id,
            session_id,
            tuple(messages[start : start + IMPORT_CHUNK]),
            previous=tuple(messages[max(0, start - IMPORT_PREVIOUS) : start]),
            time_zone=time_zone,
            import_id=import_id,
        )
        for start in range(0, len(messages), IMPORT_CHUNK)
    ]


def _enqueued_at(fields: dict[str, str], entry_id: str | None) -> float | None:
    """From the stream entry id (Redis' clock); an entry moved by the layout migration keeps the time
    of its original id in a field of its own."""
    if "enqueued_at" in fields:
        return float(fields["enqueued_at"])
    return int(entry_id.split("-", 1)[0]) / 1000 if entry_id else None


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
        self, redis: RedisClient, *, group: str = keys.OUTBOX_GROUP, replicas: ReplicaAck | None = None
    ) -> None:
        """`replicas`: an import is acknowledged only once they have it (as a chat turn's commit is)."""
        self.redis = redis
        self.group = group
        self.dead_letters = keys.OUTBOX_DEAD_LETTERS  # one for every outbox, as the worker writes it
        self._replicas = replicas or ReplicaAck(redis, replicas=0, timeout_ms=0)

    @staticmethod
    def stream_of(user_id: str) -> str:
        return keys.outbox_stream_of(user_id)

    @staticmethod
    def streams() -> list[str]:
        return [keys.outbox_stream(p) for p in range(keys.partitions())]

    @staticmethod
    def import_streams() -> list[str]:
        return [keys.import_stream(p) for p in range(keys.partitions())]

    @staticmethod
    def _streams_of(user_id: str) -> tuple[str, str]:
        """The user's chat stream and import lane (one slot), in the order the writers read them."""
        return keys.outbox_stream_of(user_id), keys.import_stream_of(user_id)

    async def ensure_group(self, stream: str) -> None:
        try:
            # id 0: entries appended before the group existed are processed too
            await self.redis.xgroup_create(stream, self.group, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def append(self, entry: OutboxEntry) -> str:
        fields: dict[Any, Any] = entry.to_fields()
        return str(await self.redis.xadd(self.stream_of(entry.user_id), fields))

    async def pending(self) -> int:
        """Entries not yet written to long-term memory, over every partition, chat and import lanes."""
        return sum(await self.backlog())

    async def backlog(self) -> tuple[int, int]:
        """(chat entries, import entries) not yet written, over every partition."""
        chat, imports = self.streams(), self.import_streams()
        async with self.redis.pipeline(transaction=False) as pipe:
            for stream in chat + imports:
                pipe.xlen(stream)
            counts = [int(n) for n in await pipe.execute()]
        return sum(counts[: len(chat)]), sum(counts[len(chat) :])

    async def import_backlog(self, user_id: str) -> int:
        """Entries in the import lane of this user's partition (every user of it), not yet written."""
        return int(await self.redis.xlen(keys.import_stream_of(user_id)))

    async def append_import(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[Message],
        *,
        import_id: str,
        time_zone: str | None = None,
    ) -> ImportJob:
        """Queue a whole history on the import lane of the user's partition, with its job record, in one
        transaction; then, with replicas required, wait until they have it (an acknowledged import
        survives a failover). The job record learns the range of its entries right after."""
        entries = import_entries(user_id, session_id, messages, import_id=import_id, time_zone=time_zone)
        job, stream = keys.import_job(user_id, import_id), keys.import_stream_of(user_id)
        record = {"messages": str(len(messages)), "entries": str(len(entries))}
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(job, mapping=record)  # type: ignore[arg-type]
            pipe.expire(job, IMPORT_JOB_TTL_SECONDS)
            for entry in entries:
                fields: dict[Any, Any] = entry.to_fields()
                pipe.xadd(stream, fields)
            ids = [str(i) for i in (await pipe.execute())[2:]]
        if ids:  # one transaction: this import's entries are exactly the ones between these two
            await self.redis.hset(job, mapping={"first": ids[0], "last": ids[-1]})
        await self._replicas.wait(stream, keys.replica_ack(user_id))
        return ImportJob(import_id, len(messages), len(entries), len(entries))

    async def import_job(self, user_id: str, import_id: str) -> ImportJob | None:
        """The status of one import of this user; None when there is no such import (or it expired, or
        the user was erased since)."""
        record: Any = await self.redis.hgetall(keys.import_job(user_id, import_id))
        if not record or "entries" not in record:
            return None
        entries, stream = int(record["entries"]), keys.import_stream_of(user_id)
        pending = 0
        if entries and "first" in record and "last" in record:
            found: Any = await self.redis.xrange(stream, min=record["first"], max=record["last"])
            pending = sum(1 for _, f in found if f and f.get("import_id") == import_id)
        elif entries:  # the range was not recorded (a failure right after the transaction): scan
            async for _, fields in self._fields_of(user_id, stream=stream):
                pending += fields.get("import_id") == import_id
        return ImportJob(import_id, int(record.get("messages", 0)), entries, pending)

    async def wait_for_room(self, user_id: str, limit: int, max_wait: float, *, poll: float = 0.05) -> float:
        """Backpressure: while the user's partition holds more than its share of `limit` (the total
        bound, split evenly over the partitions), wait for the writers to catch up, at most `max_wait`
        seconds; returns the seconds waited. A chat turn is never refused or dropped here, only slowed;
        a Redis failure ends the wait (the append will report it). `limit` 0 never waits."""
        if limit <= 0:
            return 0.0
        share = max(1, math.ceil(limit / keys.partitions()))
        stream = self.stream_of(user_id)
        loop = asyncio.get_running_loop()
        started = loop.time()
        waited = 0.0  # stays 0 when there was room at once
        while True:
            try:
                backlog = int(await self.redis.xlen(stream))
            except (RedisError, OSError):
                return waited
            if backlog <= share or waited >= max_wait:
                return waited
            await asyncio.sleep(poll)
            waited = loop.time() - started

    async def _fields_of(
        self, user_id: str, page: int = 500, *, stream: str | None = None
    ) -> AsyncIterator[tuple[str, dict[str, str]]]:
        """This user's raw entries in one stream (the user's chat stream, or `stream`), oldest first."""
        stream = stream or self.stream_of(user_id)
        start = "-"
        while True:
            batch: Any = await self.redis.xrange(stream, min=start, count=page)
            for entry_id, fields in batch:
                if fields.get("user_id") == user_id:
                    yield str(entry_id), fields
            if len(batch) < page:
                return
            start = f"({batch[-1][0]}"

    async def _all_fields_of(self, user_id: str) -> AsyncIterator[tuple[str, str, dict[str, str]]]:
        """(stream, id, fields) of this user's entries not yet written: chat turns, then imports."""
        for stream in self._streams_of(user_id):
            async for entry_id, fields in self._fields_of(user_id, stream=stream):
                yield stream, entry_id, fields

    async def _entries_in(self, user_id: str) -> AsyncIterator[tuple[str, str, OutboxEntry]]:
        async for stream, entry_id, fields in self._all_fields_of(user_id):
            with contextlib.suppress(KeyError, ValueError, TypeError):
                yield stream, entry_id, OutboxEntry.from_fields(fields, entry_id)

    async def entries_of(self, user_id: str) -> AsyncIterator[tuple[str, OutboxEntry]]:
        """This user's readable entries not yet written (chat turns, then imports), oldest first."""
        async for _, entry_id, entry in self._entries_in(user_id):
            yield entry_id, entry

    async def count_of(self, user_id: str, *, dead: bool = False) -> int:
        """This user's entries not yet written, imports included (or, `dead`, in the dead-letter stream)."""
        if dead:
            return len([i async for i, _ in self._fields_of(user_id, stream=self.dead_letters)])
        return len([i async for _, i, _ in self._all_fields_of(user_id)])

    async def drop_user(self, user_id: str) -> int:
        """Delete every pending entry of this user, imports included (erasure), unreadable ones too."""
        dropped = 0
        for stream in self._streams_of(user_id):
            ids = [entry_id async for entry_id, _ in self._fields_of(user_id, stream=stream)]
            dropped += int(await self.redis.xdel(stream, *ids)) if ids else 0
        return dropped

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
        async for stream, entry_id, entry in self._entries_in(user_id):
            kept = tuple(m for m in entry.messages if m.id not in message_ids)
            if len(kept) == len(entry.messages):
                continue
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.xdel(stream, entry_id)
                if kept:
                    fields: dict[Any, Any] = replace(entry, messages=kept).to_fields()
                    pipe.xadd(stream, fields)
                await pipe.execute()
            changed += 1
        return changed
