"""The token-sized long-history generator (issue 45): deterministic, sized, evidence marked."""

from __future__ import annotations

from typing import Any

import pytest

from bench.make_token_history import PARTS, build, digest, tokens


@pytest.fixture(scope="module")
def small() -> dict[str, Any]:
    return build(60_000, seed=7)


def _turns(user: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["id"]: t for s in user["sessions"] for t in s["turns"]}


def test_the_same_seed_gives_the_same_set_and_another_seed_another(small: dict[str, Any]) -> None:
    assert digest(build(60_000, seed=7)) == digest(small)
    assert digest(build(60_000, seed=8)) != digest(small)


def test_tokens_count_chinese_characters_and_english_words() -> None:
    assert tokens("我住在杭州") == 5
    assert tokens("I live in Lisbon now") == 7  # 5 words x 4/3
    assert tokens("我在 Lisbon 上班") == 4 + 1


def test_the_set_is_about_its_size_in_long_turns_of_both_languages(small: dict[str, Any]) -> None:
    turns = list(_turns(small).values())
    assert 0.9 * 60_000 <= small["tokens"] <= 1.25 * 60_000
    assert all(1900 <= len(t["content"]) <= 2600 for t in turns)
    assert {s["language"] for s in small["sessions"]} == {"en", "zh"}
    bigger = build(240_000, seed=7)
    assert 3.5 * len(turns) <= len(_turns(bigger)) <= 4.5 * len(turns)


def test_every_question_has_marked_evidence_that_holds_its_answer(small: dict[str, Any]) -> None:
    turns = _turns(small)
    for q in small["questions"]:
        assert q["evidence"], q
        for tid in q["evidence"]:
            assert turns[tid]["has_answer"] is True
            assert q["answer"] in turns[tid]["content"]
    marked = {tid for tid, t in turns.items() if t.get("has_answer")}
    named = {tid for q in small["questions"] for tid in q["evidence"] + q["stale"]}
    assert marked == named


def test_changed_facts_keep_only_the_latest_statement_as_evidence(small: dict[str, Any]) -> None:
    order = list(_turns(small))
    changed = [q for q in small["questions"] if q["question_type"] == "changed"]
    assert {q["language"] for q in changed} == {"en", "zh"}
    for q in changed:
        assert len(q["stale"]) >= 4
        assert all(order.index(s) <= order.index(q["evidence"][0]) for s in q["stale"])


def test_preferences_are_stated_once_early_in_both_languages(small: dict[str, Any]) -> None:
    order = list(_turns(small))
    prefs = [q for q in small["questions"] if q["question_type"] == "preference"]
    assert any("bullet points" in q["answer"] for q in prefs)
    assert any("回答请一律用要点列出" in q["answer"] for q in prefs)
    for q in prefs:
        assert order.index(q["evidence"][0]) < 0.2 * len(order)


def test_questions_cover_every_part_with_the_same_probes_at_every_size(small: dict[str, Any]) -> None:
    assert {q["part"] for q in small["questions"]} == set(PARTS)
    bigger = build(240_000, seed=7)
    assert [q["question"] for q in bigger["questions"]] == [q["question"] for q in small["questions"]]
    assert [q["part"] for q in bigger["questions"]] == [q["part"] for q in small["questions"]]
