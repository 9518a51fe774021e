"""The habits a next engineer relies on (issue 43): one licence that agrees with NOTICE and the packages,
one version written once, a changelog, and a pre-commit config that runs what CI's lint runs."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import yaml  # type: ignore[import-untyped]

import app
from app.main import create_app
from tests.conftest import make_settings

ROOT = Path(__file__).resolve().parents[2]


def pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def test_one_licence_everywhere() -> None:
    assert (ROOT / "LICENSE").read_text().lstrip().startswith("Apache License\n")
    assert pyproject()["license"] == "Apache-2.0"
    assert json.loads((ROOT / "clients/typescript/package.json").read_text())["license"] == "Apache-2.0"
    assert "Apache-2.0" in (ROOT / "NOTICE").read_text()  # the vendored tokenizer's licence: the same


def test_the_version_is_written_once() -> None:
    project = pyproject()
    assert "version" not in project
    assert project["dynamic"] == ["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", app.__version__)
    written = [
        str(p.relative_to(ROOT))
        for folder in ("app", "memory", "monitoring")
        for p in (ROOT / folder).rglob("*.py")
        if f'"{app.__version__}"' in p.read_text() and p != ROOT / "app/__init__.py"
    ]
    assert written == []


def test_the_api_says_its_version() -> None:
    settings = make_settings("redis://127.0.0.1:1", "http://127.0.0.1:1")  # nothing is dialled: no lifespan
    assert create_app(settings).version == app.__version__


def test_the_changelog_has_an_unreleased_section() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text


def test_pre_commit_runs_what_ci_lints() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    entries = {hook["entry"] for repo in config["repos"] for hook in repo["hooks"]}
    lint = (ROOT / "Makefile").read_text().split("\nlint:", 1)[1].split("\n\n", 1)[0]
    for command in re.findall(r"\.venv/bin/(ruff check|ruff format --check|mypy)", lint):
        assert any(command in entry for entry in entries), command


def test_every_setting_is_in_the_operations_guide() -> None:
    """A setting added without a line in docs/operations.md fails here (102 settings when written)."""
    from app.settings import Settings

    guide = (ROOT / "docs/operations.md").read_text()
    missing = [name.upper() for name in Settings.model_fields if name.upper() not in guide]
    assert missing == []
