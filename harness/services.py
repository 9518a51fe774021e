"""Real Redis and Chroma servers for tests: spawned on free loopback ports, polled until ready.

A missing binary raises (an ERROR in pytest, never a skip): the suite must not pass without the real
services. Benchmarks in bench/ use the same helpers.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

READY_TIMEOUT_SECONDS = 60.0


class ServiceStartError(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def redis_pings(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def chroma_heartbeat_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=0.5) as resp:  # noqa: S310
            return bool(resp.status == 200)
    except OSError:
        return False


@dataclass
class ServerProcess:
    url: str
    port: int
    proc: subprocess.Popen[bytes]
    log_path: Path

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)


def wait_ready(check: object, proc: subprocess.Popen[bytes], what: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServiceStartError(
                f"{what} exited with {proc.returncode}; log:\n{log_path.read_text()[-3000:]}"
            )
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    proc.kill()
    raise ServiceStartError(
        f"{what} not ready after {READY_TIMEOUT_SECONDS}s; log:\n{log_path.read_text()[-3000:]}"
    )


def redis_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        raise ServiceStartError(
            "redis-server not found on PATH: install it (apt-get install redis-server); `make test` does"
        )
    return binary


def chroma_binary() -> str:
    candidate = Path(sys.executable).parent / "chroma"
    binary = str(candidate) if candidate.exists() else shutil.which("chroma")
    if binary is None:
        raise ServiceStartError(
            "the `chroma` CLI (from the chromadb package) is not installed in this environment"
        )
    return binary


def start_redis(
    workdir: Path,
    *,
    port: int | None = None,
    persist: bool = False,
    extra_args: Sequence[str] = (),
    wait: bool = True,
) -> ServerProcess:
    """`extra_args` are more redis-server options; `wait=False` returns as soon as the process runs
    (a restart that is still loading its AOF answers LOADING until it is done)."""
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "redis.log"
    args = [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir)]
    args += ["--appendonly", "yes", "--appendfsync", "always"] if persist else ["--appendonly", "no"]
    args += ["--save", "", *extra_args]
    with log_path.open("ab") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    server = ServerProcess(f"redis://127.0.0.1:{port}", port, proc, log_path)
    if wait:
        wait_for_redis(server)
    return server


def wait_for_redis(server: ServerProcess) -> None:
    wait_ready(lambda: redis_pings(server.port), server.proc, "redis-server", server.log_path)


@dataclass
class RestartableRedis:
    """One test's own redis-server, with AOF (fsync always), that the test may kill, pause (SIGSTOP)
    and restart on the same port; `restart(load_delay_us=...)` makes loading the AOF take a while
    (one delay per stored command), during which Redis answers LOADING."""

    workdir: Path
    server: ServerProcess

    @classmethod
    def start(cls, workdir: Path) -> RestartableRedis:
        return cls(workdir, start_redis(workdir, persist=True))

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def port(self) -> int:
        return self.server.port

    def kill(self) -> None:
        self.server.proc.kill()
        self.server.proc.wait(timeout=10)

    def pause(self) -> None:
        self.server.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.server.proc.send_signal(signal.SIGCONT)

    def restart(self, *, load_delay_us: int = 0, wait: bool = True) -> None:
        slow = ["--key-load-delay", str(load_delay_us), "--loading-process-events-interval-bytes", "1024"]
        self.server = start_redis(
            self.workdir, port=self.port, persist=True, extra_args=slow if load_delay_us else (), wait=wait
        )

    def wait_ready(self) -> None:
        wait_for_redis(self.server)

    def stop(self) -> None:
        if self.server.proc.poll() is None:
            self.resume()
        self.server.stop()


def start_chroma(workdir: Path, *, port: int | None = None) -> ServerProcess:
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "chroma.log"
    url = f"http://127.0.0.1:{port}"
    args = [
        chroma_binary(),
        "run",
        "--path",
        str(workdir / "data"),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    wait_ready(lambda: chroma_heartbeat_ok(url), proc, "chroma", log_path)
    return ServerProcess(url, port, proc, log_path)


@contextlib.contextmanager
def running(server: ServerProcess) -> Iterator[ServerProcess]:
    try:
        yield server
    finally:
        server.stop()


def moto_binary() -> str:
    candidate = Path(sys.executable).parent / "moto_server"
    binary = str(candidate) if candidate.exists() else shutil.which("moto_server")
    if binary is None:
        raise ServiceStartError("moto_server (moto[server], a dev dependency) is not installed")
    return binary


def http_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=0.5) as resp:  # noqa: S310
            return bool(resp.status < 500)
    except OSError:
        return False


def start_moto(workdir: Path, *, port: int | None = None) -> ServerProcess:
    """A local S3-compatible server (moto's server mode) for the cold archive tier's s3:// tests."""
    port = port or free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "moto.log"
    url = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [moto_binary(), "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=subprocess.STDOUT
        )
    wait_ready(lambda: http_answers(f"{url}/moto-api/"), proc, "moto_server", log_path)
    return ServerProcess(url, port, proc, log_path)
