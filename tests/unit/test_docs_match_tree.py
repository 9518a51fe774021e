"""docs/architecture.md and memory/__init__.py cannot drift from the code (issue 43).

- The floor table in docs/architecture.md and the floor list in memory/__init__.py's docstring say what
  tests/unit/test_layering.py enforces (`MEMORY_FLOORS`), unit for unit and floor for floor.
- The module map (the `app/`, `memory/`, `monitoring/` and `harness/` trees in docs/architecture.md) lists every
  package and module of the tree (`__init__.py` and `__main__.py` aside), and every entry it lists exists.
Each check is a function of the text and the tree, so a test can feed it a drifted copy and see it fail.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.unit.test_layering import MEMORY_FLOORS

ROOT = Path(__file__).resolve().parents[2]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAPPED = ("app", "memory", "monitoring", "harness")
_ENTRY = re.compile(r"^(?P<indent>[│ ]*)[├└]─ (?P<name>[^\s]+)")
_FLOOR_ROW = re.compile(r"^\| (?P<floor>\d+) \| (?P<units>[^|]+) \|")
_FLOOR_ITEM = re.compile(r"^(?P<floor>\d+)\. (?P<units>.+)$")
_UNIT = re.compile(r"`([a-z_]+)(?:/|\.py)?`")


def floors_in_table(text: str) -> dict[str, int]:
    """{unit: floor} from the markdown table under "### Floors"."""
    section = text.split("### Floors", 1)[1].split("\n#", 1)[0]
    out: dict[str, int] = {}
    for line in section.splitlines():
        if m := _FLOOR_ROW.match(line):
            out.update(dict.fromkeys(_UNIT.findall(m["units"]), int(m["floor"])))
    return out


def floors_in_docstring(doc: str) -> dict[str, int]:
    """{unit: floor} from memory/__init__.py's numbered list (a line may continue on the next ones)."""
    out: dict[str, int] = {}
    floor: int | None = None
    for line in doc.splitlines():
        if m := _FLOOR_ITEM.match(line.strip()):
            floor = int(m["floor"])
            line = m["units"]
        elif not line.startswith("   "):
            floor = None
        if floor is not None:
            # only the unit names, not what a parenthesis says of them
            bare = re.sub(r"\([^)]*\)?", "", line)
            out.update(dict.fromkeys(_UNIT.findall(bare), floor))
    return out


def mapped_paths(text: str) -> set[str]:
    """Every path the code blocks of the module map list, as `top/sub/name.py` or `top/pkg`."""
    paths: set[str] = set()
    for block in re.findall(r"```\n(.*?)```", text, flags=re.S):
        lines = block.splitlines()
        if not lines or lines[0].rstrip("/") not in MAPPED:
            continue
        stack: list[str] = [lines[0].rstrip("/")]
        for line in lines[1:]:
            m = _ENTRY.match(line)
            if m is None:
                continue  # a description's second line
            depth = len(m["indent"]) // 3 + 1
            name = m["name"].rstrip("/")
            del stack[depth:]
            stack.append(name)
            paths.add("/".join(stack))
    return paths


def tree_paths(root: Path) -> Iterator[str]:
    """Every package and module of the mapped trees, `__init__.py`, `__main__.py` and data aside."""
    for top in MAPPED:
        for path in sorted((root / top).rglob("*")):
            rel = path.relative_to(root)
            if "__pycache__" in rel.parts or path.name in ("__init__.py", "__main__.py"):
                continue
            package = path.is_dir() and (path / "__init__.py").exists()
            if package or path.suffix == ".py":
                yield rel.as_posix()


def drift(text: str, root: Path) -> tuple[list[str], list[str]]:
    """(modules missing from the map, entries of the map that do not exist)."""
    listed = mapped_paths(text)
    missing = sorted(set(tree_paths(root)) - listed)
    stale = sorted(p for p in listed if not (root / p).exists())
    return missing, stale


def _by_floor(floors: Mapping[str, int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for unit, floor in sorted(floors.items()):
        out.setdefault(floor, []).append(unit)
    return out


def test_the_floor_table_is_the_layering_tests() -> None:
    assert _by_floor(floors_in_table(ARCHITECTURE.read_text(encoding="utf-8"))) == _by_floor(MEMORY_FLOORS)


def test_the_memory_package_docstring_lists_the_same_floors() -> None:
    import memory

    assert memory.__doc__ is not None
    assert _by_floor(floors_in_docstring(memory.__doc__)) == _by_floor(MEMORY_FLOORS)


def test_the_module_map_lists_the_tree_and_nothing_else() -> None:
    missing, stale = drift(ARCHITECTURE.read_text(encoding="utf-8"), ROOT)
    assert not missing, f"add these to the module map in docs/architecture.md: {missing}"
    assert not stale, f"these are in docs/architecture.md's module map but not in the tree: {stale}"


def test_the_checks_see_drift(tmp_path: Path) -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    # a module the map does not list, and an entry of the map that is gone
    (tmp_path / "memory" / "recall").mkdir(parents=True)
    (tmp_path / "memory" / "recall" / "__init__.py").write_text("")
    (tmp_path / "memory" / "recall" / "unlisted.py").write_text("")
    for top in ("app", "monitoring"):
        (tmp_path / top).mkdir()
    missing, stale = drift(text, tmp_path)
    assert "memory/recall/unlisted.py" in missing
    assert "memory/recall/retrieval.py" in stale
    # a unit on the wrong floor, in the table and in the docstring
    moved = dict(floors_in_table(text), recall=0)
    assert _by_floor(moved) != _by_floor(MEMORY_FLOORS)
    assert floors_in_docstring("0. `models`\n1. `text`, `embedding` (`recall` said here is no unit)") == {
        "models": 0,
        "text": 1,
        "embedding": 1,
    }
