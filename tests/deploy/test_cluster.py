"""The cluster stack (docker-compose.cluster.yml) on a real Docker engine, used through nginx, its one
published port: every service healthy and the Redis Cluster formed by its init job; the openai SDK
(plain and streamed, zh and en) with recall across sessions and search in both languages; then a Redis
master container is killed (`docker kill`) during a chat load: every acknowledged turn is in its session
and in long-term memory, what fails in the window is a 503 with Retry-After (never a 500, never a 502
from nginx), and the cluster heals (the master's replica is promoted, the killed node comes back as a
replica). Tests run in file order and share one stack."""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

import httpx
import pytest
from redis.crc import key_slot

from harness.compose import Stack, docker
from memory import keys
from tests.deploy import api

log = logging.getLogger("tests.deploy")
pytestmark = pytest.mark.timeout(2400)

RUN = uuid.uuid4().hex[:6]
USER = f"cl-{RUN}"
LOAD_USERS = [f"fo-{RUN}-{i}" for i in range(6)]
REDIS_NODES = [f"redis-{i}" for i in range(1, 7)]


def redis_cli(stack: Stack, service: str, *args: str) -> str:
    cid = stack.containers()[service]
    return docker("exec", cid, "redis-cli", *args, timeout=30).replace("\r", "")


def cluster_info(stack: Stack, service: str) -> dict[str, str]:
    lines = redis_cli(stack, service, "cluster", "info").splitlines()
    return dict(line.split(":", 1) for line in lines if ":" in line)


@dataclass(frozen=True)
class Node:
    node_id: str
    address: str  # ip:port
    flags: frozenset[str]
    master_id: str
    slots: tuple[tuple[int, int], ...]

    def serves(self, slot: int) -> bool:
        return any(lo <= slot <= hi for lo, hi in self.slots)


def cluster_nodes(stack: Stack, service: str) -> list[Node]:
    """CLUSTER NODES as one node sees it."""
    nodes = []
    for line in redis_cli(stack, service, "cluster", "nodes").splitlines():
        parts = line.split()
        if len(parts) < 8:
            continue
        slots = []
        for item in parts[8:]:
            if item.startswith("["):  # a slot being migrated
                continue
            lo, _, hi = item.partition("-")
            slots.append((int(lo), int(hi or lo)))
        nodes.append(
            Node(parts[0], parts[1].split("@")[0], frozenset(parts[2].split(",")), parts[3], tuple(slots))
        )
    return nodes


def service_by_ip(stack: Stack) -> dict[str, str]:
    """Container address -> service, for the Redis nodes."""
    found = {}
    for service, cid in stack.containers().items():
        if service in REDIS_NODES:
            networks = json.loads(docker("inspect", cid))[0]["NetworkSettings"]["Networks"]
            for net in networks.values():
                found[net["IPAddress"]] = service
    return found


def test_every_service_is_healthy_and_the_cluster_formed(cluster: Stack) -> None:
    health = cluster.health()
    expected = {*REDIS_NODES, "chroma-a", "chroma-b", "app-1", "app-2", "writer-1", "writer-2", "nginx"}
    assert health == dict.fromkeys(expected, "healthy"), health
    init = cluster.containers(stopped=True)["redis-cluster-init"]
    state = json.loads(docker("inspect", init))[0]["State"]
    assert (state["Status"], state["ExitCode"]) == ("exited", 0), state
    for node in REDIS_NODES:
        info = cluster_info(cluster, node)
        assert info["cluster_state"] == "ok", (node, info)
        assert info["cluster_known_nodes"] == "6", (node, info)
    roles = Counter("master" if "master" in n.flags else "replica" for n in cluster_nodes(cluster, "redis-1"))
    assert roles == {"master": 3, "replica": 3}, roles
    assert httpx.get(f"{cluster.base_url}/readyz", timeout=30).status_code == 200
    # nginx keeps the replicas' metrics inside the network
    assert httpx.get(f"{cluster.base_url}/metrics", timeout=30).status_code == 404


def test_openai_sdk_chats_through_nginx_and_a_second_session_recalls_the_first(cluster: Stack) -> None:
    api.chat_and_recall(cluster, USER)


def test_search_in_both_languages_through_nginx(cluster: Stack) -> None:
    api.search_both_languages(cluster, USER)


def nginx_upstreams_since(stack: Stack, since: str) -> list[str]:
    """The upstream of every request nginx logged since `since` (its access log names it, not the path)."""
    time.sleep(1)  # the engine's log copy of nginx's stdout
    logs = stack.compose("logs", "--no-color", "--since", since, "nginx", timeout=120)
    return [part.split("=", 1)[1] for part in logs.split() if part.startswith("upstream=")]


def log_mark() -> str:
    """A `logs --since` bound after every earlier request (the engine compares whole seconds)."""
    time.sleep(1.5)
    return datetime.now(UTC).isoformat()


def test_nginx_routes_each_user_to_one_replica_and_users_to_both(cluster: Stack) -> None:
    since = log_mark()
    for _ in range(10):
        api.search(cluster, "蜂蜜", USER)
    with api.http(cluster, USER) as h:
        assert h.get(f"/v1/sessions/{USER}/first").status_code == 200
    one_user = nginx_upstreams_since(cluster, since)
    assert len(one_user) == 11, one_user
    assert len(set(one_user)) == 1, f"one user's requests went to several replicas: {one_user}"

    since = log_mark()
    for i in range(16):
        with api.http(cluster, f"spread-{RUN}-{i}") as h:
            assert h.post(f"/v1/memory/spread-{RUN}-{i}/search", json={"query": "x"}).status_code == 200
    many_users = nginx_upstreams_since(cluster, since)
    assert len(many_users) == 16, many_users
    assert len(set(many_users)) == 2, f"16 users, one replica: {many_users}"


@dataclass
class Load:
    """Chat turns sent by one thread per user through nginx, each with an Idempotency-Key."""

    stack: Stack
    acknowledged: dict[str, list[str]] = field(default_factory=dict)
    statuses: Counter[int] = field(default_factory=Counter)
    without_retry_after: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self, users: list[str]) -> None:
        for user in users:
            self.acknowledged[user] = []
            thread = threading.Thread(target=self._loop, args=(user,), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _loop(self, user: str) -> None:
        n = 0
        with api.http(self.stack, user) as h:
            while not self.stop.is_set():
                text = f"第{n}轮 turn {n} of {user}: code {user.upper()}-{n:04d}"
                try:
                    resp = h.post(
                        "/v1/chat/completions",
                        json={"messages": [{"role": "user", "content": text}], "session_id": "fo"},
                        headers={"Idempotency-Key": f"{user}-{n}"},
                        timeout=60,
                    )
                except httpx.HTTPError:
                    with self.lock:
                        self.statuses[0] += 1
                    time.sleep(0.2)
                    continue
                with self.lock:
                    self.statuses[resp.status_code] += 1
                    if resp.status_code == 200:
                        self.acknowledged[user].append(text)
                        n += 1
                    elif resp.status_code == 503 and "retry-after" not in resp.headers:
                        self.without_retry_after += 1
                time.sleep(0.05 if resp.status_code == 200 else 0.2)

    def count(self) -> int:
        with self.lock:
            return sum(len(v) for v in self.acknowledged.values())

    def finish(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=120)


def unhandled(stack: Stack) -> list[str]:
    """The last line of each traceback the API replicas logged as an unhandled error (a 500)."""
    found: list[str] = []
    for line in stack.compose("logs", "--no-color", "app-1", "app-2", timeout=120).splitlines():
        if '"unhandled error"' in line:
            exc = line.rsplit("\\n", 1)[-1]
            found.append(exc[-400:])
    return found[:8]


def outbox_log(stack: Stack) -> list[str]:
    """The long-term writers' last lines about the outbox and its partitions (a deferred write, a failed
    round, a lost lease, a dead letter): why an acknowledged turn has not reached long-term memory, when
    one has not. The writers, not the API replicas, consume the outbox in this stack (OUTBOX_WORKER=false)."""
    for service, cid in stack.containers().items():
        if service.startswith("writer-"):  # each logs where its tasks wait (app/cli/writer.py)
            docker("kill", "-s", "USR1", cid)
    time.sleep(2)
    text = stack.compose("logs", "--no-color", "--timestamps", "writer-1", "writer-2", timeout=120)
    (stack.directory / "writers.log").write_text(text, encoding="utf-8")  # whole, for a run kept here
    lines = text.splitlines()
    waits = [line[-1500:] for line in lines if '"task stack"' in line and "memory/" in line]
    said = [line[-400:] for line in lines if '"task stack"' not in line]
    return [line for line in said if "outbox" in line or "partition" in line or "Error" in line][-12:] + waits


def outbox_state(stack: Stack, missing: list[str]) -> dict[str, object]:
    """Where the missing turns are: per user, how many are missing and from which turn; per partition of
    theirs, the stream's length, its pending entries and the lease holder; per writer container, its
    state and restart count (a writer that restarted loads its models again before it writes)."""
    before = keys.partitions()
    keys.use_partitions(32)  # docker-compose.cluster.yml's OUTBOX_PARTITIONS
    try:
        return _outbox_state(stack, missing)
    finally:
        keys.use_partitions(before)


def _outbox_state(stack: Stack, missing: list[str]) -> dict[str, object]:
    node = next(s for s in REDIS_NODES if s in stack.containers())
    users: dict[str, object] = {}
    for user in LOAD_USERS:
        mine = [turn_number(t) for t in missing if f" of {user}:" in t]
        if not mine:
            continue
        stream = keys.outbox_stream_of(user)
        partition = keys.partition_of(user)
        users[user] = {
            "missing": len(mine),
            "first_missing_turn": min(mine),
            "partition": partition,
            "xlen": redis_cli(stack, node, "-c", "xlen", stream).strip(),
            "xpending": redis_cli(stack, node, "-c", "xpending", stream, keys.OUTBOX_GROUP).split(),
            "lease": redis_cli(stack, node, "-c", "get", keys.partition_lease(partition)).strip(),
        }
    writers = {}
    for service in ("writer-1", "writer-2"):
        cid = stack.containers(stopped=True).get(service)
        if cid:
            state = json.loads(docker("inspect", cid))[0]
            writers[service] = {"status": state["State"]["Status"], "restarts": state["RestartCount"]}
    return {"users": users, "writers": writers}


def turn_number(text: str) -> int:
    return int(text.split("轮")[0].removeprefix("第"))


def test_a_killed_redis_master_loses_no_acknowledged_turn_and_the_cluster_heals(cluster: Stack) -> None:
    slot = key_slot(keys.user_prefix(LOAD_USERS[0]).encode())
    nodes = cluster_nodes(cluster, "redis-1")
    master = next(n for n in nodes if "master" in n.flags and n.serves(slot))
    replica = next(n for n in nodes if n.master_id == master.node_id)
    by_ip = service_by_ip(cluster)
    victim = by_ip[master.address.split(":")[0]]
    survivor = next(s for s in REDIS_NODES if s != victim)
    log.info(
        "failover %s",
        json.dumps({"slot": slot, "victim": victim, "replica": by_ip[replica.address.split(":")[0]]}),
    )

    load = Load(cluster)
    load.start(LOAD_USERS)
    try:
        time.sleep(4)
        before = load.count()
        docker("kill", cluster.containers()[victim])
        killed_at = time.monotonic()

        def healed() -> bool:
            info = cluster_info(cluster, survivor)
            promoted = next(n for n in cluster_nodes(cluster, survivor) if n.node_id == replica.node_id)
            return info["cluster_state"] == "ok" and "master" in promoted.flags and promoted.serves(slot)

        api.wait_for("the replica promoted and cluster_state:ok", healed, timeout=60)
        failover_seconds = time.monotonic() - killed_at
        # the operator (or the engine, per the restart policy) starts the node again: it rejoins as a
        # replica of the new master, so commits are acknowledged by two nodes again
        if victim not in cluster.containers():
            cluster.compose("start", victim)
        api.wait_for(
            "the killed node back as a replica",
            lambda: "role:slave" in redis_cli(cluster, victim, "info", "replication"),
            timeout=60,
        )
        time.sleep(6)
    finally:
        load.finish()
    after = load.count()
    log.info(
        "failover %s",
        json.dumps(
            {
                "failover_seconds": round(failover_seconds, 1),
                "acknowledged_before_kill": before,
                "acknowledged": after,
                "statuses": dict(load.statuses),
            }
        ),
    )

    assert before > 0
    if {s for s in load.statuses if s >= 500 or s == 0} - {503}:
        raise AssertionError(f"statuses {dict(load.statuses)}; the API replicas logged: {unhandled(cluster)}")
    assert load.without_retry_after == 0
    assert len(load.acknowledged[LOAD_USERS[0]]) > 0
    assert after > before, "turns went on after the failover"
    for node in REDIS_NODES:
        assert cluster_info(cluster, node)["cluster_state"] == "ok", node

    for user in LOAD_USERS:
        with api.http(cluster, user) as h:
            session = h.get(f"/v1/sessions/{user}/fo")
        assert session.status_code == 200, session.text
        said = [m["content"] for m in session.json()["buffer"] if m["role"] == "user"]
        assert len(said) == len(set(said)), (user, said)  # no turn twice
        # the buffer keeps the newest turns: every acknowledged one from the oldest kept on is there
        oldest_kept = min(turn_number(t) for t in said)
        for text in load.acknowledged[user]:
            if turn_number(text) >= oldest_kept:
                assert said.count(text) == 1, (user, text, said)

    def missing_from_long_term() -> list[str]:
        missing: list[str] = []
        for user in LOAD_USERS:
            contents: list[str] = []
            with api.http(cluster, user) as h:
                while True:  # every page of the user's own messages
                    params: dict[str, str | int] = {"limit": 100, "offset": len(contents)}
                    params |= {"source": "user", "session_id": "fo"}
                    listed = h.get(f"/v1/memory/{user}/list", params=params)
                    assert listed.status_code == 200, listed.text
                    items = listed.json()["items"]
                    contents += [m["content"] for m in items]
                    if len(items) < 100:
                        break
            stored = " ".join(contents)
            missing += [t for t in load.acknowledged[user] if t.split("code ")[1] not in stored]
        return missing

    def all_in_long_term() -> bool:
        return not missing_from_long_term()

    try:
        api.wait_for("every acknowledged turn in long-term memory", all_in_long_term, timeout=120)
    except AssertionError:
        missing = missing_from_long_term()
        raise AssertionError(
            f"{len(missing)} of {after} acknowledged turns not in long-term memory: {missing[:5]}; "
            f"where they are: {outbox_state(cluster, missing)}; the writers' log: {outbox_log(cluster)}"
        ) from None
