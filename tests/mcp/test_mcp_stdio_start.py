"""Issue 42: `python -m app.mcp` (MCP over stdio) starts without importing the server. It only calls
mnemo's HTTP API, yet it imported the whole `memory` package (numpy, redis, the relation extractor)
through app.http.schemas, app.http.ids and memory.service, 3-4 s before a desktop client got its
`initialize` answer. The rules its tools state are copies in app/mcp/rules.py: checked equal here. A
wrong --url is named in every tool's error, and `--help` shows the default URL.

No wall-clock assertion (shared, noisy machines): what is imported is asserted instead."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from mcp.shared.exceptions import MCPError

from app.http import forget_schemas, ids
from app.mcp import rules
from harness.services import free_port
from memory import service
from memory.relations import tags
from tests.mcp.test_mcp import ROOT, stdio_client, token

HEAVY = ("memory", "app.http", "app.settings", "numpy", "redis", "chromadb", "fastapi")


def imported_by(statement: str) -> list[str]:
    """The heavy modules a fresh interpreter has loaded after `statement`."""
    probe = (
        f"{statement}\nimport sys\n"
        f"print('\\n'.join(m for m in sorted(sys.modules) if any(m == h or m.startswith(h + '.') for h in {HEAVY!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.split()


class TestImports:
    def test_the_stdio_entry_point_imports_no_server_module(self) -> None:
        assert imported_by("import app.mcp.__main__") == []

    def test_the_tools_import_no_server_module(self) -> None:
        """What the stdio server imports once it serves: the tools, the API client, the MCP SDK."""
        assert imported_by("import app.mcp.__main__, app.mcp.tools, app.mcp.api") == []

    def test_the_probe_sees_a_heavy_import(self) -> None:
        """The probe itself can fail: importing the schemas loads the `memory` package."""
        assert "memory.service" in imported_by("import app.http.schemas")


class TestRulesAreTheServers:
    def test_constants_equal_their_sources(self) -> None:
        assert rules.ID_RULE == ids.ID_RULE
        assert rules.ID_ALPHABET == ids.ID_ALPHABET
        assert rules.ID_MAX_CHARS == ids.ID_MAX_CHARS
        assert rules.TAGS_MAX == ids.TAGS_MAX
        assert rules.TAG_RULE == tags.TAG_RULE
        assert rules.TAG_MAX_CHARS == tags.TAG_MAX_CHARS
        assert dict(tags.CATEGORIES) == rules.TAG_CATEGORIES
        assert rules.FORGET_MIN_RELEVANCE == service.FORGET_MIN_RELEVANCE
        assert rules.FORGET_CAP == service.FORGET_CAP
        assert rules.FORGET_MIN_SIMILARITY == forget_schemas.FORGET_MIN_SIMILARITY
        assert rules.FORGET_LOWEST_RELEVANCE == forget_schemas.FORGET_LOWEST_RELEVANCE

    @pytest.mark.parametrize(
        "value",
        ["alice", "a.b@c|d+e:f_g-h..", "x" * 128, "x" * 129, "", ".", "..", "a/b", "a b", "a\n", "用户", "é"]
        + ["{a}", "%2E", "u-张三", "s1\u200b"],
    )
    def test_the_id_check_and_encoding_agree_with_the_server(self, value: str) -> None:
        assert rules.is_valid_id(value) == ids.is_valid_id(value)
        assert rules.path_segment(value) == ids.path_segment(value)


class TestCommandLine:
    def test_help_names_the_default_url(self) -> None:
        env = {k: v for k, v in os.environ.items() if k not in {"MNEMO_URL", "MNEMO_TOKEN"}}
        done = subprocess.run(
            [sys.executable, "-m", "app.mcp", "--help"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert "default: http://127.0.0.1:8000" in " ".join(done.stdout.split())


async def test_a_wrong_url_is_named_by_every_tool() -> None:
    """Real stdio, nothing listening at --url: each tool's error says where it looked (zh and en)."""
    url = f"http://127.0.0.1:{free_port()}"
    async with stdio_client(url, token("alice")) as client:
        for tool, arguments in (
            ("list_memories", {}),
            ("recall", {"query": "我住在哪里？ where do I live"}),
            ("remember", {"content": "我住在杭州 I live in Hangzhou"}),
        ):
            with pytest.raises(MCPError) as err:
                await client.call_tool(tool, arguments)
            assert err.value.code == 503
            assert err.value.data["error"] == "mnemo_unreachable"
            assert f"mnemo at {url} did not answer (ConnectError)" in err.value.message, err.value.message
            assert f"mnemo 在 {url} 没有响应" in err.value.message
