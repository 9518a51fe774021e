"""mnemo as an MCP server (the official `mcp` SDK): tools to remember, recall, list, forget and delete
memories, and resources for the user's sessions.

Every tool is a call to mnemo's public HTTP API with the caller's own token (`api.py`), so MCP
clients get exactly the API's auth, rate limit, validation, audit and errors. Two transports:
streamable HTTP at `/mcp` inside the service (`endpoint.py`, the API called in-process), and stdio
(`python -m app.mcp --token …`, the API of a running mnemo over HTTP) for desktop clients.
May import `app.http` (auth, errors) and `memory`-free helpers only; `app.main` mounts it.
"""
