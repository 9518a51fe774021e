"""The compose suite's stacks. Needs a Docker engine that answers (scripts/ensure_docker.sh starts one)
and the stand-in base images (tests/deploy/standins/build.sh); `make test-deploy` runs both first.

The image is built once per run (`app_image`) and tagged with the names compose gives each stack's
built services, so both stacks run the same image. Every container, volume and image tag of a stack is
removed at the end (MNEMO_DEPLOY_KEEP_IMAGES=1 keeps the built image, so that the next run's build is
cached). One stack runs at a time (module-scoped fixtures, torn down before the next module)."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.compose import SECRET, BuiltImage, Stack, build_image, copy_tracked_tree, docker
from harness.services import free_port

log = logging.getLogger("tests.deploy")
KEEP_IMAGES = os.environ.get("MNEMO_DEPLOY_KEEP_IMAGES") == "1"
IMAGE_TAG = "mnemo-deploy-suite:latest"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # a missing engine fails (with how to start one), never skips
    if items:
        docker("info", "--format", "{{.ServerVersion}}", timeout=30)


def banner(what: str, **details: object) -> None:
    """Which stack runs, in the suite's output (log_cli): CI's log says where a failure came from."""
    log.info("==> stack %s", json.dumps({"running": what, **details}))


@pytest.fixture(scope="session")
def app_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BuiltImage]:
    """The API image, built once from a copy of the tracked files, for every stack of the run."""
    directory = copy_tracked_tree(tmp_path_factory.mktemp("image"))
    image = build_image(directory, IMAGE_TAG)
    log.info(
        "image %s",
        json.dumps(
            {"tag": image.tag, "build_seconds": round(image.build_seconds, 1), "image_mb": round(image.mb, 1)}
        ),
    )
    yield image
    if not KEEP_IMAGES:
        docker("rmi", image.tag)


@pytest.fixture(scope="module")
def one_node(tmp_path_factory: pytest.TempPathFactory, app_image: BuiltImage) -> Iterator[Stack]:
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
    banner("one node (docker-compose.yml)", project=stack.project)
    stack.compose("down", "-v", "--remove-orphans")  # a previous run's leftovers, if it was killed
    stack.use_image(app_image, ("app", "writer"))
    started = time.monotonic()
    try:
        # not `up --build`: compose's own (classic) build runs its RUN steps on the default bridge,
        # which this engine lacks (dockerd --bridge=none), and its cache key for the pip step differs
        # from the CLI's, so it would download again without a network. It finds the image built
        # once under the names it builds them as (<project>-app, <project>-writer) and runs them.
        stack.compose("up", "--wait", "--wait-timeout", "300", "-d")
        ready = time.monotonic() - started
        log.info(
            "ready %s",
            json.dumps(
                {
                    "stack": "one node",
                    "up_to_healthy_seconds": round(ready, 1),
                    "image_mb": round(app_image.mb, 1),
                }
            ),
        )
        (directory / "ready.json").write_text(json.dumps({"up_to_healthy_seconds": ready}))
        yield stack
    except BaseException:
        log.error("compose logs:\n%s", stack.logs())
        raise
    finally:
        # --rmi local removes the stack's tags of the image (the run's own tag stays until the session ends)
        stack.compose("down", "-v", "--remove-orphans", "--rmi", "local")


@pytest.fixture(scope="module")
def stack_dir(one_node: Stack) -> Path:
    return one_node.directory


CLUSTER_BUILT = ("app-1", "app-2", "writer-1", "writer-2")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, app_image: BuiltImage) -> Iterator[Stack]:
    """docker-compose.cluster.yml, up --wait: 6 Redis nodes + init job, 2 Chroma, 2 API replicas,
    2 writers, nginx publishing the one port."""
    directory = copy_tracked_tree(tmp_path_factory.mktemp("cluster"))
    stack = Stack(
        directory,
        project="mnemo-deploy-cluster",
        compose_file="docker-compose.cluster.yml",
        env_file={
            "AUTH_JWT_SECRET": SECRET,
            "PORT": str(free_port()),
            # not the default 172.29.113: a user's own cluster stack on this engine keeps its network
            "MNEMO_CLUSTER_NET": os.environ.get("MNEMO_DEPLOY_CLUSTER_NET", "172.29.213"),
            "RATE_LIMIT_PER_MINUTE": "100000",
        },
    )
    stack.write_env()
    banner("cluster (docker-compose.cluster.yml)", project=stack.project, through="nginx")
    stack.compose("down", "-v", "--remove-orphans")
    stack.use_image(app_image, CLUSTER_BUILT)
    started = time.monotonic()
    try:
        stack.compose("up", "--wait", "--wait-timeout", "600", "-d", timeout=900)
        ready = time.monotonic() - started
        log.info("ready %s", json.dumps({"stack": "cluster", "up_to_healthy_seconds": round(ready, 1)}))
        yield stack
    except BaseException:
        log.error("compose logs:\n%s", stack.logs())
        raise
    finally:
        stack.compose("down", "-v", "--remove-orphans", "--rmi", "local")
