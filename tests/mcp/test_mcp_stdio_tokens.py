"""Issue 39: the stdio MCP server names what is wrong with the token it was started with. A garbage
token made the process exit (the desktop client showed only "Connection closed"); a token whose `sub`
is no user id blamed a `user_id` argument the caller never gave. Real server (uvicorn), real stdio."""

from __future__ import annotations

import jwt
import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import TEST_SECRET
from tests.mcp.test_mcp import served, stdio_client, token  # noqa: F401 - `served` is a fixture

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("bearer", "says"),
    [
        ("garbage", "not a mnemo token"),
        (jwt.encode({"sub": ".", "exp": 4_000_000_000}, TEST_SECRET, algorithm="HS256"), "subject (sub) '.'"),
        (jwt.encode({"sub": "../admin", "exp": 4_000_000_000}, TEST_SECRET, algorithm="HS256"), "no user id"),
    ],
)
async def test_a_bad_token_is_named_by_every_tool(served: str, bearer: str, says: str) -> None:  # noqa: F811
    async with stdio_client(served, bearer) as client:
        for tool, arguments in (("list_memories", {}), ("recall", {"query": "我住在哪里？ where do I live"})):
            with pytest.raises(MCPError) as err:
                await client.call_tool(tool, arguments)
            assert err.value.code == 401
            assert says in err.value.message, err.value.message
            assert "user_id must be" not in err.value.message


async def test_a_bad_token_with_a_named_user_is_the_apis_401(served: str) -> None:  # noqa: F811
    async with stdio_client(served, "garbage") as client:
        with pytest.raises(MCPError) as err:
            await client.call_tool("list_memories", {"user_id": "alice"})
    assert err.value.code == 401
    assert err.value.data["error"] == "invalid_token"


async def test_a_good_token_still_works(served: str) -> None:  # noqa: F811
    async with stdio_client(served, token("stdio-ok")) as client:
        result = await client.call_tool("list_memories", {})
    assert not result.is_error
