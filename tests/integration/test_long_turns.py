"""Long turns (issue 29): a message split into segments answers a search once, by its best segment, so
the top k holds that many turns; the other turns of the history still get their places."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import AuthHeaders

pytestmark = pytest.mark.integration
NOW = 1_790_000_000.0

# an assistant answer of four segments, every one about baking (the write policy splits at 400 chars)
LONG_ANSWER = " ".join(
    [
        "For banana bread, weigh the flour instead of using cups; too much flour is why a loaf comes out dry.",
        "Use bananas with black spots on the peel, they are sweeter and mash more easily with a fork.",
        "Mash three of them, whisk in two eggs, melted butter and brown sugar, then fold in the flour.",
        "A teaspoon of baking soda is enough; more makes the crumb taste soapy and turns it dark.",
        "Stir in walnuts or chocolate chips if you like, but no more than a cupful, or the loaf sinks.",
        "Line the tin with baking paper so the banana bread comes out without tearing at the corners.",
        "Bake the banana bread at 175 degrees for 55 minutes, and check it with a skewer after 45 minutes.",
        "If the top browns too fast, lay a sheet of foil loosely over it for the last twenty minutes.",
        "Let the loaf cool in the tin for fifteen minutes before you turn it out onto a rack.",
        "Wrapped well, it keeps for three days on the counter, and slices freeze for a month or more.",
        "Toast a slice and spread it with salted butter: that is how most people end up eating it anyway.",
        "Next time you could swap a third of the flour for wholemeal for a nuttier, denser banana bread.",
    ]
)
OTHER_TURNS = [
    "I baked banana bread for my sister's birthday and it vanished in an hour.",
    "The bakery near the office sells a banana bread with walnuts that I love.",
    "My oven runs hot, so my bread always browns too quickly on top.",
]


async def test_a_long_answer_takes_one_place_in_the_results(
    client: httpx.AsyncClient, auth: AuthHeaders
) -> None:
    messages = [
        {"role": "user", "content": "How do I bake banana bread?", "id": "q1", "timestamp": NOW - 100},
        {"role": "assistant", "content": LONG_ANSWER, "id": "a1", "timestamp": NOW - 99},
    ] + [
        {"role": "user", "content": text, "id": f"u{i}", "timestamp": NOW - 50 + i}
        for i, text in enumerate(OTHER_TURNS)
    ]
    resp = await client.post(
        "/v1/memory/alice/messages", json={"session_id": "s1", "messages": messages}, headers=auth("alice")
    )
    assert resp.status_code == 200, resp.text
    listed = (await client.get("/v1/memory/alice/list?limit=100", headers=auth("alice"))).json()
    assert sum(m["source_message_ids"] == ["a1"] for m in listed["items"]) >= 3  # stored as segments

    resp = await client.post(
        "/v1/memory/alice/search",
        json={"query": "how long should banana bread bake", "top_k": 4, "as_of": NOW},
        headers=auth("alice"),
    )
    assert resp.status_code == 200, resp.text
    turns = [tuple(r["source_message_ids"]) for r in resp.json()["results"]]
    assert len(turns) == len(set(turns))  # each turn once
    assert ("a1",) in turns
    assert len(turns) == 4  # the other turns fill the places the answer's other segments would take


async def test_forget_by_meaning_judges_every_segment_of_a_long_message(
    client: httpx.AsyncClient, auth: AuthHeaders
) -> None:
    """One hit per turn is for answers; forget must see each segment, or the siblings of the best one stay."""
    lease = " ".join(
        f"Clause {i} of my Lisbon apartment lease says the deposit for the Lisbon apartment is {900 + i} euros."
        for i in range(24)
    )
    resp = await client.post(
        "/v1/memory/alice/messages",
        json={
            "session_id": "s1",
            "messages": [{"role": "user", "content": lease, "id": "lease", "timestamp": NOW}],
        },
        headers=auth("alice"),
    )
    assert resp.status_code == 200, resp.text
    listed = (await client.get("/v1/memory/alice/list?limit=100", headers=auth("alice"))).json()
    segments = {m["id"] for m in listed["items"] if m["source_message_ids"] == ["lease"]}
    assert len(segments) >= 3

    resp = await client.post(
        "/v1/memory/alice/forget",
        json={"query": "my Lisbon apartment lease deposit", "dry_run": True, "min_relevance": 0.5},
        headers=auth("alice"),
    )
    assert resp.status_code == 200, resp.text
    assert set(resp.json()["ids"]) == segments
