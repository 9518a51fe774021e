"""A Redis Cluster that cannot serve a user's slot, against a real local cluster (issue 23).

The compose suite's master kill answered a few chat turns 500: errors of redis-py's cluster client that
mean "the topology is in flux" (the slot map cannot be loaded, a slot is not covered, redirections ran
out, a transaction sent to a node that no longer owns the slot) were not among the errors mapped to
503. Here the topology is broken on purpose, the way a failover breaks it for a moment:
- every node down: reloading the slot map fails ("Redis Cluster cannot be connected");
- a master and its replica down: the slot is served by nobody (CLUSTERDOWN, slot not covered).
Every route that needs Redis answers 503 `redis_unavailable` with Retry-After, never 500; once the
nodes are back the same client serves again.

It restarts cluster nodes, so it runs in the standalone pass with a cluster of its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from harness.cluster import ClusterNode, RedisCluster, _command, start_redis_cluster
from harness.services import ServerProcess
from memory import Embedder
from tests.conftest import AuthHeaders, app_client, make_settings
from tests.integration.test_failover import master_of
from tests.integration.test_redis_outage import (
    USER,
    Call,
    chat_body,
    redis_routes,
    redis_unavailable_problem,
    seed,
    send,
)

pytestmark = [pytest.mark.integration, pytest.mark.standalone]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[RedisCluster]:
    c = start_redis_cluster(tmp_path / "cluster")
    yield c
    c.stop()


async def routes_not_answering_503(
    client: httpx.AsyncClient, auth: AuthHeaders, calls: list[Call]
) -> list[str]:
    problems: list[str] = []
    for call in calls:
        try:
            problem = redis_unavailable_problem(await send(client, auth, call))
        except Exception as exc:  # a response that started 200 and was then cut
            problem = f"body cut: {type(exc).__name__}: {exc}"
        if problem is not None:
            problems.append(f"{call.name}: {problem}")
    return problems


@pytest.mark.parametrize("outage", ["every node", "a master and its replica"])
async def test_a_cluster_that_cannot_serve_the_slot_answers_503(
    cluster: RedisCluster,
    chroma_server: ServerProcess,
    embedder: Embedder,
    auth: AuthHeaders,
    outage: str,
) -> None:
    settings = make_settings(
        "redis://unused:1",
        chroma_server.url,
        redis_cluster_nodes=cluster.startup_nodes,
        redis_socket_timeout=0.5,
        outbox_worker=False,
    )
    async with app_client(settings, embedder) as (client, _):
        memory_id = await seed(client, auth)
        if outage == "every node":
            down = list(cluster.nodes)
        else:
            master = master_of(cluster, USER)
            down = [master, *replicas_of(cluster, master.port)]
        for node in down:
            node.kill()
        try:
            routes = redis_routes(memory_id)
            if outage != "every node":  # the audit stream is a global key, on a master still up
                audit = next(c for c in routes if c.name == "audit")
                routes.remove(audit)
                assert (await send(client, auth, audit)).status_code == 200
            problems = await routes_not_answering_503(client, auth, routes)
            assert not problems, "\n".join(problems)
            assert (await client.get("/healthz")).status_code == 200
        finally:
            for node in down:
                node.start()
            await asyncio.to_thread(cluster.wait_healthy, 60)

        async def serves_again() -> bool:
            turn = await client.post("/v1/chat/completions", json=chat_body("我住哪？"), headers=auth(USER))
            return turn.status_code == 200

        for _ in range(60):
            if await serves_again():
                break
            await asyncio.sleep(0.5)
        else:
            raise AssertionError("the cluster is back but chat does not answer 200")


def replicas_of(cluster: RedisCluster, master_port: int) -> list[ClusterNode]:
    replicas: list[ClusterNode] = []
    for node in cluster.nodes:
        if node.port == master_port:
            continue
        info = _command(node.port, "INFO", "replication")
        if "role:slave" in info and f"master_port:{master_port}" in info:
            replicas.append(node)
    return replicas
