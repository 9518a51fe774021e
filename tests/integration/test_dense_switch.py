"""Switching the dense model online (issue 44) is a rebalance: against a real Chroma server, a real Redis
and USE v3 served over the real `/v1/embeddings` protocol (harness/model_server.py), users whose records
the bundled MiniLM embedded are moved to the served model's namespace on the same server, every record
embedded again from the text the writer embeds; their bridge vectors (one bridge store shared by both
models' namespaces) stay. A delete during the copy does not come back, a copy that fails half way leaves
the user on the previous model and a re-run completes it, and without the models nothing is moved.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np
import pytest

from app.clients.embeddings import HttpEmbedder, ServedModel
from app.composition import chroma_client_factory, dense_model_name
from app.composition.dense import finish_switch
from app.settings import Settings
from harness.model_server import DIMENSIONS, USE, start_model_server
from harness.services import ServerProcess
from memory import ChromaLongTermStore, Embedder, RoutingLongTermStore, keys
from memory.errors import StoreUnavailable
from memory.longterm.bridge import BRIDGE_HNSW, BRIDGE_SHARDS, BridgeVectors, bridge_prefix
from memory.longterm.dense_models import (
    DenseModel,
    DenseModelChanged,
    DenseModels,
    namespace,
    virtual_name,
)
from memory.longterm.ids import content_hash
from memory.longterm.placement import Placements
from memory.longterm.rebalance import RebalanceError, Rebalancer
from memory.longterm.records import Records
from memory.longterm.tombstones import Tombstones
from memory.models import Memory, SearchFilters
from memory.redis_client import RedisClient, close
from tests.conftest import records_on, redis_of

pytestmark = pytest.mark.integration

PREVIOUS = "OnnxEmbedder::384"  # the bundled MiniLM in process, as dense_model_name names it
CITIES = ["杭州", "成都", "厦门", "西安", "Lisbon", "Osaka"]


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_model_server(tmp_path_factory.mktemp("models"))
    yield server
    server.stop()


@pytest.fixture
async def served_use(model_server: ServerProcess, settings: Settings) -> AsyncIterator[HttpEmbedder]:
    embedder = HttpEmbedder(ServedModel(url=f"{model_server.url}/v1", model=USE, dimension=DIMENSIONS[USE]))
    yield embedder
    await embedder.aclose()


def configured(settings: Settings, model_server: ServerProcess) -> Settings:
    """The settings of the switch: USE v3 served as the dense model, the bundled MiniLM the previous."""
    return settings.model_copy(
        update={
            "embeddings_url": f"{model_server.url}/v1",
            "embeddings_model": USE,
            "embeddings_dimensions": DIMENSIONS[USE],
            "previous_embeddings_model": "bundled",
        }
    )


@pytest.fixture
async def redis(settings: Settings) -> AsyncIterator[RedisClient]:
    client = redis_of(settings)
    yield client
    await close(client)


class Hooked(ChromaLongTermStore):
    """The real store on the real server; `before_put` runs before each `put_records` (a delete that
    does not wait for the moving user's lock, a server failing mid-copy)."""

    before_put: Callable[[Records], Awaitable[None]] | None = None

    async def put_records(self, user_id: str, records: Records) -> None:
        if self.before_put is not None:
            await self.before_put(records)
        await super().put_records(user_id, records)


@dataclass
class Switch:
    """One Chroma server holding both models' namespaces, behind the routing store of the switch."""

    old: ChromaLongTermStore
    new: Hooked
    bridge: Hooked
    routing: RoutingLongTermStore
    current: str
    virtual: str
    models: DenseModels


def switch(settings: Settings, redis: RedisClient, embedder: Embedder, served: HttpEmbedder) -> Switch:
    prefix = settings.chroma_collection_prefix
    current = dense_model_name(settings, served)
    assert current.startswith("http:")
    factory = chroma_client_factory(settings)
    old = ChromaLongTermStore(
        factory, shards=settings.memory_shards, collection_prefix=prefix, dense_model=PREVIOUS
    )
    new = Hooked(
        factory,
        shards=settings.memory_shards,
        collection_prefix=namespace(prefix, current, PREVIOUS),
        dense_model=current,
    )
    bridge = Hooked(factory, shards=BRIDGE_SHARDS, collection_prefix=bridge_prefix(prefix), hnsw=BRIDGE_HNSW)
    virtual = virtual_name("s1", current, PREVIOUS)
    routing = RoutingLongTermStore(
        {"s1": old, virtual: new}, Placements(redis), dense_model=current, trust_seconds=0.5
    )
    models = DenseModels(DenseModel(current, served), DenseModel(PREVIOUS, embedder))
    return Switch(old, new, bridge, routing, current, virtual, models)


def memories_of(user: str, count: int) -> list[Memory]:
    out = []
    for n in range(count):
        city = CITIES[n % len(CITIES)]
        text = f"我住在{city}，订单号 A{n:05d}" if n % 2 else f"I moved to {city}; order number B-{n:05d}"
        out.append(
            Memory(
                id=f"{user}-{n:04d}",
                user_id=user,
                content=text,
                created_at=1_700_000_000.0 + n,
                session_id="s1",
                source="user" if n % 3 else "assistant",
                content_hash=content_hash(text),
                name="小明" if n % 5 == 0 else None,  # embed_text is "小明: ..." for these
                topic="travel" if n % 4 == 0 else None,
            )
        )
    return out


async def written_before_the_switch(
    s: Switch, redis: RedisClient, embedder: Embedder, served: HttpEmbedder, users: dict[str, int]
) -> dict[str, dict[str, Memory]]:
    """Each user's memories as the deployment wrote them before the switch (the previous model's store
    alone), with a bridge vector each (USE's), a change log and an index snapshot."""
    before = RoutingLongTermStore({"s1": s.old}, s.routing.placements)
    bridge = BridgeVectors(before, {"s1": s.bridge}, model="bridge-test")
    out: dict[str, dict[str, Memory]] = {}
    for user, count in users.items():
        memories = memories_of(user, count)
        await before.upsert(memories, await embedder.embed([m.embed_text for m in memories]))
        await bridge.put_on("s1", memories, await served.embed([m.embed_text for m in memories]))
        await redis.xadd(keys.ltm_changes(user), {"v": "1"})
        await redis.set(keys.ltm_snapshot(user), "a snapshot of MiniLM vectors")
        out[user] = {m.id: m for m in memories}
    return out


async def placement(redis: RedisClient, user: str) -> dict[str, str]:
    return {str(k): str(v) for k, v in (await redis.hgetall(keys.ltm_placement(user))).items()}


async def assert_on_the_current_model(
    s: Switch, served: HttpEmbedder, user: str, memories: dict[str, Memory]
) -> None:
    records = await s.new.records(user)
    assert sorted(records.ids) == sorted(memories)
    assert records.embeddings.shape == (len(memories), DIMENSIONS[USE])
    originals = [memories[i] for i in records.ids]
    expected = await served.embed([m.embed_text for m in originals])
    cosines = np.sum(records.embeddings * expected, axis=1) / (
        np.linalg.norm(records.embeddings, axis=1) * np.linalg.norm(expected, axis=1)
    )
    assert float(cosines.min()) > 0.999
    # documents and metadata as written: the memories read back are the ones written
    assert sorted(await s.new.get(user), key=lambda m: m.id) == sorted(originals, key=lambda m: m.id)


async def test_a_dense_switch_moves_every_user_to_the_current_models_vectors_and_keeps_their_bridge(
    settings: Settings,
    redis: RedisClient,
    embedder: Embedder,
    served_use: HttpEmbedder,
    model_server: ServerProcess,
) -> None:
    s = switch(settings, redis, embedder, served_use)
    written = await written_before_the_switch(s, redis, embedder, served_use, {"alice": 200, "王芳": 200})
    assert await s.routing.dense_model_of("alice", fresh=True) == PREVIOUS
    dry = await Rebalancer(s.routing, redis, grace_seconds=1.0, models=s.models).run(dry_run=True)
    assert dry.planned == {"move": 2}

    copied_bridge: list[str] = []

    async def bridge_put(page: Records) -> None:
        copied_bridge.extend(page.ids)

    s.bridge.before_put = bridge_put
    rebalancer = Rebalancer(
        s.routing,
        redis,
        batch_users=1,
        page_size=64,
        grace_seconds=1.0,
        companions={"s1": s.bridge, s.virtual: s.bridge},  # one bridge store for both namespaces
        models=s.models,
    )
    report = await rebalancer.run()
    assert (report.failures, report.users_moved, report.records_moved) == (0, 2, 400)
    assert report.records_reembedded == 400
    assert report.source_copies_deleted == 2
    assert report.seconds > 0
    assert copied_bridge == []  # the bridge records are already in the store both namespaces share

    for user, memories in written.items():
        assert await placement(redis, user) == {"at": s.virtual}
        assert await s.routing.dense_model_of(user, fresh=True) == s.current
        await assert_on_the_current_model(s, served_use, user, memories)
        # every worker rebuilds the user's index from the new vectors
        assert await redis.exists(keys.ltm_changes(user), keys.ltm_snapshot(user)) == 0
        # the bridge vectors stayed (the source copy's deletion left the shared bridge store alone)
        assert sorted(await s.bridge.ids_of(user)) == sorted(memories)
        # searched with the current model's vectors, the user's own memory first (Chinese and English)
        for probe in ("我住在成都，订单号 A00001", "I moved to Lisbon; order number B-00004"):
            (vector,) = await served_use.embed([probe])
            found = await s.routing.query(
                user, vector.tolist(), n_results=1, filters=SearchFilters(), model=s.current
            )
            assert found[0][0].content == probe
        with pytest.raises(DenseModelChanged):
            await s.routing.query(user, [0.1] * 384, n_results=1, filters=SearchFilters(), model=PREVIOUS)
    assert await s.old.user_counts() == {}
    assert records_on(settings.chroma_url, settings.chroma_collection_prefix) == []

    # no record left on the previous model's store: the switch is recorded as finished
    assert await finish_switch(configured(settings, model_server), redis, s.routing)
    assert await redis.get(keys.dense_switched(settings.chroma_collection_prefix)) == s.current
    again = await rebalancer.run()
    assert (again.users_to_settle, again.records_reembedded) == (0, 0)


async def test_a_delete_during_the_copy_does_not_come_back(
    settings: Settings, redis: RedisClient, embedder: Embedder, served_use: HttpEmbedder
) -> None:
    s = switch(settings, redis, embedder, served_use)
    written = await written_before_the_switch(s, redis, embedder, served_use, {"bob": 9})
    deleted: list[str] = []

    async def delete_one(page: Records) -> None:
        s.new.before_put = None
        assert page.embeddings.shape[1] == DIMENSIONS[USE]  # re-embedded before it is put
        deleted.append(page.ids[0])  # on the page being copied: it would land again on the target
        await Tombstones(redis).bury("bob", [page.ids[0]])  # as MemoryService's delete does
        await s.routing.delete("bob", [page.ids[0]])

    s.new.before_put = delete_one
    report = await Rebalancer(
        s.routing, redis, page_size=4, grace_seconds=1.0, companions={"s1": s.bridge}, models=s.models
    ).run()
    assert (report.failures, report.users_moved) == (0, 1)
    assert len(deleted) == 1
    kept = {i: m for i, m in written["bob"].items() if i not in deleted}
    await assert_on_the_current_model(s, served_use, "bob", kept)
    assert await s.old.user_counts() == {}


async def test_a_copy_that_fails_half_way_leaves_the_user_on_the_previous_model_and_a_rerun_completes(
    settings: Settings, redis: RedisClient, embedder: Embedder, served_use: HttpEmbedder
) -> None:
    s = switch(settings, redis, embedder, served_use)
    written = await written_before_the_switch(s, redis, embedder, served_use, {"carol": 10})
    puts = 0

    async def fail_the_second(page: Records) -> None:
        nonlocal puts
        puts += 1
        if puts == 2:
            raise StoreUnavailable("chroma", "injected: the target failed in the middle of a copy")

    s.new.before_put = fail_the_second
    report = await Rebalancer(
        s.routing, redis, page_size=4, grace_seconds=1.0, companions={"s1": s.bridge}, models=s.models
    ).run()
    assert (report.failures, report.users_moved) == (1, 0)
    assert await placement(redis, "carol") == {"at": "s1", "to": s.virtual}
    assert len(await s.new.ids_of("carol")) == 4  # a partial copy, marked by `to`
    # still read and searched on the previous model
    assert await s.routing.dense_model_of("carol", fresh=True) == PREVIOUS
    assert {m.id for m in await s.routing.get("carol")} == set(written["carol"])
    (vector,) = await embedder.embed(["我住在成都，订单号 A00001"])
    found = await s.routing.query(
        "carol", vector.tolist(), n_results=1, filters=SearchFilters(), model=PREVIOUS
    )
    assert found[0][0].content == "我住在成都，订单号 A00001"
    with pytest.raises(DenseModelChanged):
        await s.routing.query("carol", [0.1] * 512, n_results=1, filters=SearchFilters(), model=s.current)
    assert await redis.exists(keys.ltm_changes("carol"), keys.ltm_snapshot("carol")) == 2

    s.new.before_put = None
    rerun = await Rebalancer(
        s.routing, redis, page_size=4, grace_seconds=1.0, companions={"s1": s.bridge}, models=s.models
    ).run()
    assert (rerun.failures, rerun.users_moved, rerun.planned) == (0, 1, {"resume": 1, "move": 1})
    assert await placement(redis, "carol") == {"at": s.virtual}
    await assert_on_the_current_model(s, served_use, "carol", written["carol"])
    # the stale partial copy was deleted before the copy started over; the shared bridge store was not
    assert sorted(await s.bridge.ids_of("carol")) == sorted(written["carol"])
    assert await s.old.user_counts() == {}


async def test_without_the_models_a_cross_model_move_fails_the_user_and_moves_nothing(
    settings: Settings,
    redis: RedisClient,
    embedder: Embedder,
    served_use: HttpEmbedder,
    model_server: ServerProcess,
    caplog: pytest.LogCaptureFixture,
) -> None:
    s = switch(settings, redis, embedder, served_use)
    written = await written_before_the_switch(s, redis, embedder, served_use, {"dave": 6})
    rebalancer = Rebalancer(s.routing, redis, grace_seconds=1.0, companions={"s1": s.bridge})
    with caplog.at_level(logging.ERROR, logger="memory.longterm.rebalance"):
        report = await rebalancer.run()
    assert (report.failures, report.users_moved, report.records_reembedded) == (1, 0, 0)
    errors = [r for r in caplog.records if r.exc_info is not None]
    assert [r.exc_info[0] for r in errors if r.exc_info] == [RebalanceError]
    assert await placement(redis, "dave") == {"at": "s1"}  # no `to`: nothing was begun
    assert await s.new.user_counts() == {}
    assert sorted(await s.old.ids_of("dave")) == sorted(written["dave"])
    assert await redis.exists(keys.ltm_changes("dave"), keys.ltm_snapshot("dave")) == 2
    # records are left on the previous model's store: the switch is not recorded as done
    assert not await finish_switch(configured(settings, model_server), redis, s.routing)
    assert await redis.get(keys.dense_switched(settings.chroma_collection_prefix)) is None


async def test_max_per_second_paces_the_embedding(
    settings: Settings, redis: RedisClient, embedder: Embedder, served_use: HttpEmbedder
) -> None:
    s = switch(settings, redis, embedder, served_use)
    await written_before_the_switch(s, redis, embedder, served_use, {"erin": 10, "frank": 10})
    report = await Rebalancer(s.routing, redis, grace_seconds=1.0, models=s.models, max_per_second=10.0).run()
    assert (report.failures, report.users_moved, report.records_reembedded) == (0, 2, 20)
    # 20 texts at 10 a second: the second user's copy starts 2 s in at the earliest (plus one grace)
    assert 3.0 <= report.seconds < 10.0


async def test_the_lock_is_held_only_to_embed_what_changed_since_the_copy_made_before_it(
    settings: Settings, redis: RedisClient, embedder: Embedder, served_use: HttpEmbedder
) -> None:
    """A move to another model's store copies and re-embeds every record before the user's lock; writes
    that land meanwhile (an edit, a new memory, a delete) are taken under the lock, and only they are
    embedded again there."""
    s = switch(settings, redis, embedder, served_use)
    written = await written_before_the_switch(s, redis, embedder, served_use, {"erin": 12})
    memories = written["erin"]
    edited = replace(memories["erin-0001"], content="我现在住在苏州，订单号 A00001")
    edited = replace(edited, content_hash=content_hash(edited.content))
    added = replace(memories["erin-0002"], id="erin-new", content="My new flat is in Porto.")
    added = replace(added, content_hash=content_hash(added.content))
    gone = "erin-0003"
    locked_puts: list[list[str]] = []

    class WritesAfterThePrecopy(Rebalancer):
        async def _precopy(self, user_id: str) -> str | None:
            target = await super()._precopy(user_id)
            # the writes of the next moment, to the user's store as the write path makes them
            changed = [edited, added]
            await s.routing.upsert(changed, await embedder.embed([m.embed_text for m in changed]))
            await Tombstones(redis).bury(user_id, [gone])
            await s.routing.delete(user_id, [gone])

            async def record(page: Records) -> None:
                locked_puts.append(list(page.ids))

            s.new.before_put = record
            return target

    report = await WritesAfterThePrecopy(
        s.routing, redis, page_size=5, grace_seconds=1.0, companions={"s1": s.bridge}, models=s.models
    ).run()
    assert (report.failures, report.users_moved) == (0, 1)
    # 12 before the lock, the edit and the new memory under it: nothing embedded twice
    assert report.records_reembedded == 12 + 2
    assert sorted(i for page in locked_puts for i in page) == ["erin-0001", "erin-new"]
    now = {**{i: m for i, m in memories.items() if i != gone}, edited.id: edited, added.id: added}
    await assert_on_the_current_model(s, served_use, "erin", now)
