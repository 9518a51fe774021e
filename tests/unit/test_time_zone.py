"""`TIME_ZONE` (issue 28): a deployment's users live in one time zone, and "昨天", "last week" and "3月"
are their calendar's, at write and in questions, not UTC's."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from pydantic import ValidationError

from app.settings import Settings, StartError, load_settings
from memory.models import Message
from memory.outbox.stream import OutboxEntry
from memory.recall.query import plan_query
from memory.recall.ranking import day_range, month_range, span_of, tells_of
from memory.text.zones import known_zone, name_of, zone_of
from memory.write.scoring import entities
from tests.tz_names import database_entries

SHANGHAI = ZoneInfo("Asia/Shanghai")
BERLIN = ZoneInfo("Europe/Berlin")
# 01:00 on Sunday 21 June 2026 in Shanghai is still Saturday 20 June in UTC
EARLY_MORNING = datetime(2026, 6, 20, 17, 0, tzinfo=UTC).timestamp()


def z(year: int, month: int, day: int, hour: int = 0, zone: ZoneInfo = SHANGHAI) -> float:
    return datetime(year, month, day, hour, tzinfo=zone).timestamp()


@pytest.mark.parametrize("name", ["Asia/Shanghai", "Europe/Berlin", "UTC", "America/New_York"])
def test_an_iana_name_is_a_time_zone(name: str) -> None:
    settings = Settings(_env_file=None, auth_jwt_secret="k" * 48, time_zone=name)
    assert settings.zone == ZoneInfo(name)


@pytest.mark.parametrize("name", ["Beijing", "Mars/Olympus_Mons", "../../etc/passwd", "", "UTC+8"])
def test_anything_else_stops_the_start_with_the_names_it_wants(name: str) -> None:
    with pytest.raises(ValidationError, match="IANA time zone name"):
        Settings(_env_file=None, auth_jwt_secret="k" * 48, time_zone=name)


def test_a_day_and_a_month_are_the_zones_calendar() -> None:
    assert day_range("2026-06-21", SHANGHAI) == (z(2026, 6, 21), z(2026, 6, 22))
    assert month_range("2026-06", SHANGHAI) == (z(2026, 6, 1), z(2026, 7, 1))
    # a day the clocks change is 23 hours long in Berlin
    start, end = day_range("2026-03-29", BERLIN)
    assert end - start == 23 * 3600
    start, end = day_range("2026-03-23", BERLIN, days=7)  # the week holding that day
    assert end - start == 7 * 24 * 3600 - 3600
    # UTC stays the default
    assert span_of("2026-06-21") == day_range("2026-06-21", UTC)
    # a memory said at 01:00 on the 21st in Shanghai, telling of the 20th, tells of the 20th there
    assert tells_of(["2026-06-20"], day_range("2026-06-20", SHANGHAI), SHANGHAI)
    assert not tells_of(["2026-06-20"], day_range("2026-06-19", SHANGHAI), SHANGHAI)


@pytest.mark.parametrize(
    ("text", "zone", "day"),
    [
        ("我昨天去杭州见了客户。", SHANGHAI, "2026-06-20"),  # the day before Sunday the 21st, there
        ("我昨天去杭州见了客户。", UTC, "2026-06-19"),  # the day before Saturday the 20th
        ("Yesterday I flew to Boston.", SHANGHAI, "2026-06-20"),
        ("上周五我去了杭州。", SHANGHAI, "2026-06-12"),  # the week before the one of Sunday the 21st
        ("上周五我去了杭州。", UTC, "2026-06-12"),  # Saturday the 20th is in the same week
    ],
)
def test_a_relative_date_is_resolved_in_the_zone_it_was_said_in(text: str, zone: ZoneInfo, day: str) -> None:
    assert day in entities(text, now=datetime.fromtimestamp(EARLY_MORNING, zone))


def test_a_question_reads_its_days_in_the_zone() -> None:
    assert plan_query("我昨天去了哪里？", now=EARLY_MORNING, zone=SHANGHAI).day == "2026-06-20"
    assert plan_query("我昨天去了哪里？", now=EARLY_MORNING).day == "2026-06-19"
    # Sunday the 21st there: last week is 8 to 14 June; Saturday the 20th in UTC: the same
    assert plan_query("What did I do last week?", now=EARLY_MORNING, zone=SHANGHAI).week == "2026-06-08"
    monday_there = datetime(2026, 6, 21, 17, 0, tzinfo=UTC).timestamp()  # 01:00 Monday the 22nd
    assert plan_query("What did I do last week?", now=monday_there, zone=SHANGHAI).week == "2026-06-15"
    assert plan_query("What did I do last week?", now=monday_there).week == "2026-06-08"
    # today, there, names no day
    assert plan_query("我今天该去哪里？", now=EARLY_MORNING, zone=SHANGHAI).day is None


def test_a_stored_zone_name_is_read_back_and_an_unknown_one_is_none() -> None:
    assert zone_of("Asia/Shanghai") == SHANGHAI
    assert zone_of(None) is None
    assert zone_of("Mars/Olympus_Mons") is None  # stored by a newer database: the deployment's zone
    assert name_of(SHANGHAI) == "Asia/Shanghai"
    assert name_of(UTC) == "UTC"
    assert known_zone("UTC") == ZoneInfo("UTC")
    assert name_of(None) is None


@pytest.mark.parametrize(
    "name",
    [
        "../../etc/passwd",
        "/usr/share/zoneinfo/UTC",
        "Asia/../Europe/Berlin",  # no dot segment turns one name into another
        "Asia/./Shanghai",
        "Asia//Shanghai",
        "Asia/Shanghai\x00",
        "ＵＴＣ",  # full-width letters are not normalised into UTC
        " Asia/Shanghai",
        "a" * 65,
        "",
    ],
)
def test_a_path_a_padded_or_an_overlong_name_is_no_zone(name: str) -> None:
    with pytest.raises(ValueError, match="IANA time zone name") as err:
        known_zone(name)
    assert len(str(err.value)) < 200  # an overlong name is not echoed whole


def test_an_outbox_entry_keeps_its_time_zone() -> None:
    entry = OutboxEntry("u", "s", (Message("user", "我昨天去了杭州"),), time_zone="Asia/Shanghai")
    assert OutboxEntry.from_fields(entry.to_fields()).time_zone == "Asia/Shanghai"
    plain = OutboxEntry("u", "s", (Message("user", "hi"),))
    assert "time_zone" not in plain.to_fields()  # entries written before it read as they were
    assert OutboxEntry.from_fields(plain.to_fields()).time_zone is None


def test_every_folder_and_file_of_the_database_is_a_zone_or_a_value_error() -> None:
    """Folders ("Europe") used to escape as IsADirectoryError, a 500 at the API."""
    entries = database_entries()
    assert {"Europe", "America/Indiana", "Asia/Shanghai", "zone.tab"} <= set(entries)
    refused = []
    for name in entries:
        try:
            known_zone(name)
        except ValueError:
            refused.append(name)
    assert {"Europe", "Asia", "US", "Etc", "America/Indiana", "zone.tab", "__pycache__"} <= set(refused)
    assert "Asia/Shanghai" not in refused
    assert "Europe/Berlin" not in refused


def test_a_wrong_time_zone_at_start_is_one_clear_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUTH_JWT_SECRET", "s" * 40)
    monkeypatch.setenv("TIME_ZONE", "Asia")
    with pytest.raises(StartError) as err:
        load_settings()
    message = str(err.value)
    assert "TIME_ZONE: 'Asia' is no IANA time zone name" in message
    assert "Traceback" not in message
    assert "s" * 40 not in message
