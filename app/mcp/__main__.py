"""mnemo's MCP server over stdio, for desktop clients (Claude Desktop and others):

    python -m app.mcp --token <JWT> [--url http://127.0.0.1:8000]

It talks to a running mnemo over its HTTP API with that token (also read from MNEMO_TOKEN), so it
needs no secret, model or database of its own. Logs go to stderr: stdout is the protocol.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

import httpx

from app.mcp.api import MnemoApi, token_problem, token_subject
from monitoring.logging import configure_logging

if TYPE_CHECKING:
    from mcp.server.mcpserver import Context

DEFAULT_URL = "http://127.0.0.1:8000"


async def serve(url: str, token: str) -> None:
    # the MCP SDK only once the arguments are read: `--help` and a missing token answer at once
    from app.mcp.tools import build_server

    async with httpx.AsyncClient(base_url=url.rstrip("/"), timeout=httpx.Timeout(60, connect=5)) as client:
        api = MnemoApi(client, token, token_subject(token))

        def api_of(_ctx: Context) -> MnemoApi:
            return api

        await build_server(api_of).run_stdio_async()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m app.mcp", description=__doc__.splitlines()[0])
    parser.add_argument("--token", default=os.environ.get("MNEMO_TOKEN"), help="a mnemo JWT (or MNEMO_TOKEN)")
    parser.add_argument(
        "--url",
        default=os.environ.get("MNEMO_URL", DEFAULT_URL),
        help="mnemo's base URL, where it serves its HTTP API (or MNEMO_URL; default: %(default)s)",
    )
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("give --token (or set MNEMO_TOKEN)")
    configure_logging(args.log_level)
    if (problem := token_problem(token_subject(args.token))) is not None:
        # said on stderr and by every tool call: a desktop client shows a tool's error, seldom our stderr
        sys.stderr.write(problem + "\n")
    import anyio

    anyio.run(serve, args.url, args.token)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
