"""Merges and splits of entities under concurrency (issue 39), through the API against real Redis (one
server, or a cluster with MNEMO_TEST_REDIS=cluster), a real Chroma server and the real embedding model;
in English and Chinese. Two opposite merges racing: exactly one holds and the other is refused, never a
cycle; a longer cycle and a merge into an entity merged away are refused (409 `merge_conflict`); a split
undoes exactly its merge, also of merges an older version let race into the store."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from app.settings import Settings
from memory import keys
from memory.relations.extract import extract
from memory.relations.graph import Merge
from tests.conftest import AuthHeaders, redis_of
from tests.integration.test_relations import ingest

pytestmark = pytest.mark.integration

USER = "alice"
MERGES = f"/v1/memory/{USER}/entities/merges"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"relation_memory": True})


def person(text: str) -> str:
    """The id the extractor gives the one person `text` names (a Chinese name's id is a digest)."""
    [found] = [e.id for e in extract(text, said_at=0).entities if e.kind == "person"]
    return found


EN_TEXTS = [
    "I went hiking with Bob on Sunday",
    "Melanie sent me her paintings",
    "Mel called about the gallery",
    "Caroline moved to Berlin",
    "Dave fixed my bike",
]
ZH_TEXTS = ["我朋友李雷说周末去爬山", "我同事韩梅梅明天来上海", "我和刘洋一起去爬山"]
BOB, MELANIE, MEL, CAROLINE, DAVE = (person(t) for t in EN_TEXTS)
LILEI, HANMEIMEI, LIUYANG = (person(t) for t in ZH_TEXTS)


async def setup(client: httpx.AsyncClient, auth: AuthHeaders) -> None:
    messages = [
        {"role": "user", "content": text, "id": f"m-{i}", "timestamp": f"2026-02-{i + 1:02d}T09:00:00Z"}
        for i, text in enumerate(EN_TEXTS + ZH_TEXTS)
    ]
    await ingest(client, auth, USER, messages)
    # Mel is Melanie's nickname: the graph makes her an alias of Melanie on its own
    assert await canonical(client, auth, MEL) == MELANIE


async def canonical(client: httpx.AsyncClient, auth: AuthHeaders, entity_id: str) -> str:
    """The entity `entity_id` stands for now (itself when it is an entity of its own)."""
    resp = await client.get(f"/v1/memory/{USER}/entities/{entity_id}", headers=auth(USER))
    assert resp.status_code == 200, resp.text
    return str(resp.json()["id"])


async def merge(client: httpx.AsyncClient, auth: AuthHeaders, source: str, target: str) -> httpx.Response:
    return await client.post(MERGES, json={"source": source, "target": target}, headers=auth(USER))


async def merged(client: httpx.AsyncClient, auth: AuthHeaders, source: str, target: str) -> str:
    resp = await merge(client, auth, source, target)
    assert resp.status_code == 201, resp.text
    return str(resp.json()["id"])


async def split(client: httpx.AsyncClient, auth: AuthHeaders, merge_id: str) -> None:
    resp = await client.delete(f"{MERGES}/{merge_id}", headers=auth(USER))
    assert resp.status_code == 200, resp.text


async def listed(client: httpx.AsyncClient, auth: AuthHeaders) -> list[dict[str, Any]]:
    resp = await client.get(MERGES, headers=auth(USER))
    assert resp.status_code == 200, resp.text
    return resp.json()["items"]  # type: ignore[no-any-return]


def refused(resp: httpx.Response, *needles: str) -> None:
    assert resp.status_code == 409, resp.text
    body = resp.json()
    assert set(body) == {"error", "detail", "request_id"}
    assert body["error"] == "merge_conflict"
    for needle in needles:
        assert needle in body["detail"], (needle, body["detail"])


class TestRacingMerges:
    async def test_opposite_merges_racing_exactly_one_holds_and_a_split_undoes_it(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        """The reported sequence: bob→melanie and melanie→bob at once (李雷/韩梅梅 every other trial),
        then the split of the one that held: Melanie, Mel and Bob are as before, Mel no alias of Bob."""
        await setup(client, auth)
        for trial in range(20):
            a, b, nickname = (BOB, MELANIE, MEL) if trial % 2 == 0 else (LILEI, HANMEIMEI, None)
            answers = await asyncio.gather(merge(client, auth, a, b), merge(client, auth, b, a))
            statuses = sorted(r.status_code for r in answers)
            assert statuses == [201, 409], (trial, [r.text for r in answers])
            [won] = [r.json() for r in answers if r.status_code == 201]
            [lost] = [r for r in answers if r.status_code == 409]
            refused(lost, "cycle", "循环")
            assert [m["id"] for m in await listed(client, auth)] == [won["id"]]
            one = {await canonical(client, auth, a), await canonical(client, auth, b)}
            assert one == {won["target"]}, trial  # one entity, no cycle
            await split(client, auth, won["id"])
            assert await canonical(client, auth, a) == a
            assert await canonical(client, auth, b) == b
            if nickname is not None:
                assert await canonical(client, auth, nickname) == MELANIE
            assert await listed(client, auth) == []

    async def test_a_three_way_race_never_makes_a_cycle(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await setup(client, auth)
        for trial in range(10):
            ring = (BOB, CAROLINE, DAVE) if trial % 2 == 0 else (LILEI, HANMEIMEI, LIUYANG)
            pairs = [(ring[i], ring[(i + 1) % 3]) for i in range(3)]
            answers = await asyncio.gather(*(merge(client, auth, s, t) for s, t in pairs))
            assert 1 <= sum(r.status_code == 201 for r in answers) <= 2, [r.text for r in answers]
            for r in answers:
                if r.status_code != 201:
                    refused(r)
            held = await listed(client, auth)
            assert len(held) == sum(r.status_code == 201 for r in answers)
            # every merge in force holds: its source stands for what its target stands for
            ends = {await canonical(client, auth, e) for e in ring}
            for m in held:
                assert await canonical(client, auth, m["source"]) == await canonical(
                    client, auth, m["target"]
                )
            assert len(ends) == 3 - len(held)
            for m in held:
                await split(client, auth, m["id"])
            assert [await canonical(client, auth, e) for e in ring] == list(ring)


class TestCycles:
    @pytest.mark.parametrize("lang", ["en", "zh"])
    async def test_a_longer_cycle_is_refused(
        self, client: httpx.AsyncClient, auth: AuthHeaders, lang: str
    ) -> None:
        await setup(client, auth)
        a, b, c = (BOB, CAROLINE, DAVE) if lang == "en" else (LILEI, HANMEIMEI, LIUYANG)
        await merged(client, auth, a, b)
        await merged(client, auth, b, c)
        closing = await merge(client, auth, c, a)
        refused(closing, a, c, "cycle", "循环")
        assert len(await listed(client, auth)) == 2
        assert {await canonical(client, auth, e) for e in (a, b, c)} == {c}

    @pytest.mark.parametrize("lang", ["en", "zh"])
    async def test_a_merge_into_or_of_an_entity_merged_away_is_refused(
        self, client: httpx.AsyncClient, auth: AuthHeaders, lang: str
    ) -> None:
        await setup(client, auth)
        a, b, c = (BOB, MELANIE, CAROLINE) if lang == "en" else (LILEI, HANMEIMEI, LIUYANG)
        first = await merged(client, auth, a, b)
        into = await merge(client, auth, c, a)  # a is b now: say b, or split first
        refused(into, a, b, first, "已合并到")
        again = await merge(client, auth, a, c)  # a merged twice: into b and into c
        refused(again, a, b, first, "已合并到")
        assert [m["id"] for m in await listed(client, auth)] == [first]
        assert await canonical(client, auth, c) == c
        # into the entity itself it is one merge more, and holds
        await merged(client, auth, c, b)
        assert {await canonical(client, auth, e) for e in (a, b, c)} == {b}

    async def test_an_alias_the_graph_made_is_still_a_bad_request(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        """Mel is Melanie by the nickname rule, not by a merge: naming it is a 422 as before."""
        await setup(client, auth)
        resp = await merge(client, auth, CAROLINE, MEL)
        assert resp.status_code == 422, resp.text
        assert MELANIE in resp.json()["detail"]


class TestSplitsAreExact:
    @pytest.mark.parametrize("lang", ["en", "zh"])
    async def test_a_split_leaves_the_other_merges_as_they_were(
        self, client: httpx.AsyncClient, auth: AuthHeaders, lang: str
    ) -> None:
        await setup(client, auth)
        if lang == "en":
            ab = await merged(client, auth, BOB, MELANIE)
            cb = await merged(client, auth, CAROLINE, MELANIE)
            bd = await merged(client, auth, MELANIE, DAVE)
            assert {await canonical(client, auth, e) for e in (BOB, MELANIE, MEL, CAROLINE, DAVE)} == {DAVE}
            await split(client, auth, cb)
            assert await canonical(client, auth, CAROLINE) == CAROLINE
            assert {await canonical(client, auth, e) for e in (BOB, MELANIE, MEL)} == {DAVE}
            await split(client, auth, bd)
            assert {await canonical(client, auth, e) for e in (BOB, MELANIE, MEL)} == {MELANIE}
            assert await canonical(client, auth, DAVE) == DAVE
            assert [m["id"] for m in await listed(client, auth)] == [ab]
        else:
            await merged(client, auth, LILEI, HANMEIMEI)
            cb = await merged(client, auth, LIUYANG, HANMEIMEI)
            await split(client, auth, cb)
            assert await canonical(client, auth, LIUYANG) == LIUYANG
            assert await canonical(client, auth, LILEI) == HANMEIMEI

    @pytest.mark.parametrize("which", ["the one in force", "the one without effect"])
    async def test_a_split_of_merges_an_older_version_let_race_undoes_exactly_one(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings, which: str
    ) -> None:
        """Before issue 39 both opposite merges could be stored: bob→melanie in force, melanie→bob
        without effect (it would close a cycle). Splitting the first must not bring the second to life
        (Melanie and Mel turned into aliases of Bob), nor may splitting the second change anything."""
        await setup(client, auth)
        held = Merge("mg-00000000000000a1", BOB, MELANIE, 1_000.0, USER)
        void = Merge("mg-00000000000000a2", MELANIE, BOB, 1_000.5, USER)
        r = redis_of(settings)
        try:
            await r.hset(keys.relation_merges(USER), mapping={m.id: m.dumps() for m in (held, void)})
            await r.incr(keys.relations_version(USER))
        finally:
            await r.aclose()
        assert await canonical(client, auth, BOB) == MELANIE
        if which == "the one in force":
            await split(client, auth, held.id)
            assert await canonical(client, auth, BOB) == BOB
            assert await canonical(client, auth, MELANIE) == MELANIE
            assert await canonical(client, auth, MEL) == MELANIE
            assert await listed(client, auth) == []  # the other one went with it: it never held
        else:
            await split(client, auth, void.id)
            assert {await canonical(client, auth, e) for e in (BOB, MELANIE, MEL)} == {MELANIE}
            assert [m["id"] for m in await listed(client, auth)] == [held.id]
