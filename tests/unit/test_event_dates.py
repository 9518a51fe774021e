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


def test_a_month_or_a_day_written_with_its_year_keeps_that_year() -> None:
    asked = datetime(2026, 12, 1, tzinfo=UTC)
    assert plan_query("What did I do in May 2023?", now=asked.timestamp()).month == "2023-05"
    assert plan_query("我2023年5月做了什么？", now=asked.timestamp()).month == "2023-05"
    assert "2023-05-05" in entities("I moved to Boston on May 5, 2023.", now=asked)
    assert "2023-05-05" in entities("On 5 May 2023 I moved to Boston.", now=asked)
    assert "2023-05-05" in entities("我2023年5月5日搬到了波士顿。", now=asked)
    # "may" the verb is no month
    assert plan_query("I may 2023 things", now=asked.timestamp()).month is None


@pytest.mark.parametrize(
    ("question", "month", "period", "bound"),
    [
        ("我2020年以前住在哪里？", None, "2020-01/2020-12", "before"),
        ("Where did I live before 2020?", None, "2020-01/2020-12", "before"),
        ("Prior to 2019, where did I work?", None, "2019-01/2019-12", "before"),
        ("What did I do before May 2023?", "2023-05", None, "before"),
        ("去年以前我在哪工作？", None, "2025-01/2025-12", "before"),
        ("2023年以后我换过工作吗？", None, "2023-01/2023-12", "after"),
        ("Where did I go after March?", "2026-03", None, "after"),
        ("5月之后我去过哪里？", "2026-05", None, "after"),
        ("2020年以来我换过几次工作？", None, "2020-01/2020-12", "since"),
        ("从2020年开始我养了什么宠物？", None, "2020-01/2020-12", "since"),
        ("自2020年以后我住在哪里？", None, "2020-01/2020-12", "since"),
        ("What jobs have I had since 2020?", None, "2020-01/2020-12", "since"),
        ("Starting in 2021, what did I learn?", None, "2021-01/2021-12", "since"),
        # the time itself, around it, or a range: no bound
        ("What did I do in 2020?", None, "2020-01/2020-12", None),
        ("2020年我在哪？", None, "2020-01/2020-12", None),
        ("我3月前后去了哪里？", "2026-03", None, None),
        ("我2019年到2021年在哪工作？", None, "2019-01/2021-12", None),
        ("Where did I work from 2019 to 2021?", None, "2019-01/2021-12", None),
        ("我2023年3月到5月在哪？", None, "2023-03/2023-05", None),
        ("What did I do between March and May 2023?", None, "2023-03/2023-05", None),
        ("我去年11月到今年2月在哪？", None, "2025-11/2026-02", None),
        ("From November 2022 to February 2023, where was I?", None, "2022-11/2023-02", None),
    ],
)
def test_a_time_open_on_one_side_or_a_range_is_planned(
    question: str, month: str | None, period: str | None, bound: str | None
) -> None:
    plan = plan_query(question, now=datetime(2026, 12, 1, tzinfo=UTC).timestamp())
    assert (plan.month, plan.period, plan.bound) == (month, period, bound)
    assert plan.anchor is None  # a time, not an event
    if bound == "before":
        assert plan.wants_past  # what the later facts superseded is what it asks about


def test_what_is_no_range_stays_what_it_was() -> None:
    asked = datetime(2026, 12, 1, tzinfo=UTC).timestamp()
    for text in ["我等了2到3个月", "from 3 to 5 pm", "2 to 3 weeks", "from Monday to Friday"]:
        plan = plan_query(text, now=asked)
        assert (plan.month, plan.period) == (None, None), text


@pytest.mark.parametrize(
    ("question", "day", "bound"),
    [
        ("我昨天去了哪里？", "2026-11-30", None),
        ("What did I do yesterday?", "2026-11-30", None),
        ("我上周五干嘛了？", "2026-11-27", None),  # 1 December 2026 is a Tuesday
        ("What did I do last Friday?", "2026-11-27", None),
        ("3天前我说了什么？", "2026-11-28", None),
        ("我大前天去了哪里？", "2026-11-28", None),
        ("What did I do the day before yesterday?", "2026-11-29", None),
        ("梅兰妮在2023年10月13日向卡罗琳展示了什么画作？", "2023-10-13", None),
        ("What painting did Melanie show on October 13, 2023?", "2023-10-13", None),
        ("Where did I live before May 5, 2023?", "2023-05-05", "before"),
        # today, a day to come, and last week (a week: below) name no day
        ("我今天该做什么？", None, None),
        ("What should I do tomorrow?", None, None),
        ("我周五要做什么？", None, None),
        ("我上周去了哪里？", None, None),
        ("What did I do last week?", None, None),
    ],
)
def test_a_question_naming_a_past_day_plans_it(question: str, day: str | None, bound: str | None) -> None:
    plan = plan_query(question, now=datetime(2026, 12, 1, 9, tzinfo=UTC).timestamp())
    assert (plan.day, plan.bound) == (day, bound)
    assert plan.month is None


@pytest.mark.parametrize("question", ["我上周去了哪里？", "上个星期我做了什么？", "What did I do last week?"])
def test_last_week_is_the_calendar_week_before(question: str) -> None:
    tuesday = datetime(2026, 12, 1, 9, tzinfo=UTC).timestamp()
    assert plan_query(question, now=tuesday).week == "2026-11-23"  # Monday to Sunday 29 November
    sunday = datetime(2026, 12, 6, 23, tzinfo=UTC).timestamp()
    assert plan_query(question, now=sunday).week == "2026-11-23"
    assert plan_query("我上周五去了哪里？", now=tuesday).week is None  # a day of it
