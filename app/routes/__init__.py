"""HTTP routes, one module per resource (chat, sessions, memories, audit, health). Routes are thin: parse,
call the domain through a `app.http.deps` dependency, map the result.

May import `app.http`, `memory` and `monitoring`; never `app.composition`, `app.lifespan`, `app.main` or `app.cli`.
"""
