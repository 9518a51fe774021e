"""A compose stack on a real Docker engine (for tests/deploy and bench/affinity.py), driven as a user
drives it: the repository's compose file and Dockerfile, unchanged, in a copy of the tracked files (a clean clone: no developer `.env`, no
`.venv` in the build context), with the `docker-compose` binary of the dev dependencies.

What this machine lacks is supplied around those files, never in them (tests/deploy/standins/build.sh
for the base images; a host-network build for the one step that downloads: see `build_image`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCKER = os.environ.get("MNEMO_DOCKER_CLI", "/usr/bin/docker")
COMPOSE = str(Path(sys.executable).parent / "docker-compose")
SECRET = "deploy-test-only-" + "k" * 40  # 32+ chars, as the app requires
# on every image the suite (or bench/affinity.py) builds: `make deploy-clean` removes by it
LABEL = "org.mnemo.deploy-suite=image"

log = logging.getLogger("harness.compose")


def run(
    args: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run a command; a failure raises with its output (a missing binary fails, never skips)."""
    result = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if result.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} exited {result.returncode}\n--- stdout\n{result.stdout[-4000:]}"
            f"\n--- stderr\n{result.stderr[-4000:]}"
        )
    return result


def docker(*args: str, timeout: float = 600) -> str:
    return run([DOCKER, *args], timeout=timeout).stdout


def copy_tracked_tree(dest: Path, root: Path = ROOT) -> Path:
    """The working tree's tracked files (as edited, not as committed) copied to `dest`: what a clone holds."""
    listed = run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root).stdout
    for name in filter(None, listed.split("\0")):
        src = root / name
        if not src.is_file():  # deleted in the working tree
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    return dest


@dataclass(frozen=True)
class BuiltImage:
    tag: str
    build_seconds: float
    mb: float


def build_image(context: Path, tag: str, build_args: dict[str, str] | None = None) -> BuiltImage:
    """Build the Dockerfile as compose would (classic builder, same context), on the host network:
    compose's own build has no network here (no default bridge)."""
    started = time.monotonic()
    args = [f"--build-arg={k}={v}" for k, v in (build_args or {}).items()]
    run(
        ["nice", DOCKER, "build", "--network", "host", "--label", LABEL, *args, "-t", tag, "."],
        cwd=context,
        env={**os.environ, "DOCKER_BUILDKIT": "0"},
        timeout=3600,
    )
    seconds = time.monotonic() - started
    size = int(docker("image", "inspect", tag, "--format", "{{.Size}}").strip())
    return BuiltImage(tag=tag, build_seconds=seconds, mb=size / 1e6)


@dataclass
class Stack:
    """One compose project: `directory` holds the compose file, `.env` and the build context."""

    directory: Path
    project: str
    compose_file: str = "docker-compose.yml"
    env_file: dict[str, str] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()  # compose files merged on top of `compose_file`

    def write_env(self) -> None:
        # .env as a user writes it: compose reads it for interpolation, and the app services get it
        # as their env_file
        lines = [f"{key}={value}" for key, value in sorted(self.env_file.items())]
        (self.directory / ".env").write_text("\n".join(lines) + "\n", encoding="utf-8")

    @property
    def port(self) -> int:
        return int(self.env_file["PORT"])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def compose(self, *args: str, timeout: float = 900) -> str:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": os.environ.get("HOME", "/root"),
            "DOCKER_HOST": os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock"),
            "COMPOSE_PROJECT_NAME": self.project,
        }
        started = time.monotonic()
        files = [arg for name in (self.compose_file, *self.overrides) for arg in ("-f", name)]
        out = run([COMPOSE, *files, *args], cwd=self.directory, env=env, timeout=timeout)
        log.info(
            "compose %s",
            json.dumps(
                {"project": self.project, "args": list(args), "seconds": round(time.monotonic() - started, 1)}
            ),
        )
        return out.stdout

    def image(self, service: str) -> str:
        return f"{self.project}-{service}"

    def use_image(self, image: BuiltImage | str, services: tuple[str, ...]) -> None:
        """Tag the run's image with the name compose gives each built service (<project>-<service>):
        `up` without --build then runs it."""
        tag = image if isinstance(image, str) else image.tag
        for service in services:
            docker("tag", tag, self.image(service))

    def containers(self, *, stopped: bool = False) -> dict[str, str]:
        """Service -> container id, of the running containers (and the stopped ones too)."""
        out = self.compose("ps", *(("--all",) if stopped else ()), "--format", "json")
        rows: list[dict[str, Any]] = []
        for line in out.splitlines():
            line = line.strip()
            if not line:
                continue
            parsed = json.loads(line)
            rows.extend(parsed if isinstance(parsed, list) else [parsed])
        return {str(row["Service"]): str(row["ID"]) for row in rows}

    def health(self) -> dict[str, str]:
        states: dict[str, str] = {}
        for service, cid in self.containers().items():
            info = json.loads(docker("inspect", cid))[0]["State"]
            states[service] = str(info.get("Health", {}).get("Status", info["Status"]))
        return states

    def volume(self, name: str) -> str:
        return f"{self.project}_{name}"

    def logs(self) -> str:
        try:
            return self.compose("logs", "--no-color", "--tail", "80", timeout=120)
        except AssertionError as exc:
            return str(exc)
