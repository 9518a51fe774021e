"""Print the pinned requirements of pyproject.toml, one per line: the core dependencies and those of
the extras named as arguments (references to mnemo's own extras are followed).

The Dockerfile installs these before copying the code, so editing the code reuses the dependency
layer, and the image holds no second copy of mnemo: it runs the code from /app.
Usage: python scripts/requirements.py [EXTRA ...] > requirements.txt
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

SELF = re.compile(r"^mnemo\[([^\]]+)\]$")


def requirements(pyproject: Path, extras: list[str]) -> list[str]:
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    optional: dict[str, list[str]] = project.get("optional-dependencies", {})
    out: list[str] = list(project["dependencies"])
    todo = list(extras)
    seen: set[str] = set()
    while todo:
        extra = todo.pop(0)
        if extra in seen:
            continue
        if extra not in optional:
            raise SystemExit(f"unknown extra {extra!r}; known: {sorted(optional)}")
        seen.add(extra)
        for line in optional[extra]:
            match = SELF.match(line.strip())
            if match:
                todo.extend(name.strip() for name in match.group(1).split(","))
            elif line not in out:
                out.append(line)
    return out


def main() -> None:
    extras = [name for arg in sys.argv[1:] for name in arg.split(",") if name]
    sys.stdout.write("".join(f"{line}\n" for line in requirements(Path("pyproject.toml"), extras)))


if __name__ == "__main__":
    main()
