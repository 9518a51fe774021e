"""Where each dense model's records are, and which configurations may start (issue 44, a dense switch):
against real Redis (the recorded first model, the switch under way, the switch finished) and a real
Chroma (what `finish_switch` scans)."""

from __future__ import annotations

import numpy as np
import pytest

from app.composition import build_store
from app.composition.dense import BUNDLED, dense_layout, finish_switch
from app.settings import Settings, StartError
from memory import keys
from memory.longterm.dense_models import physical_name, tag_hash
from memory.longterm.ids import content_hash
from memory.models import Memory
from tests.conftest import redis_of

pytestmark = pytest.mark.integration
SERVED = {
    "embeddings_url": "http://127.0.0.1:9/v1",  # never called: the layout only names models
    "embeddings_model": "use-multilingual-v3",
    "embeddings_dimensions": 512,
}
SERVED_TAG = "http:use-multilingual-v3@512:512"


def configured(settings: Settings, **values: object) -> Settings:
    return settings.model_copy(update=values)


async def test_a_new_prefix_records_its_first_model_and_keeps_the_plain_names(settings: Settings) -> None:
    redis = redis_of(settings)
    layout = await dense_layout(settings, redis)
    assert await redis.get(keys.dense_model(settings.chroma_collection_prefix)) in (BUNDLED, BUNDLED.encode())
    assert layout.namespace(layout.current) == settings.chroma_collection_prefix
    store = build_store(settings, redis, layout=layout)
    assert list(store.servers) == [s.name for s in settings.chroma_servers]


async def test_another_model_alone_is_refused_then_a_switch_starts_and_must_finish(
    settings: Settings,
) -> None:
    redis = redis_of(settings)
    prefix = settings.chroma_collection_prefix
    await dense_layout(settings, redis)  # the bundled MiniLM wrote this prefix first
    served = configured(settings, **SERVED)
    with pytest.raises(StartError, match="PREVIOUS_EMBEDDINGS") as refused:
        await dense_layout(served, redis)
    assert "无法启动" in str(refused.value)
    # the switch: the served model with the bundled one as previous
    switching = configured(served, previous_embeddings_model="bundled")
    layout = await dense_layout(switching, redis)
    assert layout.namespace(SERVED_TAG) == f"{prefix}-d{tag_hash(SERVED_TAG)}"
    assert layout.namespace(BUNDLED) == prefix
    store = build_store(switching, redis, layout=layout)
    names = list(store.servers)
    assert len(names) == 2 * len(switching.chroma_servers)
    assert {physical_name(n) for n in names} == {s.name for s in switching.chroma_servers}
    assert all(store.server(store.owner(u)).dense_model == SERVED_TAG for u in ("alice", "张伟", "bob"))
    # while it is under way, neither model may run alone
    for alone in (served, settings):
        with pytest.raises(StartError, match="under way"):
            await dense_layout(alone, redis)
    # a record still on the bundled model's collections: not finished
    old = store.server(physical_name(names[0]))
    await old.upsert(
        [
            Memory(
                id="m1",
                user_id="alice",
                content="我喜欢喝茶 I like tea",
                created_at=1.0,
                session_id="s1",
                source="user",
                content_hash=content_hash("我喜欢喝茶 I like tea"),
            )
        ],
        _vectors(384),
    )
    assert not await finish_switch(switching, redis, store)
    await old.delete_user("alice")
    assert await finish_switch(switching, redis, store)
    # finished: the served model starts alone, the bundled one alone is refused (its users moved)
    await dense_layout(served, redis)
    with pytest.raises(StartError, match=SERVED_TAG):
        await dense_layout(settings, redis)
    # the way back is another switch: the bundled model with the served one as previous
    back = configured(
        settings,
        previous_embeddings_url=SERVED["embeddings_url"],
        previous_embeddings_model=SERVED["embeddings_model"],
        previous_embeddings_dimensions=512,
    )
    assert (await dense_layout(back, redis)).namespace(BUNDLED) == prefix


async def test_a_third_model_is_refused(settings: Settings) -> None:
    redis = redis_of(settings)
    await dense_layout(settings, redis)  # bundled first
    third = configured(
        settings,
        embeddings_url="http://127.0.0.1:9/v1",
        embeddings_model="bge-m3",
        embeddings_dimensions=1024,
        previous_embeddings_url="http://127.0.0.1:9/v1",
        previous_embeddings_model="e5-large",
        previous_embeddings_dimensions=1024,
    )
    with pytest.raises(StartError, match="neither the configured nor the previous"):
        await dense_layout(third, redis)


def _vectors(n: int) -> np.ndarray:
    vector = np.zeros((1, n), dtype=np.float32)
    vector[0, 0] = 1.0
    return vector
