"""The dense channel's models and where their records are: the configured model, the previous one
during a switch (PREVIOUS_EMBEDDINGS_*), and the collection prefix's first model, recorded in Redis
(memory/longterm/dense_models.py has the design; docs/operations.md#switching-models the steps)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio.to_thread
from redis.exceptions import RedisError

from app.clients.embeddings import HttpEmbedder, ServedModel
from app.settings import Settings, StartError
from memory import Embedder, RoutingLongTermStore, keys
from memory.archive.view import ArchivedTiers
from memory.embedding.onnx import OnnxEmbedder
from memory.longterm.dense_models import DenseModel, DenseModels, namespace, same_model, virtual_name
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)
BUNDLED = "bundled"  # the tag of the in-process MiniLM when no model is loaded (any name of it is the same)
SWITCHING = "docs/operations.md#switching-models"


def served_tag(model: ServedModel) -> str:
    """A served model's tag, as `dense_model_name` names it once loaded."""
    return f"{model.model_name}:{model.dimension}"


def previous_model(settings: Settings) -> ServedModel | None:
    """The previous dense model's server (PREVIOUS_EMBEDDINGS_URL), with the dense channel's other
    client settings."""
    if not settings.previous_embeddings_url:
        return None
    size = settings.previous_embeddings_dimensions
    assert size is not None  # settings validate it
    key = settings.embeddings_api_key
    return ServedModel(
        url=settings.previous_embeddings_url,
        model=settings.previous_embeddings_model,
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


def configured_tag(settings: Settings) -> str:
    """The configured dense model's tag, without loading it."""
    if settings.embeddings_url:
        from app.composition.stores import served_model

        return served_tag(served_model(settings, "dense"))
    return BUNDLED


def previous_tag(settings: Settings) -> str | None:
    served = previous_model(settings)
    if served is not None:
        return served_tag(served)
    return BUNDLED if settings.previous_embeddings_model == BUNDLED else None


@dataclass(frozen=True, slots=True)
class DenseLayout:
    """Which dense models have records, and in which collections: `current` takes new users, `previous`
    (a switch) holds those not moved yet, `first` (the prefix's first model) keeps the plain names."""

    prefix: str
    first: str
    current: str
    previous: str | None = None

    @property
    def tags(self) -> list[str]:
        return [self.current] + ([self.previous] if self.previous is not None else [])

    def namespace(self, tag: str) -> str:
        return namespace(self.prefix, tag, self.first)

    def virtual_name(self, server: str, tag: str) -> str:
        return virtual_name(server, tag, self.first)


async def dense_layout(settings: Settings, redis: RedisClient, *, record: bool = True) -> DenseLayout:
    """Read (and, first start, record) the prefix's first dense model; refuse a configuration that would
    leave users on a model no process loads. `record`: record the configured model as the first when
    none is (a process that serves or writes; the CLIs only read)."""
    prefix = settings.chroma_collection_prefix
    current, previous = configured_tag(settings), previous_tag(settings)
    if previous is not None and same_model(previous, current):
        raise StartError(
            "mnemo cannot start (配置有误，无法启动): PREVIOUS_EMBEDDINGS_* names the configured dense model; "
            f"unset it, or name the model users are moved from ({SWITCHING}) (PREVIOUS_EMBEDDINGS_* 与当前模型相同)"
        )
    try:
        if record:
            await redis.set(keys.dense_model(prefix), previous or current, nx=True)
        # one GET each: the keys are in different slots of a Redis Cluster
        first_raw = await redis.get(keys.dense_model(prefix))
        switched_raw = await redis.get(keys.dense_switched(prefix))
        done = _text(switched_raw)
        if previous is not None and (done is None or not same_model(done, current)):
            # a switch to `current` is under way (not finished): no process may start without a previous
            await redis.set(keys.dense_switching(prefix), current)
        switching_raw = await redis.get(keys.dense_switching(prefix))
    except RedisError as exc:
        if previous is None and current == BUNDLED:
            log.warning("dense model not checked: redis unavailable", extra={"reason": str(exc)})
            return DenseLayout(prefix, current, current)
        raise StartError(
            "mnemo cannot start (无法启动): Redis must answer to find where a served or switched dense model's "
            f"collections are ({exc}) (Redis 不可用，无法确定向量集合的位置)"
        ) from None
    first = _text(first_raw) or (previous or current)
    switching, switched = _text(switching_raw), _text(switched_raw)
    if previous is None:
        holder = switched or first  # the model every user is on, when no switch is under way
        if switching is not None:
            problem = f"a switch of the dense model to {switching!r} is under way (users are on two models)"
        elif not same_model(current, holder):
            problem = f"the dense channel's collections ({prefix}) hold vectors of {holder!r}"
        else:
            problem = ""
    elif not any(same_model(switched or first, tag) for tag in (current, previous)):
        problem = (
            f"the users are on {switched or first!r}, which is neither the configured nor the previous model"
        )
    else:
        problem = ""
    if problem:
        raise StartError(
            f"mnemo cannot start (配置有误，无法启动): {problem}; configured: {current!r}"
            f"{f' with {previous!r} as the previous model' if previous else ' alone'}. "
            "Vectors of two models are never ranked together: set PREVIOUS_EMBEDDINGS_* to the model the "
            f"users are on and run the switch to its end ({SWITCHING}) "
            "(两个模型的向量不能混合排序：请设置 PREVIOUS_EMBEDDINGS_* 并完成在线切换)"
        )
    return DenseLayout(prefix, first, current, previous)


def _text(value: object) -> str | None:
    if value is None:
        return None
    return value.decode() if isinstance(value, bytes) else str(value)


def build_previous_embedder(settings: Settings) -> Embedder | None:
    """The previous dense model, loaded (a switch), or None."""
    served = previous_model(settings)
    if served is not None:
        return HttpEmbedder(served)
    if settings.previous_embeddings_model == BUNDLED:
        return OnnxEmbedder(
            settings.embedding_model or None,
            batch_size=settings.embedding_batch_size,
            threads=settings.embedding_threads,
            max_tokens=settings.embedding_max_tokens,
        )
    return None


async def dense_models(
    settings: Settings, embedder: Embedder, store: RoutingLongTermStore, *, previous: Embedder | None = None
) -> DenseModels:
    """The loaded dense models (the previous one loaded here unless given), and, during a switch, which
    one a user is embedded by (where their placement is)."""
    from app.composition.stores import dense_model_name

    current = DenseModel(dense_model_name(settings, embedder), embedder)
    if previous is None:
        previous = await anyio.to_thread.run_sync(build_previous_embedder, settings)
    if previous is None:
        return DenseModels(current)
    before = DenseModel(dense_model_name(settings, previous), previous)

    async def locate(user_id: str, fresh: bool) -> str:
        return await store.dense_model_of(user_id, fresh=fresh)

    return DenseModels(current, before, locate=locate)


async def finish_switch(
    settings: Settings, redis: RedisClient, store: RoutingLongTermStore, archive: ArchivedTiers | None = None
) -> bool:
    """Record a dense switch as finished when no store of another model than the configured one holds a
    record (every server must answer), nor, with the `archive`, another model's warm store (its rows
    move with `python -m app.cli.archive --reembed`; dropping PREVIOUS_EMBEDDINGS_* before would leave
    them unread): processes may then start without PREVIOUS_EMBEDDINGS_*."""
    current = configured_tag(settings)
    for server in store.servers.values():
        if server.dense_model and not same_model(server.dense_model, current) and await server.user_counts():
            return False
    for warm in archive.warm_stores if archive is not None else ():
        if warm.dense_model and not same_model(warm.dense_model, current) and await warm.user_counts():
            log.info(
                "dense model switch not finished: archived rows of another model remain in warm",
                extra={"model": warm.dense_model, "next": "python -m app.cli.archive --reembed"},
            )
            return False
    prefix = settings.chroma_collection_prefix
    await redis.set(keys.dense_switched(prefix), current)
    await redis.delete(keys.dense_switching(prefix))
    log.info("dense model switch finished", extra={"model": current})
    return True
