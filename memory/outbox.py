"""Durable hand-off of chat turns to long-term memory: a Redis Stream and a consumer group.

The chat path appends an entry (XADD) and returns. An `OutboxWorker` in every app worker reads the
stream through one consumer group, writes to the long-term store, and only then acknowledges and
deletes the entry. A crash before the ack leaves the entry pending: the same consumer re-reads its
pending entries on restart, and other consumers claim entries idle for longer than `claim_idle_ms`.
An entry that can never be processed (malformed) goes to a dead-letter stream instead of blocking.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from memory import keys
from memory.errors import StoreUnavailable
from memory.models import Message

log = logging.getLogger(__name__)
DEAD_LETTER_STREAM = f"{keys.OUTBOX_STREAM}:dead"


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    user_id: str
    session_id: str
    messages: tuple[Message, ...]
    previous: tuple[Message, ...] = ()  # the messages just before (context, confirmations)

    def to_fields(self) -> dict[str, str]:
        return {
            "user_id": self.user_id,
            "session_id": self.session_id,
            "messages": _dump(self.messages),
            "previous": _dump(self.previous),
        }

    @classmethod
    def from_fields(cls, fields: dict[str, str]) -> OutboxEntry:
        return cls(
            user_id=fields["user_id"],
            session_id=fields["session_id"],
            messages=_load(fields["messages"]),
            previous=_load(fields.get("previous", "[]")),
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


Handler = Callable[[OutboxEntry], Awaitable[None]]


class OutboxWorker:
    def __init__(
        self,
        outbox: Outbox,
        handler: Handler,
        *,
        consumer: str,
        batch: int = 16,
        block_ms: int = 1000,
        claim_idle_ms: int = 30_000,
        max_backoff_seconds: float = 5.0,
    ) -> None:
        self._outbox = outbox
        self._handler = handler
        self._consumer = consumer
        self._batch = batch
        self._block_ms = block_ms
        self._claim_idle_ms = claim_idle_ms
        self._max_backoff = max_backoff_seconds
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
                await self._process(redis, stream, group, entries)
                backoff = 0.0
            except (StoreUnavailable, RedisError, OSError) as exc:
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
        return [(str(i), dict(f)) for i, f in items if f]

    async def _process(
        self, redis: Redis, stream: str, group: str, entries: Sequence[tuple[str, dict[str, str]]]
    ) -> None:
        for entry_id, fields in entries:
            try:
                entry = OutboxEntry.from_fields(fields)
            except (KeyError, ValueError, TypeError):
                log.error("malformed outbox entry moved to dead letters", extra={"entry_id": entry_id})
                dead: dict[Any, Any] = {**fields, "source_id": entry_id}
                await redis.xadd(DEAD_LETTER_STREAM, dead)
                await self._ack(redis, stream, group, entry_id)
                continue
            await self._handler(entry)  # raises StoreUnavailable -> stays pending, retried
            await self._ack(redis, stream, group, entry_id)
            self.processed += 1

    async def _ack(self, redis: Redis, stream: str, group: str, entry_id: str) -> None:
        async with redis.pipeline(transaction=True) as pipe:
            pipe.xack(stream, group, entry_id)
            pipe.xdel(stream, entry_id)
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
