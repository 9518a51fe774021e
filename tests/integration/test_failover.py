"""Failover on a real Redis Cluster: while turns are sent, a master is killed with SIGKILL, its replica
takes over; every acknowledged turn is in its session buffer and reaches long-term memory, and what
fails in the window is a 503 with Retry-After, never a 500.

The commit waits for one replica (`REDIS_MIN_REPLICAS_ACK=1`), so an acknowledged turn is on two nodes
before the client hears of it: the failover cannot take it away. The cluster is this module's own
(it kills a node), so the test runs once, in the standalone pass.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.settings import Settings
from harness.cluster import ClusterNode, RedisCluster, start_redis_cluster
from harness.services import ServerProcess
from memory import Embedder, keys
from tests.conftest import AuthHeaders, app_client, make_settings

pytestmark = [pytest.mark.integration, pytest.mark.standalone]
USERS = [f"fo-{i}" for i in range(6)]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[RedisCluster]:
    c = start_redis_cluster(tmp_path / "cluster")
    yield c
    c.stop()


def master_of(cluster: RedisCluster, user: str) -> ClusterNode:
    """The master that serves the user's slot (and so their partition), as CLUSTER KEYSLOT + SLOTS say."""
    import redis

    probe = redis.RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port)
    try:
        node = probe.get_node_from_key(keys.user_prefix(user))  # type: ignore[no-untyped-call]
        assert node is not None
        return next(n for n in cluster.nodes if n.port == int(node.port))
    finally:
        probe.close()


def errors_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    """What the service logged at ERROR, with its traceback: what a 500 came from."""
    return [
        f"{r.name}: {r.getMessage()}\n{logging.Formatter().formatException(r.exc_info) if r.exc_info else ''}"
        for r in caplog.records
        if r.levelno >= logging.ERROR
    ]


async def test_a_master_dies_mid_load_and_nothing_acknowledged_is_lost(
    cluster: RedisCluster,
    chroma_server: ServerProcess,
    embedder: Embedder,
    auth: AuthHeaders,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings: Settings = make_settings(
        "redis://unused:1",
        chroma_server.url,
        redis_cluster_nodes=cluster.startup_nodes,
        redis_min_replicas_ack=1,
        redis_replica_ack_timeout_ms=500,
        redis_socket_timeout=1.0,
    )
    victim = master_of(cluster, USERS[0])
    acknowledged: dict[str, list[str]] = {u: [] for u in USERS}
    statuses: Counter[int] = Counter()
    other_answers: list[str] = []  # anything but 200/503: its body, for the assertion's message
    no_retry_after = 0
    stop = asyncio.Event()

    async with app_client(settings, embedder) as (client, _):

        async def user_loop(user: str) -> None:
            nonlocal no_retry_after
            n = 0
            while not stop.is_set():
                text = f"第{n}轮 turn {n} of {user}: code {user.upper()}-{n:04d}"
                try:
                    resp = await client.post(
                        "/v1/chat/completions",
                        json={"messages": [{"role": "user", "content": text}], "session_id": "fo"},
                        headers=auth(user) | {"Idempotency-Key": f"{user}-{n}"},
                    )
                except httpx.HTTPError:
                    statuses[0] += 1
                    await asyncio.sleep(0.2)
                    continue
                statuses[resp.status_code] += 1
                if resp.status_code == 200:
                    acknowledged[user].append(text)
                    n += 1
                elif resp.status_code == 503:
                    no_retry_after += "retry-after" not in resp.headers
                    await asyncio.sleep(0.2)
                else:  # recorded; the assertions below say whether it was allowed
                    other_answers.append(f"{resp.status_code} {resp.text[:300]}")
                    await asyncio.sleep(0.2)
                await asyncio.sleep(0.05)

        tasks = [asyncio.create_task(user_loop(u)) for u in USERS]
        await asyncio.sleep(3)
        before = sum(len(v) for v in acknowledged.values())
        victim.kill()
        killed_at = time.monotonic()
        await asyncio.to_thread(cluster.wait_healthy, 30)  # the replica was promoted
        failover_seconds = time.monotonic() - killed_at
        victim.start()  # back as a replica of the new master: commits can be acknowledged twice again
        await asyncio.sleep(6)
        stop.set()
        await asyncio.gather(*tasks)

        assert before > 0
        assert failover_seconds < 30
        assert {s for s in statuses if s >= 500} <= {503}, (statuses, other_answers, errors_logged(caplog))
        assert no_retry_after == 0
        assert len(acknowledged[USERS[0]]) > 0
        assert sum(len(v) for v in acknowledged.values()) > before  # turns went on after the failover

        for user in USERS:
            session = (await client.get(f"/v1/sessions/{user}/fo", headers=auth(user))).json()
            said = [m["content"] for m in session["buffer"] if m["role"] == "user"]
            assert len(said) == len(set(said)), (user, said)  # no turn twice
            # the buffer keeps the newest turns: every acknowledged one from the oldest kept on is there
            # (a turn committed but answered 503 at the very end may be there too, unacknowledged)
            oldest_kept = min(int(t.split("轮")[0].removeprefix("第")) for t in said)
            for text in acknowledged[user]:
                if int(text.split("轮")[0].removeprefix("第")) >= oldest_kept:
                    assert said.count(text) == 1, (user, text, said)
        deadline = time.monotonic() + 60
        missing: list[str] = []
        while time.monotonic() < deadline:
            missing = []
            for user in USERS:
                listed = await client.get(f"/v1/memory/{user}/list?limit=100", headers=auth(user))
                stored = " ".join(m["content"] for m in listed.json()["items"])
                missing += [t for t in acknowledged[user] if t.split("code ")[1] not in stored]
            if not missing:
                break
            await asyncio.sleep(1)
        assert missing == [], f"acknowledged turns not in long-term memory: {missing[:5]}"
