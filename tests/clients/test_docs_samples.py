"""Issue 42: the samples of docs/clients.md run as written against a served mnemo, and correct the memory
they mean to. The Python sample once edited whatever `hit` was left from a print loop (the last, least
relevant hit: "I keep bees on my rooftop" became "我搬到苏州了"); the TypeScript client could not be
installed the way the page imports it. Here the Python blocks run in a fresh interpreter, and the
TypeScript block is compiled with tsc and run by Node in a clean directory where `mnemo-client` is the
tarball `npm pack` made (nothing from the registry: the tarball has no dependency). Only the address
and the token are filled in; the rest is the page's text."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from mnemo_client import MnemoClient

from tests.clients.conftest import Mnemo
from tests.node import ROOT, TS_CLIENT, built_ts_client

pytestmark = [pytest.mark.integration]

DOC = ROOT / "docs" / "clients.md"
DOC_URL = "http://127.0.0.1:8000"
USER = "alice"  # the samples' user; no other client test uses this name
EDITED = "我住在杭州 -> 我搬到苏州了 / I moved to Suzhou"


def blocks(section: str, language: str) -> list[str]:
    """The ```<language> blocks of one `## <section>` of docs/clients.md."""
    text = DOC.read_text(encoding="utf-8")
    part = text.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", part, flags=re.DOTALL)


def fresh(mnemo: Mnemo) -> None:
    """The samples start from a user with no memory (they run in any order, and again)."""
    with MnemoClient(mnemo.url, mnemo.token(USER)) as client:
        client.erase(USER)


def sample_env(mnemo: Mnemo) -> dict[str, str]:
    return {**os.environ, "MNEMO_TOKEN": mnemo.token(USER)}


def test_the_blocks_are_found() -> None:
    """The extraction itself: two Python blocks and one TypeScript block that corrects a memory."""
    python, ts = blocks("Python", "python"), blocks("TypeScript", "ts")
    assert len(python) == 2
    assert len(ts) == 1
    assert "edit_memory" in python[0]
    assert "editMemory" in ts[0]


def test_the_python_samples_edit_the_most_relevant_memory(mnemo: Mnemo) -> None:
    fresh(mnemo)
    sync, aio = blocks("Python", "python")
    prelude = "import asyncio, os\ntoken = os.environ['MNEMO_TOKEN']\n"
    program = prelude + sync.replace(DOC_URL, mnemo.url)
    # top-level `async with` as the page shows it, run in a coroutine
    program += "\nasync def main() -> None:\n" + textwrap.indent(aio.replace(DOC_URL, mnemo.url), "    ")
    program += "\nasyncio.run(main())\n"
    done = subprocess.run(
        [sys.executable, "-c", program], env=sample_env(mnemo), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    lines = done.stdout.splitlines()
    assert EDITED in lines, done.stdout  # the Hangzhou memory, not the bees
    assert "['created', 'edited']" in lines, done.stdout
    relevances = [float(line.split()[0]) for line in lines if re.fullmatch(r"0\.\d\d .+|1\.00 .+", line)]
    assert relevances, done.stdout  # each hit printed with its relevance
    assert relevances == sorted(relevances, reverse=True)
    assert all(r >= 0.1 for r in relevances)


def test_the_typescript_sample_runs_from_the_packed_tarball(mnemo: Mnemo, tmp_path: Path) -> None:
    built_ts_client()
    fresh(mnemo)
    packed = subprocess.run(
        ["npm", "pack", "--silent", "--pack-destination", str(tmp_path)],
        cwd=TS_CLIENT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert packed.returncode == 0, packed.stderr[-3000:]
    tarball = tmp_path / packed.stdout.strip().splitlines()[-1]
    assert tarball.is_file(), packed.stdout

    app = tmp_path / "app"  # a clean project, as a user of the client has
    app.mkdir()
    (app / "package.json").write_text(json.dumps({"name": "app", "private": True, "type": "module"}))
    installed = subprocess.run(
        ["npm", "install", "--offline", "--no-audit", "--no-fund", str(tarball)],
        cwd=app,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    assert (app / "node_modules" / "mnemo-client" / "dist" / "index.d.ts").is_file()

    (ts,) = blocks("TypeScript", "ts")
    prelude = 'const token = process.env["MNEMO_TOKEN"]!;\n'
    (app / "sample.ts").write_text(prelude + ts.replace(DOC_URL, mnemo.url), encoding="utf-8")
    config = {
        "compilerOptions": {
            "target": "ES2022",
            "module": "NodeNext",
            "moduleResolution": "NodeNext",
            "strict": True,
            "noUncheckedIndexedAccess": True,
            "typeRoots": [str(TS_CLIENT / "node_modules" / "@types")],  # Node's types, for `process`
            "types": ["node"],
        },
        "files": ["sample.ts"],
    }
    (app / "tsconfig.json").write_text(json.dumps(config))
    compiled = subprocess.run(
        [str(TS_CLIENT / "node_modules" / ".bin" / "tsc"), "-p", "tsconfig.json"],
        cwd=app,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert compiled.returncode == 0, compiled.stdout[-3000:]

    ran = subprocess.run(
        ["node", "sample.js"], cwd=app, env=sample_env(mnemo), capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, f"{ran.stdout[-3000:]}\n{ran.stderr[-3000:]}"
    assert EDITED in ran.stdout, ran.stdout
    assert "[ 'created', 'edited' ]" in ran.stdout, ran.stdout
    assert "403 forbidden null" in ran.stdout, ran.stdout
