"""mnemo's HTTP surface and composition root.

`main` (create_app), `lifespan` (builds and closes every client once) and `settings` are the composition
root; `http` is the plumbing every route shares; `routes` one module per resource; `clients` the
outside services (upstream LLM); `cli` the command-line entry points.
"""

__version__ = "0.1.0"  # the one place the version is written: pyproject.toml, the API and MCP read it here
