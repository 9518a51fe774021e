"""A user's whole set read from Chroma in pages (`get_with_vectors`, issue 45): one call for a 10M-token
user outlasted the client's timeout, so no worker could build that user's index. Real Chroma."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from app.composition import chroma_client_factory
from app.settings import Settings
from memory import ChromaLongTermStore
from memory.longterm import chroma
from memory.longterm.ids import content_hash
from memory.models import Memory

pytestmark = pytest.mark.integration

TEXTS = [
    "I moved to Lisbon last March.",
    "我上个三月搬到了杭州。",
    "My dentist is Dr. Silva.",
    "我的牙医姓王。",
    "The deploy window is Tuesday 14:00.",
    "部署窗口改到周二下午两点。",
    "I drive a red Volvo.",
    "我开一辆红色的沃尔沃。",
    "My sister lives in Porto.",
    "我妹妹住在成都。",
    "Always answer in bullet points.",
]


def memories(user: str) -> list[Memory]:
    return [
        Memory(
            id=f"mem_{user}_{i:02d}",
            user_id=user,
            content=text,
            created_at=1_700_000_000.0 + i,
            session_id="s1",
            source="user",
            content_hash=content_hash(text),
        )
        for i, text in enumerate(TEXTS)
    ]


def vectors(n: int, seed: int) -> np.ndarray:
    rows = np.random.default_rng(seed).standard_normal((n, 8)).astype(np.float32)
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


class DeletingStore(ChromaLongTermStore):
    """Deletes `victim` right after the first page is read: the records after it shift by one."""

    victim: str | None = None
    calls = 0

    async def _run(self, user_id: str, op: Callable[[Any], Any]) -> Any:
        out = await super()._run(user_id, op)
        self.calls += 1
        if self.calls == 1 and self.victim is not None:
            victim, self.victim = self.victim, None
            await super()._run(user_id, lambda c: c.delete(ids=[victim]))
        return out


@pytest.fixture
def small_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chroma, "READ_PAGE", 3)


async def test_a_whole_set_is_read_in_pages_with_its_vectors(settings: Settings, small_pages: None) -> None:
    store = ChromaLongTermStore(chroma_client_factory(settings), shards=1, collection_prefix="pages")
    mine, theirs = memories("ana"), memories("bob")  # one collection: the other user's rows interleave
    for m, t, i in zip(mine, theirs, range(len(mine)), strict=True):
        await store.upsert([m, t], np.stack([vectors(len(mine), 1)[i], vectors(len(mine), 2)[i]]))
    got, rows = await store.get_with_vectors("ana")
    assert sorted(m.content for m in got) == sorted(TEXTS)  # 11 records in pages of 3
    assert {m.user_id for m in got} == {"ana"}
    want = dict(zip((m.id for m in mine), vectors(len(mine), 1), strict=True))
    assert rows.shape == (len(TEXTS), 8)
    for m, row in zip(got, rows, strict=True):
        assert np.allclose(row, want[m.id], atol=1e-6)
    some = [mine[i].id for i in (0, 3, 4, 7, 10)] + ["mem_missing"]
    picked, picked_rows = await store.get_with_vectors("ana", some)  # ids read in pages too
    assert sorted(m.id for m in picked) == sorted(some[:-1])
    assert len(picked_rows) == 5
    empty, empty_rows = await store.get_with_vectors("nobody")
    assert (empty, empty_rows.shape) == ([], (0, 0))


async def test_a_record_shifted_by_a_delete_between_pages_is_still_read(
    settings: Settings, small_pages: None
) -> None:
    store = DeletingStore(chroma_client_factory(settings), shards=1, collection_prefix="shift")
    mine = memories("cy")
    await store.upsert(mine, vectors(len(mine), 3))
    first_page, _ = await store.get_with_vectors("cy", [m.id for m in mine[:3]])
    store.calls = 0
    store.victim = first_page[0].id  # read in the first page, then deleted: the rest move up one
    got, rows = await store.get_with_vectors("cy")
    kept = {m.id for m in mine} - {first_page[0].id}
    assert kept <= {m.id for m in got}  # none of the survivors passed unread
    assert len(rows) == len(got)


class CountingStore(ChromaLongTermStore):
    """Records how many records each Chroma read of records answered (the id listing aside)."""

    answered: list[int]

    async def _run(self, user_id: str, op: Callable[[Any], Any]) -> Any:
        out = await super()._run(user_id, op)
        if isinstance(out, dict) and out.get("metadatas") is not None:
            self.answered.append(len(out["ids"]))
        return out


async def test_a_list_reads_the_whole_set_in_pages_too(settings: Settings, small_pages: None) -> None:
    """`get` (the list, delete-by-filter and export's headers) read a 58,000-memory user in one call and
    answered 503 after Chroma's read timeout, every time (the 10M-token run of issue 45)."""
    store = CountingStore(chroma_client_factory(settings), shards=1, collection_prefix="listpages")
    store.answered = []
    mine, theirs = memories("dee"), memories("eli")
    await store.upsert([*mine, *theirs], np.concatenate([vectors(len(mine), 4), vectors(len(theirs), 5)]))
    store.answered = []
    headers = await store.get("dee", include_content=False)
    assert sorted(m.id for m in headers) == sorted(m.id for m in mine)
    assert all(not m.content for m in headers)  # headers: no documents read
    assert store.answered
    assert max(store.answered) <= 3  # pages of READ_PAGE
    whole = await store.get("dee")
    assert sorted(m.content for m in whole) == sorted(TEXTS)  # 11 memories, 我 and English alike
    some = [mine[i].id for i in (1, 2, 5, 8, 9)]
    store.answered = []
    assert sorted(m.id for m in await store.get("dee", ids=some)) == sorted(some)
    assert max(store.answered) <= 3
    assert await store.get("dee", ids=[]) == []
