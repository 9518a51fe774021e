"""The compose suite's stacks. Needs a Docker engine that answers (scripts/ensure_docker.sh starts one)
and the stand-in base images (tests/deploy/standins/build.sh); `make test-deploy` runs both first.
Every container, volume and built image of a stack is removed at the end (MNEMO_DEPLOY_KEEP_IMAGES=1
keeps the built images, so that the next run's build is cached)."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.deploy.stack import SECRET, Stack, copy_tracked_tree, docker, free_port

log = logging.getLogger("tests.deploy")
KEEP_IMAGES = os.environ.get("MNEMO_DEPLOY_KEEP_IMAGES") == "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # a missing engine fails (with how to start one), never skips
    if items:
        docker("info", "--format", "{{.ServerVersion}}", timeout=30)


def image_size_mb(image: str) -> float:
    return int(docker("image", "inspect", image, "--format", "{{.Size}}").strip()) / 1e6


@pytest.fixture(scope="module")
def one_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """docker-compose.yml, up --build --wait, from a copy of the tracked files with this .env."""
    directory = copy_tracked_tree(tmp_path_factory.mktemp("one-node"))
    stack = Stack(
        directory,
        project="mnemo-deploy-one",
        env_file={
            "AUTH_JWT_SECRET": SECRET,
            "PORT": str(free_port()),
            # the documented compaction bound, shortened (docs/governance.md, "erasure at rest")
            "ERASURE_COMPACTION_WINDOW_SECONDS": "2",
            "ERASURE_COMPACTION_TIMEOUT_SECONDS": "60",
            "RATE_LIMIT_PER_MINUTE": "100000",
            "WORKERS": "2",
        },
    )
    stack.write_env()
    log.info("stack %s", json.dumps({"running": "one node (docker-compose.yml)", "project": stack.project}))
    stack.compose("down", "-v", "--remove-orphans")  # a previous run's leftovers, if it was killed
    build_seconds = stack.prebuild()
    started = time.monotonic()
    try:
        # not `up --build`: compose's own (classic) build runs its RUN steps on the default bridge,
        # which this engine lacks (dockerd --bridge=none), and its cache key for the pip step differs
        # from the CLI's, so it would download again without a network. It finds the images built
        # above under the names it builds them as (<project>-app, <project>-writer) and runs them.
        stack.compose("up", "--wait", "--wait-timeout", "300", "-d")
        ready = time.monotonic() - started
        log.info(
            "ready %s",
            json.dumps(
                {
                    "stack": "one node",
                    "build_seconds": round(build_seconds, 1),
                    "up_to_healthy_seconds": round(ready, 1),
                    "image_mb": round(image_size_mb(stack.image("app")), 1),
                }
            ),
        )
        (directory / "ready.json").write_text(json.dumps({"up_to_healthy_seconds": ready}))
        yield stack
    except BaseException:
        log.error("compose logs:\n%s", stack.logs())
        raise
    finally:
        stack.compose("down", "-v", "--remove-orphans", *(() if KEEP_IMAGES else ("--rmi", "local")))


@pytest.fixture(scope="module")
def stack_dir(one_node: Stack) -> Path:
    return one_node.directory
