"""What every benchmark shares: its own Redis and Chroma servers, the app served in-process with its real
lifespan and model, percentiles, and the machine line printed under every table."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from asgi_lifespan import LifespanManager  # noqa: E402

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from tests.services import start_chroma, start_redis  # noqa: E402

SECRET = "bench-" + "s" * 48


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


@contextlib.asynccontextmanager
async def served_app(**settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    """Fresh redis-server + chroma in a temp dir, the app on top; yields an HTTP client to it."""
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    redis = start_redis(workdir / "redis")
    chroma = start_chroma(workdir / "chroma")
    try:
        config = Settings(
            _env_file=None,
            redis_url=f"{redis.url}/0",
            chroma_url=chroma.url,
            auth_jwt_secret=SECRET,
            **{"log_level": "WARNING", "rate_limit_per_minute": 10_000_000, **settings},
        )
        app = create_app(config)
        async with (
            LifespanManager(app, startup_timeout=180) as manager,
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=manager.app), base_url="http://bench", timeout=120
            ) as client,
        ):
            yield client
    finally:
        chroma.stop()
        redis.stop()
