"""The user's own things end to end (real Redis, real Chroma, the real models): "What is the name of my
dentist?" finds the user's own sentence inside a long turn among other people's dentists, in English
and in Chinese (memory/recall/ownership.py, issue 45)."""

from __future__ import annotations

import httpx
import pytest

from app.settings import Settings
from memory import Embedder
from tests.conftest import AuthHeaders, app_client

pytestmark = pytest.mark.integration
NOW = 1_790_000_000.0
NAMES_EN = ["Grace", "Diego", "Aiko", "Marcus", "Oskar", "Priya", "Tomasz", "Lena"]
NAMES_ZH = ["李娜", "王磊", "阿美", "陈静", "孙浩", "何伟", "小林", "老周"]
LONG_EN = (
    "Last night I cooked falafel for the neighbours and everyone asked for the recipe. "
    "The staging database was slow again, so we added a partial index on the status column. "
    "By the way, my dentist is Dr. Takeda, and the next check-up is in the autumn. "
    "On Saturday I walked eight kilometres along the river listening to a podcast about urban design. "
    "My sister called about our parents' anniversary; we want to book a dinner for ten people."
)
LONG_ZH = (
    "昨晚我给邻居们做了红烧肉，大家都问我要菜谱。预发数据库又变慢了，我们给状态列加了部分索引。"
    "顺便说一下，我的牙医是司马医生，下次复查在秋天。周六我沿着河边走了八公里，一边听一个讲城市设计的播客。"
    "姐姐打电话说爸妈的结婚纪念日快到了，我们想订一顿十个人的晚饭。"
)


async def seed(client: httpx.AsyncClient, auth: AuthHeaders, user: str) -> None:
    messages = [
        {"role": "user", "content": text, "id": f"m{i}", "timestamp": NOW - 3600 + 60 * i}
        for i, text in enumerate(
            [
                *(
                    f"{n}'s dentist is near the old train station, and she says he is very gentle."
                    for n in NAMES_EN
                ),
                LONG_EN,
                *(f"{n}的牙医在老火车站附近，她说那位医生下手很轻。" for n in NAMES_ZH),
                LONG_ZH,
            ]
        )
    ]
    resp = await client.post(
        f"/v1/memory/{user}/messages", json={"session_id": "s1", "messages": messages}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text


@pytest.mark.parametrize(
    ("question", "turn", "said"),
    [("What is the name of my dentist?", "m8", "Takeda"), ("我的牙医姓什么？", "m17", "司马")],
)
async def test_my_dentist_is_found_among_other_peoples_dentists(
    settings: Settings, embedder: Embedder, auth: AuthHeaders, question: str, turn: str, said: str
) -> None:
    async with app_client(settings, embedder) as (client, _):
        await seed(client, auth, "owner")
        resp = await client.post(
            "/v1/memory/owner/search",
            json={"query": question, "top_k": 3, "as_of": NOW},
            headers=auth("owner"),
        )
        assert resp.status_code == 200, resp.text
        top = resp.json()["results"]
        assert top[0]["source_message_ids"] == [turn], [r["content"][:60] for r in top]
        assert said in top[0]["content"]
