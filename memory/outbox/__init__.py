"""The outbox: chat turns handed from the API to the long-term writers through Redis Streams, one per
partition of users (`stream`: append in the turn's commit, backpressure, a user's entries for erase and
export), the writers' loop (`worker`: read, write, acknowledge only once durable, claim what a dead
writer left) and how any number of writers share the partitions (`leases`).

May import the shared leaves, `redis_client` and `locks`; what a consumed entry becomes is the caller's
callback.
"""
