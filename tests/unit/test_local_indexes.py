"""The writer's choice between its in-process index and the store (memory/write/local_index.py): a user
past the limit is not built or brought forward again until a recheck of the store's count says so."""

from __future__ import annotations

import numpy as np

from memory.models import Memory
from memory.recall.keyword_index import BM25Index
from memory.write.local_index import LocalIndexes

TEXTS = [
    "I live in Lisbon.",
    "我住在杭州。",
    "My dentist is Dr. Silva.",
    "我的牙医姓王。",
    "I drive a red Volvo.",
]


def index_of(n: int) -> BM25Index:
    memories = [
        Memory(
            id=f"m{i}",
            user_id="u",
            content=TEXTS[i % len(TEXTS)],
            created_at=1000.0 + i,
            session_id="s",
            source="user",
            content_hash=f"h{i}",
        )
        for i in range(n)
    ]
    return BM25Index(memories, np.ones((n, 4), dtype=np.float32) if n else None)


class User:
    """What the writer's process knows of one user: their index as recall would build it, the store's count."""

    def __init__(self, memories: int) -> None:
        self.memories = memories
        self.built = 0
        self.counted = 0
        self.released: list[str] = []
        self.now = 0.0

    async def index(self, user_id: str) -> BM25Index:
        self.built += 1
        return index_of(self.memories)

    async def count(self, user_id: str) -> int:
        self.counted += 1
        return self.memories

    def local(self, limit: int) -> LocalIndexes:
        return LocalIndexes(
            self.index,
            self.count,
            in_process_max=limit,
            release=self.released.append,
            recheck_seconds=60,
            clock=lambda: self.now,
        )


async def test_a_user_within_the_limit_is_checked_against_the_index() -> None:
    user = User(3)
    local = user.local(limit=3)
    for _ in range(3):
        found = await local.get("u")
        assert found is not None
        assert len(found) == 3
    assert (user.built, user.counted, user.released) == (3, 0, [])


async def test_a_user_past_the_limit_is_left_to_the_store_until_a_recheck_says_otherwise() -> None:
    user = User(5)
    local = user.local(limit=3)
    assert await local.get("u") is None
    assert user.released == ["u"]  # dropped from this process at once
    for _ in range(5):  # later rounds neither build nor bring forward the index
        assert await local.get("u") is None
    assert (user.built, user.counted) == (1, 0)

    user.now = 61.0  # a recheck: still past the limit, asked of the store's count only
    assert await local.get("u") is None
    assert (user.built, user.counted) == (1, 1)
    user.now = 100.0
    assert await local.get("u") is None
    assert user.counted == 1  # the next recheck is a minute after the last

    user.memories = 2  # deletes brought the user under the limit
    user.now = 130.0
    found = await local.get("u")
    assert found is not None
    assert len(found) == 2
    assert (user.built, user.counted) == (2, 2)


async def test_an_empty_index_an_index_without_vectors_and_no_index() -> None:
    empty = User(0)
    found = await empty.local(limit=3).get("u")
    assert found is not None  # a new user: nothing to check against, the index says so at once
    assert not len(found)

    async def without_vectors(user_id: str) -> BM25Index:
        return BM25Index(index_of(2).parts()[0], None)

    calls = 0

    async def count(user_id: str) -> int:
        nonlocal calls
        calls += 1
        return 2

    local = LocalIndexes(without_vectors, count, in_process_max=3)
    assert await local.get("u") is None  # the near-duplicate check needs vectors: the store answers
    assert await local.get("u") is None
    assert calls == 0  # not remembered as large: asked of the index each time
    assert await LocalIndexes(None, count, in_process_max=3).get("u") is None  # no index at all
