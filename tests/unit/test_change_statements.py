"""Changes of anything the user names (issue 45), zh + en: the sentence shape says a fact changed
("our X is now Y", "we switched our X to Y", "我们组的X现在改到Y", "我把X改成Y"), each restatement
supersedes the one before, and a question naming the subject brings the current statement in. The
sentences are not the long-history set's (bench/make_token_history.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memory.models import Memory
from memory.recall.keyword_index import BM25Index
from memory.recall.query import plan_query
from memory.recall.validity import Visible, asked_changes, changed_facts, with_asked_changes
from memory.write.supersession import claims_of, supersedes
from tests.unit.test_supersession import memory

T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("text", "claim"),
    [
        ("Our sprint review is now on Thursdays.", ("changed:sprint review", "thursdays")),
        ("My gym session is now at 7pm, after work.", ("changed:gym session", "7pm")),
        ("Our staging cluster has moved to Frankfurt.", ("changed:staging cluster", "frankfurt")),
        ("We migrated our build cache to MinIO last week.", ("changed:build cache", "minio")),
        ("I switched my password manager to Bitwarden.", ("changed:password manager", "bitwarden")),
        ("我们部门的周会现在改到周二下午了。", ("changed:周会", "周二下午")),
        ("我的工位调到了五楼。", ("changed:工位", "五楼")),
        ("我们把代码评审改成每周两次了。", ("changed:代码评审", "每周两次")),
        ("我把起床闹钟改成了六点。", ("changed:起床闹钟", "六点")),
        ("我开的车换成了一辆理想。", ("car", "理想")),
    ],
)
def test_a_change_of_a_named_subject_claims_it(text: str, claim: tuple[str, str]) -> None:
    assert claim in claims_of(text)


@pytest.mark.parametrize(
    "text",
    [
        "We want to switch our CI to GitHub Actions.",  # a plan
        "Is our sprint review now on Thursdays?",  # a question
        "We might move our staging cluster to Frankfurt.",
        "我们打算把周会改到周二。",
        "要不要把闹钟改成六点？",
        "I live in Oslo now.",  # a known attribute: only that
        "My boss moved to Berlin last spring.",  # someone else's
        "My brother's car is now a Tesla.",
        "我妹妹的工位调到了五楼。",
    ],
)
def test_plans_questions_and_known_attributes_claim_no_change(text: str) -> None:
    assert not any(k.startswith("changed:") for k, _ in claims_of(text)), claims_of(text)


@pytest.mark.parametrize(
    ("old", "new", "replaces"),
    [
        ("Our sprint review is now on Thursdays.", "Our sprint review is now on Fridays.", True),
        ("我们部门的周会现在改到周二下午了。", "我们部门的周会现在改到周四上午了。", True),
        ("Our sprint review is now on Thursdays.", "Our release train is now on Fridays.", False),
        ("我的工位调到了五楼。", "我们把周会改到周三了。", False),
    ],
)
def test_a_restatement_supersedes_the_one_before_and_no_other(old: str, new: str, replaces: bool) -> None:
    pairs = [(n, o) for n in claims_of(new) for o in claims_of(old)]
    assert any(supersedes(n, o) for n, o in pairs) is replaces, pairs


def _index(texts: list[str]) -> tuple[BM25Index, list[Memory]]:
    memories = [memory(f"m{i}", t, T0 + i * 86400) for i, t in enumerate(texts)]
    return BM25Index(memories, np.eye(len(memories), 4, dtype=np.float32)), memories


@pytest.mark.parametrize(
    ("texts", "question", "subject"),
    [
        (
            ["Our sprint review is now on Thursdays.", "Our sprint review is now on Fridays."],
            "When is our sprint review these days?",
            "changed:sprint review",
        ),
        (
            ["我们部门的周会现在改到周二下午了。", "我们部门的周会现在改到周四上午了。"],
            "我们部门现在的周会是什么时候？",
            "changed:周会",
        ),
    ],
)
def test_a_question_naming_the_subject_brings_every_statement_of_it(
    texts: list[str], question: str, subject: str
) -> None:
    index, memories = _index([*texts, "I had pasta for lunch.", "我今天去了超市。"])
    view = Visible([(index, frozenset())])
    plan = with_asked_changes(plan_query(question), view)
    assert plan.attributes == [subject]
    # neither is a candidate yet (the ranking found other memories): both come in, the newest first
    brought = changed_facts(plan, {}, view)
    assert [m.id for m in brought] == [memories[1].id, memories[0].id]


@pytest.mark.parametrize(
    "question",
    [
        "When is our release train?",
        "What did I have for lunch?",
        "我们的例会是什么时候？",
        "周二有什么安排？",
    ],
)
def test_a_question_naming_another_subject_brings_none(question: str) -> None:
    index, _ = _index(["Our sprint review is now on Thursdays.", "我们部门的周会现在改到周二下午了。"])
    view = Visible([(index, frozenset())])
    assert asked_changes(plan_query(question), view) == []
