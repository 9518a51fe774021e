"""mnemo as `make run` deploys it, on loopback, with every component killable: redis-server (AOF on),
`chroma run`, uvicorn with 2 workers (`OUTBOX_WORKER=false`), the writer as its own process, and
optionally the fake upstream LLM (`bench.fake_llm`) for streams that take a while.

Each component restarts on the same port and data directory, as a supervisor would restart it.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from harness.services import ServerProcess, free_port, start_chroma, start_redis
from tests.conftest import TEST_SECRET

ROOT = Path(__file__).resolve().parents[2]


def _stop(proc: subprocess.Popen[bytes] | None, sig: int = signal.SIGTERM) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def children_of(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


@dataclass
class Deployment:
    workdir: Path
    env: dict[str, str] = field(default_factory=dict)
    llm_first_token_ms: float | None = None  # None: the offline responder answers
    llm_tokens_per_second: float = 0.0
    redis: ServerProcess | None = None
    chroma: ServerProcess | None = None
    api: subprocess.Popen[bytes] | None = None
    writers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    llm: subprocess.Popen[bytes] | None = None
    api_port: int = 0
    redis_port: int = 0
    chroma_port: int = 0
    llm_port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def _environment(self) -> dict[str, str]:
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "REDIS_URL": self.redis_url,
            "CHROMA_URL": f"http://127.0.0.1:{self.chroma_port}",
            "AUTH_JWT_SECRET": TEST_SECRET,
            "OUTBOX_WORKER": "false",
            "RATE_LIMIT_PER_MINUTE": "1000000",
            "SESSION_BUFFER_SIZE": "200",
            "MEMORY_SHARDS": "2",
            "LOG_LEVEL": "WARNING",
            "PROMETHEUS_MULTIPROC_DIR": str(self.workdir / "metrics"),
            "OUTBOX_LEASE_TTL_MS": "3000",  # a killed writer's partitions are taken over within 3 s
        }
        if self.llm_first_token_ms is not None:
            env |= {"LLM_BASE_URL": f"http://127.0.0.1:{self.llm_port}/v1", "LLM_MODEL": "fake"}
            env |= {"LLM_SUMMARY": "false", "LLM_COMPRESS_MEMORIES": "false"}
        return env | self.env

    # --- components -------------------------------------------------------------------------------
    def start_redis(self) -> None:
        self.redis = start_redis(self.workdir / "redis", port=self.redis_port or None, persist=True)
        self.redis_port = self.redis.port

    def start_chroma(self) -> None:
        self.chroma = start_chroma(self.workdir / "chroma", port=self.chroma_port or None)
        self.chroma_port = self.chroma.port

    def kill_redis(self) -> None:
        assert self.redis is not None
        self.redis.proc.kill()
        self.redis.proc.wait(timeout=10)

    def kill_chroma(self) -> None:
        assert self.chroma is not None
        self.chroma.proc.kill()
        self.chroma.proc.wait(timeout=10)

    def start_llm(self) -> None:
        self.llm_port = self.llm_port or free_port()
        args = [sys.executable, "-m", "bench.fake_llm", "--port", str(self.llm_port)]
        args += ["--first-token-ms", str(self.llm_first_token_ms or 0)]
        args += ["--tokens-per-second", str(self.llm_tokens_per_second)]
        self.llm = self._spawn(args, "fake_llm.log")
        self._wait_http(f"http://127.0.0.1:{self.llm_port}/v1/models", self.llm, "fake LLM")

    def start_api(self) -> None:
        self.api_port = self.api_port or free_port()
        args = [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app", "--app-dir", str(ROOT)]
        args += ["--host", "127.0.0.1", "--port", str(self.api_port), "--workers", "2"]
        self.api = self._spawn(args, "api.log")
        self.wait_ready(180)

    def start_writer(self) -> subprocess.Popen[bytes]:
        """One more writer process (they share the outbox partitions)."""
        proc = self._spawn([sys.executable, "-m", "app.cli.writer", "--nice", "0"], "writer.log")
        self.writers.append(proc)
        return proc

    def kill_writer(self, proc: subprocess.Popen[bytes] | None = None) -> None:
        """SIGKILL one writer (the newest unless named): its leases expire, the others take over."""
        target = proc or self.writers[-1]
        target.kill()
        target.wait(timeout=10)
        self.writers.remove(target)

    def api_workers(self) -> list[int]:
        assert self.api is not None
        # uvicorn's workers are multiprocessing children; its resource tracker is a child too
        return [pid for pid in children_of(self.api.pid) if b"spawn_main" in _cmdline(pid)]

    def streaming_worker(self, timeout: float = 5.0) -> int | None:
        """The API worker holding the most client connections right now (one mid-stream), or None if
        no worker held one within `timeout`: which worker accepts a connection is the kernel's choice."""
        deadline = time.monotonic() + timeout
        while True:
            held = {pid: _connections(pid, self.api_port) for pid in self.api_workers()}
            busiest = max(held, key=lambda pid: held[pid], default=None)
            if busiest is not None and held[busiest] > 0:
                return busiest
            if time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    def worker_holding(self, client_port: int) -> int | None:
        """The API worker holding the established connection whose client side is `client_port`."""
        for pid in self.api_workers():
            with contextlib.suppress(psutil.Error):
                for c in psutil.Process(pid).net_connections(kind="tcp"):
                    if c.laddr and c.laddr.port == self.api_port and c.raddr and c.raddr.port == client_port:
                        return pid
        return None

    def search_on_every_worker(
        self, user: str, query: str, headers: dict[str, str], timeout: float = 20
    ) -> dict[int, list[str]]:
        """The contents a search for `query` returns from each API worker: new connections, each asked
        once and kept open until the worker that answered is known, until every worker answered (which
        worker accepts a connection is the kernel's choice)."""
        workers = set(self.api_workers())
        answers: dict[int, list[str]] = {}
        body = json.dumps({"query": query, "top_k": 5})
        deadline = time.monotonic() + timeout
        while set(answers) != workers:
            assert time.monotonic() < deadline, f"not every worker answered: {sorted(answers)} of {workers}"
            conn = http.client.HTTPConnection("127.0.0.1", self.api_port, timeout=30)
            try:
                conn.request(
                    "POST",
                    f"/v1/memory/{user}/search",
                    body=body,
                    headers={**headers, "Content-Type": "application/json"},
                )
                resp = conn.getresponse()
                payload = json.loads(resp.read())
                assert resp.status == 200, payload
                assert conn.sock is not None
                pid = self.worker_holding(conn.sock.getsockname()[1])
            finally:
                conn.close()
            if pid is not None:
                answers.setdefault(pid, [hit["content"] for hit in payload["results"]])
        return answers

    def _spawn(self, args: list[str], log_name: str) -> subprocess.Popen[bytes]:
        with (self.workdir / log_name).open("ab") as log:
            return subprocess.Popen(
                args, env=self._environment(), cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT
            )

    def log(self, name: str) -> str:
        path = self.workdir / name
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def _wait_http(self, url: str, proc: subprocess.Popen[bytes], what: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited: {self.log('fake_llm.log')}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(url, timeout=1).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"{what} not up after {timeout}s")

    # --- observations -----------------------------------------------------------------------------
    def wait_ready(self, timeout: float) -> float:
        """Seconds until /readyz answers 200 (raises after `timeout`)."""
        assert self.api is not None
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if self.api.poll() is not None:
                raise RuntimeError(f"uvicorn exited: {self.log('api.log')}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.base_url}/readyz", timeout=1).status_code == 200:
                    return time.monotonic() - start
            time.sleep(0.1)
        raise AssertionError(f"/readyz not 200 within {timeout}s; api log:\n{self.log('api.log')}")

    def export(self, user_id: str, headers: dict[str, str]) -> dict[str, Any]:
        r = httpx.get(f"{self.base_url}/v1/memory/{user_id}/export", headers=headers, timeout=60)
        assert r.status_code == 200, r.text
        doc: dict[str, Any] = json.loads(r.text)
        return doc

    def wait_drained(self, users: list[str], headers_of: Any, timeout: float = 120) -> dict[str, Any]:
        """Every user's export once nothing of theirs is pending in the outbox."""
        deadline = time.monotonic() + timeout
        while True:
            docs = {u: self.export(u, headers_of(u)) for u in users}
            if all(not d["pending_writes"] for d in docs.values()):
                return docs
            if time.monotonic() > deadline:
                pending = {u: len(d["pending_writes"]) for u, d in docs.items()}
                raise AssertionError(f"outbox not drained in {timeout}s: {pending}\n{self.log('writer.log')}")
            time.sleep(0.5)

    def stop(self) -> None:
        for proc in (self.api, *self.writers, self.llm):
            _stop(proc)
        for server in (self.chroma, self.redis):
            if server is not None:
                server.stop()


@contextlib.contextmanager
def deployed(workdir: Path, **kwargs: Any) -> Iterator[Deployment]:
    (workdir / "metrics").mkdir(parents=True, exist_ok=True)
    d = Deployment(workdir, **kwargs)
    try:
        d.start_redis()
        d.start_chroma()
        if d.llm_first_token_ms is not None:
            d.start_llm()
        d.start_api()
        d.start_writer()
        yield d
    finally:
        d.stop()


def _connections(pid: int, port: int) -> int:
    """Established TCP connections process `pid` holds on its local `port`."""
    try:
        found = psutil.Process(pid).net_connections(kind="tcp")
    except psutil.Error:
        return 0
    return sum(1 for c in found if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == port)
