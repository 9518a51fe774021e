"""`memory/` is the domain: it must not import the HTTP layer, httpx or the settings object."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

FORBIDDEN = ("fastapi", "starlette", "httpx", "app", "pydantic_settings")
MEMORY_DIR = Path(__file__).resolve().parents[2] / "memory"


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(MEMORY_DIR.glob("*.py")), ids=lambda p: p.name)
def test_memory_module_imports_no_http_layer(path: Path) -> None:
    assert not (_imports(path) & set(FORBIDDEN))


def test_memory_package_is_not_empty() -> None:
    assert len(list(MEMORY_DIR.glob("*.py"))) >= 5
