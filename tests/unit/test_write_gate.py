"""The write policy's gate and health lexicon (issue 24), zh + en: small talk, questions that only ask,
health and safety facts, the user-only "remember" anchor."""

from __future__ import annotations

import pytest

from memory.models import Role
from memory.text.turns import clauses, is_health_fact, is_small_talk, only_asks
from memory.write.scoring import HEALTH_IMPORTANCE, importance, is_explicit_anchor, is_health, skip_reason


@pytest.mark.parametrize(
    "text",
    [
        "好的，我记住了",
        "好的呢，已经帮你记下了～",
        "嗯嗯，收到",
        "哈哈哈哈",
        "谢谢你！晚安",
        "Sure, noted!",
        "Got it, I'll keep that in mind.",
        "thanks",
        "ok cool",
        "No problem, happy to help!",
        "lol",
    ],
)
def test_small_talk(text: str) -> None:
    assert is_small_talk(text)
    assert skip_reason(text, role="assistant") == "small_talk"
    assert skip_reason(text, role="user") == "small_talk"


@pytest.mark.parametrize(
    "text",
    [
        "好的，我记住了：你对花生过敏",
        "Noted: your flight is at 9 on Friday.",
        "哈哈，我昨天也去爬山了",
        "thanks, the hotel in Lisbon was great",
        "I'll remember that you prefer window seats",
    ],
)
def test_acknowledgement_with_content_is_not_small_talk(text: str) -> None:
    assert not is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "我住在哪个城市？",
        "what's my dog's name?",
        "你还记得我住哪吗",
        "对了，我住哪来着？",
        "By the way, where do I live?",
        "Am I allergic to anything?",
        "Do you remember that I moved?",
        "你能告诉我我的狗叫什么吗？",
    ],
)
def test_questions_that_only_ask(text: str) -> None:
    assert only_asks(text)
    assert skip_reason(text, role="user") == "question"


@pytest.mark.parametrize(
    "text",
    [
        "我搬到苏州了，有什么好吃的推荐吗？",  # states a move before it asks
        "I moved to Suzhou, any good restaurants?",
        "小雨是你那个当老师的女朋友对吧？",  # a check states what it checks
        "You moved to Porto, right?",
        "Can you remind me to take my pills?",  # a task
        "Can you remind me to call Anna on Friday?",
        "记住我对花生过敏好吗？",  # asks to remember
        "What got you into running?",  # about the other speaker: presupposes that they run
        "Hey Gina, how's it going?",  # names someone
    ],
)
def test_questions_that_are_kept(text: str) -> None:
    assert skip_reason(text, role="user") is None


def test_an_assistants_question_is_kept() -> None:
    """Only the user's questions are gated: the assistant's question is the context a short answer needs."""
    assert skip_reason("你是素食者吗？", role="assistant") is None
    assert skip_reason("Are you vegetarian?", role="assistant") is None


def test_clauses_mark_what_is_asked() -> None:
    assert [(c.text, c.interrogative) for c in clauses("我搬到苏州了，有什么好吃的推荐吗？")] == [
        ("我搬到苏州了", False),
        ("有什么好吃的推荐吗", True),
    ]
    assert [c.interrogative for c in clauses("I moved. Where should I eat?")] == [False, True]


@pytest.mark.parametrize(
    "text",
    [
        "I'm allergic to peanuts",
        "I\u2019m allergic to peanuts.",  # a phone's apostrophe
        "我对花生过敏",
        "I take insulin twice a day.",
        "我每天吃降压药",
        "I have type 2 diabetes.",
        "我有哮喘",
        "I'm pregnant, due in May.",
        "I can't eat shellfish.",
        "我不能吃辣",
        "I'm on a strict gluten-free diet.",
        "我是素食者，不吃肉",
        "My emergency contact is my wife Lin.",
        "我的紧急联系人是我妈妈",
        "我的血型是O型",
        "I use a wheelchair.",
    ],
)
def test_health_and_safety_facts(text: str) -> None:
    assert is_health_fact(text)
    assert is_health(text, role="user")
    assert not is_health(text, role="assistant")  # the assistant's words are not the user's facts


@pytest.mark.parametrize(
    "text",
    [
        "Am I allergic to peanuts?",  # asked, not stated
        "我对花生过敏吗？",
        "We went to a vegan restaurant.",
        "我不能去了，改天吧",
        "I can't make it tonight.",
        "I have two cats.",
        "我有两只猫",
    ],
)
def test_not_health_facts(text: str) -> None:
    assert not is_health(text, role="user")


def test_health_importance_is_above_the_fact_threshold() -> None:
    assert HEALTH_IMPORTANCE > 0.65


def test_curly_apostrophes_score_like_straight_ones() -> None:
    assert importance("I\u2019m allergic to peanuts").score == importance("I'm allergic to peanuts").score > 0


@pytest.mark.parametrize(
    ("text", "role", "anchor"),
    [
        ("记住，我的车位是B2-117", "user", True),
        ("Remember this: the spare key is under the mat", "user", True),
        ("好的，我记住了", "assistant", False),
        ("OK, I'll remember this: the spare key is under the mat", "assistant", False),
        ("别忘了，明天交报告", "assistant", False),
        ("你还记得我住哪吗？", "user", False),
        ("Do you remember that I moved?", "user", False),
        ("my order number is 88231", "user", True),
        ("Your order number is 88231", "assistant", True),  # a number given is a number given
        ("what's my order number?", "user", False),  # no number
        ("我的订单号是多少？", "user", False),
    ],
)
def test_anchors_by_speaker(text: str, role: Role, anchor: bool) -> None:
    assert is_explicit_anchor(text, role=role) is anchor
