"""Event dates end to end (issue 28; real Redis, real Chroma, the real models): a relative date in what
was said ("上周五", "last Friday") is resolved at write time from the message's own time, and a question
naming that month ranks the memory with those written in it, in Chinese and in English."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest

from tests.conftest import AuthHeaders

pytestmark = pytest.mark.integration


def at(year: int, month: int, day: int) -> float:
    return datetime(year, month, day, 10, 0, tzinfo=UTC).timestamp()


# said on Wednesday 2026-06-03 about Friday 2026-05-29; the others said and done in June or April
TURNS = [
    ("ev-hz", "上周五我去杭州见了客户。", at(2026, 6, 3)),
    ("ev-bos", "Last Friday I flew to Boston for a client meeting.", at(2026, 6, 3)),
    ("jun-sz", "我今天去苏州出差了。", at(2026, 6, 20)),
    ("jun-chi", "I took the train to Chicago today for work.", at(2026, 6, 20)),
    ("apr-xm", "我今天去厦门玩了一天。", at(2026, 4, 11)),
    ("apr-sea", "I drove to Seattle today to see my sister.", at(2026, 4, 11)),
]
AS_OF = at(2026, 7, 1)


async def seed(client: httpx.AsyncClient, auth: AuthHeaders) -> None:
    messages = [{"role": "user", "content": text, "id": mid, "timestamp": ts} for mid, text, ts in TURNS]
    resp = await client.post(
        "/v1/memory/alice/messages", json={"session_id": "s1", "messages": messages}, headers=auth("alice")
    )
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
