"""The service as deployed, for benchmarks: its own redis-server and `chroma run`, and uvicorn with
N workers in a subprocess (the offline responder answers: no upstream LLM)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from bench.common import ROOT, SECRET
from tests.services import ServerProcess, free_port, start_chroma, start_redis


@dataclass(frozen=True)
class Served:
    base_url: str
    redis: ServerProcess
    chroma: ServerProcess
    log_path: Path


@contextlib.contextmanager
def served(workers: int = 2, writer: bool = False, **env: str) -> Iterator[Served]:
    """`writer`: run the long-term writer as its own niced process (`python -m app.cli.writer`) and keep
    the API workers from writing (OUTBOX_WORKER=false), as `make run` and the compose file do."""
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    redis = start_redis(workdir / "redis")
    chroma = start_chroma(workdir / "chroma")
    metrics_dir = workdir / "metrics"
    metrics_dir.mkdir()
    port = free_port()
    log_path = workdir / "uvicorn.log"
    environment = {
        **os.environ,
        "REDIS_URL": f"{redis.url}/0",
        "CHROMA_URL": chroma.url,
        "AUTH_JWT_SECRET": SECRET,
        "RATE_LIMIT_PER_MINUTE": "10000000",
        "LOG_LEVEL": "WARNING",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        **({"OUTBOX_WORKER": "false"} if writer else {}),
        **env,
    }
    proc: subprocess.Popen[bytes] | None = None
    writer_proc: subprocess.Popen[bytes] | None = None
    try:
        with log_path.open("wb") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app", "--app-dir", str(ROOT)]
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
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"uvicorn exited: {log_path.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            time.sleep(0.25)
        else:
            raise RuntimeError("uvicorn did not become ready")
        yield Served(base, redis, chroma, log_path)
    finally:
        for p in (proc, writer_proc):
            if p is not None:
                p.terminate()
                p.wait(timeout=30)
        chroma.stop()
        redis.stop()
