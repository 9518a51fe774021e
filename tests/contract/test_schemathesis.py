"""schemathesis over `/openapi.json` of the served app, with a user token and with an admin token.

Bounded (a fixed number of examples per operation, a fixed seed) so it fits CI; the checks are the
contract's promises: no 5xx, every response conforms to its documented schema, content type and headers.
Stricter checks (schema-valid input always accepted) do not apply: mnemo validates more than a JSON
schema can say (well-formed Unicode, id rules, at least one user message), on purpose.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.http.auth import TokenCodec
from tests.conftest import TEST_SECRET
from tests.faults.deployment import Deployment, deployed

CHECKS = (
    "not_a_server_error,response_schema_conformance,content_type_conformance,response_headers_conformance"
)
SEED = 20261201
EXAMPLES_PER_OPERATION = 40


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with deployed(tmp_path_factory.mktemp("schemathesis")) as d:
        yield d


def schemathesis_cli() -> str:
    binary = Path(sys.executable).parent / "schemathesis"
    if not binary.exists():
        raise FileNotFoundError("schemathesis is not installed in this environment (pyproject dev extra)")
    return str(binary)


@pytest.mark.parametrize("role", [None, "admin"], ids=["user", "admin"])
def test_no_server_error_and_every_response_as_documented(
    deployment: Deployment, tmp_path: Path, role: str | None
) -> None:
    token = TokenCodec(TEST_SECRET).mint(f"st-{role or 'user'}", role=role, ttl_seconds=3600)
    args = [schemathesis_cli(), "run", f"{deployment.base_url}/openapi.json"]
    args += ["-H", f"Authorization: Bearer {token}", "--checks", CHECKS]
    args += ["--max-examples", str(EXAMPLES_PER_OPERATION), "--seed", str(SEED), "--request-timeout", "30"]
    args += ["--report", "junit", "--report-dir", str(tmp_path)]
    result = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False, cwd=tmp_path)
    summary = result.stdout[-8000:]
    assert result.returncode == 0, f"schemathesis found failures:\n{summary}\n{result.stderr[-2000:]}"
    assert "generated" in summary  # it really ran test cases
