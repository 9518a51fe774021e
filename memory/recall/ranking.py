"""Read-time ranking math, pure: the seed's time decay, recency x importance, the ranges of a named
month or a longer period (a season, a year), and the spans of the event dates a memory keeps.

The clock is always a keyword argument (`as_of`), so every score is reproducible in a test. Dates and
months are calendar days and months in a time zone (`zone`, UTC unless the deployment names one:
`TIME_ZONE`), the one relative dates were resolved in at write.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import UTC, datetime, tzinfo

DAY = 86400.0
_EVENT_RE = re.compile(r"^\d{4}-(?:0[1-9]|1[0-2])(?:-\d{2})?$")
_PERIOD_RE = re.compile(r"^\d{4}-(?:0[1-9]|1[0-2])/\d{4}-(?:0[1-9]|1[0-2])$")


def time_decay(created_at: float, *, as_of: float, tau_days: float = 14.0) -> float:
    """e^(-Δt/τ); memories from the future relative to `as_of` count as brand new."""
    delta_days = max(0.0, as_of - created_at) / DAY
    return math.exp(-delta_days / tau_days)


def recency_importance(
    created_at: float, importance_score: float, *, as_of: float, tau_days: float = 14.0
) -> float:
    """The seed's e^(-Δt/τ)·(1+ln(1+importance)), scaled to [0, 1]."""
    raw = time_decay(created_at, as_of=as_of, tau_days=tau_days) * (
        1.0 + math.log1p(max(0.0, importance_score))
    )
    return raw / (1.0 + math.log(2.0))


def month_range(year_month: str, zone: tzinfo = UTC) -> tuple[float, float]:
    """'2026-03' -> [start, end) epoch seconds: the month's first and next month's first midnight in
    `zone`."""
    year, month = (int(x) for x in year_month.split("-"))
    start = datetime(year, month, 1, tzinfo=zone)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=zone)
    return start.timestamp(), end.timestamp()


def period_range(period: str, zone: tzinfo = UTC) -> tuple[float, float]:
    """'2025-06/2025-08' (the first and last month of a season or a year: `memory.text.slots`) ->
    [start of the first month, end of the last) epoch seconds, months in `zone`."""
    first, last = period.split("/")
    return month_range(first, zone)[0], month_range(last, zone)[1]


def day_range(day: str, zone: tzinfo = UTC, days: int = 1) -> tuple[float, float]:
    """'2026-05-29' -> [its midnight, the midnight `days` later) in `zone` (a day is 23 or 25 hours
    where a clock changes that day; a week from a Monday is `days=7`). ValueError for a day the month
    has not."""
    start = datetime.fromisoformat(day).replace(tzinfo=zone)
    end = datetime.fromordinal(start.date().toordinal() + days).replace(tzinfo=zone)
    return start.timestamp(), end.timestamp()


def span_of(value: str, zone: tzinfo = UTC) -> tuple[float, float] | None:
    """The range an event date a memory keeps covers: a day ("2026-05-29"), a month ("2026-05") or a
    period ("2025-06/2025-08"), in `zone`; None for any other entity."""
    if _PERIOD_RE.match(value):
        return period_range(value, zone)
    if not _EVENT_RE.match(value):
        return None
    if len(value) > 7:
        try:
            return day_range(value, zone)
        except ValueError:  # a day the month has not ("2月30日" kept as 2026-02-30): its month
            pass
    return month_range(value[:7], zone)


def tells_of(entities: Iterable[str], span: tuple[float, float], zone: tzinfo = UTC) -> bool:
    """Whether one of a memory's event dates (day, month or period, in `zone`) overlaps `span`
    [start, end)."""
    return any(
        found is not None and found[0] < span[1] and span[0] < found[1]
        for found in (span_of(e, zone) for e in entities)
    )
