"""Event dates end to end (issue 28; real Redis, real Chroma, the real models): a relative date in what
was said ("上周五", "last Friday") is resolved at write time from the message's own time, and a question
naming that month ranks the memory with those written in it, in Chinese and in English."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

import httpx
import pytest

from app.settings import Settings
from harness.outbox import drain
from harness.services import ServerProcess
from memory.embedding.base import Embedder
from tests.conftest import AuthHeaders, app_client, make_settings
from tests.tz_names import database_entries

pytestmark = pytest.mark.integration


def at(year: int, month: int, day: int) -> float:
    return datetime(year, month, day, 10, 0, tzinfo=UTC).timestamp()


Turn = tuple[str, str, float]  # message id, what was said, when

# said on Wednesday 2026-06-03 about Friday 2026-05-29; the others said and done in June or April
TURNS: list[Turn] = [
    ("ev-hz", "上周五我去杭州见了客户。", at(2026, 6, 3)),
    ("ev-bos", "Last Friday I flew to Boston for a client meeting.", at(2026, 6, 3)),
    ("jun-sz", "我今天去苏州出差了。", at(2026, 6, 20)),
    ("jun-chi", "I took the train to Chicago today for work.", at(2026, 6, 20)),
    ("apr-xm", "我今天去厦门玩了一天。", at(2026, 4, 11)),
    ("apr-sea", "I drove to Seattle today to see my sister.", at(2026, 4, 11)),
]
AS_OF = at(2026, 7, 1)


async def seed(
    client: httpx.AsyncClient,
    auth: AuthHeaders,
    user: str = "alice",
    turns: list[Turn] = TURNS,
    time_zone: str | None = None,
) -> None:
    messages = [{"role": "user", "content": text, "id": mid, "timestamp": ts} for mid, text, ts in turns]
    body: dict[str, Any] = {"session_id": "s1", "messages": messages}
    if time_zone is not None:
        body["time_zone"] = time_zone
    resp = await client.post(f"/v1/memory/{user}/messages", json=body, headers=auth(user))
    assert resp.status_code == 200, resp.text


@pytest.mark.parametrize("query", ["我5月去了哪里？", "Where did I travel in May?"])
async def test_a_question_naming_a_month_finds_what_happened_in_it(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str
) -> None:
    await seed(client, auth)
    resp = await client.post(
        "/v1/memory/alice/search",
        json={"query": query, "top_k": 6, "as_of": AS_OF, "explain": True, "min_relevance": 0},
        headers=auth("alice"),
    )
    assert resp.status_code == 200, resp.text
    results = resp.json()["results"]
    in_may = {r["source_message_ids"][0] for r in results if r["explain"]["in_month"]}
    assert in_may == {"ev-hz", "ev-bos"}  # said in June, about May; nothing was written in May
    assert {r["source_message_ids"][0] for r in results[:2]} == {"ev-hz", "ev-bos"}


# a season and a year (issue 28's "去年夏天", "last year"): said in March 2026 about summer 2025; the
# others written in summer 2026 and in winter 2025
SEASON_TURNS: list[Turn] = [
    ("surf", "去年夏天我在青岛学会了冲浪。", at(2026, 3, 10)),
    ("sail", "Last summer I learned to sail in Maine.", at(2026, 3, 10)),
    ("dive-zh", "我今天在三亚学了潜水。", at(2026, 7, 15)),
    ("dive-en", "I learned to scuba dive in Florida today.", at(2026, 7, 15)),
    ("ski-zh", "我今天在崇礼学了滑雪。", at(2025, 1, 20)),
    ("ski-en", "I learned to ski in Vermont today.", at(2025, 1, 20)),
]
LATE_2026 = at(2026, 12, 1)


async def ask(
    client: httpx.AsyncClient,
    auth: AuthHeaders,
    query: str,
    user: str = "bob",
    *,
    as_of: float = LATE_2026,
    top_k: int = 6,
    time_zone: str | None = None,
) -> list[dict[str, Any]]:
    """The search's hits for `query`, every one (no floor), each with its explanation."""
    body: dict[str, Any] = {
        "query": query,
        "top_k": top_k,
        "as_of": as_of,
        "explain": True,
        "min_relevance": 0,
    }
    if time_zone is not None:
        body["time_zone"] = time_zone
    resp = await client.post(f"/v1/memory/{user}/search", json=body, headers=auth(user))
    assert resp.status_code == 200, resp.text
    results: list[dict[str, Any]] = resp.json()["results"]
    return results


def ids(results: list[dict[str, Any]]) -> list[str]:
    return [str(r["source_message_ids"][0]) for r in results]


def flagged(results: list[dict[str, Any]]) -> set[str]:
    return {i for i, r in zip(ids(results), results, strict=True) if r["explain"]["in_month"]}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("我2025年夏天学了什么运动？", {"surf", "sail"}),  # said in 2026 of summer 2025
        ("What sport did I learn in the summer of 2025?", {"surf", "sail"}),
        ("我今年夏天学了什么？", {"dive-zh", "dive-en"}),  # written in summer 2026
        ("What did I learn last summer?", {"dive-zh", "dive-en"}),  # in December: summer 2026
        # 2025: written in it (January), or telling of an event in it (summer)
        ("我去年学了什么运动？", {"surf", "sail", "ski-zh", "ski-en"}),
        ("What sports did I pick up last year?", {"surf", "sail", "ski-zh", "ski-en"}),
    ],
)
async def test_a_question_naming_a_season_or_a_year_finds_what_happened_in_it(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str, expected: set[str]
) -> None:
    await seed(client, auth, "bob", SEASON_TURNS)
    results = await ask(client, auth, query)
    assert flagged(results) == expected
    assert set(ids(results)[: len(expected)]) == expected  # ranked first, in both languages


# a time named by another event ("before I moved", "搬家以后"): the move told of in March 2025 ("上周",
# "last week": about 3 March), a job before it and one after it, in both languages
MOVE_TURNS: list[Turn] = [
    ("bank-zh", "我在北京的一家银行做柜员。", at(2024, 3, 1)),
    ("bank-en", "I work as a teller at a bank in Boston.", at(2024, 3, 1)),
    ("move-zh", "我上周搬到了杭州。", at(2025, 3, 10)),
    ("move-en", "I moved to Seattle last week.", at(2025, 3, 10)),
    ("cafe-zh", "我现在在杭州的一家咖啡店当咖啡师。", at(2025, 9, 1)),
    ("cafe-en", "I work as a barista at a coffee shop in Seattle now.", at(2025, 9, 1)),
]


BEFORE, AFTER = {"bank-zh", "bank-en"}, {"cafe-zh", "cafe-en"}


@pytest.mark.parametrize(
    ("query", "asked", "other"),
    [
        ("我搬家之前做什么工作？", BEFORE, AFTER),
        ("What did I do for work before I moved?", BEFORE, AFTER),
        ("我搬家以后做什么工作？", AFTER, BEFORE),
        ("What job did I have after I moved?", AFTER, BEFORE),
    ],
)
async def test_a_question_naming_a_time_by_another_event_is_dated_by_it(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str, asked: set[str], other: set[str]
) -> None:
    """The move dates the question: the jobs of the time asked about rank first, in both languages, and
    the other time's below every one of them (the words alone cannot tell the two jobs apart)."""
    await seed(client, auth, "carol", MOVE_TURNS)
    results = await ask(client, auth, query, "carol")
    order = ids(results)
    assert asked <= flagged(results)
    assert not other & flagged(results)
    assert order[0] in asked, order
    assert max(order.index(i) for i in asked) < min(order.index(i) for i in other), order


@pytest.mark.parametrize("query", ["我结婚以后住在哪里？", "Where did I live after we got married?"])
async def test_an_event_never_told_of_dates_nothing(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str
) -> None:
    await seed(client, auth, "carol", MOVE_TURNS)
    assert flagged(await ask(client, auth, query, "carol")) == set()  # no memory tells of a wedding


MOVED = {"move-zh", "move-en"}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # up to the year's start: the bank job (2024); the move (March 2025) and the café are after it
        ("我2025年以前做什么工作？", BEFORE),
        ("What did I do for work before 2025?", BEFORE),
        # from the year's start: the move and the café
        ("2025年以来我做过什么工作？", MOVED | AFTER),
        ("What work have I done since 2025?", MOVED | AFTER),
        # from the year's end: the same here (nothing was said in 2024 after March)
        ("2024年以后我做过什么工作？", MOVED | AFTER),
        ("What jobs did I have after 2024?", MOVED | AFTER),
        # a range is one period: 2023 to 2024 holds the bank job only
        ("我2023年到2024年做什么工作？", BEFORE),
        ("What did I do for work from 2023 to 2024?", BEFORE),
    ],
)
async def test_a_question_naming_a_time_open_on_one_side_or_a_range_finds_what_lies_in_it(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str, expected: set[str]
) -> None:
    """ "Before 2020" is not "in 2020": what lies before, after or since the named year (or between two)
    ranks first, in both languages; a year alone would flag the wrong memories."""
    await seed(client, auth, "dave", MOVE_TURNS)
    results = await ask(client, auth, query, "dave")
    assert flagged(results) == expected
    assert set(ids(results)[: len(expected)]) == expected


@pytest.mark.parametrize(
    ("query", "as_of", "expected"),
    [
        # a day named by its date: written on it ("today" said on 20 June) ...
        ("我2026年6月20日去了哪里？", LATE_2026, {"jun-sz", "jun-chi"}),
        ("Where did I go on June 20, 2026?", LATE_2026, {"jun-sz", "jun-chi"}),
        # ... or telling of an event on it (Friday 29 May, said on 3 June as 上周五 / last Friday)
        ("我2026年5月29日去了哪里？", LATE_2026, {"ev-hz", "ev-bos"}),
        ("Where did I travel on May 29, 2026?", LATE_2026, {"ev-hz", "ev-bos"}),
        # relative to the day asked on
        ("我昨天去了哪里？", at(2026, 6, 21), {"jun-sz", "jun-chi"}),
        ("Where did I go yesterday?", at(2026, 6, 21), {"jun-sz", "jun-chi"}),
        ("我上周五去了哪里？", at(2026, 6, 3), {"ev-hz", "ev-bos"}),
        ("Where did I go last Friday?", at(2026, 6, 3), {"ev-hz", "ev-bos"}),
        # last week: the calendar week before (asked on Wednesday 10 June: 1 to 7 June, when the
        # Friday before was told of; Friday 29 May itself is the week before that)
        ("我上周去了哪里？", at(2026, 6, 10), {"ev-hz", "ev-bos"}),
        ("Where did I go last week?", at(2026, 6, 10), {"ev-hz", "ev-bos"}),
        ("我上周去了哪里？", at(2026, 6, 4), {"ev-hz", "ev-bos"}),  # 25 to 31 May: the Friday
        ("Where did I go last week?", at(2026, 6, 24), {"jun-sz", "jun-chi"}),  # 15 to 21 June
    ],
)
async def test_a_question_naming_a_past_day_or_last_week_finds_what_happened_then(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str, as_of: float, expected: set[str]
) -> None:
    await seed(client, auth, "erin")
    results = await ask(client, auth, query, "erin", as_of=as_of)
    assert flagged(results) == expected
    assert set(ids(results)[: len(expected)]) == expected


@pytest.mark.parametrize("query", ["我今天该去哪里？", "Where should I go tomorrow?"])
async def test_today_or_a_day_to_come_ranks_nothing_first(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str
) -> None:
    """A question about today or a day to come asks for advice, not for what was written that day."""
    await seed(client, auth, "erin")
    assert flagged(await ask(client, auth, query, "erin", as_of=at(2026, 6, 20))) == set()


# a deployment in Shanghai (TIME_ZONE): said at 01:00 on Sunday 21 June there (17:00 UTC on the 20th)
NIGHT = datetime(2026, 6, 20, 17, 0, tzinfo=UTC).timestamp()
NIGHT_TURNS: list[Turn] = [
    ("night-hz", "我昨天去杭州见了客户。", NIGHT),  # Saturday the 20th, there
    ("night-bos", "Yesterday I flew to Boston for a client meeting.", NIGHT),
    ("fri-sz", "我今天去苏州出差了。", datetime(2026, 6, 19, 3, 0, tzinfo=UTC).timestamp()),  # Friday
    (
        "fri-chi",
        "I took the train to Chicago today for work.",
        datetime(2026, 6, 19, 3, 0, tzinfo=UTC).timestamp(),
    ),
]


MONDAY_9AM = datetime(2026, 6, 22, 1, 0, tzinfo=UTC).timestamp()  # 09:00 on Monday the 22nd there


# said at 01:00 on the 21st about the day before: the 20th there, not the 19th (UTC's day before the
# 20th), which holds only the Friday trips; written on the 21st there (the 20th in UTC); asked at 09:00
# on Monday the 22nd there (01:00 UTC): yesterday is Sunday the 21st
SHANGHAI_CASES = [
    ("我6月19日去了哪里？", at(2026, 7, 1), {"fri-sz", "fri-chi"}),
    ("Where did I go on June 19, 2026?", at(2026, 7, 1), {"fri-sz", "fri-chi"}),
    ("我6月21日说了什么？", at(2026, 7, 1), {"night-hz", "night-bos"}),
    ("What did I tell you on June 21, 2026?", at(2026, 7, 1), {"night-hz", "night-bos"}),
    ("我昨天说了什么？", MONDAY_9AM, {"night-hz", "night-bos"}),
    ("What did I tell you yesterday?", MONDAY_9AM, {"night-hz", "night-bos"}),
]


@pytest.mark.parametrize(("query", "as_of", "expected"), SHANGHAI_CASES)
async def test_days_are_the_deployments_time_zones(
    redis_server: ServerProcess,
    chroma_server: ServerProcess,
    embedder: Embedder,
    auth: AuthHeaders,
    query: str,
    as_of: float,
    expected: set[str],
) -> None:
    """`TIME_ZONE=Asia/Shanghai`: what a user says after midnight there, and asks the next morning, is
    dated by their calendar, in Chinese and English; in UTC every one of these questions ranks the
    wrong day's memories first."""
    settings = make_settings(redis_server.url, chroma_server.url, time_zone="Asia/Shanghai")
    async with app_client(settings, embedder) as (client, _):
        await seed(client, auth, "fay", NIGHT_TURNS)
        results = await ask(client, auth, query, "fay", as_of=as_of, top_k=4)
    assert flagged(results) == expected
    assert set(ids(results)[: len(expected)]) == expected


@pytest.mark.parametrize(("query", "as_of", "expected"), SHANGHAI_CASES)
async def test_a_request_names_its_users_time_zone(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str, as_of: float, expected: set[str]
) -> None:
    """On a UTC deployment, a client that sends `time_zone` with the messages and the question gets its
    user's calendar, as a Shanghai deployment does."""
    await seed(client, auth, "gus", NIGHT_TURNS, time_zone="Asia/Shanghai")
    results = await ask(client, auth, query, "gus", as_of=as_of, top_k=4, time_zone="Asia/Shanghai")
    assert flagged(results) == expected
    assert set(ids(results)[: len(expected)]) == expected


@pytest.mark.parametrize(
    ("endpoint", "body"),
    [
        ("search", {"query": "昨天"}),
        ("messages", {"session_id": "s1", "messages": [{"role": "user", "content": "我昨天去了杭州"}]}),
    ],
)
@pytest.mark.parametrize("zone", ["Beijing", "../../../etc/passwd", "UTC+8", "", "Asia/" + "x" * 80, 8])
async def test_a_time_zone_that_is_no_iana_name_is_a_422(
    client: httpx.AsyncClient, auth: AuthHeaders, endpoint: str, body: dict[str, Any], zone: object
) -> None:
    resp = await client.post(
        f"/v1/memory/hal/{endpoint}", json={**body, "time_zone": zone}, headers=auth("hal")
    )
    assert resp.status_code == 422, resp.text
    assert resp.json()["error"] == "validation_error"
    assert "time_zone" in resp.text
    assert len(resp.text) < 2000  # the long name is not echoed whole


async def test_a_chat_turn_carries_its_time_zone_to_the_writer(
    client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
) -> None:
    """The turn's "昨天" is resolved by the outbox writer in the zone the chat request named: a question
    in that zone naming that day finds it. A zone whose date differs from UTC's now is chosen, so the
    UTC reading would name another day."""
    now = datetime.now(UTC)
    zone = "Pacific/Kiritimati" if now.hour >= 10 else "Pacific/Honolulu"  # UTC+14 / UTC-10
    local = datetime.now(ZoneInfo(zone))
    assert local.date() != now.date()
    yesterday = (local - timedelta(days=1)).date()
    resp = await client.post(
        "/v1/chat/completions",
        json={
            "messages": [{"role": "user", "content": "我昨天去杭州见了一个重要的客户，谈成了合同。"}],
            "session_id": "turn",
            "time_zone": zone,
        },
        headers=auth("ivy"),
    )
    assert resp.status_code == 200, resp.text
    await drain(settings)
    question = f"我{yesterday.year}年{yesterday.month}月{yesterday.day}日去了哪里？"
    results = await ask(client, auth, question, "ivy", as_of=now.timestamp() + 60, time_zone=zone)
    hz = [r for r in results if "杭州" in r["content"]]
    assert hz, results
    assert hz[0]["explain"]["in_month"], hz[0]


async def test_no_name_in_the_time_zone_database_is_a_5xx(
    client: httpx.AsyncClient, auth: AuthHeaders
) -> None:
    """Issue 39: a folder of the database ("Europe", "America/Indiana") was a 500 on every endpoint that
    takes a zone. Every folder and file is sent to search; those that are no zone also to messages and
    chat: a 422 naming time_zone, never a 5xx."""
    zones = set(available_timezones())
    names = database_entries()
    assert len(names) > 600
    bodies: dict[str, dict[str, Any]] = {
        "/v1/memory/tz/search": {"query": "where"},
        "/v1/memory/tz/messages": {
            "session_id": "s1",
            "messages": [{"role": "user", "content": "我昨天去了杭州"}],
        },
        "/v1/chat/completions": {"session_id": "s1", "messages": [{"role": "user", "content": "hi"}]},
    }
    statuses: dict[int, list[str]] = {}
    for name in names:
        for path, body in bodies.items():
            if name in zones and path != "/v1/memory/tz/search":
                continue  # a real zone does real work; search with each is enough
            resp = await client.post(path, json={**body, "time_zone": name}, headers=auth("tz"))
            statuses.setdefault(resp.status_code, []).append(f"{path} {name}")
            if name not in zones:
                assert resp.status_code == 422, (path, name, resp.text)
                assert "time_zone" in resp.text
    assert not [s for s in statuses if s >= 500], {s: v[:5] for s, v in statuses.items() if s >= 500}
    assert len(statuses[422]) > 3 * 100  # the folders and tables were asked on all three endpoints
