"""The MCP server: tools and resources over mnemo's API (`MnemoApi`). Descriptions are English with
Chinese examples; a refused call is an MCP error whose `code` is the HTTP status mnemo answered with
and whose `data.error` is mnemo's error code (`forbidden`, `validation_error`, `rate_limited`, ...).
The tools live in `memory_tools` and `relation_tools`, what they share in `common`."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from app import __version__
from app.mcp import memory_tools, relation_tools
from app.mcp.common import ApiOf, call

INSTRUCTIONS = """mnemo is the user's long-term memory. Call `recall` before answering anything that may
depend on what the user said before (where they live, their preferences, their projects), and
`remember` when they tell you something worth keeping. Both work in Chinese and English:
recall("我住在哪个城市？") finds "I live in Hangzhou" and the other way round when the words overlap.
`forget` previews first: show the user what it lists, and forget for good only when they agree, with the
count and the confirmation code that preview gave."""


def build_server(api_of: ApiOf) -> MCPServer:
    """The tools and resources; `api_of` gives the API client of the call's caller (per HTTP request,
    or the one stdio client)."""
    server: MCPServer = MCPServer("mnemo", instructions=INSTRUCTIONS, version=__version__)
    memory_tools.register(server, api_of)
    relation_tools.register(server, api_of)
    _session_summary(server, api_of)
    return server


def _session_summary(server: MCPServer, api_of: ApiOf) -> None:
    @server.resource(
        "mnemo://sessions/{session_id}/summary",
        name="session_summary",
        description="One session's rolling summary and mode, e.g. mnemo://sessions/s1/summary (会话摘要).",
        mime_type="application/json",
    )
    async def session_summary(session_id: str, ctx: Context) -> dict[str, Any]:
        api = api_of(ctx)
        state = await call(api.session(api.user_id, session_id))
        summary = state.get("summary") or {}
        return {
            "session_id": session_id,
            "summary": summary.get("summary"),
            "last_update": summary.get("last_update"),
            "mode": state.get("mode"),
            "messages_in_buffer": len(state.get("buffer", [])),
        }
