"""Questions about a category of the user's life (issue 40): "我有什么爱好？", "What are my hobbies?",
"我教什么科目？", "where do I work", "what car do I drive" … are answered by the memories stating a value
of that category, though they share no word with the question ("I play the cello on weekends"), with a
relevance the chat floors admit: through search and through a chat turn. Real Redis, Chroma and models;
Chinese and English."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import AuthHeaders

pytestmark = pytest.mark.integration
DAY = 86400.0
NOW = 1_790_000_000.0
ADMITTED = 0.3  # what a hit must reach to count as answered (above every chat and search floor)

# one session per memory: a memory's keyword context is its own
FACTS = {
    "zh": [
        ("hobby", "周末我喜欢拉大提琴，也常去游泳"),
        ("job", "我是一名小学数学老师"),
        ("work", "我在杭州市第一小学工作"),
        ("pet", "我家养了一只橘猫，叫团子"),
        ("family", "我有一个五岁的女儿，叫朵朵"),
        ("diet", "我吃素已经三年了"),
        ("home", "我住在杭州西湖区"),
        ("car", "我开的是一辆白色的丰田卡罗拉"),
        ("order", "空气净化器的订单号是 TB20240518"),
    ],
    "en": [
        ("hobby", "I play the cello on weekends and swim twice a week"),
        ("job", "I'm a high school chemistry teacher"),
        ("work", "I work at Northfield High School"),
        ("pet", "I have a beagle named Max"),
        ("family", "My wife Anna and I have two sons"),
        ("diet", "I've been vegetarian for three years"),
        ("home", "I live in Leeds, near the university"),
        ("car", "I drive a blue Honda Civic"),
        ("order", "The order number of the air purifier is TB20240518"),
    ],
}
QUESTIONS = [
    ("zh", "我有什么爱好？", "hobby"),
    ("en", "What are my hobbies?", "hobby"),
    ("zh", "我教什么科目？", "job"),
    ("en", "What subject do I teach?", "job"),
    ("zh", "我是做什么工作的？", "job"),
    ("en", "What do I do for a living?", "job"),
    ("zh", "我在哪工作？", "work"),
    ("en", "Where do I work?", "work"),
    ("zh", "我的家人有哪些？", "family"),
    ("en", "Tell me about my family", "family"),
    ("zh", "我养了什么宠物？", "pet"),
    ("en", "What pets do I have?", "pet"),
    ("zh", "我的饮食习惯是什么？", "diet"),
    ("en", "What's my diet like?", "diet"),
    ("zh", "我住在哪？", "home"),
    ("en", "Where do I live?", "home"),
    ("zh", "我喜欢什么？", "hobby"),
    ("en", "What do I like to do?", "hobby"),
    ("zh", "我开什么车？", "car"),
    ("en", "What car do I drive?", "car"),
]


async def seed(client: httpx.AsyncClient, auth: AuthHeaders, language: str) -> str:
    user = f"u-{language}"
    for n, (mid, text) in enumerate(FACTS[language]):
        message = {"role": "user", "content": text, "id": mid, "timestamp": NOW - (n + 1) * DAY}
        resp = await client.post(
            f"/v1/memory/{user}/messages",
            json={"session_id": f"old-{mid}", "messages": [message]},
            headers=auth(user),
        )
        assert resp.status_code == 200, resp.text
    return user


async def search(client: httpx.AsyncClient, auth: AuthHeaders, user: str, query: str) -> list[dict[str, Any]]:
    resp = await client.post(
        f"/v1/memory/{user}/search",
        json={"query": query, "as_of": NOW, "top_k": 5, "explain": True},
        headers=auth(user),
    )
    assert resp.status_code == 200, resp.text
    results: list[dict[str, Any]] = resp.json()["results"]
    return results


def relevance_of(hits: list[dict[str, Any]], source: str) -> float:
    return max((h["relevance"] for h in hits if h["source_message_ids"] == [source]), default=0.0)


class TestSearch:
    @pytest.mark.parametrize(("language", "query", "expected"), QUESTIONS)
    async def test_the_memory_stating_the_category_is_found(
        self, client: httpx.AsyncClient, auth: AuthHeaders, language: str, query: str, expected: str
    ) -> None:
        """Before: "我有什么爱好？" and "What are my hobbies?" found nothing; "我教什么科目？" ranked the
        teacher at relevance 0.01."""
        user = await seed(client, auth, language)
        hits = await search(client, auth, user, query)
        assert hits
        assert hits[0]["source_message_ids"] == [expected]
        assert hits[0]["relevance"] >= ADMITTED

    @pytest.mark.parametrize(
        ("language", "query", "other"),
        [
            # a hobby question is not a job question, nor the reverse
            ("zh", "我有什么爱好？", "job"),
            ("en", "What are my hobbies?", "job"),
            ("zh", "我教什么科目？", "hobby"),
            ("en", "What subject do I teach?", "hobby"),
        ],
    )
    async def test_a_memory_of_another_category_stays_low(
        self, client: httpx.AsyncClient, auth: AuthHeaders, language: str, query: str, other: str
    ) -> None:
        user = await seed(client, auth, language)
        hits = await search(client, auth, user, query)
        assert relevance_of(hits, other) < 0.1
        assert not any(
            h["explain"]["evidence"]["category"] for h in hits if h["source_message_ids"] == [other]
        )

    @pytest.mark.parametrize(
        ("language", "query"),
        [
            # someone else's hobby, or the question names someone else: not the user's category
            ("zh", "我女儿有什么爱好？"),
            ("en", "What are Anna's hobbies?"),
        ],
    )
    async def test_only_the_users_own_life(
        self, client: httpx.AsyncClient, auth: AuthHeaders, language: str, query: str
    ) -> None:
        user = await seed(client, auth, language)
        await client.post(
            f"/v1/memory/{user}/messages",
            json={
                "session_id": "old-daughter",
                "messages": [
                    {
                        "role": "user",
                        "content": "我女儿在学钢琴"
                        if language == "zh"
                        else "My daughter Anna takes piano lessons",
                        "id": "daughter",
                        "timestamp": NOW - 20 * DAY,
                    }
                ],
            },
            headers=auth(user),
        )
        hits = await search(client, auth, user, query)
        assert relevance_of(hits, "hobby") < ADMITTED


async def chat_turn(client: httpx.AsyncClient, auth: AuthHeaders, user: str, text: str) -> dict[str, Any]:
    resp = await client.post(
        "/v1/chat/completions",
        json={
            "model": "mnemo",
            "messages": [{"role": "user", "content": text}],
            "session_id": "now",
            "debug": True,
        },
        headers=auth(user),
    )
    assert resp.status_code == 200, resp.text
    debug: dict[str, Any] = resp.json()["debug"]
    return debug


class TestChat:
    @pytest.mark.parametrize(
        ("language", "query", "expected"),
        [
            ("zh", "我有什么爱好？", "hobby"),
            ("en", "What are my hobbies?", "hobby"),
            ("zh", "我教什么科目？", "job"),
            ("en", "What subject do I teach?", "job"),
            ("zh", "我的家人有哪些？", "family"),
            ("en", "What's my diet like?", "diet"),
        ],
    )
    async def test_the_memory_is_in_the_prompt(
        self, client: httpx.AsyncClient, auth: AuthHeaders, language: str, query: str, expected: str
    ) -> None:
        """Before: a chat turn asking "我有什么爱好？" or "What are my hobbies?" recalled nothing."""
        user = await seed(client, auth, language)
        content = dict(FACTS[language])[expected]
        debug = await chat_turn(client, auth, user, query)
        recalled = [r for r in debug["recalled"] if r["content"] == content]
        assert recalled, debug["recalled"]
        assert recalled[0]["in_prompt"] is True
        assert recalled[0]["relevance"] >= ADMITTED
        assert content in debug["prompt"][0]["content"]
        # and no memory of another category with it
        assert dict(FACTS[language])["car"] not in debug["prompt"][0]["content"]
