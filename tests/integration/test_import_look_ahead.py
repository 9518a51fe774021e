"""The writer's look-ahead on the import lane (issue 45): while an import round is stored, the next
round's texts are embedded, and that round then embeds nothing; order, acks and failures unchanged."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from app.composition import build_memory_service, build_store
from app.settings import Settings
from memory import Embedder
from memory.models import Message
from memory.outbox.stream import IMPORT_CHUNK, Outbox, OutboxEntry
from memory.outbox.worker import OutboxWorker
from memory.redis_client import RedisClient
from tests.conftest import redis_of
from tests.integration.test_imports import (
    drained,
    r,  # noqa: F401 - the fixture: a clean outbox
)
from tests.integration.test_shared_vectors import CountingEmbedder

pytestmark = pytest.mark.integration

HISTORY = [
    Message("user", "我住在杭州，在西湖边上，每天骑车去公司。", id="h0"),
    Message("assistant", "好的，我记住了：你住在杭州西湖边。", id="h1"),
    Message("user", "I work as a nurse at a children's hospital, mostly night shifts.", id="h2"),
    Message("user", "Always answer me in bullet points, please.", id="h3"),
    Message("user", "以后回答我请一律用要点列出来。", id="h4"),
]


def _entries(user: str) -> list[OutboxEntry]:
    return [OutboxEntry(user, "history", (m,), import_id="imp_" + "b" * 32) for m in HISTORY]


async def test_a_round_warmed_ahead_embeds_nothing_and_stores_the_same_vectors(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    counting = CountingEmbedder(embedder)
    service = build_memory_service(settings, build_store(settings, redis), counting, redis)
    try:
        entries = _entries("wen")
        await service.warm_entries(entries)
        warmed = list(counting.texts)
        assert any("西湖" in t for t in warmed)
        assert any("nurse" in t for t in warmed)
        await service.ingest_entries([entries[0]])  # one entry per user a call, as the worker sends
        for entry in entries[1:]:
            await service.ingest_entries([entry])
        assert counting.texts == warmed  # every text was embedded once, ahead
        stored, vectors = await service._store.get_with_vectors("wen")
        assert len(stored) >= len(HISTORY) - 1  # the assistant's echo may merge
        fresh = await embedder.embed([m.embed_text for m in stored])
        assert float((vectors * fresh).sum(axis=1).min()) > 0.9999
    finally:
        await redis.aclose()


async def test_the_worker_looks_ahead_in_order_and_waits_for_it(r: RedisClient) -> None:  # noqa: F811
    """An import of 5 entries, 2 a round: beside round [0, 1] the look-ahead gets [2, 3], beside
    [2, 3] it gets [4]; each import round starts only once the look-ahead of it is done; the writes
    are those without a look-ahead, in order."""
    outbox = Outbox(r)
    history = [Message("user", f"旧消息 old message {n}", id=f"h{n}") for n in range(5 * IMPORT_CHUNK)]
    await outbox.append_import("ana.b", "history", history, import_id="imp_" + "a" * 32)
    events: list[str] = []

    async def handle(batch: Sequence[OutboxEntry]) -> None:
        events.extend(f"write {e.messages[0].id}" for e in batch)

    async def look_ahead(batch: Sequence[OutboxEntry]) -> None:
        first = ",".join(str(e.messages[0].id) for e in batch)
        events.append(f"ahead {first} start")
        await asyncio.sleep(0.3)  # slower than a write: the next round must wait for it
        events.append(f"ahead {first} done")

    await drained(
        OutboxWorker(outbox, handle, consumer="w", import_batch=2, coalesce=1, look_ahead=look_ahead)
    )
    c = IMPORT_CHUNK
    assert [e for e in events if e.startswith("write")] == [f"write h{n * c}" for n in range(5)]
    second, third = f"h{2 * c},h{3 * c}", f"h{4 * c}"
    assert events.index(f"ahead {second} start") < events.index(f"write h{c}")  # beside round 1
    assert events.index(f"ahead {second} done") < events.index(f"write h{2 * c}")  # awaited
    assert events.index(f"ahead {third} done") < events.index(f"write h{4 * c}")
    assert not any(e.startswith("ahead") and e.endswith("start") and "h0" in e for e in events)


async def test_a_failing_look_ahead_costs_no_write(r: RedisClient) -> None:  # noqa: F811
    outbox = Outbox(r)
    history = [Message("user", f"message {n}", id=f"m{n}") for n in range(3 * IMPORT_CHUNK)]
    await outbox.append_import("bo", "history", history, import_id="imp_" + "c" * 32)
    written: list[str] = []

    async def handle(batch: Sequence[OutboxEntry]) -> None:
        written.extend(str(e.messages[0].id) for e in batch)

    async def look_ahead(batch: Sequence[OutboxEntry]) -> None:
        raise RuntimeError("the model server is down")

    await drained(
        OutboxWorker(outbox, handle, consumer="w", import_batch=2, coalesce=1, look_ahead=look_ahead)
    )
    assert written == [f"m{n * IMPORT_CHUNK}" for n in range(3)]
    assert await outbox.pending() == 0
