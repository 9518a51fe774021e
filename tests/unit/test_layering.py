"""The import rules of the layout, checked on the source: packages in floors, no cycles, a pure domain.

`memory/` and `app/` are split into packages (or top-level modules) that sit on floors; a unit may import
units on lower floors only (or itself). The domain never imports the HTTP layer, httpx or settings, and
`monitoring` imports nothing of mnemo. Each rule is a function of a source tree, so a test can plant a
bad import in a copy of the tree and see the check fail.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# floor per unit (a package, or a module at the top of `memory/` / `app/`); higher floors import lower ones
MEMORY_FLOORS: Mapping[str, int] = {
    "models": 0,
    "errors": 0,
    "keys": 0,
    "redis_client": 1,
    "text": 1,
    "embedding": 1,
    "locks": 2,
    "session": 3,
    "outbox": 3,
    "longterm": 3,
    "recall": 4,
    "write": 5,
    "archive": 5,
    "relations": 6,  # extraction reuses write's rules; recall gets it through recall/links.py's protocol
    "service": 7,
    "chat": 8,
    "governance": 8,
    "corrections": 8,
}
APP_FLOORS: Mapping[str, int] = {
    "console": 1,  # static assets only
    "settings": 1,
    "clients": 2,
    "http": 3,
    "routes": 4,
    "composition": 4,  # builds every service from Settings; used by lifespan, the CLIs and benchmarks
    "mcp": 4,  # calls the API in-process through the app it is mounted in (never imports routes)
    "lifespan": 5,
    "main": 6,
    "cli": 6,
}
DOMAIN_FORBIDDEN = ("fastapi", "starlette", "httpx", "app", "pydantic_settings", "uvicorn", "sse_starlette")


def _modules(package_dir: Path) -> Iterator[Path]:
    yield from sorted(p for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)


def _imported(path: Path) -> set[str]:
    """Every absolute module name the file imports (`from a.b import c` gives `a.b` and `a.b.c`)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _unit(path: Path, package_dir: Path) -> str | None:
    rel = path.relative_to(package_dir)
    if rel.parts == ("__init__.py",):
        return None  # the façade re-exports; it is no floor of its own
    return rel.parts[0].removesuffix(".py")


def _unit_of_name(name: str, top: str, floors: Mapping[str, int]) -> str | None:
    parts = name.split(".")
    if parts[0] != top or len(parts) < 2 or parts[1] not in floors:
        return None
    return parts[1]


def unit_graph(package_dir: Path, floors: Mapping[str, int]) -> dict[str, set[str]]:
    """unit -> the other units of the same package it imports."""
    top = package_dir.name
    graph: dict[str, set[str]] = {u: set() for u in floors}
    for path in _modules(package_dir):
        unit = _unit(path, package_dir)
        if unit is None:
            continue
        if unit not in floors:
            raise AssertionError(f"{path.relative_to(package_dir.parent)}: unit {unit!r} has no floor")
        for name in _imported(path):
            target = _unit_of_name(name, top, floors)
            if target and target != unit:
                graph[unit].add(target)
    return graph


def floor_violations(package_dir: Path, floors: Mapping[str, int]) -> list[str]:
    graph = unit_graph(package_dir, floors)
    return [
        f"{package_dir.name}.{unit} (floor {floors[unit]}) imports {package_dir.name}.{target} (floor {floors[target]})"
        for unit, targets in sorted(graph.items())
        for target in sorted(targets)
        if floors[target] >= floors[unit]
    ]


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every cycle found by a depth-first walk (each reported once, from its first node)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done

    def walk(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                walk(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node, [node])
    return found


def forbidden_imports(package_dir: Path, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(package_dir.parent)} imports {name}"
        for path in _modules(package_dir)
        for name in sorted(_imported(path))
        if name.split(".")[0] in forbidden
    ]


def settings_imports(package_dir: Path) -> list[str]:
    """The domain receives configured objects; it never reads the settings module."""
    return [
        f"{path.relative_to(package_dir.parent)} imports {name}"
        for path in _modules(package_dir)
        for name in sorted(_imported(path))
        if name.endswith(".settings") or name.split(".")[-1] == "Settings"
    ]


class TestMemory:
    def test_units_stay_on_their_floors(self) -> None:
        assert floor_violations(ROOT / "memory", MEMORY_FLOORS) == []

    def test_no_cycles_between_packages(self) -> None:
        assert cycles(unit_graph(ROOT / "memory", MEMORY_FLOORS)) == []

    def test_session_knows_nothing_of_long_term_memory(self) -> None:
        graph = unit_graph(ROOT / "memory", MEMORY_FLOORS)
        assert not graph["session"] & {"longterm", "recall", "write", "outbox", "service", "chat"}

    def test_domain_never_imports_http_layer_or_settings(self) -> None:
        assert forbidden_imports(ROOT / "memory", DOMAIN_FORBIDDEN) == []
        assert settings_imports(ROOT / "memory") == []

    def test_every_package_says_what_it_owns(self) -> None:
        for init in sorted((ROOT / "memory").glob("*/__init__.py")) + sorted(
            (ROOT / "app").glob("*/__init__.py")
        ):
            doc = ast.get_docstring(ast.parse(init.read_text()))
            assert doc, f"{init.relative_to(ROOT)} has no docstring"
            assert len(doc) >= 80, f"{init.relative_to(ROOT)}: say what the package owns and may import"

    def test_top_level_stays_small(self) -> None:
        assert len(list((ROOT / "memory").glob("*.py"))) <= 8


class TestAppAndMonitoring:
    def test_app_units_stay_on_their_floors(self) -> None:
        assert floor_violations(ROOT / "app", APP_FLOORS) == []

    def test_monitoring_is_a_leaf(self) -> None:
        assert forbidden_imports(ROOT / "monitoring", ("app", "memory")) == []


class TestClients:
    """The Python client is its own package: it never imports the server, and only its integrations
    import a framework (each an optional extra)."""

    CLIENT = ROOT / "clients" / "python" / "mnemo_client"

    def test_the_client_imports_nothing_of_the_server(self) -> None:
        assert forbidden_imports(self.CLIENT, ("app", "memory", "monitoring", "tests")) == []

    def test_only_integrations_import_a_framework(self) -> None:
        frameworks = ("langchain_core", "langchain", "agents", "openai")
        core = [p for p in _modules(self.CLIENT) if "integrations" not in p.parts]
        assert [
            f"{p.name} imports {name}"
            for p in core
            for name in _imported(p)
            if name.split(".")[0] in frameworks
        ] == []

    def test_every_client_package_says_what_it_owns(self) -> None:
        for init in (self.CLIENT / "__init__.py", self.CLIENT / "integrations" / "__init__.py"):
            doc = ast.get_docstring(ast.parse(init.read_text()))
            assert doc
            assert len(doc) >= 80


class TestTheCheckFails:
    """The rules are only worth something if a bad import trips them: plant some in a copy of the tree."""

    @pytest.fixture
    def tree(self, tmp_path: Path) -> Path:
        shutil.copytree(ROOT / "memory", tmp_path / "memory", ignore=shutil.ignore_patterns("__pycache__"))
        return tmp_path / "memory"

    @staticmethod
    def _plant(path: Path, line: str) -> None:
        path.write_text(path.read_text() + f"\n{line}\n")

    def test_session_importing_recall_is_caught(self, tree: Path) -> None:
        self._plant(tree / "session" / "store.py", "from memory.recall.retrieval import HybridRetriever")
        assert floor_violations(tree, MEMORY_FLOORS) == [
            "memory.session (floor 3) imports memory.recall (floor 4)"
        ]

    def test_a_cycle_is_caught(self, tree: Path) -> None:
        self._plant(tree / "recall" / "query.py", "from memory.write.scoring import importance")
        graph = unit_graph(tree, MEMORY_FLOORS)
        assert ["recall", "write", "recall"] in cycles(graph)
        assert "memory.recall (floor 4) imports memory.write (floor 5)" in floor_violations(
            tree, MEMORY_FLOORS
        )

    def test_domain_importing_fastapi_or_settings_is_caught(self, tree: Path) -> None:
        self._plant(tree / "text" / "slots.py", "import fastapi")
        self._plant(tree / "chat" / "context.py", "from app.settings import Settings")
        assert forbidden_imports(tree, DOMAIN_FORBIDDEN) == [
            "memory/chat/context.py imports app.settings",
            "memory/chat/context.py imports app.settings.Settings",
            "memory/text/slots.py imports fastapi",
        ]
        assert settings_imports(tree)

    def test_a_module_without_a_floor_is_caught(self, tree: Path) -> None:
        (tree / "stray.py").write_text('"""A new top-level module nobody placed."""\n')
        with pytest.raises(AssertionError, match="unit 'stray' has no floor"):
            unit_graph(tree, MEMORY_FLOORS)
