"""The upgrade case on the one-node stack (docker-compose.yml): an image built from the previous release
(MNEMO_DEPLOY_PREVIOUS, a tag or commit; by default the parent of the last commit that changed the
image's code, so the two images differ), with that commit's compose file, is
given data through its published port (chat turns in two sessions, moved to long-term memory by its
writer); then `down` (the named volumes stay), and the image of this tree with this tree's compose file
comes `up` on the same volumes: every memory and the session buffer are served as before, and a new
turn recalls what the old image wrote (the key-layout migrations run at start, as on any host)."""

from __future__ import annotations

import json
import logging
import os
import time
import uuid

import pytest

from harness.compose import ROOT, SECRET, BuiltImage, Stack, build_image, copy_tracked_tree, docker, run
from harness.services import free_port
from tests.deploy import api
from tests.deploy.conftest import KEEP_IMAGES, banner
from tests.deploy.stack import git_tree_at

log = logging.getLogger("tests.deploy")
pytestmark = pytest.mark.timeout(2400)

IMAGE_SOURCES = ("app", "memory", "monitoring", "scripts", "Dockerfile", "entrypoint.sh", "pyproject.toml")
PROJECT = "mnemo-deploy-upgrade"
USER = f"upgrade-{uuid.uuid4().hex[:8]}"


def previous_release() -> str:
    named = os.environ.get("MNEMO_DEPLOY_PREVIOUS")
    if not named:
        last_change = run(["git", "log", "-1", "--format=%H", "HEAD", "--", *IMAGE_SOURCES], cwd=ROOT)
        named = f"{last_change.stdout.strip()}~1"
    return run(["git", "rev-parse", "--verify", f"{named}^{{commit}}"], cwd=ROOT).stdout.strip()


def session_buffer(stack: Stack, session: str) -> list[dict[str, object]]:
    with api.http(stack, USER) as h:
        resp = h.get(f"/v1/sessions/{USER}/{session}")
    assert resp.status_code == 200, resp.text
    buffer: list[dict[str, object]] = resp.json()["buffer"]
    return buffer


def test_the_previous_commits_data_is_served_by_the_new_image(
    tmp_path_factory: pytest.TempPathFactory, app_image: BuiltImage
) -> None:
    commit = previous_release()
    env = {"AUTH_JWT_SECRET": SECRET, "PORT": str(free_port()), "RATE_LIMIT_PER_MINUTE": "100000"}
    old = Stack(git_tree_at(commit, tmp_path_factory.mktemp("previous")), project=PROJECT, env_file=env)
    new = Stack(copy_tracked_tree(tmp_path_factory.mktemp("current")), project=PROJECT, env_file=env)
    old.write_env()
    new.write_env()
    banner("upgrade (docker-compose.yml): previous commit, then this tree", previous=commit[:12])
    old.compose("down", "-v", "--remove-orphans")
    previous = build_image(old.directory, "mnemo-deploy-previous:latest")
    log.info("image %s", json.dumps({"tag": previous.tag, "build_seconds": round(previous.build_seconds, 1)}))
    old.use_image(previous, ("app", "writer"))
    try:
        old.compose("up", "--wait", "--wait-timeout", "300", "-d")
        api.chat_and_recall(old, USER)
        written = {r["id"]: r["content"] for r in api.search(old, "蜂蜜 basil 花园", USER)}
        first = session_buffer(old, "first")
        old.compose("down")  # the named volumes stay

        new.use_image(app_image, ("app", "writer"))
        started = time.monotonic()
        new.compose("up", "--wait", "--wait-timeout", "300", "-d")
        log.info("upgraded %s", json.dumps({"up_to_healthy_seconds": round(time.monotonic() - started, 1)}))
        served = {r["id"]: r["content"] for r in api.search(new, "蜂蜜 basil 花园", USER)}
        assert written
        assert written.items() <= served.items(), (written, served)
        assert session_buffer(new, "first") == first

        reply = api.client(new, USER).chat.completions.create(
            model="mnemo",
            messages=[{"role": "user", "content": "我的蜂蜜叫什么名字？"}],
            extra_body={"session_id": "after-upgrade"},
        )
        assert "桂花蜜" in (reply.choices[0].message.content or ""), reply.choices[0].message.content
    except BaseException:
        log.error("compose logs:\n%s", new.logs())
        raise
    finally:
        new.compose("down", "-v", "--remove-orphans", "--rmi", "local")
        if not KEEP_IMAGES:
            docker("rmi", previous.tag)
