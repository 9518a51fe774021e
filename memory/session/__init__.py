"""Short-term memory in Redis, per user + session: the message buffer (a sorted set), rolling summary,
recent actions, slots with their own TTLs, the turn lock and the one-transaction turn commit (`store`),
and the action/mode rules (`actions`).

May import the shared leaves (`models`, `errors`, `keys`, `locks`) and `text`; it knows nothing of
long-term memory, recall or the outbox's consumer.
"""
