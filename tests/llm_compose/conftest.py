"""The compose profile `llm` for real (`make test-llm-compose`): docker-compose.yml with `--profile llm`
on a real Docker engine (scripts/ensure_docker.sh) and the stand-in base images
(tests/deploy/standins/build.sh), the app's image built as the compose suite builds it and the model's
from deploy/llm/Dockerfile (llama.cpp compiled: minutes on 2 cores; the layer cache keeps it for the
next run). Not in `make test` (pyproject's norecursedirs): the compile and the model's latency on shared
cores do not fit CI's time. Every container and volume of the run, and the images it tagged, are removed
at the end (MNEMO_DEPLOY_KEEP_IMAGES=1 keeps the two images); the build stages stay as the layer cache,
so the next run does not compile again. All carry the label org.mnemo.deploy-suite: `make deploy-clean`
removes them."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator

import pytest

from harness.compose import SECRET, BuiltImage, Stack, build_image, copy_tracked_tree, docker
from harness.services import free_port

log = logging.getLogger("tests.llm_compose")
KEEP_IMAGES = os.environ.get("MNEMO_DEPLOY_KEEP_IMAGES") == "1"
APP_TAG = "mnemo-llm-compose-suite:app"
LLM_TAG = "mnemo-llm-compose-suite:llm"
MODEL = "gemma-3-270m"  # deploy/llm/Dockerfile's --model_alias
# a 270M model on 2 shared cores: far above the default 60 s; one attempt, as the real-model lane
LLM_TIMEOUT_SECONDS = "180"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # a missing engine fails (with how to start one), never skips
    if items:
        docker("info", "--format", "{{.ServerVersion}}", timeout=30)


@pytest.fixture(scope="session")
def images(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, BuiltImage]]:
    """The app's image (as tests/deploy builds it) and the model's (deploy/llm), from the tracked files."""
    directory = copy_tracked_tree(tmp_path_factory.mktemp("image"))
    built = {
        "app": build_image(directory, APP_TAG),
        "llm": build_image(directory / "deploy" / "llm", LLM_TAG),
    }
    for name, image in built.items():
        log.info(
            "image %s",
            json.dumps(
                {
                    "service": name,
                    "tag": image.tag,
                    "build_seconds": round(image.build_seconds, 1),
                    "image_mb": round(image.mb, 1),
                }
            ),
        )
    yield built
    if not KEEP_IMAGES:
        for image in built.values():
            docker("rmi", image.tag)


@pytest.fixture(scope="session")
def llm_stack(tmp_path_factory: pytest.TempPathFactory, images: dict[str, BuiltImage]) -> Iterator[Stack]:
    """docker-compose.yml with the profile `llm`, up --wait, with the .env its header tells a user to write."""
    directory = copy_tracked_tree(tmp_path_factory.mktemp("llm-stack"))
    stack = Stack(
        directory,
        project="mnemo-llm-compose",
        env_file={
            "AUTH_JWT_SECRET": SECRET,
            "PORT": str(free_port()),
            # what docker-compose.yml's header says to put in .env
            "LLM_BASE_URL": "http://llm:8080/v1",
            "LLM_MODEL": MODEL,
            "LLM_COMPRESS_MEMORIES": "false",
            # the lane's budgets
            "LLM_TIMEOUT_SECONDS": LLM_TIMEOUT_SECONDS,
            "LLM_MAX_ATTEMPTS": "1",
            "RATE_LIMIT_PER_MINUTE": "100000",
            "WORKERS": "2",
        },
    )
    stack.write_env()
    profile = ("--profile", "llm")
    stack.compose(*profile, "down", "-v", "--remove-orphans")  # a previous run's leftovers
    # not `up --build` (tests/deploy/conftest.py says why): the images built above, under the names
    # compose gives the stack's built services
    stack.use_image(images["app"], ("app", "writer"))
    stack.use_image(images["llm"], ("llm",))
    started = time.monotonic()
    try:
        stack.compose(*profile, "up", "--wait", "--wait-timeout", "600", "-d", timeout=900)
        ready = time.monotonic() - started
        log.info(
            "ready %s",
            json.dumps(
                {
                    "stack": "one node + profile llm",
                    "up_to_healthy_seconds": round(ready, 1),
                    "health": stack.health(),
                }
            ),
        )
        yield stack
    except BaseException:
        log.error("compose logs:\n%s", stack.logs())
        raise
    finally:
        stack.compose(*profile, "down", "-v", "--remove-orphans", "--rmi", "local")
