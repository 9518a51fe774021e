"""Session-wide real services (Redis, Chroma, the embedding model) and a per-test app client.

`MNEMO_TEST_REDIS=cluster` runs the same tests against a local 6-node Redis Cluster (3 masters, 3
replicas) instead of one redis-server: every `Settings` made here then points at the cluster, and tests
marked `standalone` (they stop, restart or misconfigure a single server of their own) are not collected.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from asgi_lifespan import LifespanManager
from fastapi import FastAPI

from app.clients.redis import build_redis
from app.http.auth import TokenCodec
from app.main import create_app
from app.settings import Settings
from harness.cluster import RedisCluster, start_redis_cluster
from harness.services import RestartableRedis, ServerProcess, start_chroma, start_redis
from memory import Embedder
from memory.embedding.onnx import OnnxEmbedder
from memory.redis_client import RedisClient

TEST_SECRET = "test-secret-" + "x" * 40
AuthHeaders = Callable[..., dict[str, str]]
CLUSTER_MODE = os.environ.get("MNEMO_TEST_REDIS", "standalone") == "cluster"
_cluster: RedisCluster | None = None


def pytest_report_header(config: pytest.Config) -> str:
    return f"redis: {'a local Redis Cluster (6 nodes: 3 masters, 3 replicas)' if CLUSTER_MODE else 'one redis-server'}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if CLUSTER_MODE:
        kept = [i for i in items if i.get_closest_marker("standalone") is None]
        config.hook.pytest_deselected(items=[i for i in items if i not in kept])
        items[:] = kept


@pytest.fixture(scope="session", autouse=True)
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster | None]:
    """The cluster of the cluster pass (None in the standalone pass)."""
    global _cluster
    if not CLUSTER_MODE:
        yield None
        return
    _cluster = start_redis_cluster(tmp_path_factory.mktemp("redis-cluster"))
    yield _cluster
    _cluster.stop()
    _cluster = None


def redis_of(settings: Settings) -> RedisClient:
    """A client for the Redis these settings name (one server or the cluster), as the service builds it."""
    return build_redis(settings, "mnemo-test")


def sync_redis_of(settings: Settings) -> redis.Redis | redis.RedisCluster:
    """A blocking client for the same Redis (for tests that run the app in another thread)."""
    if settings.redis_cluster_nodes:
        host, port = settings.redis_cluster_nodes.split(",")[0].rsplit(":", 1)
        return redis.RedisCluster(host=host, port=int(port), decode_responses=True)
    return redis.Redis.from_url(settings.redis_url, decode_responses=True)


def flush(settings: Settings) -> None:
    if settings.redis_cluster_nodes and _cluster is not None:
        _cluster.flushall()
    else:
        redis.Redis.from_url(settings.redis_url).flushdb()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_redis(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RestartableRedis]:
    """A redis-server for this test alone (function scope): stopping or resetting it leaves everyone
    else's (the outage and closed-connection tests)."""
    server = RestartableRedis.start(tmp_path / "redis")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_chroma(tmp_path_factory.mktemp("chroma"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chroma_server_b(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A second Chroma server, for the tests of several servers (started by the first that needs it)."""
    server = start_chroma(tmp_path_factory.mktemp("chroma-b"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def chroma_server_c(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A third one: the server a rebalance test adds."""
    server = start_chroma(tmp_path_factory.mktemp("chroma-c"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real model as the service runs it by default (int8 ONNX, one thread), loaded once for the
    whole run. tests/integration/test_onnx_embedder.py checks it against the sentence-transformers one."""
    return OnnxEmbedder(threads=1)


def make_settings(redis_url: str, chroma_url: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "redis_url": f"{redis_url}/0",
        "chroma_url": chroma_url,
        "auth_jwt_secret": TEST_SECRET,
        "chroma_collection_prefix": f"t{uuid.uuid4().hex[:12]}",
        "memory_shards": 4,
        "log_level": "WARNING",
        "rate_limit_per_minute": 100_000,  # the limiter has its own tests
    }
    if _cluster is not None:
        values["redis_cluster_nodes"] = _cluster.startup_nodes
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[arg-type]


@pytest.fixture
def settings(redis_server: ServerProcess, chroma_server: ServerProcess) -> Iterator[Settings]:
    s = make_settings(redis_server.url, chroma_server.url)
    # flushed before too: a test that ran without this fixture may have left keys (a placement naming a
    # Chroma server it started and stopped would send this test's users there)
    redis.Redis.from_url(s.redis_url).flushdb()
    yield s
    flush(s)
    drop_collections(chroma_server.url, s.chroma_collection_prefix)


def chroma_client(chroma_url: str) -> Any:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    host, port = chroma_url.removeprefix("http://").split(":")
    return chromadb.HttpClient(host=host, port=int(port), settings=ChromaSettings(anonymized_telemetry=False))


def records_on(chroma_url: str, prefix: str) -> list[tuple[str, str]]:
    """(memory id, user id) of every record in this prefix's memory collections (`<prefix>-mem-*`) on one
    server, read straight from Chroma (the bridge channel's are `<prefix>-xl-mem-*`: pass `<prefix>-xl`)."""
    client = chroma_client(chroma_url)
    out: list[tuple[str, str]] = []
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(f"{prefix}-mem-"):
            got = client.get_collection(name, embedding_function=None).get(include=["metadatas"])
            out += [
                (i, str((m or {}).get("user_id"))) for i, m in zip(got["ids"], got["metadatas"], strict=True)
            ]
    return out


def drop_collections(chroma_url: str, prefix: str) -> None:
    client = chroma_client(chroma_url)
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(f"{prefix}-"):
            client.delete_collection(name)


async def until(check: Callable[[], bool | Awaitable[bool]], timeout: float = 15.0) -> None:
    """Wait for `check` to hold (what a process does in the background after answering: a delete's
    Chroma purge); fails with the last state after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if await result if inspect.isawaitable(result) else result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def app_client(
    settings: Settings,
    embedder: Embedder,
    llm_transport: httpx.AsyncBaseTransport | None = None,
) -> AsyncIterator[tuple[httpx.AsyncClient, FastAPI]]:
    """The app with its real lifespan, reached in-process; yields (client, app-with-state)."""
    app = create_app(settings, embedder=embedder, llm_transport=llm_transport)
    async with (
        LifespanManager(app, startup_timeout=120, shutdown_timeout=30) as manager,
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=manager.app), base_url="http://mnemo.test", timeout=60
        ) as c,
    ):
        yield c, app


@pytest.fixture
async def client(settings: Settings, embedder: Embedder) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings, embedder) as (c, _):
        yield c


@pytest.fixture
def tokens() -> TokenCodec:
    return TokenCodec(TEST_SECRET)


@pytest.fixture
def auth(tokens: TokenCodec) -> AuthHeaders:
    def headers(sub: str, role: str | None = None, ttl: int = 600) -> dict[str, str]:
        return {"Authorization": f"Bearer {tokens.mint(sub, role=role, ttl_seconds=ttl)}"}

    return headers


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def error_code(resp: httpx.Response) -> str:
    """The error code of an answer in either envelope: mnemo's `{"error": code, ...}` or, on the
    OpenAI-compatible routes, OpenAI's `{"error": {"code": code, ...}}`."""
    error = resp.json()["error"]
    return str(error["code"] if isinstance(error, dict) else error)


def error_detail(resp: httpx.Response) -> str:
    """The error's text in either envelope (mnemo's `detail`, OpenAI's `error.message`)."""
    body = resp.json()
    return str(body["error"]["message"] if isinstance(body["error"], dict) else body["detail"])
