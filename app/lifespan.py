"""Builds every client once per worker at startup (through app/composition.py) and closes them at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TypedDict

import httpx
from fastapi import FastAPI
from redis.exceptions import RedisError

from app.clients.model_catalog import ModelCatalog
from app.clients.redis import build_redis, connect
from app.clients.upstream import OpenAICompatibleLLM
from app.composition import (
    at_rest_policy,
    build_compactor,
    build_core,
    build_editor,
    build_exporter,
    build_restorer,
    build_sessions,
    sample_gauges,
    token_codec,
)
from app.http.auth import TokenCodec
from app.http.rate_limit import RateLimiter
from app.settings import Settings
from memory import (
    Embedder,
    MemoryService,
    RoutingLongTermStore,
)
from memory.chat.compression import LLMCompressor
from memory.chat.conversation import ConversationService
from memory.chat.llm import ChatModel
from memory.chat.offline import OfflineResponder
from memory.chat.summary import LLMSummarizer
from memory.corrections import MemoryEditor, MemoryRestorer
from memory.governance.audit import AuditLog
from memory.governance.erasure import Eraser
from memory.governance.export import UserExport
from memory.governance.usage import UsageLedger
from memory.longterm.deferred_deletes import PurgeSweeper
from memory.outbox.stream import Outbox
from memory.outbox.worker import OutboxWorker
from memory.redis_client import RedisClient, close
from memory.session.idempotency import IdempotencyRecords
from memory.session.store import SessionStore
from monitoring import metrics

log = logging.getLogger(__name__)


class State(TypedDict):
    """What every request sees as `request.state.<key>`."""

    settings: Settings
    redis: RedisClient
    store: RoutingLongTermStore
    embedder: Embedder
    memory: MemoryService
    tokens: TokenCodec
    rate_limiter: RateLimiter
    eraser: Eraser
    sessions: SessionStore
    outbox: Outbox
    conversation: ConversationService
    llm: ChatModel
    models: ModelCatalog
    usage: UsageLedger
    audit: AuditLog
    exporter: UserExport
    idempotency: IdempotencyRecords
    editor: MemoryEditor
    restorer: MemoryRestorer


def make_lifespan(
    settings: Settings,
    embedder: Embedder | None = None,
    llm_transport: httpx.AsyncBaseTransport | None = None,
) -> Callable[[FastAPI], AbstractAsyncContextManager[State]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[State]:
        core = await build_core(settings, "api", embedder=embedder, llm_transport=llm_transport)
        model, redis, store, outbox = core.embedder, core.redis, core.store, core.outbox
        memory, deferred, archive = core.memory, core.deferred, core.archive
        limiter_redis = build_redis(settings, "mnemo-ratelimit")  # limiting never waits on the main pool
        with contextlib.suppress(RedisError):
            await connect(limiter_redis)
        llm: ChatModel = core.upstream if core.upstream is not None else OfflineResponder()
        sessions = build_sessions(settings, redis)
        idempotency = IdempotencyRecords(redis, ttl_seconds=settings.idempotency_ttl_seconds)
        conversation = ConversationService(
            sessions,
            memory,
            outbox,
            summarizer=LLMSummarizer(llm) if core.upstream is not None and settings.llm_summary else None,
            compressor=LLMCompressor(llm)
            if core.upstream is not None and settings.llm_compress_memories
            else None,
            recall_k=settings.recall_top_k,
            memory_tokens=settings.memory_context_tokens,
            recall_min_similarity=settings.recall_min_similarity,
            recall_min_relevance=settings.recall_min_relevance,
            recall_general_min_relevance=settings.recall_general_min_relevance,
            max_backlog=settings.outbox_max_backlog,
            max_backlog_wait=settings.outbox_max_wait_seconds,
            records=idempotency,
            zone=settings.zone,
        )
        worker: OutboxWorker | None = None
        worker_task: asyncio.Task[None] | None = None
        sweeper: PurgeSweeper | None = None
        sweeper_task: asyncio.Task[None] | None = None
        if settings.outbox_worker:
            worker = OutboxWorker(
                outbox,
                memory.ingest_entries,
                look_ahead=memory.warm_entries,
                consumer=f"{socket.gethostname()}-{os.getpid()}",
                lease_ttl_ms=settings.outbox_lease_ttl_ms,
                round_timeout_seconds=settings.outbox_round_bound_seconds,
            )
            worker_task = asyncio.create_task(worker.run(), name="outbox-worker")
            leases = worker.leases
            sweeper = PurgeSweeper(deferred, lambda: leases.held, restorable=memory.restorable)
            sweeper_task = asyncio.create_task(sweeper.run(), name="purge-sweeper")
        compactor = build_compactor(settings, redis) if settings.erasure_compactor else None
        compactor_task = asyncio.create_task(compactor.run(), name="compactor") if compactor else None
        metrics.mark_dead_workers()
        sampler = asyncio.create_task(sample_gauges(outbox), name="metrics-sampler")
        freeze_startup_heap()
        try:
            yield State(
                settings=settings,
                redis=redis,
                store=store,
                embedder=model,
                memory=memory,
                tokens=token_codec(settings),
                rate_limiter=RateLimiter(limiter_redis, limit=settings.rate_limit_per_minute),
                eraser=Eraser(store, redis, memory, outbox, at_rest_policy(settings), archive),
                sessions=sessions,
                outbox=outbox,
                conversation=conversation,
                llm=llm,
                models=ModelCatalog(
                    llm if isinstance(llm, OpenAICompatibleLLM) else None,
                    settings.llm_model,
                    ttl_seconds=settings.llm_models_cache_seconds,
                ),
                usage=UsageLedger(redis),
                audit=AuditLog(redis),
                exporter=build_exporter(settings, core, sessions),
                idempotency=idempotency,
                editor=build_editor(core),
                restorer=build_restorer(core),
            )
        finally:
            sampler.cancel()
            if compactor is not None and compactor_task is not None:
                compactor.stop()  # a rewrite in progress goes on in Redis; its request stays pending
                compactor_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await compactor_task
            if worker is not None and worker_task is not None:
                worker.stop()
                try:
                    await asyncio.wait_for(worker_task, timeout=10)
                except (TimeoutError, asyncio.CancelledError):
                    worker_task.cancel()
            if sweeper is not None and sweeper_task is not None:
                sweeper.stop()
                with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                    await asyncio.wait_for(sweeper_task, timeout=5)
            await conversation.aclose()
            await core.aclose()
            await close(limiter_redis)
            metrics.mark_self_dead()
            gc.unfreeze()  # what startup froze can be collected again (tests start many apps)
            log.info("clients closed")

    return lifespan


def freeze_startup_heap() -> None:
    """Move what startup made (models, the bilingual lexicon, clients: millions of objects that live
    as long as the process) out of the cyclic collector's reach (`gc.freeze`). Measured (issue 29):
    a full collection that walked them took ~145 ms, and one fell inside a user's first search about
    one time in three; after the freeze a collection walks only what requests made."""
    gc.collect()
    gc.freeze()
