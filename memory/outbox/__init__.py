"""The outbox: chat turns handed from the API to the long-term writer through a Redis Stream with one
consumer group (`stream`: `Outbox` appends and reads, `OutboxWorker` consumes and acknowledges only after
the write is durable).

May import the shared leaves only; what a consumed entry becomes is the caller's callback.
"""
