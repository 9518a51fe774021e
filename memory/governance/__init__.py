"""Governance over every store: erasure of a user (`erasure`), the streamed export (`export`) and the
append-only audit log (`audit`).

The top floor with `chat`: may import `service`, `session`, `outbox`, `longterm` and the leaves.
"""
