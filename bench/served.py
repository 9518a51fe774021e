"""The service as deployed, for benchmarks: its own Redis (one redis-server, or a local 6-node Redis
Cluster) and `chroma run`, uvicorn with N workers in a subprocess, optionally the separate writer, and
optionally the fake OpenAI-compatible upstream (`bench/fake_llm.py`; without it the offline responder
answers: no upstream LLM)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from app.http.protocol import HTTP_PROTOCOL
from bench.common import ROOT, SECRET
from bench.procstat import Group
from harness.cluster import RedisCluster, start_redis_cluster
from harness.services import ServerProcess, free_port, start_chroma, start_redis


@dataclass(frozen=True)
class FakeLLM:
    """`python -m bench.fake_llm` as its own process: a first-token delay and a token rate."""

    first_token_ms: float = 0.0
    tokens_per_second: float = 0.0


@dataclass
class Served:
    base_url: str
    redis: ServerProcess | None  # one redis-server, or None in cluster mode
    chroma: ServerProcess
    log_path: Path
    cluster: RedisCluster | None = None
    api: subprocess.Popen[bytes] | None = None  # uvicorn's master; its workers are its children
    writer: subprocess.Popen[bytes] | None = None
    llm: subprocess.Popen[bytes] | None = None
    redis_env: dict[str, str] = field(default_factory=dict)  # REDIS_URL or REDIS_CLUSTER_NODES

    @property
    def redis_mode(self) -> str:
        return "cluster" if self.cluster is not None else "standalone"

    def redis_pids(self) -> tuple[int, ...]:
        if self.cluster is not None:
            return tuple(n.proc.pid for n in self.cluster.nodes if n.proc is not None)
        assert self.redis is not None
        return (self.redis.proc.pid,)

    def cpu_groups(self) -> list[Group]:
        """The processes whose CPU a capacity model counts: API (master + workers), writer, Redis
        (every node of a cluster, replicas included), Chroma, and the fake upstream."""
        groups = [Group("redis", self.redis_pids()), Group("chroma", (self.chroma.proc.pid,))]
        if self.cluster is not None:  # a part of "redis": the masters alone (the rest are the replicas)
            masters = tuple(n.proc.pid for n in self.cluster.masters() if n.proc is not None)
            groups.append(Group("redis masters", masters))
        if self.api is not None:
            groups.append(Group("api", (self.api.pid,)))
        if self.writer is not None:
            groups.append(Group("writer", (self.writer.pid,)))
        if self.llm is not None:
            groups.append(Group("llm", (self.llm.pid,)))
        return groups


def _wait_http(url: str, proc: subprocess.Popen[bytes], log_path: Path, what: str) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited: {log_path.read_text()[-2000:]}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(url, timeout=1).status_code == 200:
                return
        time.sleep(0.25)
    raise RuntimeError(f"{what} did not become ready")


@contextlib.contextmanager
def served(
    workers: int = 2,
    writer: bool = False,
    *,
    cluster: bool = False,
    llm: FakeLLM | None = None,
    redis_args: Sequence[str] = (),
    **env: str,
) -> Iterator[Served]:
    """`writer`: run the long-term writer as its own niced process (`python -m app.cli.writer`) and keep
    the API workers from writing (OUTBOX_WORKER=false), as `make run` and the compose file do.
    `cluster`: a local Redis Cluster (3 masters, 3 replicas; `harness/cluster.py`) through
    `REDIS_CLUSTER_NODES` instead of one redis-server. `llm`: the fake upstream as `LLM_BASE_URL`.
    `redis_args`: more options for the one redis-server."""
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    redis: ServerProcess | None = None
    redis_cluster: RedisCluster | None = None
    if cluster:
        redis_cluster = start_redis_cluster(workdir / "cluster")
        redis_env = {"REDIS_CLUSTER_NODES": redis_cluster.startup_nodes}
    else:
        redis = start_redis(workdir / "redis", extra_args=redis_args)
        redis_env = {"REDIS_URL": f"{redis.url}/0"}
    chroma = start_chroma(workdir / "chroma")
    metrics_dir = workdir / "metrics"
    metrics_dir.mkdir()
    port = free_port()
    log_path = workdir / "uvicorn.log"
    environment = {
        **os.environ,
        **redis_env,
        "CHROMA_URL": chroma.url,
        "AUTH_JWT_SECRET": SECRET,
        "RATE_LIMIT_PER_MINUTE": "10000000",
        "LOG_LEVEL": "WARNING",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        **({"OUTBOX_WORKER": "false"} if writer else {}),
    }
    proc: subprocess.Popen[bytes] | None = None
    writer_proc: subprocess.Popen[bytes] | None = None
    llm_proc: subprocess.Popen[bytes] | None = None
    try:
        with log_path.open("wb") as log:
            if llm is not None:
                llm_port = free_port()
                llm_proc = subprocess.Popen(
                    [sys.executable, "-m", "bench.fake_llm", "--port", str(llm_port)]
                    + ["--first-token-ms", str(llm.first_token_ms)]
                    + ["--tokens-per-second", str(llm.tokens_per_second)],
                    env={**environment, "PYTHONPATH": str(ROOT)},
                    cwd=workdir,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
                _wait_http(f"http://127.0.0.1:{llm_port}/v1/models", llm_proc, log_path, "fake LLM")
                environment |= {"LLM_BASE_URL": f"http://127.0.0.1:{llm_port}/v1", "LLM_MODEL": "fake"}
            environment |= env
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uvicorn",
                    "--factory",
                    "app.main:create_app",
                    "--http",
                    HTTP_PROTOCOL,
                    "--app-dir",
                    str(ROOT),
                ]
                + ["--host", "127.0.0.1", "--port", str(port), "--workers", str(workers), "--no-access-log"],
                env=environment,
                cwd=workdir,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
            if writer:
                writer_proc = subprocess.Popen(
                    [sys.executable, "-m", "app.cli.writer"],
                    env={**environment, "PYTHONPATH": str(ROOT)},
                    cwd=workdir,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
        base = f"http://127.0.0.1:{port}"
        _wait_http(f"{base}/readyz", proc, log_path, "uvicorn")
        yield Served(
            base, redis, chroma, log_path, redis_cluster, proc, writer_proc, llm_proc, redis_env=redis_env
        )
    finally:
        for p in (proc, writer_proc, llm_proc):
            if p is not None and p.poll() is None:
                p.terminate()
                p.wait(timeout=30)
        chroma.stop()
        if redis is not None:
            redis.stop()
        if redis_cluster is not None:
            redis_cluster.stop()
