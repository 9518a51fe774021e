"""What every benchmark shares: its own Redis and Chroma servers, the app served in-process with its real
lifespan and model, percentiles, and the machine line printed under every table."""

from __future__ import annotations

import contextlib
import os
import platform
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from asgi_lifespan import LifespanManager  # noqa: E402

from app.main import create_app  # noqa: E402
from app.settings import Settings  # noqa: E402
from harness.services import start_chroma, start_redis  # noqa: E402

SECRET = "bench-" + "s" * 48
# chat turns the load benchmarks send, Chinese and English: facts, then questions about them
TURNS = [
    "我住在杭州，在一家银行做数据分析。",
    "I moved to Lisbon last May for a new job.",
    "我对花生过敏，记住这个。",
    "My sister Anna is a nurse in Porto.",
    "提醒我周五下午三点给王老师打电话。",
    "Remind me to renew the car insurance on Monday.",
    "我住在哪个城市？",
    "Where does my sister work?",
    "我对什么过敏？",
    "What should I do on Monday?",
    "我最近在学吉他，每周二上课。",
    "My order number for the sofa is A-20931.",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def machine() -> str:
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


@contextlib.contextmanager
def bench_stores(chroma_servers: int = 1) -> Iterator[tuple[str, str]]:
    """A fresh redis-server and `chroma_servers` `chroma run`s in a temp dir; yields (redis URL with db
    0, chroma URL), the latter a CHROMA_URLS list (`c0=url,c1=url`) when there are several."""
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-bench-"))
    redis = start_redis(workdir / "redis")
    chromas = [start_chroma(workdir / f"chroma{i}") for i in range(chroma_servers)]
    try:
        urls = ",".join(f"c{i}={c.url}" for i, c in enumerate(chromas))
        yield f"{redis.url}/0", chromas[0].url if chroma_servers == 1 else urls
    finally:
        for chroma in chromas:
            chroma.stop()
        redis.stop()


@contextlib.asynccontextmanager
async def app_on(
    redis_url: str,
    chroma_url: str,
    llm_transport: httpx.AsyncBaseTransport | None = None,
    **settings: Any,
) -> AsyncIterator[httpx.AsyncClient]:
    """The app, with its real lifespan and model, on these stores; yields an HTTP client to it.
    `chroma_url` may be a CHROMA_URLS list (several servers); `llm_transport`: an in-process upstream
    LLM (with `llm_base_url` among the settings)."""
    servers: dict[str, Any] = {"chroma_urls": chroma_url} if "," in chroma_url else {"chroma_url": chroma_url}
    config = Settings(
        _env_file=None,
        redis_url=redis_url,
        **servers,
        auth_jwt_secret=SECRET,
        **{"log_level": "WARNING", "rate_limit_per_minute": 10_000_000, **settings},
    )
    app = create_app(config, llm_transport=llm_transport)
    async with (
        LifespanManager(app, startup_timeout=180) as manager,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=manager.app), base_url="http://bench", timeout=120
        ) as client,
    ):
        yield client


@contextlib.asynccontextmanager
async def served_app(
    llm_transport: httpx.AsyncBaseTransport | None = None, **settings: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """Fresh redis-server + chroma in a temp dir, the app on top; yields an HTTP client to it."""
    with bench_stores() as (redis_url, chroma_url):
        async with app_on(redis_url, chroma_url, llm_transport, **settings) as client:
            yield client
