"""HTTP plumbing shared by every route: the error envelope and its handlers (`errors`), request context
middleware, JWT auth, rate limiting, request/response schemas and the one-line `request.state`
dependencies (`deps`), plus the request-bound audit writer and the streamed export encoder.

May import `memory`, `monitoring` and `app.settings`; never `app.routes`, `app.composition`, `app.lifespan` or `app.cli`.
"""
