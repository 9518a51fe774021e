"""Time zones by their IANA names ("Asia/Shanghai"): the one a request names for its user, read where
it was stored (an outbox entry) or checked where it enters (the API)."""

from __future__ import annotations

import functools
import logging
from datetime import tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

log = logging.getLogger(__name__)

MAX_NAME = 64  # the longest IANA name is 32 characters ("America/Argentina/ComodRivadavia")


@functools.cache
def _zone_names() -> frozenset[str]:
    """Every zone name this machine's time zone database lists (tzdata's, else the system's)."""
    return frozenset(available_timezones())


def known_zone(name: str) -> ZoneInfo:
    """The zone of an IANA name; ValueError for anything else (a path, a blank, "UTC+8", an unknown
    name, a folder of the database such as "Europe" or "America/Indiana", a file in it that is no
    zone such as "zone.tab"), with the names it wants. Only a name the database lists is opened."""
    if not name or len(name) > MAX_NAME or name != name.strip() or name not in _zone_names():
        raise ValueError(
            f"{name[:MAX_NAME]!r} is no IANA time zone name: use one like 'Asia/Shanghai', 'Europe/Berlin' or 'UTC'"
        )
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:  # listed but unreadable
        raise ValueError(f"{name[:MAX_NAME]!r}: this machine cannot read that time zone") from exc


def zone_of(name: str | None) -> tzinfo | None:
    """The zone a stored name says, None for none; a name this machine does not know (stored by a
    process with a newer time zone database) is logged and read as none: the deployment's zone."""
    if name is None:
        return None
    try:
        return known_zone(name)
    except ValueError:
        log.warning("unknown time zone; the deployment's is used", extra={"time_zone": name[:MAX_NAME]})
        return None


def name_of(zone: tzinfo | None) -> str | None:
    """The IANA name to store for a zone (`ZoneInfo.key`; UTC for the standard library's UTC)."""
    if zone is None:
        return None
    return getattr(zone, "key", None) or str(zone)
