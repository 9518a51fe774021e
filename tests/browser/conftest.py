"""The browser tests' fixtures: a served mnemo per module, one Chromium per module, where screenshots go."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from selenium import webdriver

from harness.services import ServerProcess
from tests.browser.test_console import REDIS_DB, start_chromium
from tests.served import serve


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = Path(os.environ.get("MNEMO_SCREENSHOT_DIR") or tmp_path_factory.mktemp("screenshots"))
    where.mkdir(parents=True, exist_ok=True)
    return where


@pytest.fixture(scope="module")
def downloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads: Path) -> Iterator[webdriver.Chrome]:
    driver = start_chromium(downloads, "en-US")
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, redis_server: ServerProcess, chroma_server: ServerProcess
) -> Iterator[str]:
    env = {"RATE_LIMIT_PER_MINUTE": "100000", "REDIS_URL": f"{redis_server.url}/{REDIS_DB}"}
    with serve(tmp_path_factory.mktemp("console-served"), redis_server, chroma_server, env) as base:
        yield base
    redis.Redis.from_url(f"{redis_server.url}/{REDIS_DB}").flushdb()
