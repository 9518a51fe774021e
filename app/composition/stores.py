"""Models and stores: the embedders (in-process or served), the Chroma stores and their routing, the
bridge channel's model and collections, and the checks that the data was written with these models."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx
from redis.exceptions import RedisError

from app.clients.embeddings import HttpEmbedder, ServedModel
from app.clients.redis import check_layout, connect
from app.composition.dense import DenseLayout
from app.settings import Settings
from memory import (
    ChromaLongTermStore,
    Embedder,
    LongTermStore,
    RoutingLongTermStore,
    SentenceTransformerEmbedder,
)
from memory.embedding.base import NamedEmbedder
from memory.embedding.multilingual import MultilingualEmbedder, bridge_model_name
from memory.embedding.onnx import OnnxEmbedder
from memory.longterm.bridge import BRIDGE_HNSW, BRIDGE_SHARDS, BridgedStore, bridge_prefix
from memory.longterm.deferred_deletes import DeferredDeleteStore
from memory.longterm.dense_models import physical_name
from memory.longterm.placement import Placements
from memory.longterm.purges import Purges
from memory.longterm.shared_vectors import SharedVectors
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)


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
    settings: Settings,
    collection_prefix: str,
    hnsw: dict[str, int] | None = None,
    shards: int | None = None,
    dense_model: str = "",
) -> dict[str, ChromaLongTermStore]:
    """name -> a store on that server with this collection prefix (each with its own lazy client);
    `shards`: MEMORY_SHARDS unless given; `dense_model`: the tag of the model its records are embedded by."""
    return {
        server.name: ChromaLongTermStore(
            chroma_client_factory(settings, server.url),
            shards=shards or settings.memory_shards,
            collection_prefix=collection_prefix,
            hnsw=hnsw,
            dense_model=dense_model,
        )
        for server in settings.chroma_servers
    }


def record_stores(settings: Settings, layout: DenseLayout | None) -> dict[str, ChromaLongTermStore]:
    """The record collections' stores by (virtual) server name: each dense model's on every server
    (memory/longterm/dense_models.py); without a layout, the prefix's on every server, untagged."""
    if layout is None:
        return chroma_stores(settings, settings.chroma_collection_prefix)
    servers: dict[str, ChromaLongTermStore] = {}
    for tag in layout.tags:
        for name, store in chroma_stores(settings, layout.namespace(tag), dense_model=tag).items():
            servers[layout.virtual_name(name, tag)] = store
    return servers


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
    settings: Settings,
    redis: RedisClient,
    bridge: NamedEmbedder | None = None,
    layout: DenseLayout | None = None,
) -> RoutingLongTermStore:
    """One Chroma store per configured server behind the routing store (with CHROMA_URL alone, a
    single server); with the bridge model, the store that writes and deletes its channel too. With a
    dense `layout` (`app/composition/dense.py`: every process that reads or writes records passes it),
    one store per server and dense model, the current model's taking new users."""
    servers = record_stores(settings, layout)
    placements = Placements(redis)
    current = layout.current if layout is not None else None
    if bridge is None:
        return RoutingLongTermStore(
            servers, placements, draining=settings.chroma_draining_names, dense_model=current
        )
    by_server = bridge_stores(settings)
    return BridgedStore(
        servers,
        placements,
        # one bridge store per server, whichever dense model's records a user's placement names there
        bridge_servers={name: by_server[physical_name(name)] for name in servers},
        embedder=bridge.for_caller("write"),
        model=bridge.model_name,
        shared=bridge_shared_vectors(redis, bridge),
        draining=settings.chroma_draining_names,
        dense_model=current,
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
        precision=settings.embedding_precision,
    )


def dense_model_name(settings: Settings, embedder: Embedder) -> str:
    """What names the dense channel's model (its shared query vectors, the check of `check_dense_model`)."""
    if isinstance(embedder, HttpEmbedder):
        return f"{embedder.model_name}:{embedder.dimension}"
    return f"{type(embedder).__name__}:{settings.embedding_model}:{embedder.dimension}"


def bridged_store(store: LongTermStore) -> BridgedStore | None:
    """The store that writes the bridge channel, under the deferred-delete wrapper if any."""
    if isinstance(store, DeferredDeleteStore):
        return bridged_store(store.inner)
    return store if isinstance(store, BridgedStore) else None


async def ensure_layout(redis: RedisClient, settings: Settings) -> None:
    """The key layout every process must share; a Redis that is down now is checked by the next start."""
    try:
        await connect(redis)
        await check_layout(redis, settings.outbox_partitions)
    except RedisError as exc:
        log.warning("key layout not checked: redis unavailable", extra={"reason": str(exc)})
