"""Long-term storage: the `LongTermStore` protocol and its Chroma implementation sharded by user hash
(`chroma`), several Chroma servers behind that protocol (`routing`: each user on one server, by the
placement recorded in Redis or rendezvous hashing, `placement`) and moving users between them
(`rebalance`), which dense model embeds a user and each model's own collections (`dense_models`: a
dense model switch is a rebalance), stable memory ids (`ids`), per-user index versions and change log (`versions`), query
vectors shared between the chat path and the writer (`shared_vectors`) and deletion tombstones
(`tombstones`).

May import the shared leaves, `text` and `embedding`; never `recall`, `write` or anything above them.
"""
