"""The real-model lane (`make test-llm`): mnemo against llama-cpp-python's server and the Gemma 3 270M
GGUF from PyPI (harness/llm_server.py), with real Redis and Chroma. Not in the default run (pyproject's
norecursedirs): the model is slow on CI's cores and its answers are what is measured, not fixed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.settings import Settings
from harness.llm_server import MODEL_ALIAS, start_llm_server
from harness.services import ServerProcess
from tests.conftest import flush, make_settings

# a small model on 2 shared cores: the lane's own budgets, far above the defaults
LLM_TIMEOUT_SECONDS = 180.0


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_llm_server(tmp_path_factory.mktemp("llama"))
    yield server
    server.stop()


@pytest.fixture
def real_settings(
    redis_server: ServerProcess, chroma_server: ServerProcess, llm_server: ServerProcess
) -> Iterator[Settings]:
    s = make_settings(
        redis_server.url,
        chroma_server.url,
        llm_base_url=llm_server.url,
        llm_model=MODEL_ALIAS,
        llm_timeout_seconds=LLM_TIMEOUT_SECONDS,
        llm_max_attempts=1,
        query_translation=True,
        query_translation_timeout_seconds=30.0,
    )
    flush(s)
    yield s
    flush(s)
