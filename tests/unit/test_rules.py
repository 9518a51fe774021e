"""Action classifier, slot extraction, summary and prompt assembly, in Chinese and English."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.chat.context import assemble_prompt, compress, humanize_age
from memory.chat.llm import PromptMessage, TurnFacts
from memory.chat.offline import offline_reply
from memory.chat.summary import ExtractiveSummarizer, said_of_self
from memory.models import Memory, ScoredMemory
from memory.session.actions import classify_action, coding_mode
from memory.text.language import detect_language
from memory.text.slots import extract_slots

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # a Sunday


class TestActions:
    @pytest.mark.parametrize(
        ("text", "action"),
        [
            ("帮我写一个Python函数，把列表排序", "ask_for_code"),
            ("Write a function that parses ISO dates", "ask_for_code"),
            ("这段代码报错了", "ask_for_code"),
            ("你还记得我住在哪吗？", "ask_recall"),
            ("Do you remember what I said about my sister?", "ask_recall"),
            ("我喜欢简短的回答", "set_preference"),
            ("From now on, answer in English", "set_preference"),
            ("为什么天空是蓝色的", "request_explanation"),
            ("Explain how HNSW indexes work", "request_explanation"),
            ("谢谢，很有用", "provide_feedback"),
            ("这个回答不错", "provide_feedback"),
            ("thanks, that works", "provide_feedback"),
            ("今天天气不错", "chit_chat"),
            ("how are you doing", "chit_chat"),
        ],
    )
    def test_classify(self, text: str, action: str) -> None:
        assert classify_action(text) == action

    def test_coding_mode_needs_three_in_a_row(self) -> None:
        assert not coding_mode(["ask_for_code", "ask_for_code"])
        assert coding_mode(["chit_chat", "ask_for_code", "ask_for_code", "ask_for_code"])
        assert not coding_mode(["ask_for_code", "ask_for_code", "ask_for_code", "provide_feedback"])


class TestSlots:
    def _slots(self, text: str) -> dict[str, str]:
        return {s.name: s.value for s in extract_slots(text, now=NOW)}

    def test_seed_example_zh(self) -> None:
        assert self._slots("帮我订明天下午3点去浦东机场的车") == {
            "date": "2026-11-30",
            "time": "15:00",
            "place": "浦东机场",
        }

    def test_same_in_english(self) -> None:
        assert self._slots("Book me a car to Pudong Airport tomorrow at 3pm") == {
            "date": "2026-11-30",
            "time": "15:00",
            "place": "Pudong Airport",
        }

    def test_month_without_day(self) -> None:
        assert self._slots("我3月提交的报价单") == {"month": "2026-03"}
        assert self._slots("the quote I sent in March") == {"month": "2026-03"}

    @pytest.mark.parametrize(
        ("text", "name", "value"),
        [
            ("订单号：A12345678，帮我查一下", "order_number", "A12345678"),
            ("合同号HT-2026-001已经签了", "contract_number", "HT-2026-001"),
            ("报价单号 Q20260301", "quote_number", "Q20260301"),
            ("my order number is 88231-x", "order_number", "88231-X"),
            ("contract no. C-7781 is signed", "contract_number", "C-7781"),
            ("quote #QT-99120", "quote_number", "QT-99120"),
        ],
    )
    def test_document_numbers(self, text: str, name: str, value: str) -> None:
        assert self._slots(text)[name] == value

    @pytest.mark.parametrize(
        ("text", "date"),
        [
            ("下周三见", "2026-12-02"),
            ("周五开会", "2026-12-04"),
            ("next Friday works", "2026-12-04"),
            ("2026年12月25日", "2026-12-25"),
            ("12月25号", "2026-12-25"),
            ("on March 3rd", "2026-03-03"),
            ("2027-01-05", "2027-01-05"),
            ("后天", "2026-12-01"),
        ],
    )
    def test_dates(self, text: str, date: str) -> None:
        assert self._slots(text)["date"] == date

    @pytest.mark.parametrize(
        ("text", "date"),
        [  # said on Sunday 2026-11-29: the past, resolved from when it was said (issue 28)
            ("上周五我去杭州见了客户", "2026-11-20"),  # the previous calendar week's Friday
            ("上星期一搬的家", "2026-11-16"),
            ("Last Friday I met the client in Boston", "2026-11-27"),  # the latest Friday before
            ("last sunday we hiked", "2026-11-22"),  # not today
            ("I went to a support group yesterday", "2026-11-28"),
            ("3天前我搬家了", "2026-11-26"),
            ("两周前我们去了厦门", "2026-11-15"),
            ("two weeks ago we moved", "2026-11-15"),
            ("a week ago", "2026-11-22"),
            ("上周我去了厦门", "2026-11-22"),  # a week back, as the approximate day
            ("last week I moved", "2026-11-22"),
        ],
    )
    def test_relative_dates_in_the_past(self, text: str, date: str) -> None:
        assert self._slots(text)["date"] == date

    @pytest.mark.parametrize(
        ("text", "month"),
        [
            ("上个月我换了工作", "2026-10"),
            ("last month I started a new job", "2026-10"),
            ("去年5月我在北京", "2025-05"),
            ("前年3月", "2024-03"),
            ("今年12月要搬家", "2026-12"),  # the year said wins over "not in the future"
        ],
    )
    def test_relative_months(self, text: str, month: str) -> None:
        assert self._slots(text)["month"] == month

    def test_last_month_in_january_is_last_december(self) -> None:
        january = datetime(2027, 1, 10, tzinfo=UTC)
        assert {s.name: s.value for s in extract_slots("last month", now=january)} == {"month": "2026-12"}

    @pytest.mark.parametrize(
        ("text", "period"),
        [
            ("去年夏天我在青岛学会了冲浪", "2025-06/2025-08"),
            ("Last summer I learned to sail", "2026-06/2026-08"),  # the latest summer that has ended
            ("2023年秋天我搬到了杭州", "2023-09/2023-11"),
            ("in the autumn of 2023 I moved", "2023-09/2023-11"),
            ("summer 2023 was hot", "2023-06/2023-08"),
            ("今年冬天想去哈尔滨", "2026-12/2027-02"),  # a winter runs into the next year
            ("this winter I want to ski", "2026-12/2027-02"),
            ("前年冬天", "2024-12/2025-02"),
            ("我去年去了哪里？", "2025-01/2025-12"),
            ("What did I do last year?", "2025-01/2025-12"),
            ("2022年我在上海工作", "2022-01/2022-12"),
            ("back in 2022 I lived in Ohio", "2022-01/2022-12"),
            ("the year before last", "2024-01/2024-12"),
            ("2026年春节我们回了老家", "2026-01/2026-12"),  # the festival is no spring: the year
        ],
    )
    def test_seasons_and_years_are_periods(self, text: str, period: str) -> None:
        assert self._slots(text)["period"] == period

    @pytest.mark.parametrize(
        "text",
        [
            "去年5月我在北京",  # the month
            "2023年5月8日",  # the day
            "I was born in May",
            # a season no year anchors names a kind of time, not a time
            "我夏天喜欢去海边游泳",
            "卡罗琳的夏季计划是什么？",
            "What are your plans for the summer?",
            "What do I like to do in the winter?",
            "Where did you spend the 2026 Spring Festival?",  # the lunar new year, not a spring
        ],
    )
    def test_a_day_a_month_or_a_season_alone_is_no_period(self, text: str) -> None:
        assert "period" not in self._slots(text)

    @pytest.mark.parametrize(
        ("now", "text", "period"),
        [
            (datetime(2026, 1, 15, tzinfo=UTC), "this winter", "2025-12/2026-02"),  # the one under way
            (datetime(2026, 1, 15, tzinfo=UTC), "今年冬天", "2026-12/2027-02"),  # the one begun this year
            (datetime(2026, 1, 15, tzinfo=UTC), "last winter", "2024-12/2025-02"),
            (datetime(2026, 7, 15, tzinfo=UTC), "last summer", "2025-06/2025-08"),  # not the one under way
            (datetime(2026, 7, 15, tzinfo=UTC), "this summer", "2026-06/2026-08"),
            (datetime(2026, 7, 15, tzinfo=UTC), "next summer", "2027-06/2027-08"),
        ],
    )
    def test_a_season_is_read_from_when_it_was_said(self, now: datetime, text: str, period: str) -> None:
        assert {s.name: s.value for s in extract_slots(text, now=now)}["period"] == period

    @pytest.mark.parametrize(
        ("text", "time"),
        [
            ("晚上8点", "20:00"),
            ("上午十点半", "10:30"),
            ("3点20分", "03:20"),
            ("at 7:45 pm", "19:45"),
            ("at noon", "12:00"),
            ("15:30", "15:30"),
        ],
    )
    def test_times(self, text: str, time: str) -> None:
        assert self._slots(text)["time"] == time

    def test_cities_and_nothing(self) -> None:
        assert self._slots("我住在杭州") == {"place": "杭州"}
        assert self._slots("I moved to Lisbon") == {"place": "Lisbon"}
        assert self._slots("hello") == {}
        assert self._slots("你好") == {}


class TestSummary:
    """Issue 40: the offline summary keeps what the user said of themselves, in their words; it rebuilt
    questions into "User said which city do User lives in"."""

    @pytest.mark.parametrize(
        ("said", "zh", "facts", "asked"),
        [
            ("I live in Hangzhou, remember that", False, ["I live in Hangzhou"], None),
            ("Um, I really like spicy food", False, ["I like spicy food"], None),
            ("Can you write me a Python function?", False, [], "write me a Python function"),
            ("which city do I live in, and what pet do I have?", False, [], None),
            (
                "Hi! I live in Hangzhou and my dog is called Biscuit.",
                False,
                ["I live in Hangzhou", "my dog is called Biscuit"],
                None,
            ),
            ("我住在杭州，记住这个", True, ["我住在杭州"], None),
            ("嗯，那个我喜欢吃辣", True, ["我喜欢吃辣"], None),
            ("帮我写一个Python函数", True, [], "写一个Python函数"),
            ("你好，我住哪？", True, [], None),
            ("要是我住在北京就好了", True, [], None),
            ("我老公是建筑师", True, ["我老公是建筑师"], None),
        ],
    )
    def test_what_a_message_says_of_the_user(
        self, said: str, zh: bool, facts: list[str], asked: str | None
    ) -> None:
        assert said_of_self(said, zh) == (facts, asked)

    async def test_rolling_and_bounded(self) -> None:
        s = ExtractiveSummarizer()
        first = await s.summarize(None, ["我住在杭州，记住这个"], "zh", max_chars=80)
        second = await s.summarize(first, ["帮我订明天下午3点去浦东机场的车"], "zh", max_chars=80)
        assert second == "用户说过：我住在杭州；用户请求：订明天下午3点去浦东机场的车"
        third = await s.summarize(second, ["我的车是一辆红色的沃尔沃。"], "zh", max_chars=80)
        assert (
            third == "用户说过：我的车是一辆红色的沃尔沃；我住在杭州；用户请求：订明天下午3点去浦东机场的车"
        )
        tight = await s.summarize(third, ["我对花生过敏"], "zh", max_chars=24)
        assert tight == "用户说过：我对花生过敏；我的车是一辆红色的沃尔沃"  # facts outlive requests
        long = await s.summarize(second, ["我" + "很" * 200 + "累"], "zh", max_chars=80)
        assert len(long) <= 80
        en = await s.summarize(None, ["I prefer short answers"], "en", max_chars=80)
        assert en == "The user said: I prefer short answers"
        asked = await s.summarize(en, ["How do I boil an egg?", "What's my name?"], "en", max_chars=80)
        assert asked == en  # questions add nothing

    def test_language(self) -> None:
        assert detect_language("我住在哪个城市？") == "zh"
        assert detect_language("Where do I live?") == "en"
        assert detect_language("帮我写一个Python function") == "zh"


def _hit(content: str, age_days: float, source: str = "user", topic: str | None = None) -> ScoredMemory:
    m = Memory(
        id="m",
        user_id="u",
        content=content,
        created_at=NOW.timestamp() - age_days * 86400,
        session_id="s",
        source="user" if source == "user" else "assistant",
        content_hash="h",
        topic=topic,
    )
    return ScoredMemory(memory=m, score=0.9, similarity=0.9)


class TestContext:
    def test_ages(self) -> None:
        assert humanize_age(3 * 86400 + 5, "zh") == "3天前"
        assert humanize_age(3 * 86400 + 5, "en") == "3 days ago"
        assert humanize_age(86400, "zh") == "昨天"
        assert humanize_age(10, "en") == "just now"
        assert humanize_age(65 * 86400, "en") == "2 months ago"

    def test_compress_keeps_sentence_boundaries(self) -> None:
        text = "甲" * 100 + "。" + "乙" * 100
        assert compress(text, 150) == "甲" * 100 + "。…"
        assert compress("短句。", 150) == "短句。"
        assert len(compress("word " * 100, 150)) <= 150

    @pytest.mark.parametrize("lang", ["zh", "en"])
    def test_prompt_sections(self, lang: str) -> None:
        prompt = assemble_prompt(
            language=lang,
            new_message=PromptMessage("user", "我住在哪？" if lang == "zh" else "Where do I live?"),
            now=NOW.timestamp(),
            summary=None,
            recalled=[_hit("我住在杭州" if lang == "zh" else "I live in Hangzhou", 3, topic="travel")],
            buffer=[PromptMessage("user", "hi"), PromptMessage("assistant", "hello")],
            coding_mode=True,
        )
        system = prompt.messages[0].content
        assert [m.role for m in prompt.messages] == ["system", "user", "assistant", "user"]
        if lang == "zh":
            assert "不要编造" in system
            assert "[历史摘要]\n（暂无）" in system
            assert "- (3天前，你说，关于旅行) 我住在杭州" in system
            assert "编程协作" in system
        else:
            assert "Never invent details" in system
            assert "[history summary]\n(none yet)" in system
            assert "- (3 days ago, you said, about travel) I live in Hangzhou" in system
            assert "coding collaboration" in system
        assert prompt.context_chars == sum(len(m.content) for m in prompt.messages)

    def test_offline_reply_lists_recalled(self) -> None:
        zh = offline_reply(TurnFacts("zh", [_hit("我住在杭州", 3)], NOW.timestamp()))
        en = offline_reply(TurnFacts("en", [], NOW.timestamp()))
        assert "未配置语言模型" in zh
        assert "3天前：我住在杭州" in zh
        assert "No language model is configured" in en
        assert "Nothing relevant was recalled" in en
