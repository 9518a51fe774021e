"""The code census quoted in docs/architecture.md: signatures that thread a zone, and the largest units.

Run `.venv/bin/python scripts/census.py` from the repository root. It reads the source with `ast` only
(nothing is imported), over the production packages `app/`, `memory/` and `monitoring/`:

- zone signatures: functions whose parameters include a time zone (`zone`, `time_zone`, `*_zone`);
- modules over MAX_MODULE_LINES lines and functions over MAX_FUNCTION_LINES lines;
- the functions with the most parameters.

tests/unit/test_code_size.py loads this file to enforce the size limits on the same numbers.
"""

from __future__ import annotations

import argparse
import ast
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "memory", "monitoring")
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 120


@dataclass(frozen=True)
class Function:
    path: str
    name: str
    lines: int
    params: tuple[str, ...]


def modules(root: Path = ROOT) -> Iterator[Path]:
    for package in PACKAGES:
        yield from sorted(p for p in (root / package).rglob("*.py") if "__pycache__" not in p.parts)


def module_lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def functions(path: Path, root: Path = ROOT) -> Iterator[Function]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(root).as_posix()

    def visit(node: ast.AST, prefix: str) -> Iterator[Function]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                args = child.args
                names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
                names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                end = child.end_lineno or child.lineno
                qual = f"{prefix}{child.name}"
                yield Function(
                    rel, qual, end - start + 1, tuple(n for n in names if n not in ("self", "cls"))
                )
                yield from visit(child, f"{qual}.")
            elif isinstance(child, ast.ClassDef):
                yield from visit(child, f"{prefix}{child.name}.")

    yield from visit(tree, "")


def is_zone(name: str) -> bool:
    return name in ("zone", "time_zone", "tz") or name.endswith("_zone")


# a search's per-request options as they were threaded before memory/models.py's RecallRequest
SEARCH_OPTIONS = frozenset(
    {"top_k", "filters", "as_of", "tiers", "min_relevance", "with_bridge", "every_segment", "zone"}
)


def census(root: Path = ROOT) -> dict[str, object]:
    all_functions = [f for path in modules(root) for f in functions(path, root)]
    zoned = [f for f in all_functions if any(is_zone(p) for p in f.params)]
    threading = [f for f in all_functions if len(SEARCH_OPTIONS.intersection(f.params)) >= 3]
    sizes = {p.relative_to(root).as_posix(): module_lines(p) for p in modules(root)}
    widest = sorted(all_functions, key=lambda f: -len(f.params))[:5]
    return {
        "zone_signatures": len(zoned),
        "zone_files": len({f.path for f in zoned}),
        "zone_list": [f"{f.path}:{f.name}" for f in zoned],
        "search_option_signatures": len(threading),
        "search_option_list": [f"{f.path}:{f.name}" for f in threading],
        "modules_over_limit": {
            p: n for p, n in sorted(sizes.items(), key=lambda kv: -kv[1]) if n > MAX_MODULE_LINES
        },
        "functions_over_limit": {
            f"{f.path}:{f.name}": f.lines
            for f in sorted(all_functions, key=lambda f: -f.lines)
            if f.lines > MAX_FUNCTION_LINES
        },
        "widest_signatures": {f"{f.path}:{f.name}": len(f.params) for f in widest},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--list", action="store_true", help="also list the signatures counted")
    parser.add_argument(
        "--root", type=Path, default=ROOT, help="another checkout (e.g. `git archive` of a commit)"
    )
    args = parser.parse_args()
    result = census(args.root)
    if not args.list:
        result.pop("zone_list")
        result.pop("search_option_list")
    print(json.dumps(result, indent=2, ensure_ascii=False))  # noqa: T201 (a command-line report)


if __name__ == "__main__":
    main()
