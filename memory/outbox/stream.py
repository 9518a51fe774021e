"""Durable hand-off of chat turns to long-term memory: one Redis Stream per outbox partition.

The chat path appends an entry (XADD, in the turn's MULTI/EXEC) to the stream of the user's partition,
which shares the user's hash slot (memory/keys.py), and returns. The writers (`memory/outbox/worker.py`)
read the partitions through one consumer group and delete each entry once it is in long-term memory,
so what is in a stream is exactly what is not yet written. A user's entries live in one stream only:
erase, scrub and export read that one stream, never the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from collections.abc import AsyncIterator, Collection
from dataclasses import dataclass, replace
from typing import Any

from redis.exceptions import RedisError, ResponseError

from memory import keys
from memory.models import Message
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)


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
        )


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
    def __init__(self, redis: RedisClient, *, group: str = keys.OUTBOX_GROUP) -> None:
        self.redis = redis
        self.group = group
        self.dead_letters = keys.OUTBOX_DEAD_LETTERS  # one for every outbox, as the worker writes it

    @staticmethod
    def stream_of(user_id: str) -> str:
        return keys.outbox_stream_of(user_id)

    @staticmethod
    def streams() -> list[str]:
        return [keys.outbox_stream(p) for p in range(keys.partitions())]

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
        """Entries not yet written to long-term memory, over every partition."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for stream in self.streams():
                pipe.xlen(stream)
            return sum(int(n) for n in await pipe.execute())

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
        """This user's raw entries not yet written, oldest first (a scan of the user's partition, or of
        `stream`)."""
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

    async def entries_of(self, user_id: str) -> AsyncIterator[tuple[str, OutboxEntry]]:
        """This user's readable entries not yet written, oldest first."""
        async for entry_id, fields in self._fields_of(user_id):
            with contextlib.suppress(KeyError, ValueError, TypeError):
                yield entry_id, OutboxEntry.from_fields(fields, entry_id)

    async def count_of(self, user_id: str, *, dead: bool = False) -> int:
        """This user's entries not yet written (or, `dead`, in the dead-letter stream)."""
        stream = self.dead_letters if dead else None
        return len([entry_id async for entry_id, _ in self._fields_of(user_id, stream=stream)])

    async def drop_user(self, user_id: str) -> int:
        """Delete every pending entry of this user (erasure), unreadable ones included."""
        ids = [entry_id async for entry_id, _ in self._fields_of(user_id)]
        return int(await self.redis.xdel(self.stream_of(user_id), *ids)) if ids else 0

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
        stream = self.stream_of(user_id)
        changed = 0
        async for entry_id, entry in self.entries_of(user_id):
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
