"""The shared build: `build_core` makes what every process that reads or writes memory runs on (the
API workers and the writer), `Core.aclose` closes it."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

import anyio.to_thread
import httpx

from app.clients.embeddings import HttpEmbedder
from app.clients.redis import build_redis
from app.clients.rerank import HttpReranker
from app.clients.upstream import OpenAICompatibleLLM
from app.composition.dense import dense_layout, dense_models
from app.composition.services import (
    build_archive,
    build_llm_client,
    build_memory_service,
    build_rerank,
    relevance_model,
    replica_ack,
)
from app.composition.stores import (
    build_bridge,
    build_embedder,
    build_store,
    deferring,
    ensure_layout,
)
from app.settings import Settings
from memory import Embedder, MemoryService, RoutingLongTermStore
from memory.archive.view import ArchivedTiers
from memory.corrections import MemoryEditor, MemoryRestorer
from memory.embedding.base import NamedEmbedder
from memory.governance.export import UserExport
from memory.governance.usage import UsageLedger
from memory.longterm.bridge import BridgedStore
from memory.longterm.deferred_deletes import DeferredDeleteStore
from memory.longterm.dense_models import DenseModels
from memory.longterm.history import MemoryHistory
from memory.longterm.restorable import RestorableBin
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.outbox.stream import Outbox
from memory.redis_client import RedisClient, close
from memory.session.store import SessionStore

log = logging.getLogger(__name__)


@dataclass
class Core:
    """The services every process that reads or writes memory runs on, built by `build_core`: the API
    workers (app/lifespan.py) and the writer (app/cli/writer.py) build them the same way."""

    embedder: Embedder
    redis: RedisClient
    bridge: NamedEmbedder | None
    store: RoutingLongTermStore
    dense: DenseModels  # the dense models (two during a switch) and which one embeds a user
    deferred: DeferredDeleteStore
    outbox: Outbox
    archive: ArchivedTiers
    llm_client: httpx.AsyncClient | None
    upstream: OpenAICompatibleLLM | None  # the configured upstream model, if any
    reranker: HttpReranker | None
    memory: MemoryService

    async def aclose(self) -> None:
        """Settle deferred deletes, then close the clients this core opened."""
        await self.deferred.settle(timeout=5)  # what is left, a writer's sweep finishes
        if self.llm_client is not None:
            await self.llm_client.aclose()
        previous = self.dense.previous.embedder if self.dense.previous is not None else None
        for served in {m for m in (self.embedder, self.bridge, previous) if isinstance(m, HttpEmbedder)}:
            await served.aclose()
        if self.reranker is not None:
            await self.reranker.aclose()
        await close(self.redis)


async def build_core(
    settings: Settings,
    role: Literal["api", "writer"],
    *,
    embedder: Embedder | None = None,
    llm_transport: httpx.AsyncBaseTransport | None = None,
) -> Core:
    """The shared build. An API worker checks the dense model against the one the data was written
    with, warns about unreachable Chroma servers, counts model use per user and reranks when configured;
    the writer only writes (no query lexicon, no reranker). RELEVANCE_COEFFICIENTS_PATH is read first: a
    file that cannot be used refuses to start before a model loads or a store is opened."""
    api = role == "api"
    relevance = relevance_model(settings, warn=api)
    model = embedder if embedder is not None else await anyio.to_thread.run_sync(build_embedder, settings)
    redis = build_redis(settings) if api else build_redis(settings, "mnemo-writer")
    await ensure_layout(redis, settings)
    # where each dense model's records are (the first API worker of a prefix records its model)
    layout = await dense_layout(settings, redis, record=api and settings.retrieval_pipeline == "hybrid")
    # the bridge channel is written with every record (memory/longterm/bridge.py)
    bridge = await anyio.to_thread.run_sync(build_bridge, settings)
    store = build_store(settings, redis, bridge, layout)
    dense = await dense_models(settings, model, store)
    if api and (down := [name for name, ok in (await store.ping_each()).items() if not ok]):
        log.warning("chroma not reachable at startup", extra={"servers": down})  # /readyz reports it
    outbox = Outbox(redis, replicas=replica_ack(settings, redis))
    archive = build_archive(settings, redis, layout)  # each dense model's warm collections
    llm_client = build_llm_client(settings, llm_transport)
    upstream = (
        OpenAICompatibleLLM(
            llm_client,
            model=settings.llm_model,
            max_attempts=settings.llm_max_attempts,
            ledger=UsageLedger(redis) if api else None,
        )
        if llm_client is not None
        else None
    )
    deferred = deferring(store, redis)
    reranker = build_rerank(settings) if api else None
    memory = build_memory_service(
        settings,
        deferred,
        model,
        redis,
        outbox,
        archive,
        llm=upstream,
        searches=api,
        reranker=reranker,
        relevance=relevance,
        dense=dense,
    )
    return Core(
        model, redis, bridge, store, dense, deferred, outbox, archive, llm_client, upstream, reranker, memory
    )


def build_exporter(settings: Settings, core: Core, sessions: SessionStore) -> UserExport:
    store = core.store
    return UserExport(
        core.deferred,
        sessions,
        core.outbox,
        archive=core.archive,
        main_model=f"all-MiniLM-L6-v2 ({settings.embedding_backend})",
        bridge=store.bridge if isinstance(store, BridgedStore) else None,
        history=MemoryHistory(core.redis),
        relations=core.memory.relations,
    )


def build_editor(core: Core) -> MemoryEditor:
    memory, redis = core.memory, core.redis
    return MemoryEditor(
        memory,
        core.deferred,
        core.embedder,
        LtmVersions(redis),
        MemoryHistory(redis),
        lock=memory.write_lock,
        archive=core.archive,
        dense=core.dense,
    )


def build_restorer(core: Core) -> MemoryRestorer:
    memory, redis = core.memory, core.redis
    return MemoryRestorer(
        memory,
        core.deferred,
        core.embedder,
        LtmVersions(redis),
        MemoryHistory(redis),
        Tombstones(redis),
        memory.restorable or RestorableBin(redis, grace_seconds=0),
        lock=memory.write_lock,
        dense=core.dense,
    )
