"""The TypeScript client's own tests (clients/typescript/test, Node's test runner) against the served
mnemo: `npm test` with MNEMO_URL and tokens in the environment. Node's report is shown on failure."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.clients.conftest import Mnemo
from tests.node import TS_CLIENT, built_ts_client

pytestmark = [pytest.mark.integration]


def test_node_test_runner_passes_against_mnemo(mnemo: Mnemo, user: str) -> None:
    built_ts_client()
    env = {
        **os.environ,
        "MNEMO_URL": mnemo.url,
        "MNEMO_USER": user,
        "MNEMO_TOKEN": mnemo.token(user),
        "MNEMO_TOKEN_ERASE": mnemo.token(f"{user}.erase"),
    }
    done = subprocess.run(
        ["npm", "test", "--silent"], cwd=TS_CLIENT, env=env, capture_output=True, text=True, timeout=600
    )
    report = f"{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, report
    assert "# fail 0" in done.stdout, report
    assert "# pass 0" not in done.stdout, report
