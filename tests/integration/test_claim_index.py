"""A user past the in-process index still has their restatements chained (issue 45): the writer finds a
new statement's predecessors by its claim keys (memory/write/claim_index.py), not only among the
memories nearest its vector, where a restatement inside a long turn seldom is (a 10M-token history had
11 of 12 statements of where the user lives left current). Real Redis and Chroma, the real model, zh
and en; the vector neighbours cut to one, so only the claim index can find the older statements."""

from __future__ import annotations

import fnmatch
from dataclasses import replace
from typing import Any

import httpx
import pytest

from app.settings import Settings
from memory import Embedder, keys
from memory.models import Memory
from memory.redis_client import close as redis_close
from memory.write import superseder
from memory.write.claim_index import KEPT, ClaimIndex
from tests.conftest import AuthHeaders, app_client, redis_of

pytestmark = pytest.mark.integration

FILLER = [
    "The billing service moved its nightly export to a queue so retries no longer block the ledger.",
    "上周库存服务遇到了重试风暴，我们给客户端加了抖动，队列积压很快就降下来了。",
    "Our Grafana board for checkout sits next to the runbook; on-call reads it before paging anyone.",
    "报表的缓存过期时间改成了概率性提前刷新，整点的惊群效应消失了。",
    "I started a beginner pottery class on Thursday evenings, the teacher is very patient.",
    "周末我试着做了番茄炒蛋，厨房里香极了，孩子吃了两碗饭。",
    "The search cluster's p99 dropped to 40 ms after we added a partial index on the status column.",
    "我们把测试环境的 Redis 换到了另一个端口，新同事一直搞混。",
]
HOMES_EN = ["I live in Lisbon now.", "I live in Porto now.", "I live in Oslo now.", "I live in Kyoto now."]
HOMES_ZH = ["我现在住在杭州了。", "我现在住在苏州了。", "我现在住在成都了。", "我现在住在厦门了。"]


async def write(client: httpx.AsyncClient, auth: AuthHeaders, user: str, texts: list[str], at: float) -> None:
    messages = [
        {"role": "user", "content": t, "id": f"m{int(at)}-{k}", "timestamp": at + k}
        for k, t in enumerate(texts)
    ]
    resp = await client.post(
        f"/v1/memory/{user}/messages", json={"session_id": "s1", "messages": messages}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text


async def statements(client: httpx.AsyncClient, auth: AuthHeaders, user: str) -> list[dict[str, Any]]:
    resp = await client.get(f"/v1/memory/{user}/list", params={"limit": 100}, headers=auth(user))
    assert resp.status_code == 200, resp.text
    items: list[dict[str, Any]] = resp.json()["items"]
    return sorted(
        (m for m in items if "live" in m["content"] or "住在" in m["content"]), key=lambda m: m["created_at"]
    )


@pytest.mark.parametrize(("user", "homes"), [("ana-en", HOMES_EN), ("bo-zh", HOMES_ZH)])
async def test_restatements_past_the_in_process_index_form_one_chain(
    settings: Settings,
    embedder: Embedder,
    auth: AuthHeaders,
    monkeypatch: pytest.MonkeyPatch,
    user: str,
    homes: list[str],
) -> None:
    monkeypatch.setattr(superseder, "NEAREST", 1)  # the vector neighbours alone would miss them
    small = settings.model_copy(update={"in_process_index_max": 4})
    async with app_client(small, embedder) as (client, _):
        at = 1_700_000_000.0
        await write(client, auth, user, FILLER, at)  # 8 memories: past the in-process index of 4
        for k, home in enumerate(homes):
            at += 86_400.0
            # each statement among the long history's other talk, in a round of its own
            await write(client, auth, user, [FILLER[(k + 3) % len(FILLER)] + " " + home], at)
        found = await statements(client, auth, user)
        redis = redis_of(small)
        try:
            assert await redis.exists(keys.ltm_claims(user)) == 1
            # a delete drops the index (its keys are words the user said), as it drops the snapshot
            resp = await client.delete(f"/v1/memory/{user}/{found[0]['id']}", headers=auth(user))
            assert resp.status_code == 204, resp.text
            assert await redis.exists(keys.ltm_claims(user)) == 0
        finally:
            await redis_close(redis)
    assert len(found) == len(homes)
    # each older statement is superseded by the next one; the newest is current
    assert [m["superseded_by"] for m in found[:-1]] == [m["id"] for m in found[1:]]
    assert found[-1]["superseded_by"] is None


async def test_the_index_keeps_the_newest_statements_of_each_claim(settings: Settings) -> None:
    redis = redis_of(settings)
    index = ClaimIndex(redis)
    try:
        said = [
            Memory(
                id=f"mem_{k:02d}",
                user_id="cy",
                content=f"我们组的发布窗口现在改到周{k}上午了" if k % 2 else f"I live in town {k} now.",
                created_at=1_700_000_000.0 + k,
                session_id="s1",
                source="user",
                content_hash=f"h{k}",
                facts=(("changed:发布窗口", f"周{k}上午"),) if k % 2 else (("residence", f"town {k}"),),
            )
            for k in range(2 * KEPT + 6)
        ]
        said.append(replace(said[0], id="mem_bot", source="assistant"))  # not the user's own: not recorded
        for k in range(0, len(said), 7):  # in rounds, as the writer stores them
            await index.add("cy", said[k : k + 7])
        newest_zh = [m.id for m in reversed(said[:-1]) if m.facts[0][0] == "changed:发布窗口"][:KEPT]
        assert await index.ids("cy", ["changed:发布窗口"]) == newest_zh
        both = await index.ids("cy", ["residence", "changed:发布窗口", "car"])
        assert len(both) == 2 * KEPT
        assert "mem_bot" not in both
        assert await index.ids("nobody", ["residence"]) == []
        assert await index.ids("cy", []) == []
        # the hash is one of the user's keys: an erase's scan of them removes it
        assert fnmatch.fnmatchcase(keys.ltm_claims("cy"), keys.user_pattern("cy"))
        await redis.hset(keys.ltm_claims("cy"), "residence", "not json")  # damaged: read as nothing
        assert await index.ids("cy", ["residence"]) == []
    finally:
        await redis_close(redis)
