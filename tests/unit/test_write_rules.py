"""Cleaning, PII redaction, importance, anchors, topics, entities, query understanding (zh + en)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.models import Memory
from memory.recall.query import plan_query
from memory.recall.ranking import month_range, recency_importance, time_decay
from memory.text.cleaning import clause_spans, clean_text, join_pieces, segment, split_sentences
from memory.text.privacy import luhn_ok, redact, valid_cn_id
from memory.text.tokens import tokenize
from memory.write.merging import same_facts
from memory.write.scoring import (
    entities,
    importance,
    is_explicit_anchor,
    stored_text,
    topic_of,
    why_not_stored,
)

NOW = datetime(2026, 11, 29, 12, tzinfo=UTC).timestamp()


class TestCleaning:
    def test_emoji_and_control_characters(self) -> None:
        assert clean_text("好开心🎉🎉！\u200b\x07 see you 👋🏽 soon\n\nbye") == "好开心！ see you soon bye"

    def test_sentences_split_on_both_punctuations(self) -> None:
        assert split_sentences("我到了。你呢？ I am here. Are you? 好的！") == [
            "我到了。",
            "你呢？",
            "I am here.",
            "Are you?",
            "好的！",
        ]

    def test_long_text_segments(self) -> None:
        text = "这是一句话。" * 100
        parts = segment(text, 100)
        assert all(len(p) <= 100 for p in parts)
        assert "".join(parts) == text
        assert segment("short", 100) == ["short"]


class TestPrivacy:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ("mail me at li.lei+work@example.co.uk", "mail me at [EMAIL]"),
            ("我的手机是13812345678", "我的手机是[PHONE]"),
            ("call +86 138 1234 5678 now", "call [PHONE] now"),
            ("or +1 (415) 555-0132", "or [PHONE]"),
            ("身份证11010519491231002X", "身份证[ID_NUMBER]"),
            ("card 4111 1111 1111 1111 ok", "card [CARD] ok"),
            ("卡号6222021234567890128", "卡号[CARD]"),
        ],
    )
    def test_redacted(self, raw: str, expected: str) -> None:
        assert redact(raw) == expected

    @pytest.mark.parametrize(
        "raw",
        [
            "订单号 202611290001",  # an order number is not PII
            "card 4111111111111112",  # fails Luhn
            "11010519491231002Y",  # not an ID (bad check character)
            "room 301, 2 people",
        ],
    )
    def test_left_alone(self, raw: str) -> None:
        assert redact(raw) == raw

    def test_checksums(self) -> None:
        assert valid_cn_id("11010519491231002X")
        assert not valid_cn_id("110105194912310021")
        assert luhn_ok("4111111111111111")
        assert not luhn_ok("4111111111111112")


class TestImportance:
    @pytest.mark.parametrize(
        ("text", "preference", "task"),
        [
            ("我喜欢吃辣，以后都别给我推荐甜食", 1.0, 0.0),
            ("I hate cilantro, from now on never add it", 1.0, 0.0),
            ("帮我查一下明天去上海的高铁", 0.0, 1.0),
            ("Remind me to book a table for Friday", 0.0, 1.0),
            ("今天天气不错", 0.0, 0.0),
            ("nice weather today", 0.0, 0.0),
        ],
    )
    def test_components(self, text: str, preference: float, task: float) -> None:
        score = importance(text)
        assert (score.preference, score.task) == (preference, task)
        assert score.score == pytest.approx(0.4 * score.preference + 0.35 * score.task + 0.25 * score.entity)

    def test_threshold_examples(self) -> None:
        assert importance("I love hiking with my friend Sarah in Yosemite").score >= 0.65
        assert importance("我最喜欢和王芳去成都吃火锅").score >= 0.65
        assert importance("ok cool").score < 0.65
        assert importance("哈哈哈").score < 0.65

    @pytest.mark.parametrize(
        "text",
        [
            "记住，我的车位是B2-117",
            "别忘了我对花生过敏",
            "Remember this: the wifi password is on the fridge",
            "don't forget my sister's birthday",
            "订单号：A12345678",
            "合同号HT-2026-001",
            "报价单号 Q20260301",
            "my order number is 88231",
            "contract no. C-7781",
            "quote #QT-99120",
        ],
    )
    def test_explicit_anchors(self, text: str) -> None:
        assert is_explicit_anchor(text)

    @pytest.mark.parametrize("text", ["我们明天见", "see you tomorrow", "this is a great quote from a movie"])
    def test_not_anchors(self, text: str) -> None:
        assert not is_explicit_anchor(text)


class TestWriteHygiene:
    """Issue 40: what of a user's message is stored (memory/write/scoring.py `stored_text`)."""

    def test_clause_pieces(self) -> None:
        text = "I'm vegetarian, suggest a recipe."
        assert clause_spans(text, ["I'm vegetarian", "suggest a recipe"]) == [(0, 14), (16, 32)]
        assert clause_spans(text, ["suggest a recipe", "I'm vegetarian"]) is None  # out of order
        assert join_pieces(["我是素食者，"]) == "我是素食者"
        assert join_pieces(["Hi! ", "I work nights, "]) == "Hi! I work nights"

    @pytest.mark.parametrize(
        "text",
        [
            "Please remember: my locker code is 4312",
            "Remember, my locker code is 4312",
            "请你记好：我的车位是B2-117",
            "记着，我家门禁密码是1234",
        ],
    )
    def test_remember_said_in_a_clause_of_its_own_is_an_anchor(self, text: str) -> None:
        assert is_explicit_anchor(text)
        assert not is_explicit_anchor(text, role="assistant")

    @pytest.mark.parametrize(
        "text",
        [
            "Remember when we went to Paris?",
            "I remember the trip to Paris",
            "你还记得我住哪吗？",
            "Do you remember my sister?",
        ],
    )
    def test_remember_that_asks_or_tells_is_no_anchor(self, text: str) -> None:
        assert not is_explicit_anchor(text)
        assert stored_text(text, role="user") == text

    @pytest.mark.parametrize(
        ("text", "kept"),
        [
            ("我住在杭州，记住这个。I live in Hangzhou, remember that.", "我住在杭州。I live in Hangzhou."),
            ("我对花生过敏，记住这个 / I am allergic to peanuts", "我对花生过敏，I am allergic to peanuts"),
            ("记住我对花生过敏好吗？", "我对花生过敏"),
            ("Please remember that I'm allergic to nuts, ok?", "I'm allergic to nuts"),
            ("Guess what? I got a new job!", "I got a new job!"),
        ],
    )
    def test_what_is_stored(self, text: str, kept: str) -> None:
        assert stored_text(text, role="user") == kept

    @pytest.mark.parametrize(
        "text",
        [
            "我昨天给妈妈解释了一下怎么用微信",  # a request's verb told of the past
            "I wrote a poem for my sister yesterday.",
            "don't forget my sister's birthday",  # says what to do
            "别忘了帮我订周五的机票",
            "Thanks, Gina! Appreciate the offer. Need help with marketing strategies - any advice on reaching "
            "my target audience?",  # a conversation's turn: only a request's own words could go
            "I'm quitting my job. How do I tell my boss?",
        ],
    )
    def test_what_is_stored_whole(self, text: str) -> None:
        assert why_not_stored(text, role="user") is None
        assert stored_text(text, role="user") == text

    @pytest.mark.parametrize(
        ("text", "why"),
        [
            ("帮我写一个Python函数，把列表排序", "request"),  # what goes on with a request is the request
            ("don't suggest coffee machines, recommend a small kitchen appliance", "request"),
            ("Can you tell me my name?", "request"),  # "my" asks about the user, it tells nothing
            ("告诉我我住在哪", "request"),
            ("谢谢你！我住在哪个城市？", "question"),
            ("Thank you! Where do I live?", "question"),
        ],
    )
    def test_why_not_stored(self, text: str, why: str) -> None:
        assert why_not_stored(text, role="user") == why
        assert why_not_stored(text, role="assistant") is None


class TestTopicsAndEntities:
    @pytest.mark.parametrize(
        ("text", "topic"),
        [
            ("下周要去日本旅行，机票已经订好了", "travel"),
            ("My flight to Lisbon leaves on Friday", "travel"),
            ("我女儿下个月就上小学了", "family"),
            ("my daughter starts school next month", "family"),
            ("这个Python函数一直报bug", "tech"),
            ("the API server keeps crashing", "tech"),
            ("这个月工资还没发", "finance"),
            ("the gym and a healthy diet", "health"),
            ("我家猫咪生病了", "pets"),
            ("random words here", None),
        ],
    )
    def test_topics(self, text: str, topic: str | None) -> None:
        assert topic_of(text) == topic

    def test_entities(self) -> None:
        zh = entities("我和王芳下周三去成都")
        assert "王芳" in zh
        assert "成都" in zh
        en = entities("I met Sarah at Heathrow Airport, order 88231-X")
        assert "Sarah" in en
        assert "Heathrow Airport" in en
        assert "88231-X" in en


class TestQuery:
    @pytest.mark.parametrize(
        ("query", "negated"),
        [
            ("不要推荐咖啡机，我想要烤面包机", "咖啡机"),
            ("Don't suggest coffee machines, I want a toaster", "coffee machines"),
        ],
    )
    def test_negation(self, query: str, negated: str) -> None:
        plan = plan_query(query)
        assert plan.negated == [negated]
        assert negated not in plan.semantic_text
        assert not set(tokenize(negated)) & set(plan.keyword_tokens)

    def test_seed_example_quote_in_march(self) -> None:
        plan = plan_query("我3月提交的报价单", now=NOW)
        assert plan.doc_types == ["quote"]
        assert plan.month == "2026-03"
        assert month_range("2026-03") == (
            datetime(2026, 3, 1, tzinfo=UTC).timestamp(),
            datetime(2026, 4, 1, tzinfo=UTC).timestamp(),
        )

    @pytest.mark.parametrize("query", ["我的账单在哪", "where is my invoice", "find the bill"])
    def test_bill_aliases_expand_both_languages(self, query: str) -> None:
        plan = plan_query(query)
        assert plan.doc_types == ["bill"]
        assert {"账单", "发票", "invoic", "bill"} <= set(plan.keyword_tokens)

    def test_known_names_leave_the_semantic_query(self) -> None:
        plan = plan_query("What is Caroline's identity?", known_names=["Caroline", "Melanie"])
        assert plan.names == ["Caroline"]
        assert plan.semantic_text == "What is identity?"

    @pytest.mark.parametrize(
        ("query", "recent"),
        [
            ("我现在住在哪", True),
            ("where do I live now", True),
            ("我住在哪", False),
            ("where do I live", False),
        ],
    )
    def test_recency_cue(self, query: str, recent: bool) -> None:
        assert plan_query(query).wants_recent is recent

    @pytest.mark.parametrize(
        ("query", "types"),
        [
            ("婚礼办多少桌", ["quantity"]),
            ("how many kids does she have", ["quantity"]),
            ("他什么时候去的成都", ["time"]),
            ("when did she move", ["time"]),
            ("她在哪家公司上班", ["organisation"]),
            ("which company does he work for", ["organisation"]),
        ],
    )
    def test_answer_types(self, query: str, types: list[str]) -> None:
        assert plan_query(query).answer_types == types


class TestTokenizer:
    def test_cjk_bigrams_and_low_weight_unigrams(self) -> None:
        assert tokenize("我住在杭州") == [
            "我住",
            "住在",
            "在杭",
            "杭州",
            "u:住",
            "u:杭",
            "u:州",
        ]  # 我/在: stopwords

    def test_question_words_dropped(self) -> None:
        assert "什么" not in tokenize("你喜欢什么")
        assert "多少" not in tokenize("多少钱")

    def test_everyday_synonyms_fold(self) -> None:
        assert "爸爸" in tokenize("我爸在绍兴")
        assert "爸爸" in tokenize("父亲节")
        assert tokenize("my dad") == tokenize("my father") == ["father"]

    def test_english_stems_and_stopwords(self) -> None:
        assert tokenize("She was painting sunsets") == ["paint", "sunset"]


class TestTime:
    def test_decay_formula(self) -> None:
        day = 86400.0
        assert time_decay(NOW, as_of=NOW) == 1.0
        assert time_decay(NOW - 14 * day, as_of=NOW) == pytest.approx(0.3679, abs=1e-4)
        assert time_decay(NOW + day, as_of=NOW) == 1.0  # the future counts as now
        assert recency_importance(NOW, 1.0, as_of=NOW) == pytest.approx(1.0)
        assert recency_importance(NOW, 0.0, as_of=NOW) < recency_importance(NOW, 0.9, as_of=NOW)


def _m(content: str, entities: tuple[str, ...] = ()) -> Memory:
    return Memory(
        id="m",
        user_id="u",
        content=content,
        created_at=0,
        session_id="s",
        source="user",
        content_hash="h",
        entities=entities,
    )


class TestNearDuplicateGuard:
    def test_same_fact_reworded_slightly(self) -> None:
        assert same_facts(_m("I live in Hangzhou, remember that"), _m("I live in Hangzhou, remember that!"))

    @pytest.mark.parametrize(
        ("a", "b"),
        [("order A123 has shipped", "order A124 has shipped"), ("room 301", "room 302")],
    )
    def test_different_numbers_never_merge(self, a: str, b: str) -> None:
        assert not same_facts(_m(a), _m(b))

    def test_different_entities_never_merge(self) -> None:
        assert not same_facts(_m("我住在杭州", ("杭州",)), _m("我住在苏州", ("苏州",)))

    @pytest.mark.parametrize(
        ("a", "b"),
        [
            # the relation trace set's template sentences: the names are glued to Chinese, so no
            # entity was found in either and the words overlap by two thirds
            ("Karl下个月要去大理，机票已经订好了", "Ben下个月要去大理，机票已经订好了"),
            ("Anna说这家店很好吃", "Emma说这家店很好吃"),
            (
                "Karl is flying to Dali next month, tickets booked",
                "Ben is flying to Dali next month, tickets booked",
            ),
        ],
    )
    def test_sentences_about_different_people_never_merge(self, a: str, b: str) -> None:
        assert not same_facts(_m(a), _m(b))

    def test_the_same_name_said_again_still_merges(self) -> None:
        assert same_facts(
            _m("Karl下个月要去大理，机票已经订好了"), _m("Karl下个月要去大理，机票已经订好了！")
        )


def _topic_hits_reference(text: str) -> dict[str, int]:
    """The original rule, word by word: CJK words as substrings, others as `\\bword\\b`."""
    import re
    from collections import Counter

    from memory.text.language import CJK_RE
    from memory.text.lexicons import TOPICS

    low, hits = text.lower(), Counter[str]()
    for topic, words in TOPICS.items():
        for word in words:
            found = word in text if CJK_RE.search(word) else re.search(rf"\b{re.escape(word)}\b", low)
            if found:
                hits[topic] += 1
    return dict(hits)


def test_topic_hits_match_the_word_by_word_rule() -> None:
    import json
    from pathlib import Path

    from memory.text.lexicons import TOPICS
    from memory.write.scoring import _topic_hits

    words = [w for ws in TOPICS.values() for w in ws]
    texts = [
        *(f"I really like {w}, honestly." for w in words),
        *(f"我最近很喜欢{w}了" for w in words),
        *(f"{w.upper()}s and {w}-ish" for w in words[::7]),
        *(f"咖啡{w}咖啡" for w in words[::5]),
        "My road trip was paid by credit card; road-trip tips?",
        "",
    ]
    zh = json.loads((Path(__file__).resolve().parents[2] / "bench/data/zh_conversation.json").read_text())
    texts += [json.dumps(zh, ensure_ascii=False)[i : i + 200] for i in range(0, 40_000, 200)]
    for text in texts:
        assert dict(_topic_hits(text)) == _topic_hits_reference(text), text
