"""Governance over every store: erasure of a user (`erasure`), the streamed export (`export`), the
append-only audit log (`audit`) and the ledger of the model use each user caused (`usage`).

The top floor with `chat`: may import `service`, `session`, `outbox`, `longterm` and the leaves.
"""
