"""Several Chroma servers behind the memory API: each user on exactly one, every use case across them,
readiness per server, and a rebalance adopting data from before placements. Real servers throughout."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.composition import build_memory_service, build_store, chroma_client_factory
from app.settings import Settings
from harness.services import ServerProcess, start_chroma
from memory import ChromaLongTermStore, Embedder, RoutingLongTermStore, keys
from memory.errors import StoreUnavailable
from memory.longterm.placement import Placement, Placements, rendezvous
from memory.longterm.rebalance import Rebalancer
from memory.longterm.versions import LtmVersions
from memory.models import Memory, Message
from tests.conftest import AuthHeaders, app_client, drop_collections, records_on, redis_of, until

pytestmark = pytest.mark.integration

CITIES = ["杭州", "成都", "厦门", "西安", "大连", "苏州"]
USERS = [f"user{i:02d}" for i in range(16)]


@pytest.fixture
async def two_servers(
    settings: Settings, chroma_server: ServerProcess, chroma_server_b: ServerProcess
) -> AsyncIterator[Settings]:
    yield settings.model_copy(update={"chroma_urls": f"a={chroma_server.url},b={chroma_server_b.url}"})
    drop_collections(chroma_server_b.url, settings.chroma_collection_prefix)


def held(urls: dict[str, str], prefix: str) -> dict[str, dict[str, list[str]]]:
    """server -> user -> memory ids, read straight from each Chroma server."""
    out: dict[str, dict[str, list[str]]] = {}
    for name, url in urls.items():
        by_user: dict[str, list[str]] = defaultdict(list)
        for memory_id, user_id in records_on(url, prefix):
            by_user[user_id].append(memory_id)
        out[name] = dict(by_user)
    return out


async def write_facts(
    client: httpx.AsyncClient, auth: AuthHeaders, users: list[str]
) -> dict[str, dict[str, str]]:
    """Two memories per user (zh, en); user -> message id ("zh", "en") -> memory id."""
    written: dict[str, dict[str, str]] = {}
    for i, user in enumerate(users):
        resp = await client.post(
            f"/v1/memory/{user}/messages",
            json={
                "session_id": "s1",
                "messages": [
                    {
                        "role": "user",
                        "content": f"我住在{CITIES[i % len(CITIES)]}，订单号 A{i:05d}",
                        "id": "zh",
                    },
                    {"role": "user", "content": f"My sister Anna works as nurse number {i}", "id": "en"},
                ],
            },
            headers=auth(user),
        )
        assert resp.status_code == 200, resp.text
        written[user] = {m["source_message_ids"][0]: m["id"] for m in resp.json()["memories"]}
        assert set(written[user]) == {"zh", "en"}
    return written


async def test_each_user_lives_on_one_server_and_every_use_case_works_across_them(
    two_servers: Settings,
    chroma_server: ServerProcess,
    chroma_server_b: ServerProcess,
    embedder: Embedder,
    auth: AuthHeaders,
) -> None:
    urls = {"a": chroma_server.url, "b": chroma_server_b.url}
    prefix = two_servers.chroma_collection_prefix
    async with app_client(two_servers, embedder) as (client, _):
        written = await write_facts(client, auth, USERS)
    where = {u: rendezvous(u, ["a", "b"]) for u in USERS}
    on = held(urls, prefix)
    assert {where[u] for u in USERS} == {"a", "b"}, "16 users should be spread over both servers"
    for user in USERS:
        assert set(on[where[user]][user]) == set(written[user].values())
        other = "b" if where[user] == "a" else "a"
        assert user not in on[other], f"{user}'s memories must be on {where[user]} only"
    redis = redis_of(two_servers)
    try:
        for user in USERS:  # the first write recorded the placement
            assert await redis.hgetall(keys.ltm_placement(user)) == {"at": where[user]}
    finally:
        await redis.aclose()

    a_user = next(u for u in USERS if where[u] == "a")
    b_user = next(u for u in USERS if where[u] == "b")
    # a fresh worker: no index cached, every read goes to the user's server
    async with app_client(two_servers, embedder) as (client, _):
        for user in USERS:
            i = USERS.index(user)
            found = await client.post(
                f"/v1/memory/{user}/search", json={"query": "我住在哪里？"}, headers=auth(user)
            )
            assert found.status_code == 200, found.text
            assert found.json()["results"][0]["content"].startswith(f"我住在{CITIES[i % len(CITIES)]}")
            listed = await client.get(f"/v1/memory/{user}/list", headers=auth(user))
            assert listed.json()["total"] == 2
        exported = await client.get(f"/v1/memory/{b_user}/export", headers=auth(b_user))
        assert exported.status_code == 200
        assert {m["id"] for m in json.loads(exported.text)["memories"]} == set(written[b_user].values())

        forgot = await client.post(
            f"/v1/memory/{b_user}/forget",
            json={"query": "my sister Anna the nurse", "min_similarity": 0.5, "dry_run": False},
            headers=auth(b_user),
        )
        assert forgot.status_code == 200, forgot.text
        assert forgot.json()["ids"] == [written[b_user]["en"]]
        deleted = await client.delete(f"/v1/memory/{a_user}/{written[a_user]['zh']}", headers=auth(a_user))
        assert deleted.status_code == 204
        await until(
            lambda: held(urls, prefix)["a"][a_user] == [written[a_user]["en"]]
        )  # purged after the 204
        after = held(urls, prefix)
        assert after["b"][b_user] == [written[b_user]["zh"]]

        for user in (a_user, b_user):
            erased = await client.delete(f"/v1/memory/{user}", params={"confirm": user}, headers=auth(user))
            assert erased.status_code == 200, erased.text
            assert erased.json()["deleted"]["chroma"] == 1
        final = held(urls, prefix)
        assert a_user not in final["a"]
        assert b_user not in final["b"]
        assert sum(len(ids) for by_user in final.values() for ids in by_user.values()) == 2 * (len(USERS) - 2)


async def test_readyz_reports_each_server_and_users_degrade_one_server_at_a_time(
    tmp_path: Path,
    settings: Settings,
    chroma_server: ServerProcess,
    redis_server: ServerProcess,
    embedder: Embedder,
    auth: AuthHeaders,
) -> None:
    b = start_chroma(tmp_path / "chroma-b")
    try:
        config = settings.model_copy(update={"chroma_urls": f"a={chroma_server.url},b={b.url}"})
        a_user = next(u for u in USERS if rendezvous(u, ["a", "b"]) == "a")
        b_user = next(u for u in USERS if rendezvous(u, ["a", "b"]) == "b")
        async with app_client(config, embedder) as (client, _):
            ready = await client.get("/readyz")
            assert ready.status_code == 200
            assert ready.json() == {
                "status": "ready",
                "redis": "ok",
                "chroma": "ok",
                "chroma_servers": {"a": "ok", "b": "ok"},
            }
            await write_facts(client, auth, [a_user, b_user])

            b.stop()
            down = await client.get("/readyz")
            assert down.status_code == 503
            assert down.headers["retry-after"] == "5"
            body = down.json()
            assert body["error"] == "not_ready"
            assert body["detail"] == "not ready: chroma (b) unreachable"
            assert body["chroma_servers"] == {"a": "ok", "b": "down"}
            # a user on the healthy server is served; one on the stopped server gets a 503 to retry
            assert (await client.get(f"/v1/memory/{a_user}/list", headers=auth(a_user))).status_code == 200
            cut = await client.get(f"/v1/memory/{b_user}/list", headers=auth(b_user))
            assert cut.status_code == 503
            assert cut.json()["error"] == "chroma_unavailable"
            assert cut.headers["retry-after"] == "5"
            # erasure must reach every server (a copy could be anywhere): it waits for b
            erase = await client.delete(
                f"/v1/memory/{a_user}", params={"confirm": a_user}, headers=auth(a_user)
            )
            assert erase.status_code == 503

            b = start_chroma(tmp_path / "chroma-b", port=b.port)
            assert (await client.get("/readyz")).status_code == 200
            listed = await client.get(f"/v1/memory/{b_user}/list", headers=auth(b_user))
            assert listed.json()["total"] == 2
    finally:
        b.stop()
        drop_collections(chroma_server.url, settings.chroma_collection_prefix)


def _memory(user: str, i: int, text: str) -> Memory:
    return Memory(
        id=f"{user}-m{i}",
        user_id=user,
        content=text,
        created_at=1_790_000_000.0 + i,
        session_id="old",
        source="user",
        content_hash=f"{user}-h{i}",
        importance=0.5,
        source_message_ids=(f"{user}-msg{i}",),
    )


async def test_a_rebalance_adopts_records_from_before_placements_and_merges_strays(
    two_servers: Settings, chroma_server: ServerProcess, chroma_server_b: ServerProcess
) -> None:
    """Data written by a single-server mnemo before placements existed has no placement key: the
    rebalance records where it is (adopt), moves what rendezvous now puts elsewhere, and merges
    records it finds on a server no placement names (here: one user with records on both)."""
    prefix = two_servers.chroma_collection_prefix
    urls = {"a": chroma_server.url, "b": chroma_server_b.url}
    raw = {
        name: ChromaLongTermStore(chroma_client_factory(two_servers, url), shards=4, collection_prefix=prefix)
        for name, url in urls.items()
    }
    rng = np.random.default_rng(3)
    legacy = [f"old{i}" for i in range(8)]
    for user in legacy:
        memories = [_memory(user, i, f"旧的记忆 {i} / an old memory {i}") for i in range(3)]
        vectors = rng.standard_normal((3, 8)).astype(np.float32)
        await raw["a"].upsert(memories, vectors)
    # "split" has records on both servers (written on b after its placement was lost, say)
    split = [_memory("split", i, f"分开的记忆 {i}") for i in range(4)]
    await raw["a"].upsert(split[:3], rng.standard_normal((3, 8)).astype(np.float32))
    await raw["b"].upsert(split[2:], rng.standard_normal((2, 8)).astype(np.float32))

    redis = redis_of(two_servers)
    store = build_store(two_servers, redis)
    try:
        before = held(urls, prefix)
        dry = await Rebalancer(store, redis, grace_seconds=1.0).run(dry_run=True)
        assert dry.users_seen == 9
        assert dry.planned["adopt"] == 9
        assert dry.planned["merge"] == 1
        movers = [u for u in legacy if rendezvous(u, ["a", "b"]) == "b"]
        assert movers, "some legacy user should belong on b"
        assert dry.planned["move"] == len(movers)  # "split" has records on its target: adopted there
        assert held(urls, prefix) == before  # a dry run changes nothing
        assert await redis.exists(keys.ltm_placement("old0")) == 0

        started = time.monotonic()
        report = await Rebalancer(store, redis, grace_seconds=1.0).run()
        assert time.monotonic() - started < 60
        assert report.failures == 0
        assert report.adopted == 9
        assert report.records_merged == 1  # split-m3 (only on b) or split-m0/m1 (only on a)
        after = held(urls, prefix)
        every = [i for by_user in after.values() for ids in by_user.values() for i in ids]
        assert len(every) == len(set(every)) == 8 * 3 + 4  # nothing lost, nothing twice
        for name, by_user in after.items():
            for user in by_user:
                assert rendezvous(user, ["a", "b"]) == name
                assert await redis.hgetall(keys.ltm_placement(user)) == {"at": name}
        assert sorted(after[rendezvous("split", ["a", "b"])]["split"]) == [f"split-m{i}" for i in range(4)]
        # nothing left to do
        again = await Rebalancer(store, redis, grace_seconds=1.0).run()
        assert (again.users_to_settle, again.users_moved, again.failures) == (0, 0, 0)
    finally:
        await redis.aclose()


class CountingPlacements(Placements):
    reads = 0

    async def read(self, user_id: str) -> tuple[Placement, int]:
        self.reads += 1
        return await super().read(user_id)


async def test_searches_route_by_the_cached_placement_until_a_move_bumps_the_version(
    two_servers: Settings, chroma_server: ServerProcess, chroma_server_b: ServerProcess, embedder: Embedder
) -> None:
    """Every search of this user asks Chroma (in-process dense recall off): the placement is read from
    Redis once, then trusted on the version each search reads anyway; the switch of a move bumps that
    version, so the very next search reads the placement again and goes to the new server."""
    config = two_servers.model_copy(update={"in_process_index_max": 0, "in_process_dense_max": 0})
    redis = redis_of(config)
    urls = {"a": chroma_server.url, "b": chroma_server_b.url}
    try:
        placements = CountingPlacements(redis)
        servers = {
            name: ChromaLongTermStore(
                chroma_client_factory(config, url),
                shards=4,
                collection_prefix=config.chroma_collection_prefix,
            )
            for name, url in urls.items()
        }
        store = RoutingLongTermStore(servers, placements)
        service = build_memory_service(config, store, embedder, redis)
        user = next(u for u in USERS if rendezvous(u, ["a", "b"]) == "a")
        await service.ingest(user, "s1", [Message("user", "我住在杭州 I live in Hangzhou", id="m1")])
        await service.search(user, "where do I live?", top_k=3)  # builds the index: reads the placement
        reads = placements.reads
        for query in ("我住在哪里？", "where do I live?", "Hangzhou"):
            found = await service.search(user, query, top_k=3)
            assert found[0].memory.content == "我住在杭州 I live in Hangzhou"
        assert placements.reads == reads, "a search with an unchanged version reads no placement"

        # move the user to b (only b is left for new users): a rebalance through the same routing
        only_b = RoutingLongTermStore(servers, Placements(redis), draining=["a"])
        report = await Rebalancer(only_b, redis, grace_seconds=1.0).run()
        assert report.users_moved == 1
        assert held(urls, config.chroma_collection_prefix)["a"] == {}
        found = await service.search(user, "where do I live?", top_k=3)
        assert found[0].memory.content == "我住在杭州 I live in Hangzhou"  # from b: a's copy is gone
        assert placements.reads == reads + 1
        assert await store.server_of(user) == "b"
    finally:
        await redis.aclose()


async def test_an_export_fails_rather_than_mix_servers_when_its_user_moves_mid_read(
    two_servers: Settings, embedder: Embedder
) -> None:
    redis = redis_of(two_servers)
    try:
        store = build_store(two_servers, redis)
        service = build_memory_service(two_servers, store, embedder, redis)
        user = next(u for u in USERS if rendezvous(u, ["a", "b"]) == "a")
        texts = ["我住在杭州", "I keep bees on my rooftop", "我的订单号是 A12345", "My sister is a nurse"]
        await service.ingest(user, "s1", [Message("user", t, id=f"m{i}") for i, t in enumerate(texts)])
        pages = store.pages(user, page_size=2)
        assert len(await anext(pages)) == 2
        # a rebalance switches the user meanwhile (as its switch step does, version bump included)
        await store.placements.switch(user, source="a", target="b", versions=LtmVersions(redis))
        with pytest.raises(StoreUnavailable, match="moved to another Chroma server"):
            await anext(pages)
    finally:
        await redis.aclose()


async def test_a_placement_naming_a_server_not_configured_is_a_503_not_a_silent_empty_answer(
    two_servers: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    redis = redis_of(two_servers)
    try:
        await redis.hset(keys.ltm_placement("ghost"), "at", "removed-too-early")
        async with app_client(two_servers, embedder) as (client, _):
            resp = await client.get("/v1/memory/ghost/list", headers=auth("ghost"))
            assert resp.status_code == 503
            assert resp.json()["error"] == "chroma_unavailable"
            # a search reads the bridge channel's vectors from the placed server too (a KeyError: 500)
            found = await client.post(
                "/v1/memory/ghost/search", json={"query": "我住在哪里？"}, headers=auth("ghost")
            )
            assert found.status_code == 503, found.text
            assert found.json()["error"] == "chroma_unavailable"
            assert found.headers["Retry-After"]
            written = await client.post(
                "/v1/memory/ghost/messages",
                json={"session_id": "s", "messages": [{"role": "user", "content": "我住在杭州"}]},
                headers=auth("ghost"),
            )
            assert written.status_code == 503  # nothing is written to another server instead
    finally:
        await redis.aclose()
