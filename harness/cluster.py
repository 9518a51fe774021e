"""A real Redis Cluster for tests: 6 `redis-server --cluster-enabled yes` processes on free loopback
ports, joined by `redis-cli --cluster create ... --cluster-replicas 1` (3 masters, 3 replicas).

A missing binary raises, never skips. Nodes can be killed and restarted one by one, for failover tests.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.services import ServiceStartError, free_port, redis_binary, redis_pings

READY_TIMEOUT_SECONDS = 60.0


def redis_cli_binary() -> str:
    binary = shutil.which("redis-cli")
    if binary is None:
        raise ServiceStartError(
            "redis-cli not found on PATH: it ships with redis-server (apt-get install redis-server)"
        )
    return binary


def _command(port: int, *args: str, timeout: float = 2.0) -> str:
    out = subprocess.run(
        [redis_cli_binary(), "-h", "127.0.0.1", "-p", str(port), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return out.stdout.strip()


PORT_TRIES = 5  # fresh ports for a node whose port was taken before it could bind


@dataclass
class ClusterNode:
    port: int
    bus_port: int  # explicit: the default (port + 10000) may be taken, or above 65535
    workdir: Path
    proc: subprocess.Popen[bytes] | None = None

    def log_path(self) -> Path:
        return self.workdir / "redis.log"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        log = self.log_path().open("ab")
        args = [redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.workdir)]
        args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        args += ["--cluster-port", str(self.bus_port)]
        args += ["--cluster-node-timeout", "2000", "--appendonly", "yes", "--appendfsync", "always"]
        args += ["--save", ""]
        self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while not redis_pings(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise ServiceStartError(f"cluster node {self.port} did not start: {self.log()}")
            time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)

    def role(self) -> str:
        """'master' or 'slave' as the node itself says (INFO replication)."""
        for line in _command(self.port, "INFO", "replication").splitlines():
            if line.startswith("role:"):
                return line.split(":", 1)[1].strip()
        return "unknown"

    def log(self) -> str:
        path = self.workdir / "redis.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


@dataclass
class RedisCluster:
    nodes: list[ClusterNode] = field(default_factory=list)

    @property
    def startup_nodes(self) -> str:
        """`host:port,...` as `REDIS_CLUSTER_NODES` takes it."""
        return ",".join(f"127.0.0.1:{n.port}" for n in self.nodes)

    def masters(self) -> list[ClusterNode]:
        return [
            n for n in self.nodes if n.proc is not None and n.proc.poll() is None and n.role() == "master"
        ]

    def healthy(self) -> bool:
        alive = [n for n in self.nodes if n.proc is not None and n.proc.poll() is None]
        if not alive:
            return False
        info = _command(alive[0].port, "CLUSTER", "INFO")
        return "cluster_state:ok" in info and "cluster_slots_ok:16384" in info

    def wait_healthy(self, timeout: float = READY_TIMEOUT_SECONDS) -> float:
        start = time.monotonic()
        while not self.healthy():
            if time.monotonic() - start > timeout:
                raise ServiceStartError(f"cluster not healthy after {timeout}s: {self.nodes[0].log()}")
            time.sleep(0.1)
        return time.monotonic() - start

    def flushall(self) -> None:
        for node in self.masters():
            _command(node.port, "FLUSHALL")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


def start_on_free_ports(node: ClusterNode) -> None:
    """Start a new node. Both its ports come from free_port(), i.e. the kernel's ephemeral range, which
    outgoing connections draw from too: one may be taken between the pick and redis-server's bind (seen
    under load: "bind: Address already in use" on a bus port). Such a node is started again on fresh
    ports, up to PORT_TRIES times; any other failure raises at once. (A restarted node keeps its ports:
    the cluster knows it by them.)"""
    for attempt in range(1, PORT_TRIES + 1):
        logged = node.log_path().stat().st_size if node.log_path().exists() else 0
        try:
            node.start()
            return
        except ServiceStartError:
            taken = b"Address already in use" in node.log_path().read_bytes()[logged:]
            if attempt == PORT_TRIES or not taken:
                raise
            (node.workdir / "nodes.conf").unlink(missing_ok=True)
            node.port, node.bus_port = free_port(), free_port()


def start_redis_cluster(workdir: Path, *, masters: int = 3, replicas_per_master: int = 1) -> RedisCluster:
    cluster = RedisCluster(
        [
            ClusterNode(free_port(), free_port(), workdir / f"node{i}")
            for i in range(masters * (1 + replicas_per_master))
        ]
    )
    try:
        for node in cluster.nodes:
            start_on_free_ports(node)
        create = [redis_cli_binary(), "--cluster", "create"]
        create += [f"127.0.0.1:{n.port}" for n in cluster.nodes]
        create += ["--cluster-replicas", str(replicas_per_master), "--cluster-yes"]
        out = subprocess.run(create, capture_output=True, text=True, timeout=60, check=False)
        if out.returncode != 0:
            raise ServiceStartError(
                f"redis-cli --cluster create failed: {out.stdout[-2000:]} {out.stderr[-2000:]}"
            )
        cluster.wait_healthy()
        # every replica has synced once, so a failover test starts from a replicated cluster
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            links = [_command(n.port, "INFO", "replication") for n in cluster.nodes]
            if sum("master_link_status:up" in info for info in links) == masters * replicas_per_master:
                break
            time.sleep(0.1)
        else:
            raise ServiceStartError("replicas did not sync with their masters")
    except BaseException:
        cluster.stop()
        raise
    return cluster
