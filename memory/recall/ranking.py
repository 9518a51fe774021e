"""Read-time ranking math, pure: the seed's time decay, recency x importance, named-month ranges,
event months.

The clock is always a keyword argument (`as_of`), so every score is reproducible in a test.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import UTC, datetime

DAY = 86400.0
_EVENT_RE = re.compile(r"^\d{4}-(?:0[1-9]|1[0-2])(?:-\d{2})?$")


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


def month_range(year_month: str) -> tuple[float, float]:
    """'2026-03' -> [start, end) epoch seconds in UTC."""
    year, month = (int(x) for x in year_month.split("-"))
    start = datetime(year, month, 1, tzinfo=UTC)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC)
    return start.timestamp(), end.timestamp()


def event_months(entities: Iterable[str]) -> frozenset[str]:
    """The months ("YYYY-MM") of the event dates a memory keeps among its entities (ISO dates and
    months resolved at write time from the message's own time: "上周五" -> 2026-05-29)."""
    return frozenset(e[:7] for e in entities if _EVENT_RE.match(e))
