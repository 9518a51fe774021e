"""Builds every client once per worker at startup and closes them at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import hashlib
import logging
import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Literal, TypedDict
from urllib.parse import urlsplit

import anyio.to_thread
import httpx
from fastapi import FastAPI
from redis.exceptions import RedisError

from app.clients.embeddings import HttpEmbedder, ServedModel
from app.clients.model_catalog import ModelCatalog
from app.clients.redis import build_redis, check_layout, connect
from app.clients.rerank import HttpReranker, build_reranker
from app.clients.upstream import OpenAICompatibleLLM
from app.http.auth import TokenCodec
from app.http.rate_limit import RateLimiter
from app.settings import Settings, StartError, server_name
from memory import (
    ChromaLongTermStore,
    Embedder,
    LongTermStore,
    MemoryService,
    RoutingLongTermStore,
    SentenceTransformerEmbedder,
    keys,
)
from memory.archive.cold import ColdStore
from memory.archive.search import TieredSearch
from memory.archive.tiers import TierPolicy
from memory.archive.view import ArchivedTiers
from memory.chat.compression import LLMCompressor
from memory.chat.conversation import ConversationService
from memory.chat.llm import ChatModel
from memory.chat.offline import OfflineResponder
from memory.chat.query_translator import LLMQueryTranslator, TranslationParams
from memory.chat.summary import LLMSummarizer
from memory.chat.supersession_judge import LLMSupersessionJudge
from memory.corrections import MemoryEditor, MemoryRestorer
from memory.embedding.base import NamedEmbedder
from memory.embedding.multilingual import MultilingualEmbedder, bridge_model_name
from memory.embedding.onnx import OnnxEmbedder
from memory.governance.audit import AuditLog
from memory.governance.compaction import (
    AtRestPolicy,
    ChromaFiles,
    CompactionQueue,
    Compactor,
    Job,
    RedisFiles,
    Store,
)
from memory.governance.erasure import Eraser
from memory.governance.export import UserExport
from memory.governance.usage import UsageLedger
from memory.longterm.bridge import BRIDGE_HNSW, BRIDGE_SHARDS, BridgedStore, bridge_prefix
from memory.longterm.deferred_deletes import DeferredDeleteStore, PurgeSweeper
from memory.longterm.history import MemoryHistory
from memory.longterm.placement import Placements
from memory.longterm.purges import Purges
from memory.longterm.restorable import RestorableBin
from memory.longterm.shared_vectors import SharedVectors
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.outbox.stream import Outbox
from memory.outbox.worker import OutboxWorker
from memory.recall.bilingual import LexiconParams, cc_cedict
from memory.recall.crosslingual import BridgeCache, BridgeChannel, BridgeWeights
from memory.recall.keyword_index import KeywordIndexCache
from memory.recall.rerank import Reranker, RerankingRetriever, RerankPolicy
from memory.recall.retrieval import HybridRetriever, RankingWeights
from memory.recall.snapshot import IndexSnapshots
from memory.redis_client import RedisClient, ReplicaAck, close
from memory.relations.links import RelationLinks
from memory.relations.store import RelationStore
from memory.session.idempotency import IdempotencyRecords
from memory.session.store import SessionLimits, SessionStore
from memory.write.policy import WritePipeline, WritePolicy
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


def token_codec(settings: Settings) -> TokenCodec:
    return TokenCodec(
        settings.auth_jwt_secret.get_secret_value(),
        public_key=settings.auth_jwt_public_key,
        audience=settings.auth_jwt_audience,
        issuer=settings.auth_jwt_issuer,
    )


def chroma_client_factory(settings: Settings, url: str | None = None) -> Callable[[], Any]:
    """A callable that opens a Chroma `HttpClient` to `url` (default: the first configured server); it
    talks to the server when constructed."""
    url = url or settings.chroma_servers[0].url
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"a Chroma URL must be http(s)://host:port, got {url!r}")
    ssl = parts.scheme == "https"
    port = parts.port or (443 if ssl else 80)

    def factory() -> Any:
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        client = chromadb.HttpClient(
            host=parts.hostname or "",
            port=port,
            ssl=ssl,
            settings=ChromaSettings(anonymized_telemetry=False),
        )
        # chromadb's HttpClient runs httpx with no timeout at all; a hung server would hang us.
        session = getattr(getattr(client, "_server", None), "_session", None)
        if isinstance(session, httpx.Client):
            session.timeout = httpx.Timeout(settings.chroma_timeout_seconds, connect=2.0)
        return client

    return factory


def chroma_stores(
    settings: Settings, collection_prefix: str, hnsw: dict[str, int] | None = None, shards: int | None = None
) -> dict[str, ChromaLongTermStore]:
    """name -> a store on that server with this collection prefix (each with its own lazy client);
    `shards`: MEMORY_SHARDS unless given."""
    return {
        server.name: ChromaLongTermStore(
            chroma_client_factory(settings, server.url),
            shards=shards or settings.memory_shards,
            collection_prefix=collection_prefix,
            hnsw=hnsw,
        )
        for server in settings.chroma_servers
    }


def bridge_stores(settings: Settings) -> dict[str, ChromaLongTermStore]:
    """name -> the store of the bridge channel's collections on that server: the configured bridge
    model's own (each model's vectors in collections of their own, so a new model is written beside
    the old one and a collection never holds two sizes of vector)."""
    prefix = model_collection_prefix(bridge_prefix(settings.chroma_collection_prefix), bridge_name(settings))
    return chroma_stores(settings, prefix, BRIDGE_HNSW, shards=BRIDGE_SHARDS)


def served_model(settings: Settings, channel: Literal["dense", "bridge"]) -> ServedModel:
    """The embeddings server of a channel (EMBEDDINGS_URL, BRIDGE_EMBEDDINGS_URL): settings validate
    that its model and size are given."""
    if channel == "dense":
        url, model, size = settings.embeddings_url, settings.embeddings_model, settings.embeddings_dimensions
    else:
        url, model = settings.bridge_embeddings_url, settings.bridge_embeddings_model
        size = settings.bridge_embeddings_dimensions
    assert size is not None
    key = settings.embeddings_api_key
    return ServedModel(
        url=url,
        model=model,
        dimension=size,
        api_key=key.get_secret_value() if key is not None else None,
        send_dimensions=settings.embeddings_send_dimensions,
        batch_size=settings.embeddings_batch_size,
        timeout_seconds=settings.embeddings_timeout_seconds,
        max_attempts=settings.embeddings_max_attempts,
        backoff_seconds=settings.embeddings_backoff_seconds,
        breaker_failures=settings.embeddings_breaker_failures,
        breaker_reset_seconds=settings.embeddings_breaker_reset_seconds,
    )


def bridge_name(settings: Settings) -> str:
    """The name the configured bridge model records its vectors with (no model is loaded)."""
    return (
        served_model(settings, "bridge").model_name if settings.bridge_embeddings_url else bridge_model_name()
    )


def model_collection_prefix(prefix: str, model_name: str) -> str:
    """The bundled USE v3 keeps the collections it always had; any other model gets its own."""
    if model_name.startswith("use-multilingual-v3@"):
        return prefix
    return f"{prefix}-{hashlib.blake2b(model_name.encode(), digest_size=4).hexdigest()}"


def build_store(
    settings: Settings, redis: RedisClient, bridge: NamedEmbedder | None = None
) -> RoutingLongTermStore:
    """One Chroma store per configured server behind the routing store (with CHROMA_URL alone, a
    single server); with the bridge model, the store that writes and deletes its channel too."""
    servers = chroma_stores(settings, settings.chroma_collection_prefix)
    placements = Placements(redis)
    if bridge is None:
        return RoutingLongTermStore(servers, placements, draining=settings.chroma_draining_names)
    return BridgedStore(
        servers,
        placements,
        bridge_servers=bridge_stores(settings),
        embedder=bridge.for_caller("write"),
        model=bridge.model_name,
        shared=bridge_shared_vectors(redis, bridge),
        draining=settings.chroma_draining_names,
    )


def deferring(store: RoutingLongTermStore, redis: RedisClient) -> DeferredDeleteStore:
    """The store the services use: deletes answer once hidden, Chroma applies them right after
    (memory/longterm/deferred_deletes.py); rebalance, archival and erasure use `store` itself."""
    return DeferredDeleteStore(store, Purges(redis))


def bridge_shared_vectors(redis: RedisClient, bridge: NamedEmbedder) -> SharedVectors:
    return SharedVectors(redis, f"bridge:{bridge.model_name}:{bridge.dimension}")


def build_bridge(settings: Settings) -> NamedEmbedder | None:
    """The multilingual bridge model, when the channel is on (and the hybrid pipeline runs): USE v3 in
    process, or the embeddings server when it serves the bridge channel."""
    if not settings.bridge_embedding or settings.retrieval_pipeline != "hybrid":
        return None
    if settings.bridge_embeddings_url:
        return HttpEmbedder(served_model(settings, "bridge"))
    return MultilingualEmbedder(threads=1)


def build_archive(settings: Settings, redis: RedisClient) -> ArchivedTiers:
    """Warm archive collections on one Chroma server (ARCHIVE_WARM_SERVER, else the first) and the cold
    Parquet store (ARCHIVE_COLD_URL); neither is contacted until used."""
    servers = {s.name: s.url for s in settings.chroma_servers}
    name = server_name(settings.archive_warm_server) if settings.archive_warm_server else next(iter(servers))
    warm = ChromaLongTermStore(
        chroma_client_factory(settings, servers[name]),
        shards=settings.memory_shards,
        collection_prefix=f"{settings.chroma_collection_prefix}-warm",
    )
    cold = ColdStore(settings.archive_cold_url, storage_options=settings.archive_storage_options)
    return ArchivedTiers(warm, cold, redis)


def tier_policy(settings: Settings) -> TierPolicy:
    return TierPolicy(settings.archive_warm_after_days, settings.archive_cold_after_days)


def build_embedder(settings: Settings) -> Embedder:
    if settings.embeddings_url:
        return HttpEmbedder(served_model(settings, "dense"))
    if settings.embedding_backend == "onnx":
        return OnnxEmbedder(
            settings.embedding_model or None,
            batch_size=settings.embedding_batch_size,
            threads=settings.embedding_threads,
            max_tokens=settings.embedding_max_tokens,
        )
    return SentenceTransformerEmbedder(
        settings.embedding_model or None,
        device=settings.embedding_device,
        batch_size=settings.embedding_batch_size,
        torch_threads=settings.embedding_threads,
        max_tokens=settings.embedding_max_tokens,
    )


def build_memory_service(
    settings: Settings,
    store: LongTermStore,
    embedder: Embedder,
    redis: RedisClient,
    outbox: Outbox | None = None,
    archive: ArchivedTiers | None = None,
    *,
    llm: ChatModel | None = None,
    searches: bool = True,
    reranker: Reranker | None = None,
) -> MemoryService:
    """`archive`: list, search, delete and forget cover warm and cold too (hybrid pipeline only).
    `llm`: the configured upstream model (None without one), for the writer's supersession judge. With a
    `BridgedStore`, recall fuses its bridge channel (`memory/recall/crosslingual.py`). `searches`: False
    in a process that only writes (the writer, the claims job): the bilingual lexicon, which only
    expands search queries, is not loaded there (about 50 MB and a few seconds at start)."""
    if settings.retrieval_pipeline == "naive":
        return MemoryService(store, embedder)
    versions = LtmVersions(redis)
    # query vectors recall computed, for the writer storing the same text; keyed by the model in use
    shared = SharedVectors(redis, dense_model_name(settings, embedder))
    relations = RelationStore(redis) if settings.relation_memory else None
    bridge = bridge_channel(settings, store, redis)
    snapshots = (
        IndexSnapshots(
            redis,
            # the models whose vectors a snapshot holds: one of other vectors is never loaded
            fingerprint=f"{shared.model_tag}|{bridge.shared.model_tag if bridge and bridge.shared else ''}",
            min_memories=settings.index_snapshot_min_memories,
            ttl_seconds=settings.index_snapshot_ttl_seconds,
        )
        if settings.index_snapshots
        else None
    )
    retriever = retriever_class(settings, reranker)(
        store,
        embedder,
        versions,
        KeywordIndexCache(settings.keyword_cache_memories),
        RankingWeights(
            dense_candidates=settings.retrieval_candidates,
            time=settings.retrieval_time_weight,
            time_recent=settings.retrieval_recent_time_weight,
            tau_days=settings.retrieval_tau_days,
            clustering=settings.retrieval_clustering,
            one_per_turn=settings.retrieval_one_per_turn,
            in_process_dense_max=settings.in_process_index_max,
            supersession=settings.supersession,
            negation_intent=settings.negation_intent,
            lexicon_weight=settings.keyword_lexicon_weight,
            event_dates=settings.event_dates,
            names_across_scripts=settings.names_across_scripts,
        ),
        shared=shared,
        bridge=bridge,
        links=RelationLinks(relations) if relations is not None else None,
        lexicon=cc_cedict(LexiconParams(senses=settings.keyword_lexicon_senses))
        if settings.keyword_lexicon and searches
        else None,
        snapshots=snapshots,
        zone=settings.zone,
        translator=LLMQueryTranslator(
            llm, TranslationParams(timeout_seconds=settings.query_translation_timeout_seconds)
        )
        if llm is not None and settings.query_translation and searches
        else None,
    )
    writer = WritePipeline(
        store,
        embedder,
        redis,
        versions,
        WritePolicy(
            threshold=settings.importance_threshold,
            near_duplicate=settings.near_duplicate_similarity,
            in_process_max=settings.in_process_index_max,
            lock_wait_seconds=settings.ltm_lock_wait_seconds,
            supersession=settings.supersession,
            zone=settings.zone,
        ),
        index=retriever.keyword_index,  # duplicate checks against the index recall keeps current
        shared=shared,
        judge=LLMSupersessionJudge(llm)
        if llm is not None and settings.llm_supersession_judge and settings.supersession
        else None,
        prepare=bridged.prepare if (bridged := bridged_store(store)) is not None else None,
    )
    return MemoryService(
        store,
        embedder,
        writer=writer,
        retriever=retriever,
        versions=versions,
        tombstones=Tombstones(redis),
        history=MemoryHistory(redis),
        outbox=outbox,
        archive=archive,
        relations=relations,
        restorable=RestorableBin(redis, grace_seconds=settings.restore_grace_seconds),
        tiered=TieredSearch(
            retriever,
            archive,
            warm_cache=KeywordIndexCache(settings.archive_warm_cache_memories),
            cold_cache=KeywordIndexCache(settings.archive_cold_cache_memories),
            cold_fallback_similarity=settings.archive_cold_fallback_similarity,
        )
        if archive is not None
        else None,
    )


def dense_model_name(settings: Settings, embedder: Embedder) -> str:
    """What names the dense channel's model (its shared query vectors, the check of `check_dense_model`)."""
    if isinstance(embedder, HttpEmbedder):
        return f"{embedder.model_name}:{embedder.dimension}"
    return f"{type(embedder).__name__}:{settings.embedding_model}:{embedder.dimension}"


async def check_dense_model(redis: RedisClient, settings: Settings, embedder: Embedder) -> None:
    """The dense channel's collections hold vectors of one model: the first process to start records
    which (per collection prefix); a process configured with another model refuses to start (its
    vectors would be ranked against the others'). A dense switch is a new CHROMA_COLLECTION_PREFIX
    (docs/operations.md#switching-models). Checked when a served model is or was configured (the
    bundled ONNX and torch MiniLM give the same vectors, cosine 0.999). Redis down: not checked now
    (the next start checks)."""
    key = keys.dense_model(settings.chroma_collection_prefix)
    name = dense_model_name(settings, embedder)
    try:
        await redis.set(key, name, nx=True)
        recorded = await redis.get(key)
    except RedisError as exc:
        log.warning("dense model not checked: redis unavailable", extra={"reason": str(exc)})
        return
    recorded = recorded.decode() if isinstance(recorded, bytes) else recorded
    served = name.startswith("http:") or (recorded or "").startswith("http:")
    if served and recorded is not None and recorded != name:
        raise StartError(
            f"mnemo cannot start (配置有误，无法启动): the dense channel's collections "
            f"({settings.chroma_collection_prefix}) hold vectors of {recorded!r}, and {name!r} is configured. "
            "Vectors of two models are never ranked together: use a new CHROMA_COLLECTION_PREFIX for the "
            "new model (docs/operations.md#switching-models) "
            "(两个模型的向量不能混合排序：请为新模型使用新的 CHROMA_COLLECTION_PREFIX)"
        )


def retriever_class(settings: Settings, reranker: Reranker | None) -> Callable[..., HybridRetriever]:
    """The hybrid retriever, with the reranking stage when a reranker is given (RERANK_URL)."""
    if reranker is None:
        return HybridRetriever
    policy = RerankPolicy(
        candidates=settings.rerank_candidates,
        budget_seconds=settings.rerank_timeout_seconds,
        weight=settings.rerank_weight,
    )
    return functools.partial(RerankingRetriever, reranker=reranker, policy=policy)


def build_rerank(settings: Settings) -> HttpReranker | None:
    """The rerank server's client (RERANK_URL), None when the stage is off."""
    if not settings.rerank_url:
        return None
    key = settings.rerank_api_key
    return build_reranker(
        settings.rerank_url,
        style=settings.rerank_style,
        model=settings.rerank_model,
        api_key=key.get_secret_value() if key is not None else None,
        timeout=settings.rerank_timeout_seconds,
    )


def bridged_store(store: LongTermStore) -> BridgedStore | None:
    """The store that writes the bridge channel, under the deferred-delete wrapper if any."""
    if isinstance(store, DeferredDeleteStore):
        return bridged_store(store.inner)
    return store if isinstance(store, BridgedStore) else None


def cross_keyword(settings: Settings) -> float:
    """The keywords' share for memories in the other language than the query: more with the bilingual
    lexicon, whose translations make them match (docs/decisions.md, issue 28)."""
    if settings.bridge_cross_keyword is not None:
        return settings.bridge_cross_keyword
    return 0.3 if settings.keyword_lexicon else BridgeWeights().cross_keyword


def bridge_channel(settings: Settings, store: LongTermStore, redis: RedisClient) -> BridgeChannel | None:
    bridged = bridged_store(store)
    if bridged is None:
        return None
    model = bridged.bridge_embedder
    if not isinstance(model, MultilingualEmbedder | HttpEmbedder):
        return None
    shared = bridge_shared_vectors(redis, model)
    return BridgeChannel(
        embedder=model.for_caller("query"),
        cache=BridgeCache(
            bridged.bridge, shared=shared, dimension=model.dimension, max_rows=settings.bridge_cache_rows
        ),
        weights=BridgeWeights(
            en=settings.bridge_weight_en,
            zh=settings.bridge_weight_zh,
            cross=1 - cross_keyword(settings),
            cross_keyword=cross_keyword(settings),
        ),
        shared=shared,
    )


async def ensure_layout(redis: RedisClient, settings: Settings) -> None:
    """The key layout every process must share; a Redis that is down now is checked by the next start."""
    try:
        await connect(redis)
        await check_layout(redis, settings.outbox_partitions)
    except RedisError as exc:
        log.warning("key layout not checked: redis unavailable", extra={"reason": str(exc)})


def build_sessions(settings: Settings, redis: RedisClient) -> SessionStore:
    replicas = ReplicaAck(
        redis, replicas=settings.redis_min_replicas_ack, timeout_ms=settings.redis_replica_ack_timeout_ms
    )
    return SessionStore(redis, session_limits(settings), replicas=replicas)


def at_rest_policy(settings: Settings) -> AtRestPolicy:
    return AtRestPolicy(
        window_seconds=settings.erasure_compaction_window_seconds,
        timeout_seconds=settings.erasure_compaction_timeout_seconds,
        chroma_automatic=settings.chroma_data_path is not None,
    )


def build_compactor(settings: Settings, redis: RedisClient, *, chroma_path: str | None = None) -> Compactor:
    """Redis' files always; Chroma's where its persist directory is on this machine."""
    timeout = settings.erasure_compaction_timeout_seconds
    redis_files = RedisFiles(redis)

    async def redis_job() -> object:
        return await redis_files.run(timeout)

    jobs: dict[Store, Job] = {"redis": redis_job}
    path = chroma_path or settings.chroma_data_path
    if path:
        jobs["chroma"] = ChromaFiles(path).run
    return Compactor(
        CompactionQueue(redis),
        jobs,
        window_seconds=settings.erasure_compaction_window_seconds,
        timeout_seconds=timeout,
    )


def session_limits(settings: Settings) -> SessionLimits:
    return SessionLimits(
        buffer_size=settings.session_buffer_size,
        actions_kept=settings.session_actions_kept,
        session_ttl_seconds=settings.session_ttl_seconds,
        slot_ttl_seconds=settings.slot_ttl_seconds,
        lock_ttl_seconds=settings.session_lock_ttl_seconds,
        lock_wait_seconds=settings.session_lock_wait_seconds,
        summary_max_chars=settings.summary_max_chars,
        summary_fresh_seconds=settings.summary_fresh_seconds,
    )


def build_llm_client(
    settings: Settings, transport: httpx.AsyncBaseTransport | None
) -> httpx.AsyncClient | None:
    if not settings.llm_base_url:
        return None
    headers = {}
    if settings.llm_api_key is not None:
        headers["Authorization"] = f"Bearer {settings.llm_api_key.get_secret_value()}"
    return httpx.AsyncClient(
        base_url=settings.llm_base_url.rstrip("/") + "/",
        headers=headers,
        timeout=httpx.Timeout(settings.llm_timeout_seconds, connect=5.0),
        transport=transport,
    )


async def sample_gauges(outbox: Outbox, every_seconds: float = 5.0) -> None:
    """Gauges that are read, not counted: this process's RSS and the outbox backlog."""
    while True:
        metrics.RESIDENT_MEMORY.set(metrics.resident_memory_bytes())
        try:
            metrics.OUTBOX_PENDING.set(await outbox.pending())
        except Exception:  # Redis down: keep the last value; /readyz reports the outage
            log.debug("outbox backlog not sampled", exc_info=True)
        await asyncio.sleep(every_seconds)


def make_lifespan(
    settings: Settings,
    embedder: Embedder | None = None,
    llm_transport: httpx.AsyncBaseTransport | None = None,
) -> Callable[[FastAPI], AbstractAsyncContextManager[State]]:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[State]:
        model: Embedder = (
            embedder if embedder is not None else await anyio.to_thread.run_sync(build_embedder, settings)
        )
        redis = build_redis(settings)
        limiter_redis = build_redis(settings, "mnemo-ratelimit")  # limiting never waits on the main pool
        await ensure_layout(redis, settings)
        with contextlib.suppress(RedisError):
            await connect(limiter_redis)
        if settings.retrieval_pipeline == "hybrid":
            await check_dense_model(redis, settings, model)
        bridge = await anyio.to_thread.run_sync(build_bridge, settings)
        store = build_store(settings, redis, bridge)
        down = [name for name, ok in (await store.ping_each()).items() if not ok]
        if down:  # start anyway: /readyz reports it, calls retry the connection
            log.warning("chroma not reachable at startup", extra={"servers": down})
        outbox = Outbox(redis)
        archive = build_archive(settings, redis)
        llm_client = build_llm_client(settings, llm_transport)
        llm: ChatModel = (
            OpenAICompatibleLLM(
                llm_client,
                model=settings.llm_model,
                max_attempts=settings.llm_max_attempts,
                ledger=UsageLedger(redis),
            )
            if llm_client is not None
            else OfflineResponder()
        )
        deferred = deferring(store, redis)
        reranker = build_rerank(settings)
        memory = build_memory_service(
            settings,
            deferred,
            model,
            redis,
            outbox,
            archive,
            llm=llm if llm_client else None,
            reranker=reranker,
        )
        sessions = build_sessions(settings, redis)
        idempotency = IdempotencyRecords(redis, ttl_seconds=settings.idempotency_ttl_seconds)
        conversation = ConversationService(
            sessions,
            memory,
            outbox,
            summarizer=LLMSummarizer(llm) if llm_client is not None and settings.llm_summary else None,
            compressor=LLMCompressor(llm)
            if llm_client is not None and settings.llm_compress_memories
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
                exporter=UserExport(
                    deferred,
                    sessions,
                    outbox,
                    archive=archive,
                    main_model=f"all-MiniLM-L6-v2 ({settings.embedding_backend})",
                    bridge=store.bridge if isinstance(store, BridgedStore) else None,
                    history=MemoryHistory(redis),
                    relations=memory.relations,
                ),
                idempotency=idempotency,
                editor=MemoryEditor(
                    memory,
                    deferred,
                    model,
                    LtmVersions(redis),
                    MemoryHistory(redis),
                    lock=memory.write_lock,
                    archive=archive,
                ),
                restorer=MemoryRestorer(
                    memory,
                    deferred,
                    model,
                    LtmVersions(redis),
                    MemoryHistory(redis),
                    Tombstones(redis),
                    memory.restorable or RestorableBin(redis, grace_seconds=0),
                    lock=memory.write_lock,
                ),
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
            await deferred.settle(timeout=5)  # what is left, a writer's sweep finishes
            await conversation.aclose()
            if llm_client is not None:
                await llm_client.aclose()
            for served in {m for m in (model, bridge) if isinstance(m, HttpEmbedder)}:
                await served.aclose()
            if reranker is not None:
                await reranker.aclose()
            await close(redis)
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
