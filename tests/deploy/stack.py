"""What only the compose suite asks of a stack (the stack itself is harness/compose.py): a previous
release's files for the upgrade case, and the at-rest checks that grep a volume for a user's text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from harness.compose import ROOT, docker


def git_tree_at(commit: str, dest: Path, root: Path = ROOT) -> Path:
    """The files of `commit` (the upgrade case's previous release), exported to `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", commit], cwd=root, capture_output=True, check=True, timeout=120
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True, timeout=120)
    return dest


def grep_volume(volume: str, needles: list[bytes]) -> dict[str, int]:
    """File -> occurrences of any needle, over every file of a named volume, read by a throwaway
    container of the stand-in base (nothing is copied out)."""
    script = (
        "import json, os, sys\n"
        "needles = [bytes.fromhex(n) for n in sys.argv[1:]]\n"
        "found = {}\n"
        "for d, _, files in os.walk('/v'):\n"
        "    for f in files:\n"
        "        p = os.path.join(d, f)\n"
        "        data = open(p, 'rb').read()\n"
        "        n = sum(data.count(x) for x in needles)\n"
        "        if n: found[p[3:]] = n\n"
        "print(json.dumps(found))\n"
    )
    out = docker(
        "run",
        "--rm",
        "--network",
        "none",
        "-v",
        f"{volume}:/v:ro",
        "--entrypoint",
        "python3",
        "python:3.11-slim",
        "-c",
        script,
        *(n.hex() for n in needles),
    )
    found: dict[str, int] = json.loads(out)
    return found


def needles(text: str) -> list[bytes]:
    """The text as UTF-8 and as JSON \\u escapes (lower and upper hex), whichever a store wrote."""
    escaped = json.dumps(text)[1:-1]
    return sorted({text.encode(), escaped.encode(), escaped.upper().replace("\\U", "\\u").encode()})
