"""One served mnemo for every client test (package scope: it starts once), on its own Redis database,
with a CORS origin allowed for the TypeScript client's tests."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import redis

from app.http.auth import TokenCodec
from harness.services import ServerProcess
from tests.conftest import TEST_SECRET
from tests.served import serve

REDIS_DB = 5
ALLOWED_ORIGIN = "http://127.0.0.1:9"  # no page is served there: the Node tests send it as their Origin


@dataclass(frozen=True)
class Mnemo:
    url: str

    def token(self, sub: str, role: str | None = None) -> str:
        return TokenCodec(TEST_SECRET).mint(sub, role=role, ttl_seconds=1800)


@pytest.fixture(scope="package")
def mnemo(
    tmp_path_factory: pytest.TempPathFactory, redis_server: ServerProcess, chroma_server: ServerProcess
) -> Iterator[Mnemo]:
    env = {
        "RATE_LIMIT_PER_MINUTE": "100000",
        "REDIS_URL": f"{redis_server.url}/{REDIS_DB}",
        "CORS_ALLOW_ORIGINS": ALLOWED_ORIGIN,
    }
    with serve(tmp_path_factory.mktemp("clients-served"), redis_server, chroma_server, env) as base:
        yield Mnemo(base)
    redis.Redis.from_url(f"{redis_server.url}/{REDIS_DB}").flushdb()


@pytest.fixture
def user() -> str:
    """A fresh user per test (the served mnemo is shared)."""
    return f"u-{uuid.uuid4().hex[:10]}"


def eventually(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Wait for what the service does after answering (a chat turn's long-term write)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not true after {timeout} s: {what}")
        time.sleep(0.2)
