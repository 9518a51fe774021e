"""Event dates (issue 28): relative dates in what was said resolved from the message's own time at
write (days, months, seasons and years), and the month-first rule reading them."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.recall.query import plan_query
from memory.recall.ranking import period_range, span_of, tells_of
from memory.write.scoring import entities

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday (LoCoMo's first session)


def test_entities_resolve_relative_dates_from_when_it_was_said() -> None:
    assert "2023-05-07" in entities("I went to a LGBTQ support group yesterday.", now=SAID)
    assert "2023-05-07" in entities("我昨天去了LGBTQ互助小组。", now=SAID)
    assert "2023-05-05" in entities("Last Friday I ran a charity race.", now=SAID)
    assert "2023-05-05" in entities("上周五我参加了一场慈善赛跑。", now=SAID)
    assert "2023-04" in entities("上个月我报了陶艺课。", now=SAID)
    assert "2023-04" in entities("I signed up for a pottery class last month.", now=SAID)


def test_without_a_time_the_clock_is_used() -> None:
    assert "2023-05-07" not in entities("I went to a support group yesterday.")


def test_entities_keep_a_season_or_a_year_as_the_months_it_spans() -> None:
    assert "2022-06/2022-08" in entities("去年夏天我在青岛学会了冲浪。", now=SAID)
    assert "2022-06/2022-08" in entities("Last summer I learned to sail in Maine.", now=SAID)
    assert "2022-01/2022-12" in entities("I ran my first marathon last year.", now=SAID)


def test_an_event_date_spans_its_day_month_or_period_and_nothing_else_does() -> None:
    day = span_of("2023-05-07")
    assert day is not None
    assert day[1] - day[0] == 86400
    assert day[0] == datetime(2023, 5, 7, tzinfo=UTC).timestamp()
    assert span_of("2023-04") == (
        datetime(2023, 4, 1, tzinfo=UTC).timestamp(),
        datetime(2023, 5, 1, tzinfo=UTC).timestamp(),
    )
    assert span_of("2023-06/2023-08") == period_range("2023-06/2023-08")
    assert span_of("2026-02-30") == span_of("2026-02")  # a day its month has not: the month
    for other in ("Caroline", "15:00", "A12345", "2023-13", "2023-05-07/2023-06"):
        assert span_of(other) is None


def test_a_memory_tells_of_a_period_when_one_of_its_dates_overlaps_it() -> None:
    summer = period_range("2023-06/2023-08")
    assert tells_of(("Caroline", "2023-07-14"), summer)  # a day in it
    assert tells_of(("2023-08",), summer)  # a month in it
    assert tells_of(("2023-01/2023-12",), summer)  # a year around it
    assert tells_of(("2023-05/2023-06",), summer)  # overlapping its first month
    assert not tells_of(("2023-05-31", "2023-09", "2022-06/2022-08"), summer)  # each just outside


def test_a_question_naming_a_season_or_a_year_plans_its_period() -> None:
    asked = datetime(2026, 12, 1, tzinfo=UTC).timestamp()
    assert plan_query("我去年夏天学了什么运动？", now=asked).period == "2025-06/2025-08"
    assert plan_query("What did I learn last summer?", now=asked).period == "2026-06/2026-08"
    assert plan_query("What did I do in 2022?", now=asked).period == "2022-01/2022-12"
    named = plan_query("我5月去了哪里？", now=asked)
    assert named.month == "2026-05"
    assert named.period is None


@pytest.mark.parametrize(
    ("question", "anchor"),
    [
        ("我搬家之前在哪里工作？", ("before", "搬家")),
        ("搬到杭州之前我住在哪里？", ("before", "搬到杭州")),
        ("我结婚以后住在哪里？", ("after", "结婚")),
        ("我演讲之前很紧张吗？", ("before", "演讲")),  # a speech is an event; "what I said" is not
        ("Where did I work before I moved?", ("before", "I moved")),
        ("What changed since my son was born?", ("after", "my son was born")),
        # a time itself, or no event: the month rule's or nothing
        ("三年以前我在哪里？", None),
        ("5月之前我去了哪里？", None),
        ("我以前在哪里工作？", None),
        ("What did I do before 2020?", None),
        ("What did I do before?", None),
        # the conversation itself is no event
        ("你还记得我之前说过什么吗？", None),
        ("上次之后你想起来了吗？", None),
        ("What did I tell you before I said goodbye?", None),
    ],
)
def test_a_time_named_by_another_event_is_planned_with_the_words_that_say_it(
    question: str, anchor: tuple[str, str] | None
) -> None:
    plan = plan_query(question, now=datetime(2026, 12, 1, tzinfo=UTC).timestamp())
    assert plan.anchor == anchor
    if anchor is not None:  # left out of the ranking once a memory dates the event
        assert anchor[1] in plan.anchor_words
        assert plan.anchor_words in question
