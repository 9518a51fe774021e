"""The chat recall gate (memory/chat/recall_gate.py) and what it reads of a message
(memory/text/turns.py `speaks_of_self`), in Chinese and English."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memory.chat.recall_gate import RecallGate, names_of, speakers_named
from memory.models import Evidence, Memory, ScoredMemory
from memory.text.turns import speaks_of_self


@pytest.mark.parametrize(
    "text",
    [
        "我住在哪里？",
        "我们国庆去哪玩",
        "咱家的猫叫什么",
        "女儿在学什么乐器",  # one's family, as Chinese names it without a pronoun
        "妈妈每天吃什么药",
        "你还记得上次说的那家餐厅吗",
        "帮我看看我的订单到哪了",  # "帮我" is a request, "我的订单" is the speaker's
        "When is my dentist appointment?",
        "Where do I live?",
        "What do you remember about us?",
        "We\u2019re planning a trip, any ideas?",  # a phone's curly apostrophe
        "Remind me what Anna teaches",
        "How do I get to my office from here?",  # "my": the speaker's office
        "我该怎么跟我老婆道歉？",  # the speaker's wife
        "What should I cook tonight?",
    ],
)
def test_speaks_of_self(text: str) -> None:
    assert speaks_of_self(text)


@pytest.mark.parametrize(
    "text",
    [
        "地球到月球有多远？",
        "帮我写一首关于春天的诗",  # "我" only as the object of a request
        "给我讲个笑话吧",
        "告诉我太阳系有几颗行星",
        "What's the capital of Australia?",
        "Give me three tips for a job interview",
        "Tell me a fun fact about octopuses",
        "Let's talk about black holes",
        "Imagine a city under the sea",  # "i" inside a word is not "I"
        "Where does Tom live?",  # about someone named: names_of lets a memory naming Tom in
        "我该怎么跟新同事打招呼比较自然？",  # how to do something: "我" only asks
        "我们应该如何准备面试？",
        "How do I bake sourdough bread?",
        "How should we split a restaurant bill fairly?",
    ],
)
def test_does_not_speak_of_self(text: str) -> None:
    assert not speaks_of_self(text)


def test_names_are_capitalised_words_and_ids() -> None:
    assert {"carolin", "lgbtq"} <= names_of("When did Caroline go to the LGBTQ support group?")
    assert "when" not in names_of("When did Caroline go?")  # a sentence's first word is not a name
    assert {"inv", "88231"} <= names_of("what is INV-88231 for")
    assert names_of("Give me three tips for a job interview") == frozenset()


def hit(relevance: float, words: tuple[str, ...] = (), coverage: float = 0.02) -> ScoredMemory:
    memory = Memory(
        id=f"m{relevance}-{len(words)}",
        user_id="u",
        content="…",
        created_at=0.0,
        session_id="s",
        source="user",
        content_hash="h",
    )
    evidence = Evidence(
        query_language="zh", memory_language="zh", cosine=0.5, coverage=coverage, bridge=None, words=words
    )
    return ScoredMemory(memory=memory, score=1.0, similarity=0.5, relevance=relevance, evidence=evidence)


GATE = RecallGate(min_relevance=0.005, general_min_relevance=0.2)


def test_every_memory_needs_the_floor() -> None:
    assert GATE.admitted("我住在哪里？", [hit(0.004), hit(0.006)]) == [hit(0.006)]


def test_a_question_about_the_world_needs_a_strong_memory() -> None:
    weak, strong = hit(0.07, ("天",)), hit(0.3, ("股市",))
    assert GATE.admitted("明天股市会涨吗？", [weak, strong]) == [strong]
    assert GATE.admitted("Give me three tips for a job interview", [hit(0.13, ("job",))]) == []


def test_a_name_or_the_keyword_channel_lets_a_weak_memory_in() -> None:
    caroline = hit(0.02, ("carolin",))
    assert GATE.admitted("What did Caroline research?", [caroline]) == [caroline]
    guitar = hit(0.05, ("周明", "吉他", "老师"), coverage=0.6)
    assert GATE.admitted("周明的吉他老师是谁", [guitar]) == [guitar]
    # a three-character name is two Chinese words, whatever the coverage of a long question
    caroline_zh = hit(0.02, ("卡罗", "罗琳", "琳"), coverage=0.15)
    assert GATE.admitted("卡罗琳何时参加了LGBTQ支持小组？", [caroline_zh]) == [caroline_zh]
    assert GATE.admitted("二十四节气里哪个节气在夏天开始？", [hit(0.03, ("二十", "十四"))]) == []
    # one common word in common is not enough: "准备" in a moving checklist and a Japanese exam
    exam = hit(0.05, ("准备",), coverage=0.1)
    assert GATE.admitted("帮我列一个搬家要准备的清单", [exam]) == []


def test_without_a_general_floor_the_gate_is_the_floor() -> None:
    gate = RecallGate(min_relevance=0.005, general_min_relevance=0.0)
    assert gate.admitted("明天股市会涨吗？", [hit(0.07, ("天",))]) == [hit(0.07, ("天",))]


def said_by(name: str, relevance: float = 0.02) -> ScoredMemory:
    h = hit(relevance)
    return ScoredMemory(
        memory=replace(h.memory, id=f"{name}-{relevance}", name=name),
        score=1.0,
        similarity=0.5,
        relevance=relevance,
        evidence=h.evidence,
    )


@pytest.mark.parametrize(
    ("question", "speaker", "other"),
    [
        ("卡罗琳什么时候去了支持小组？", "Caroline", "Melanie"),  # Chinese question, English speakers
        ("When did Caroline go to the support group?", "卡罗琳", "梅兰妮"),  # and the other way round
        ("When did Caroline go to the support group?", "Caroline", "Melanie"),  # one script
        ("梅兰妮喜欢画什么？", "梅兰妮", "卡罗琳"),
    ],
)
def test_a_question_naming_the_speaker_lets_their_turns_in(question: str, speaker: str, other: str) -> None:
    theirs, not_theirs = said_by(speaker), said_by(other)
    assert speakers_named(question, {speaker, other}) == {speaker}
    assert GATE.admitted(question, [theirs, not_theirs]) == [theirs]


def test_a_world_question_names_no_speaker() -> None:
    assert speakers_named("What's the capital of Australia?", {"Caroline", "卡罗琳"}) == set()
    assert GATE.admitted("地球到月球有多远？", [said_by("卡罗琳")]) == []


def test_a_world_question_takes_a_memory_near_by_topic_alone_only_when_likely_relevant() -> None:
    """Asked "Why do cats purr?", the bridge found 团子 the cat at relevance 0.35, no word in common; a
    word in common ("chess" for a chess player) keeps the general floor."""
    cat, likely = hit(0.35), hit(0.6)
    assert GATE.admitted("Why do cats purr?", [cat, likely]) == [likely]
    assert GATE.admitted("教我做一道简单的家常菜", [hit(0.33, ("菜",))]) == []  # one character is no word
    chess = hit(0.3, ("chess",))
    assert GATE.admitted("What are the rules of chess castling?", [chess]) == [chess]
    assert GATE.admitted("我家的猫为什么喜欢晒太阳？", [cat]) == [cat]  # about the speaker's own cat
