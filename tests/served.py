"""mnemo served as `make run` serves it: `uvicorn --factory app.main:create_app` with 2 workers on a free
port, configured only through environment variables (used by the served, browser and MCP tests)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.http.protocol import HTTP_PROTOCOL
from harness.services import ServerProcess, free_port
from tests.conftest import TEST_SECRET, drop_collections


@contextlib.contextmanager
def serve(
    tmp_path: Path, redis_server: ServerProcess, chroma_server: ServerProcess, extra_env: dict[str, str]
) -> Iterator[str]:
    port = free_port()
    prefix = f"t{uuid.uuid4().hex[:12]}"
    metrics_dir = tmp_path / "metrics"  # what the launcher does: a fresh, empty directory per start
    metrics_dir.mkdir()
    env = {
        **os.environ,
        "REDIS_URL": f"{redis_server.url}/1",
        "CHROMA_URL": chroma_server.url,
        "AUTH_JWT_SECRET": TEST_SECRET,
        "CHROMA_COLLECTION_PREFIX": prefix,
        "MEMORY_SHARDS": "2",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        **extra_env,
    }
    log = (tmp_path / "uvicorn.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "--factory", "app.main:create_app", "--http", HTTP_PROTOCOL]
        + ["--app-dir", str(Path(__file__).resolve().parents[1])]
        + ["--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
        env=env,
        cwd=tmp_path,  # no .env there: configuration comes from the environment only
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"uvicorn exited: {(tmp_path / 'uvicorn.log').read_text()[-3000:]}")
            try:
                if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.25)
        else:
            pytest.fail("uvicorn did not become ready")
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        drop_collections(chroma_server.url, prefix)
