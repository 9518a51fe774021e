"""An index's derived views (memory/recall/index_views.py) carried across writes are the views a rebuild
of the new index makes, in the same order: by claim key, chains, own memories newest first (equal
times in the index's order), and the runs a rule picks (a category, "my dentist" / "我的牙医")."""

from __future__ import annotations

import dataclasses
import random

import pytest

from memory.models import Memory
from memory.recall.index_views import _EVERY, RULES_KEPT
from memory.recall.keyword_index import BM25Index
from memory.recall.ownership import own_statements, says_own
from memory.recall.validity import Visible, category_statements, states_category

TEXTS = [
    "My dentist is Dr. Takeda near the station",
    "Grace's dentist moved to Porto last year",
    "我的牙医姓林，在老火车站附近",
    "李娜的牙医在杭州",
    "I live in Lisbon now",
    "我现在住在杭州",
    "We deploy on Thursdays",
    "周末我喜欢拉大提琴",
]
FACTS = [
    (),
    (("residence", "lisbon"),),
    (("residence", "杭州"),),
    (("car", "toyota"),),
    (("hobby", "cello"),),
]


def memory(i: int, rng: random.Random, ids: list[str]) -> Memory:
    return Memory(
        id=f"m{i}",
        user_id="u",
        content=rng.choice(TEXTS),
        created_at=float(rng.randint(0, 12)),  # many equal times: ties keep the index's order
        session_id="s",
        source=rng.choice(["user", "user", "assistant"]),
        content_hash=f"h{i}",
        facts=rng.choice(FACTS),
        superseded_by=rng.choice([None, None, *ids[-3:]]) if ids else None,
    )


def views_of(index: BM25Index) -> tuple[object, ...]:
    """Every view, read (built on first use) in a form compared by value."""
    v = index.views
    home = ("category", ("home",))
    return (
        {k: [m.id for m in ms] for k, ms in v.by_fact().items()},
        v.chains(),
        [m.id for m in v.users_newest_first()],
        [m.id for m in v.newest_where(home, lambda m: states_category(m, ["home"]))],
        [m.id for m in v.with_fact_keys(["residence", "car"])],
        [m.id for m in category_statements(["home", "hobby"], Visible([(index, set())]))],
        [m.id for m in own_statements(["my dentist", "我的牙医"], [(index, set())])],
    )


@pytest.mark.parametrize("seed", range(8))
def test_views_carried_across_writes_are_a_rebuilds(seed: int) -> None:
    rng = random.Random(seed)
    ids: list[str] = []
    mems = []
    for i in range(40):
        mems.append(memory(i, rng, ids))
        ids.append(f"m{i}")
    fixed = [
        dataclasses.replace(mems[0], id="own", content=TEXTS[0], source="user", facts=(), created_at=99.0),
        dataclasses.replace(
            mems[0], id="cello", content=TEXTS[7], source="user", facts=(("hobby", "cello"),), created_at=99.0
        ),
    ]
    index = BM25Index([*fixed, *mems])
    views_of(index)  # built: what follows is carried
    n = 40
    for _ in range(6):
        present = list(index.memories)
        others = [mid for mid in present if mid not in ("own", "cello")]
        deleted = rng.sample(others, rng.randint(0, 4))
        replaced = [
            dataclasses.replace(
                index.memories[mid], superseded_by=rng.choice(present), created_at=float(rng.randint(0, 12))
            )
            for mid in rng.sample(others, 2)
        ]
        added = []
        for _ in range(rng.randint(1, 5)):
            added.append(memory(n, rng, present))
            n += 1
        index = index.updated([*replaced, *added], None, deleted)
        assert _EVERY in index.views._runs  # carried, not rebuilt
        assert index.views._by_fact is not None
        rebuilt = BM25Index(list(index.memories.values()))
        assert views_of(index) == views_of(rebuilt)
    category, own = views_of(index)[5:]
    assert isinstance(category, list)
    assert isinstance(own, list)
    assert "cello" in category  # the runs compared above were not empty
    assert "own" in own


def test_rules_kept_are_bounded_and_a_write_never_changes_the_index_it_was_made_from() -> None:
    rng = random.Random(1)
    mems = [memory(i, rng, []) for i in range(30)]
    index = BM25Index(mems)
    for k in range(RULES_KEPT + 5):
        index.views.newest_where(("phrase", k), lambda m: True)
    assert len(index.views._runs) == RULES_KEPT
    before = [
        m.id for m in index.views.newest_where(("own", "my dentist"), lambda m: says_own(m, ["my dentist"]))
    ]
    extra = dataclasses.replace(
        mems[0], id="new", content="my dentist is Dr. Wu", source="user", created_at=99.0
    )
    later = index.updated([extra], None, [])
    assert [m.id for m in later.views.newest_where(("own", "my dentist"), lambda m: False)][0] == "new"
    assert [m.id for m in index.views.newest_where(("own", "my dentist"), lambda m: False)] == before
