"""Event dates (issue 28): relative dates in what was said resolved from the message's own time at
write, and the month-first rule reading them."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.recall.ranking import event_months
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


def test_event_months_are_the_months_of_dates_and_months_only() -> None:
    found = event_months(("2023-05-07", "2023-04", "Caroline", "15:00", "A12345", "2023-13"))
    assert found == frozenset({"2023-05", "2023-04"})
