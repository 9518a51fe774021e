"""Relation memory (issue 26): the entities a user's memories name and how they connect.

Owns the rule-based zh/en extraction of entities (people and the user's own family, places,
organisations, products, documents and ids, dates and events) and of relations between them and the
user (`submitted`, `approved`, `lives_in`, `works_at`, `friend_of`, `recommended`, ...), with the time
said and the memory each came from (`extract.py`, pure); who says what of whom in a message, clause by
clause, and whether as a fact (`speech.py`, pure: a husband's employer is his; a question or a wish
states nothing); aliases and cross-lingual identity (杭州 = Hangzhou, "my sister" = Anna, Mel = Melanie),
merges the user said, and relation validity (`graph.py`, pure); the user's own entity, their profile,
with zh/en tags and a confidence per entry (`profile.py`, pure); the per-user store under the user's
Redis hash tag, merges and splits included (`store.py`); and the link finder recall is given
(`links.py`, implementing `memory.recall.links.LinkFinder`). It may import the floors below it (text,
keys, redis_client, recall, write); the service wires it, and nothing below the service imports it.
"""
