"""Adding a Chroma server and rebalancing online, against real servers: the CLI as a subprocess while
the API keeps writing and searching, a CLI killed with SIGKILL between its switches and its deletes,
and a copy that fails half way. Afterwards every memory (and its bridge vector) is on its rendezvous
server exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis.asyncio as aredis
from prometheus_client import REGISTRY

from app.composition import build_memory_service, chroma_client_factory
from app.settings import Settings
from harness.services import ServerProcess
from memory import ChromaLongTermStore, Embedder, RoutingLongTermStore, keys
from memory.errors import StoreUnavailable
from memory.longterm.chroma import Records
from memory.longterm.placement import Placements, rendezvous
from memory.longterm.rebalance import Rebalancer
from memory.models import Message
from tests.conftest import TEST_SECRET, AuthHeaders, app_client, drop_collections, records_on, until

pytestmark = [
    pytest.mark.integration,
    pytest.mark.standalone,
]  # the rebalance CLI runs as a subprocess on the suite's redis-server

ROOT = Path(__file__).resolve().parents[2]
CITIES = ["杭州", "成都", "厦门", "西安", "大连", "苏州", "Lisbon", "Osaka"]


@pytest.fixture
def servers(
    settings: Settings,
    chroma_server: ServerProcess,
    chroma_server_b: ServerProcess,
    chroma_server_c: ServerProcess,
) -> Iterator[dict[str, str]]:
    urls = {"a": chroma_server.url, "b": chroma_server_b.url, "c": chroma_server_c.url}
    yield urls
    for url in (chroma_server_b.url, chroma_server_c.url):
        drop_collections(url, settings.chroma_collection_prefix)


def spec(urls: dict[str, str], names: str) -> str:
    return ",".join(f"{n}={urls[n]}" for n in names)


def configured(settings: Settings, urls: dict[str, str], names: str) -> Settings:
    return settings.model_copy(update={"chroma_urls": spec(urls, names)})


def held(urls: dict[str, str], prefix: str) -> dict[str, list[tuple[str, str]]]:
    """server -> (memory id, user id) of every record there."""
    return {name: records_on(url, prefix) for name, url in urls.items()}


def assert_exactly_once_on_rendezvous(
    on: dict[str, list[tuple[str, str]]], written: dict[str, set[str]]
) -> None:
    every = [memory_id for records in on.values() for memory_id, _ in records]
    assert len(every) == len(set(every)), "a memory is on two servers"
    by_user: dict[str, set[str]] = defaultdict(set)
    for name, records in on.items():
        for memory_id, user_id in records:
            assert rendezvous(user_id, sorted(on)) == name, f"{user_id} still on {name}"
            by_user[user_id].add(memory_id)
    assert dict(by_user) == written, "a written memory is missing (or an unknown one appeared)"


async def assert_placements_settled(redis: aredis.Redis, users: list[str], names: list[str]) -> None:
    for user in users:
        assert await redis.hgetall(keys.ltm_placement(user)) == {"at": rendezvous(user, names)}


def message(user: str, n: int) -> dict[str, str]:
    city = CITIES[n % len(CITIES)]
    text = f"我住在{city}，订单号 A{n:05d}" if n % 2 else f"I moved to {city}; order number B-{n:05d}"
    return {"role": "user", "content": text, "id": f"{user}-{n}"}


async def write(client: httpx.AsyncClient, auth: AuthHeaders, user: str, *ns: int) -> set[str]:
    resp = await client.post(
        f"/v1/memory/{user}/messages",
        json={"session_id": "s1", "messages": [message(user, n) for n in ns]},
        headers=auth(user),
    )
    assert resp.status_code == 200, resp.text
    return {m["id"] for m in resp.json()["memories"]}


def cli_env(settings: Settings, urls: dict[str, str], names: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PROMETHEUS_MULTIPROC"))}
    return {
        **env,
        "REDIS_URL": settings.redis_url,
        "CHROMA_URLS": spec(urls, names),
        "CHROMA_COLLECTION_PREFIX": settings.chroma_collection_prefix,
        "MEMORY_SHARDS": str(settings.memory_shards),
        "AUTH_JWT_SECRET": TEST_SECRET,
        "LOG_LEVEL": "INFO",
        "PYTHONPATH": str(ROOT),
    }


async def rebalance_cli(
    settings: Settings, urls: dict[str, str], names: str, tmp_path: Path, *args: str
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli.rebalance",
        *args,
        env=cli_env(settings, urls, names),
        cwd=tmp_path,  # no .env there
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


@contextlib.asynccontextmanager
async def traffic(
    client: httpx.AsyncClient, auth: AuthHeaders, users: list[str], written: dict[str, set[str]]
) -> AsyncIterator[list[tuple[str, int, int]]]:
    """Writes a new memory and searches, user after user, until the block ends; yields the log of
    (kind, status, results) of every call."""
    calls: list[tuple[str, int, int]] = []
    stop = asyncio.Event()

    async def loop() -> None:
        n = 1000
        while not stop.is_set():
            user = users[n % len(users)]
            resp = await client.post(
                f"/v1/memory/{user}/messages",
                json={"session_id": "s2", "messages": [message(user, n)]},
                headers=auth(user),
            )
            calls.append(("write", resp.status_code, 0))
            if resp.status_code == 200:
                written[user] |= {m["id"] for m in resp.json()["memories"]}
            other = users[(n * 7) % len(users)]
            found = await client.post(
                f"/v1/memory/{other}/search",
                json={"query": "我住在哪里？ where do I live"},
                headers=auth(other),
            )
            calls.append(("search", found.status_code, len(found.json().get("results", []))))
            n += 1

    task = asyncio.create_task(loop())
    try:
        yield calls
    finally:
        stop.set()
        await task


async def test_adding_a_server_moves_only_its_users_online_while_the_api_writes_and_searches(
    settings: Settings, servers: dict[str, str], embedder: Embedder, auth: AuthHeaders, tmp_path: Path
) -> None:
    users = [f"user{i:02d}" for i in range(30)]
    prefix = settings.chroma_collection_prefix
    written: dict[str, set[str]] = {}
    async with app_client(configured(settings, servers, "ab"), embedder) as (client, _):
        for i, user in enumerate(users):
            written[user] = await write(client, auth, user, 2 * i, 2 * i + 1)
    before = held(servers, prefix)
    initial = {u: set(ids) for u, ids in written.items()}
    assert not before["c"]
    movers = {u for u in users if rendezvous(u, ["a", "b", "c"]) == "c"}
    assert 4 <= len(movers) <= 16, "about a third of 30 users belong on the new server"

    # the API (and the rebalance) now list three servers; placements keep every user where they are
    async with (
        app_client(configured(settings, servers, "abc"), embedder) as (client, _),
        traffic(client, auth, users, written) as calls,
    ):
        await asyncio.sleep(0.5)
        started = len(calls)
        proc = await rebalance_cli(
            settings, servers, "abc", tmp_path, "--batch-users", "4", "--grace-seconds", "1"
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=180)
        during = len(calls) - started
        await asyncio.sleep(0.5)  # and a little after the last delete
    assert proc.returncode == 0, err.decode()[-3000:]
    summary = json.loads(out)
    assert summary["users_moved"] == len(movers)
    # at least what they had before; the traffic adds memories while the move runs
    assert summary["records_moved"] >= sum(len(initial[u]) for u in movers)
    assert summary["failures"] == 0
    assert summary["source_copies_deleted"] == len(movers)
    logs = [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]
    progress = [line for line in logs if line["msg"] == "rebalance progress"]
    assert len(progress) == -(-len(movers) // 4)  # one line per bounded batch
    assert all("user" not in line or len(line["user"]) == 16 for line in logs)  # digests, never ids

    assert during >= 10, "the traffic must overlap the rebalance"
    assert [c for c in calls if c[1] != 200] == [], "every write and search answered 200 during the move"
    assert all(results > 0 for kind, _, results in calls if kind == "search"), "a search lost its memories"
    assert_exactly_once_on_rendezvous(held(servers, prefix), written)
    # the API wrote a bridge vector beside every record: each moved with its record, none stayed behind
    assert_exactly_once_on_rendezvous(held(servers, f"{prefix}-xl"), written)
    redis = aredis.Redis.from_url(settings.redis_url, decode_responses=True)
    try:
        await assert_placements_settled(redis, users, ["a", "b", "c"])
    finally:
        await redis.aclose()
    # users that stayed were not touched: their records are where they were
    stayed = {(i, u) for name in "ab" for i, u in before[name] if u not in movers}
    assert stayed <= {(i, u) for name in "ab" for i, u in held(servers, prefix)[name]}


async def test_a_rebalance_killed_between_its_switches_and_its_deletes_completes_on_a_rerun(
    settings: Settings, servers: dict[str, str], embedder: Embedder, auth: AuthHeaders, tmp_path: Path
) -> None:
    users = [f"kill{i:02d}" for i in range(14)]
    prefix = settings.chroma_collection_prefix
    written: dict[str, set[str]] = {}
    async with app_client(configured(settings, servers, "ab"), embedder) as (client, _):
        for i, user in enumerate(users):
            written[user] = await write(client, auth, user, 3 * i, 3 * i + 1, 3 * i + 2)
    movers = sorted(u for u in users if rendezvous(u, ["a", "b", "c"]) == "c")
    assert movers

    proc = await rebalance_cli(
        settings, servers, "abc", tmp_path, "--batch-users", "100", "--grace-seconds", "120"
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while True:  # wait until every switch is done and it sleeps before deleting the source copies
        line = await asyncio.wait_for(proc.stderr.readline(), timeout=max(1.0, deadline - time.monotonic()))
        assert line, "the rebalance exited before switching"
        if b"batch switched" in line:
            break
    proc.send_signal(signal.SIGKILL)
    await proc.wait()

    redis = aredis.Redis.from_url(settings.redis_url, decode_responses=True)
    try:
        # the crash left each mover switched (reads and writes go to c) with its old copy still there
        for user in movers:
            placement = await redis.hgetall(keys.ltm_placement(user))
            assert placement["at"] == "c"
            assert placement["from"] == rendezvous(user, ["a", "b"])
        on = held(servers, prefix)
        assert {u for _, u in on["c"]} == set(movers)
        copies = [i for name in "ab" for i, u in on[name] if u in movers]
        assert sorted(copies) == sorted(i for u in movers for i in written[u])
        async with app_client(configured(settings, servers, "abc"), embedder) as (client, _):
            victim = movers[0]
            listed = await client.get(f"/v1/memory/{victim}/list", headers=auth(victim))
            assert listed.json()["total"] == 3
            # a delete meanwhile reaches both copies: the leftover cannot bring the memory back
            gone = sorted(written[victim])[0]
            assert (
                await client.delete(f"/v1/memory/{victim}/{gone}", headers=auth(victim))
            ).status_code == 204
            written[victim].discard(gone)
            await until(
                lambda: gone not in {i for records in held(servers, prefix).values() for i, _ in records}
            )

        rerun = await rebalance_cli(settings, servers, "abc", tmp_path, "--grace-seconds", "1")
        out, err = await asyncio.wait_for(rerun.communicate(), timeout=120)  # waits out the run lock (10 s)
        assert rerun.returncode == 0, err.decode()[-3000:]
        summary = json.loads(out)
        assert summary["users_moved"] == 0
        assert summary["source_copies_deleted"] == len(movers)
        assert summary["planned"] == {"cleanup": len(movers)}
        assert_exactly_once_on_rendezvous(held(servers, prefix), written)
        await assert_placements_settled(redis, users, ["a", "b", "c"])
    finally:
        await redis.aclose()


def counter(name: str) -> float:
    return REGISTRY.get_sample_value(name) or 0.0


class FailsOnce(ChromaLongTermStore):
    """The real store on a real server, except that one copy request fails (a server hiccup mid-move)."""

    calls_before_failure = 1

    async def put_records(self, user_id: str, records: Records) -> None:
        if self.calls_before_failure == 0:
            self.calls_before_failure = -1
            raise StoreUnavailable("chroma", "injected: the target failed in the middle of a copy")
        self.calls_before_failure -= 1
        await super().put_records(user_id, records)


def routed(
    settings: Settings, urls: dict[str, str], redis: aredis.Redis, flaky: str = ""
) -> RoutingLongTermStore:
    return RoutingLongTermStore(
        {
            name: (FailsOnce if name == flaky else DeletesDuringCopy if name == "c" else ChromaLongTermStore)(
                chroma_client_factory(settings, url),
                shards=settings.memory_shards,
                collection_prefix=settings.chroma_collection_prefix,
            )
            for name, url in urls.items()
        },
        Placements(redis),
    )


async def test_a_copy_that_fails_half_way_leaves_the_user_readable_and_a_rerun_completes(
    settings: Settings, servers: dict[str, str], embedder: Embedder
) -> None:
    users = [f"flaky{i:02d}" for i in range(10)]
    prefix = settings.chroma_collection_prefix
    redis = aredis.Redis.from_url(settings.redis_url, decode_responses=True)
    two = {n: servers[n] for n in "ab"}
    try:
        service = build_memory_service(settings, routed(settings, two, redis), embedder, redis)
        written: dict[str, set[str]] = {}
        for i, user in enumerate(users):
            messages = [Message("user", message(user, 5 * i + k)["content"], id=f"m{k}") for k in range(5)]
            written[user] = {m.id for m in await service.ingest(user, "s1", messages)}
        movers = sorted(u for u in users if rendezvous(u, ["a", "b", "c"]) == "c")
        assert movers

        three = routed(settings, servers, redis, flaky="c")
        dry = await Rebalancer(three, redis, page_size=2, grace_seconds=1.0).run(dry_run=True)
        assert dry.planned == {"move": len(movers)}
        before = counter("mnemo_rebalance_failures_total")
        moved_before = counter("mnemo_rebalance_users_moved_total")
        report = await Rebalancer(three, redis, page_size=2, grace_seconds=1.0).run()
        assert report.failures == 1
        assert report.users_moved == len(movers) - 1
        assert counter("mnemo_rebalance_failures_total") == before + 1
        assert counter("mnemo_rebalance_users_moved_total") == moved_before + len(movers) - 1
        # the first mover's second page failed: it stays on its server, a partial copy marked on c
        failed = movers[0]
        source = rendezvous(failed, ["a", "b"])
        assert await redis.hgetall(keys.ltm_placement(failed)) == {"at": source, "to": "c"}
        on = held(servers, prefix)
        assert len([i for i, u in on["c"] if u == failed]) == 2
        # and is served from the source meanwhile, by a worker that has nothing cached
        reader = build_memory_service(settings, routed(settings, servers, redis), embedder, redis)
        found = await reader.search(failed, "我住在哪里？ where do I live", top_k=10)
        assert {s.memory.id for s in found} == written[failed]

        rerun = await Rebalancer(
            routed(settings, servers, redis), redis, page_size=2, grace_seconds=1.0
        ).run()
        assert (rerun.failures, rerun.users_moved, rerun.planned) == (0, 1, {"resume": 1, "move": 1})
        assert_exactly_once_on_rendezvous(held(servers, prefix), written)
        await assert_placements_settled(redis, users, ["a", "b", "c"])
        found = await reader.search(failed, "我住在哪里？ where do I live", top_k=10)
        assert {s.memory.id for s in found} == written[failed]
    finally:
        await redis.aclose()


class DeletesDuringCopy(ChromaLongTermStore):
    """The real store; `during_copy` runs once, when the first page of a move reaches this server (the
    target), before the page lands: a delete there does not wait for the moving user's lock."""

    during_copy: Callable[[Records], Awaitable[None]] | None = None

    async def put_records(self, user_id: str, records: Records) -> None:
        hook, self.during_copy = self.during_copy, None
        if hook is not None:
            await hook(records)
        await super().put_records(user_id, records)


async def test_a_delete_during_a_move_does_not_come_back_on_the_target(
    settings: Settings, servers: dict[str, str], embedder: Embedder
) -> None:
    prefix = settings.chroma_collection_prefix
    redis = aredis.Redis.from_url(settings.redis_url, decode_responses=True)
    two = {n: servers[n] for n in "ab"}
    try:
        user = next(
            f"mover{i:02d}" for i in range(100) if rendezvous(f"mover{i:02d}", ["a", "b", "c"]) == "c"
        )
        api = build_memory_service(settings, routed(settings, two, redis), embedder, redis)
        messages = [Message("user", message(user, k)["content"], id=f"m{k}") for k in range(5)]
        written = {m.id for m in await api.ingest(user, "s1", messages)}
        three = routed(settings, servers, redis)
        target = three.server("c")
        assert isinstance(target, DeletesDuringCopy)
        deleted: list[str] = []

        async def delete_one(page: Records) -> None:
            deleted.append(page.ids[0])  # on the page being copied: it would land again on the target
            await api.delete(user, page.ids[0])

        target.during_copy = delete_one
        report = await Rebalancer(three, redis, page_size=2, grace_seconds=1.0).run()
        assert (report.failures, report.users_moved) == (0, 1)
        assert len(deleted) == 1
        assert_exactly_once_on_rendezvous(held(servers, prefix), {user: written - set(deleted)})
        reader = build_memory_service(settings, routed(settings, servers, redis), embedder, redis)
        found = await reader.search(user, "我住在哪里？ where do I live", top_k=10)
        assert {s.memory.id for s in found} == written - set(deleted)
    finally:
        await redis.aclose()


async def test_edits_and_history_hold_across_a_move_to_another_server(
    settings: Settings, servers: dict[str, str], embedder: Embedder, auth: AuthHeaders, tmp_path: Path
) -> None:
    """A memory edited before its user moves to another Chroma server keeps its version and history
    through the move, and is edited again there (issue 24)."""
    user = next(f"mover{i:02d}" for i in range(100) if rendezvous(f"mover{i:02d}", ["a", "b", "c"]) == "c")
    async with app_client(configured(settings, servers, "ab"), embedder) as (client, _):
        (memory_id,) = await write(client, auth, user, 1)
        read = (await client.get(f"/v1/memory/{user}/{memory_id}", headers=auth(user))).json()
        headers = auth(user) | {"If-Match": f'"{read["version"]}"'}
        first = await client.patch(
            f"/v1/memory/{user}/{memory_id}", json={"content": "我住在苏州，订单号 A00001"}, headers=headers
        )
        assert first.status_code == 200, first.text
    proc = await rebalance_cli(settings, servers, "abc", tmp_path, "--grace-seconds", "1")
    _, err = await asyncio.wait_for(proc.communicate(), timeout=180)
    assert proc.returncode == 0, err.decode()[-3000:]
    assert {u for _, u in held(servers, settings.chroma_collection_prefix)["c"]} == {user}
    async with app_client(configured(settings, servers, "abc"), embedder) as (client, _):
        moved = (await client.get(f"/v1/memory/{user}/{memory_id}", headers=auth(user))).json()
        assert moved["version"] == first.json()["version"]  # a move is not a change
        headers = auth(user) | {"If-Match": f'"{moved["version"]}"'}
        second = await client.patch(
            f"/v1/memory/{user}/{memory_id}", json={"content": "我住在厦门，订单号 A00001"}, headers=headers
        )
        assert second.status_code == 200, second.text
        found = await client.post(
            f"/v1/memory/{user}/search", json={"query": "我住在哪里？"}, headers=auth(user)
        )
        assert "厦门" in found.json()["results"][0]["content"]
        history = (await client.get(f"/v1/memory/{user}/{memory_id}/history", headers=auth(user))).json()
    assert [e["event"] for e in history["events"]] == ["created", "edited", "edited"]
    assert [e["detail"]["content"]["after"] for e in history["events"][1:]] == [
        "我住在苏州，订单号 A00001",
        "我住在厦门，订单号 A00001",
    ]
    assert {u for _, u in held(servers, settings.chroma_collection_prefix)["c"]} == {user}


async def test_the_entity_graph_and_profile_hold_across_a_move_to_another_server(
    settings: Settings, servers: dict[str, str], embedder: Embedder, auth: AuthHeaders, tmp_path: Path
) -> None:
    """Relation memory (issue 26) keys its records by memory id in the user's Redis hash: a move of the
    user's Chroma records leaves entities, merges, profile and tags as they were, and the entity page
    reads the memories from the new server."""
    user = next(f"graph{i:02d}" for i in range(100) if rendezvous(f"graph{i:02d}", ["a", "b", "c"]) == "c")
    on = settings.model_copy(update={"relation_memory": True})
    texts = [
        "我是一名小学老师，住在杭州",
        "I had lunch with Kit yesterday",
        "Katherine called about the contract",
    ]
    body = {"session_id": "s1", "messages": [{"role": "user", "content": t} for t in texts]}
    async with app_client(configured(on, servers, "ab"), embedder) as (client, _):
        resp = await client.post(f"/v1/memory/{user}/messages", json=body, headers=auth(user))
        assert resp.status_code == 200, resp.text
        ids = {m["content"]: m["id"] for m in resp.json()["memories"]}
        merged = await client.post(
            f"/v1/memory/{user}/entities/merges",
            json={"source": "person:kit", "target": "person:katherine"},
            headers=auth(user),
        )
        assert merged.status_code == 201, merged.text
    proc = await rebalance_cli(settings, servers, "abc", tmp_path, "--grace-seconds", "1")
    _, err = await asyncio.wait_for(proc.communicate(), timeout=180)
    assert proc.returncode == 0, err.decode()[-3000:]
    assert {u for _, u in held(servers, settings.chroma_collection_prefix)["c"]} == {user}
    async with app_client(configured(on, servers, "abc"), embedder) as (client, _):
        one = (await client.get(f"/v1/memory/{user}/entities/person:kit", headers=auth(user))).json()
        assert one["id"] == "person:katherine"
        assert {m["id"] for m in one["memory_items"]} == {ids[texts[1]], ids[texts[2]]}
        profile = (await client.get(f"/v1/memory/{user}/profile", headers=auth(user))).json()
        assert {"#职业_教师", "#居住地_杭州"} <= set(profile["tags"])
        tagged = await client.get(
            f"/v1/memory/{user}/list", params={"tags": ["#occupation_teacher"]}, headers=auth(user)
        )
        assert [m["id"] for m in tagged.json()["items"]] == [ids[texts[0]]]
