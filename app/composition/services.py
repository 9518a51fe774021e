"""The services on top of the stores: the memory service and its retriever, archive tiers, sessions,
the upstream LLM client, governance (compaction, export, edits, restores) and the metrics sampler."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable

import httpx

from app.clients.embeddings import HttpEmbedder
from app.clients.rerank import HttpReranker, build_reranker
from app.composition.dense import DenseLayout
from app.composition.stores import (
    bridge_shared_vectors,
    bridged_store,
    chroma_client_factory,
    dense_model_name,
)
from app.http.auth import TokenCodec
from app.settings import Settings, StartError, server_name
from memory import (
    ChromaLongTermStore,
    Embedder,
    LongTermStore,
    MemoryService,
)
from memory.archive.cold import ColdStore
from memory.archive.search import TieredSearch
from memory.archive.tiers import TierPolicy
from memory.archive.view import ArchivedTiers
from memory.chat.llm import ChatModel
from memory.chat.query_translator import LLMQueryTranslator, TranslationParams
from memory.chat.supersession_judge import LLMSupersessionJudge
from memory.embedding.multilingual import MultilingualEmbedder, bridge_model_name
from memory.governance.compaction import (
    AtRestPolicy,
    ChromaFiles,
    CompactionQueue,
    Compactor,
    Job,
    RedisFiles,
    Store,
)
from memory.longterm.dense_models import DenseModels
from memory.longterm.history import MemoryHistory
from memory.longterm.restorable import RestorableBin
from memory.longterm.shared_vectors import SharedVectors
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.outbox.stream import Outbox
from memory.recall.bilingual import LexiconParams, cc_cedict
from memory.recall.calibration import BUNDLED_DENSE, CoefficientsError, FittedModels, read_coefficients
from memory.recall.crosslingual import BridgeCache, BridgeChannel, BridgeWeights
from memory.recall.keyword_index import KeywordIndexCache
from memory.recall.relevance import DEFAULT_MODEL, RelevanceModel
from memory.recall.rerank import Reranker, RerankingRetriever, RerankPolicy
from memory.recall.retrieval import HybridRetriever, RankingWeights
from memory.recall.snapshot import IndexSnapshots
from memory.redis_client import RedisClient, ReplicaAck
from memory.relations.links import RelationLinks
from memory.relations.store import RelationStore
from memory.session.store import SessionLimits, SessionStore
from memory.write.claim_index import ClaimIndex
from memory.write.policy import WritePipeline, WritePolicy
from monitoring import metrics

log = logging.getLogger(__name__)


def token_codec(settings: Settings) -> TokenCodec:
    return TokenCodec(
        settings.auth_jwt_secret.get_secret_value(),
        public_key=settings.auth_jwt_public_key,
        audience=settings.auth_jwt_audience,
        issuer=settings.auth_jwt_issuer,
    )


def build_archive(settings: Settings, redis: RedisClient, layout: DenseLayout | None = None) -> ArchivedTiers:
    """Warm archive collections on one Chroma server (ARCHIVE_WARM_SERVER, else the first) and the cold
    Parquet store (ARCHIVE_COLD_URL); neither is contacted until used. With a dense `layout`
    (app/composition/dense.py), each of its models has warm collections of its own,
    `<its namespace>-warm` (the prefix's first model keeps `<prefix>-warm`): the current model's, and
    during a switch the previous one's (memory/archive/view.py); without one, one set for every row."""
    servers = {s.name: s.url for s in settings.chroma_servers}
    name = server_name(settings.archive_warm_server) if settings.archive_warm_server else next(iter(servers))
    factory = chroma_client_factory(settings, servers[name])

    def warm(namespace: str, model: str = "") -> ChromaLongTermStore:
        return ChromaLongTermStore(
            factory, shards=settings.memory_shards, collection_prefix=f"{namespace}-warm", dense_model=model
        )

    cold = ColdStore(settings.archive_cold_url, storage_options=settings.archive_storage_options)
    if layout is None:
        return ArchivedTiers(warm(settings.chroma_collection_prefix), cold, redis)
    others = [warm(layout.namespace(tag), tag) for tag in layout.tags if tag != layout.current]
    return ArchivedTiers(
        warm(layout.namespace(layout.current), layout.current),
        cold,
        redis,
        first_model=layout.first,
        others=others,
    )


def tier_policy(settings: Settings) -> TierPolicy:
    return TierPolicy(settings.archive_warm_after_days, settings.archive_cold_after_days)


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
    relevance: RelevanceModel | None = None,
    dense: DenseModels | None = None,
) -> MemoryService:
    """`archive`: list, search, delete and forget cover warm and cold too (hybrid pipeline only).
    `llm`: the configured upstream model (None without one), for the writer's supersession judge. With a
    `BridgedStore`, recall fuses its bridge channel (`memory/recall/crosslingual.py`). `searches`: False
    in a process that only writes (the writer, the claims job): the bilingual lexicon, which only
    expands search queries, is not loaded there (~50 MB, seconds), nor a user's index past the limit. `relevance`:
    calibrated relevance's coefficients (None: `relevance_model(settings)`, RELEVANCE_COEFFICIENTS_PATH's).
    `dense`: the dense models of a switch (app/composition/dense.py; None: `embedder` for every user)."""
    if relevance is None:
        relevance = relevance_model(settings, warn=searches)
    if settings.retrieval_pipeline == "naive":
        return MemoryService(store, embedder, relevance_model=relevance)
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
            in_process_dense_max=settings.in_process_dense_max,
            supersession=settings.supersession,
            negation_intent=settings.negation_intent,
            lexicon_weight=settings.keyword_lexicon_weight,
            event_dates=settings.event_dates,
            names_across_scripts=settings.names_across_scripts,
        ),
        shared=shared,
        bridge=bridge,
        relevance_model=relevance,
        links=RelationLinks(relations) if relations is not None else None,
        lexicon=cc_cedict(LexiconParams(senses=settings.keyword_lexicon_senses))
        if settings.keyword_lexicon and searches
        else None,
        snapshots=snapshots,
        zone=settings.zone,
        dense=dense,
        claims=ClaimIndex(redis),
        provisional_past=settings.in_process_index_max if settings.provisional_searches else None,
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
        dense=dense,
        release=None if searches else retriever.cache.drop,
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
        tiered=tiered_search(settings, retriever, archive) if archive is not None else None,
    )


def tiered_search(settings: Settings, retriever: HybridRetriever, archive: ArchivedTiers) -> TieredSearch:
    """Search over the hot tier and the warm and cold archive, each archived tier's indexes cached."""
    return TieredSearch(
        retriever,
        archive,
        warm_cache=KeywordIndexCache(settings.archive_warm_cache_memories),
        cold_cache=KeywordIndexCache(settings.archive_cold_cache_memories),
        cold_fallback_similarity=settings.archive_cold_fallback_similarity,
    )


RECALIBRATING = "docs/operations.md#recalibrating-relevance-for-another-model"


def configured_models(settings: Settings) -> FittedModels:
    """The models relevance must be calibrated for: the dense channel's (EMBEDDINGS_MODEL when served,
    else EMBEDDING_MODEL when set, else the bundled MiniLM) and the bridge's (BRIDGE_EMBEDDINGS_MODEL when
    served, else USE v3's name; None when the channel is off: its groups are never used)."""
    dense = (
        settings.embeddings_model if settings.embeddings_url else settings.embedding_model or BUNDLED_DENSE
    )
    if not settings.bridge_embedding or settings.retrieval_pipeline != "hybrid":
        return FittedModels(dense, None)
    bridge = settings.bridge_embeddings_model if settings.bridge_embeddings_url else bridge_model_name()
    return FittedModels(dense, bridge)


def relevance_model(settings: Settings, *, warn: bool = True) -> RelevanceModel:
    """The coefficients of calibrated relevance: RELEVANCE_COEFFICIENTS_PATH's, checked (a file that is
    malformed, incomplete or fitted for other models than the configured ones refuses to start), else
    the built-in ones, fitted on the bundled models (`warn`: say so once when a model is served)."""
    configured = configured_models(settings)
    path = settings.relevance_coefficients_path
    if not path:
        served = settings.embeddings_url or (configured.bridge is not None and settings.bridge_embeddings_url)
        if warn and served:
            log.warning(
                "relevance is calibrated on the bundled models, not the served ones: fit coefficients for "
                "them and set RELEVANCE_COEFFICIENTS_PATH",
                extra={"dense": configured.dense, "bridge": configured.bridge, "docs": RECALIBRATING},
            )
        return DEFAULT_MODEL
    try:
        calibration = read_coefficients(path)
        calibration.check_models(configured, path)
    except CoefficientsError as exc:
        raise StartError(
            f"mnemo cannot start (配置有误，无法启动): RELEVANCE_COEFFICIENTS_PATH {exc} ({RECALIBRATING}) "
            "(相关度系数文件无效，或不是为当前配置的模型拟合的)"
        ) from None
    log.info(
        "relevance coefficients loaded",
        extra={
            "path": path,
            "fitted": calibration.fitted,
            "dense": configured.dense,
            "bridge": configured.bridge,
        },
    )
    return calibration.model


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


def replica_ack(settings: Settings, redis: RedisClient) -> ReplicaAck:
    """The wait for replicas before a write is acknowledged (a chat turn's commit, an import)."""
    return ReplicaAck(
        redis, replicas=settings.redis_min_replicas_ack, timeout_ms=settings.redis_replica_ack_timeout_ms
    )


def build_sessions(settings: Settings, redis: RedisClient) -> SessionStore:
    return SessionStore(redis, session_limits(settings), replicas=replica_ack(settings, redis))


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
    """Gauges that are read, not counted: this process's RSS and the outbox backlog (chat turns, and the
    import lane's apart)."""
    while True:
        metrics.RESIDENT_MEMORY.set(metrics.resident_memory_bytes())
        try:
            chat, imports = await outbox.backlog()
            metrics.OUTBOX_PENDING.set(chat)
            metrics.IMPORT_PENDING.set(imports)
        except Exception:  # Redis down: keep the last value; /readyz reports the outage
            log.debug("outbox backlog not sampled", exc_info=True)
        await asyncio.sleep(every_seconds)
