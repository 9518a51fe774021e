"""The write policy's gate and health lexicon (issue 24), zh + en: small talk, questions that only ask,
health and safety facts, the user-only "remember" anchor; requests for the assistant, greetings before a
question, and the "remember" anchor kept out of the stored text (issue 40, bench/data/write_hygiene.json)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memory.models import Memory, Message, Role
from memory.text.turns import clauses, is_health_fact, is_small_talk, only_asks
from memory.write.policy import WritePolicy, memories_of
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


@pytest.mark.parametrize(
    "text",
    [
        "长城有多长？",  # names something, asks the assistant about the world
        "What's the capital of Australia?",
        "When did Jon go to a fair to get more exposure for his dance studio?",
        "卡罗琳什么时候去的支持小组？",
        "What got you into running?",  # the assistant runs nothing
    ],
)
def test_a_chat_turns_question_to_the_assistant_is_no_memory(text: str) -> None:
    """Issue 40: kept from a conversation between people (`/messages`), where a question names what
    the speakers share; asked of the assistant in a chat turn, it crowded the user's own words out of
    later prompts (231 LoCoMo questions asked in one session recalled each other)."""
    assert skip_reason(text, role="user", to_assistant=True) == "question"


@pytest.mark.parametrize(
    "text",
    [
        "Should I take the job offer from Google or stay at Alibaba?",  # says what the user weighs
        "我下个月去东京出差，那边冷吗？",  # states the trip before it asks
        "Can you remind me to call Anna on Friday?",  # a task
        "记住我对花生过敏好吗？",  # asks to remember
    ],
)
def test_a_chat_turns_question_that_tells_of_the_user_is_kept(text: str) -> None:
    assert skip_reason(text, role="user", to_assistant=True) is None


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


# --- write hygiene for chat turns (issue 40) --------------------------------------------------------

HYGIENE: list[dict[str, Any]] = json.loads(
    (Path(__file__).resolve().parents[2] / "bench" / "data" / "write_hygiene.json").read_text("utf-8")
)["messages"]
NOW = 1_780_000_000.0


def made(text: str, role: Role = "user") -> list[Memory]:
    """What the write policy makes of one message (memory/write/policy.py `memories_of`)."""
    return memories_of("alice", "s1", Message(role, text, id="m1"), [], NOW, WritePolicy())


def test_the_labelled_set_covers_both_languages() -> None:
    assert len(HYGIENE) >= 60
    by = Counter((m["kind"], m["lang"]) for m in HYGIENE)
    for kind in {m["kind"] for m in HYGIENE}:
        assert by[(kind, "zh")], kind
        assert by[(kind, "en")], kind
    assert len({m["text"] for m in HYGIENE}) == len(HYGIENE)


@pytest.mark.parametrize("item", HYGIENE, ids=[f"{m['kind']}-{m['lang']}-{i}" for i, m in enumerate(HYGIENE)])
def test_the_write_policy_over_the_labelled_set(item: dict[str, Any]) -> None:
    """Each message of bench/data/write_hygiene.json makes the memory its label says (its exact text),
    or none; `fact` ones are facts."""
    memories = made(item["text"])
    assert [m.content for m in memories] == ([] if item["stored"] is None else [item["stored"]]), item["why"]
    if item.get("fact"):
        assert memories[0].tier == "fact"
        assert (memories[0].importance or 0.0) >= WritePolicy().threshold


@pytest.mark.parametrize(
    "text",
    [
        "Tell me a fun fact number 0 about the ocean",
        "write me a poem",
        "translate this",
        "Give me three tips for a job interview",
        "How do I convert 100 Celsius to Fahrenheit?",
        "Write a haiku about autumn rain.",
        "帮我写一首诗",
        "给我讲个笑话",
        "翻译一下",
        "解释一下什么是量子纠缠",
        "怎么把 Excel 转成 CSV？",
        "你好，帮我写一首关于秋天的诗",
    ],
)
def test_requests_for_the_assistant_are_no_memory(text: str) -> None:
    """A request or a how-to is no memory, whatever it names (a number, Excel); `POST /messages` names
    it a message that only asks."""
    assert skip_reason(text, role="user") == "question"
    assert made(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "你好，我住哪？",
        "Thank you! Where do I live?",
        "谢谢你！我住在哪个城市？",
        "Thank you so much! What's my dog called?",
    ],
)
def test_a_greeting_before_a_question_asks_nothing_of_the_other_speaker(text: str) -> None:
    """你/you in 你好 or "thank you" is no question to the other speaker (that one is kept: "你住哪？")."""
    assert skip_reason(text, role="user") == "question"
    assert made(text) == []


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("I'm vegetarian, suggest a recipe", "I'm vegetarian"),
        ("我是素食者，推荐个菜谱", "我是素食者"),
        ("I have a cat named Miso. Give me some toy ideas!", "I have a cat named Miso."),
        ("我女儿周六满六岁，帮我写一首生日诗", "我女儿周六满六岁"),
        ("I'm allergic to shellfish, can you suggest a dinner?", "I'm allergic to shellfish"),
    ],
)
def test_a_request_that_carries_a_fact_keeps_the_fact(text: str, kept: str) -> None:
    (memory,) = made(text)
    assert memory.content == kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("记住：我的车牌号是沪A12345", "我的车牌号是沪A12345"),
        ("Please remember: my locker code is 4312", "my locker code is 4312"),
        ("remember that I moved to Berlin in May", "I moved to Berlin in May"),
        ("请记住我的生日是5月3日", "我的生日是5月3日"),
        ("别忘了我对花生过敏", "我对花生过敏"),
        ("我的车位是B2-117，记住了", "我的车位是B2-117"),
        ("My wifi password is on the fridge, remember that.", "My wifi password is on the fridge."),
        ("请记住：我的手机号是13812345678", "我的手机号是[PHONE]"),  # PII redaction still applies
    ],
)
def test_the_remember_anchor_pins_the_memory_but_is_not_stored(text: str, kept: str) -> None:
    (memory,) = made(text)
    assert memory.content == kept
    assert memory.tier == "fact"
    assert (memory.importance or 0.0) >= WritePolicy().threshold


@pytest.mark.parametrize(
    "text",
    [
        "Remind me to call Anna on Friday",
        "提醒我明天下午三点开会",
        "帮我订一张周五去上海的机票",
        "Book a table for two at 7pm tomorrow",
        "Recommend a gift for my wife, she loves gardening",
        "给我女儿写一首生日诗",
        "Tell me more about your trip!",
        "说说你的新工作吧",
    ],
)
def test_to_dos_and_requests_that_tell_of_someone_are_kept_whole(text: str) -> None:
    """A to-do is for later (remind, book: a memory); a request that says something of the user (my
    wife, 我女儿) or asks the other speaker about themself is kept whole."""
    assert [m.content for m in made(text)] == [text]


@pytest.mark.parametrize(
    "text",
    [
        "Tell me more about your trip!",
        "好的，记住：你对花生过敏，下单时我会提醒你。",
        "Write it down: the code is 4312.",
    ],
)
def test_the_assistants_words_are_kept_as_said(text: str) -> None:
    """Only the user's requests are gated and only the user's "remember" is an anchor."""
    (memory,) = made(text, role="assistant")
    assert memory.content == text
