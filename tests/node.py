"""Node.js for the tests of the TypeScript client and the sample web chat: `scripts/ensure_ts_client.sh`
(npm ci when the lock file changed, then the build) once per run. A missing Node or npm fails, never
skips."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TS_CLIENT = ROOT / "clients" / "typescript"


@functools.cache
def built_ts_client() -> Path:
    """clients/typescript/dist, installed and built."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "ensure_ts_client.sh")], capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0:
        pytest.fail(f"the TypeScript client did not build:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return TS_CLIENT / "dist"
