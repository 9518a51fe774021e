"""The user's own things in recall (memory/recall/ownership.py): which phrases a question calls the
user's, which memories say them, and that the ranking puts the user's sentence above someone else's."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import pytest

from harness.fakes import HashEmbedder
from memory.models import Memory, RecallRequest
from memory.recall.keyword_index import BM25Index
from memory.recall.ownership import OWN_CANDIDATES, own_statements, possessions_asked, says_own
from memory.recall.query import plan_query
from memory.recall.retrieval import HybridRetriever, Scope

TOP_2 = RecallRequest("", top_k=2, as_of=0.0)


def memory(mid: str, text: str, *, at: float = 0.0) -> Memory:
    return Memory(
        id=mid, user_id="u", content=text, created_at=at, session_id="s", source="user", content_hash=mid
    )


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What is the name of my dentist?", ["my dentist"]),
        ("What is my physiotherapist's name?", ["my physiotherapist"]),
        ("Who teaches my daughter the violin?", ["my daughter"]),
        ("What is my son's football coach called?", ["my son"]),  # the son is the user's
        ("How many shards does our product search cluster run?", ["our product search cluster"]),
        ("Which tool runs our on-call rotation now?", ["our on-call rotation"]),
        ("Who is our accountant this year?", ["our accountant"]),
        ("我的牙医姓什么？", ["我的牙医"]),
        ("我们的房东姓什么？", ["我们的房东"]),
        ("What did Caroline paint?", []),  # nothing of the user's
        ("Where do I live?", []),
        ("我儿子的钢琴老师姓什么？", []),  # 我儿子的…: no 我的 to read (the son is named, not possessed)
        ("李娜的牙医在哪里？", []),
    ],
)
def test_what_a_question_calls_the_users_own(question: str, asked: list[str]) -> None:
    assert possessions_asked(question) == asked
    assert plan_query(question).possessions == asked


def test_the_users_own_sentence_says_it_and_nobody_elses_does() -> None:
    mine = memory("mine", "By the way, my dentist is Dr. Takeda, and the next check-up is in the autumn.")
    assert says_own(mine, ["my dentist"])
    assert says_own(memory("zh", "顺便说一下，我的牙医是司马医生，下次复查在秋天。"), ["我的牙医"])
    assert not says_own(memory("grace", "Grace's dentist is near the old train station."), ["my dentist"])
    assert not says_own(memory("lina", "李娜的牙医在老火车站附近，她说那位医生下手很轻。"), ["我的牙医"])
    assert not says_own(memory("class", "My dentistry class starts in May."), ["my dentist"])  # whole words
    assert says_own(memory("caps", "MY DENTIST moved to Elm Street."), ["my dentist"])  # any case
    assert says_own(memory("end", "I finally called my dentist"), ["my dentist"])  # at the very end
    assert not says_own(memory("under", "See my dentist_notes file."), ["my dentist"])
    assert not says_own(
        replace(mine, source="assistant"), ["my dentist"]
    )  # the assistant's "my" is not the user's
    assert not says_own(mine, [])


def test_the_newest_sentences_saying_it_are_candidates() -> None:
    saying = [memory(f"m{i}", f"My dentist said floss ({i}).", at=float(i)) for i in range(15)]
    others = [
        memory("grace", "Grace's dentist is near the old train station.", at=99.0),
        memory("lina", "李娜的牙医在老火车站附近。", at=98.0),
        memory("mine-zh", "顺便说一下，我的牙医是司马医生。", at=97.0),
    ]
    index = BM25Index([*saying, *others])
    found = own_statements(["my dentist"], [(index, frozenset())])
    assert [m.id for m in found] == [f"m{i}" for i in range(14, 14 - OWN_CANDIDATES, -1)]
    assert [m.id for m in own_statements(["我的牙医"], [(index, frozenset())])] == ["mine-zh"]
    hidden = own_statements(
        ["my dentist"], [(index, frozenset({"m14", "m13"}))]
    )  # ids a tier must not answer for
    assert [m.id for m in hidden][:2] == ["m12", "m11"]
    assert own_statements([], [(index, frozenset())]) == []


def test_the_users_own_dentist_ranks_above_a_friends_with_more_of_the_words() -> None:
    r = HybridRetriever(cast(Any, None), HashEmbedder(), cast(Any, None))  # _rank is pure
    mine = memory("mine", "By the way, my dentist is Dr. Takeda, and the next check-up is in the autumn.")
    grace = memory("grace", "Grace's dentist is near the old train station; Grace likes her dentist.")
    plan = plan_query("What is the name of my dentist?")
    chat = memory("chat", "The weather is lovely today.")
    args = (
        {"mine": mine, "grace": grace, "chat": chat},
        {"mine": 0.30, "grace": 0.35, "chat": 0.0},
        {"mine": 3.0, "grace": 4.0, "chat": 0.0},
        set[str](),
    )
    hits = r._rank(plan, *args, TOP_2, Scope(0.0))
    assert [h.memory.id for h in hits] == ["mine", "grace"]
    assert hits[0].breakdown is not None
    assert "own" in hits[0].breakdown.boosts
    no_boost = r._rank(plan_query("What is the name of the dentist?"), *args, TOP_2, Scope(0.0))
    assert [h.memory.id for h in no_boost] == ["grace", "mine"]  # what the words alone say
