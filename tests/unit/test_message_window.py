"""The bounded part of a long message the per-message rules read (issue 39), and redaction that stays
linear on any message, in Chinese and English."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from app.http.schemas import SearchRequest
from memory.chat.summary import ExtractiveSummarizer
from memory.text.privacy import redact
from memory.text.slots import extract_slots
from memory.text.window import MESSAGE_WINDOW_CHARS, ending, message_window, opening

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)  # a Sunday
ZH_FILLER = "这一段是我从合同里复制过来的条款，内容很长，和后面的问题关系不大。"
EN_FILLER = "This paragraph is pasted from the contract and has little to do with the question. "


def long_message(opening: str, filler: str, ending: str, size: int = 32_000) -> str:
    middle = filler * ((size - len(opening) - len(ending)) // len(filler) + 1)
    return opening + middle[: size - len(opening) - len(ending)] + ending


class TestWindow:
    @pytest.mark.parametrize(
        "text", ["我住在杭州，记住这个", "I live in Hangzhou, remember that", ZH_FILLER * 100]
    )
    def test_a_message_that_fits_is_itself(self, text: str) -> None:
        assert len(text) <= MESSAGE_WINDOW_CHARS
        assert message_window(text) == text

    @pytest.mark.parametrize(
        ("opening", "filler", "ending"),
        [
            ("帮我看看这份合同：", ZH_FILLER, "所以违约金到底是多少？"),
            ("Please read this contract: ", EN_FILLER, "So how much is the penalty?"),
        ],
    )
    def test_a_long_message_keeps_its_opening_and_its_end(
        self, opening: str, filler: str, ending: str
    ) -> None:
        text = long_message(opening, filler, ending)
        window = message_window(text)
        assert len(window) <= MESSAGE_WINDOW_CHARS
        assert len(window) > MESSAGE_WINDOW_CHARS * 0.9
        assert window.startswith(opening)
        assert window.endswith(ending)
        head, tail = window.split("\n")
        assert text.startswith(head)
        assert text.endswith(tail)

    def test_english_is_cut_between_words(self) -> None:
        words = [f"word{i}" for i in range(8000)]
        text = " ".join(words)
        head, tail = message_window(text).split("\n")
        assert set(head.split()) <= set(words)
        assert set(tail.split()) <= set(words)

    def test_chinese_is_cut_after_punctuation(self) -> None:
        text = ZH_FILLER * 1000
        head, tail = message_window(text).split("\n")
        assert head.endswith(("，", "。"))
        assert tail.startswith(("这一段", "内容很长", "和后面"))

    def test_its_size_is_the_search_apis_query_limit(self) -> None:
        """A chat turn never asks recall for more than a search may."""
        limits = [getattr(m, "max_length", None) for m in SearchRequest.model_fields["query"].metadata]
        assert MESSAGE_WINDOW_CHARS in limits


class TestSlotsOfALongMessage:
    def test_chinese(self) -> None:
        text = long_message("明天下午3点我要去", ZH_FILLER, "我们在浦东机场见，订单号是A7781234。")
        slots = {s.name: s.value for s in extract_slots(text, now=NOW)}
        assert slots["date"] == "2026-11-30"
        assert slots["time"] == "15:00"
        assert slots["place"] == "浦东机场"
        assert slots["order_number"] == "A7781234"

    def test_english(self) -> None:
        text = long_message(
            "Tomorrow at 3pm I fly out. ", EN_FILLER, "Meet me at Pudong Airport, order number A7781234."
        )
        slots = {s.name: s.value for s in extract_slots(text, now=NOW)}
        assert slots["date"] == "2026-11-30"
        assert slots["time"] == "15:00"
        assert slots["place"] == "Pudong Airport"
        assert slots["order_number"] == "A7781234"


class TestSummaryOfALongMessage:
    @pytest.mark.parametrize(
        ("language", "opening", "filler"),
        [("zh", "我下个月搬去成都。", ZH_FILLER), ("en", "I am moving to Chengdu next month. ", EN_FILLER)],
    )
    def test_the_clause_is_the_one_of_its_opening(self, language: str, opening: str, filler: str) -> None:
        summarizer = ExtractiveSummarizer()
        text = long_message(opening, filler, "")
        short = opening + filler * 5
        whole = asyncio.run(summarizer.summarize(None, [text], language, max_chars=80))
        assert whole == asyncio.run(summarizer.summarize(None, [short], language, max_chars=80))
        assert ("成都" if language == "zh" else "Chengdu") in whole


def _best_of_three(work: Callable[[], object]) -> float:
    times = []
    for _ in range(3):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


class TestRedactionIsLinear:
    """Every character of a message is redacted, so redaction must cost about the same on any text of a
    length: 32,000 letters or digits in a row without an @ took 0.8 s (every start of a possible e-mail
    address rescanned the rest of the run), 400 times ordinary text of the same length."""

    @pytest.mark.parametrize("run", ["a" * 32_000, "7" * 32_000, "a." * 16_000, "x@" + "ab-" * 10_600])
    def test_a_long_run_costs_what_ordinary_text_costs(self, run: str) -> None:
        rng = random.Random(39)
        ordinary = " ".join(
            rng.choice(["我的", "订单", "明天", "my", "order", "is", "ready", "call", "me", "home"])
            for _ in range(12_000)
        )[:32_000]
        assert _best_of_three(lambda: redact(run)) < 20 * _best_of_three(lambda: redact(ordinary)) + 0.005

    @pytest.mark.parametrize(
        ("text", "redacted"),
        [
            ("我的邮箱是zhang.san@example.com，记一下", "我的邮箱是[EMAIL]，记一下"),
            ("mail me at li_si+notes@mail.example.org please", "mail me at [EMAIL] please"),
            ("7" * 20_000 + " 以及 wang@example.cn", "7" * 20_000 + " 以及 [EMAIL]"),
            ("a" * 20_000 + " and bob@example.com", "a" * 20_000 + " and [EMAIL]"),
        ],
    )
    def test_addresses_are_still_redacted(self, text: str, redacted: str) -> None:
        assert redact(text) == redacted


class TestNearestPart:
    """`opening` and `ending` alone: what a memory keeps of its neighbours (issue 45)."""

    @pytest.mark.parametrize("text", ["我住在杭州", "I live in Hangzhou", ""])
    def test_a_text_that_fits_is_itself(self, text: str) -> None:
        assert opening(text, 500) == text
        assert ending(text, 500) == text

    @pytest.mark.parametrize("filler", [ZH_FILLER, EN_FILLER])
    def test_the_cut_keeps_the_nearest_characters_and_ends_on_a_boundary(self, filler: str) -> None:
        text = "开头 opening. " + filler * 40 + " 结尾 the end"
        head, tail = opening(text, 500), ending(text, 500)
        assert head.startswith("开头 opening.")
        assert "结尾" not in head
        assert tail.endswith("结尾 the end")
        assert "开头" not in tail
        assert 400 <= len(head) <= 500
        assert 400 <= len(tail) <= 500
        assert text.startswith(head)
        assert text.endswith(tail)
        assert head[-1] in "。，." or text[len(head)] == " "  # cut where a sentence or a word ends
        assert text[len(text) - len(tail) - 1] in "。，. "  # and where one starts
        assert not tail[0].isspace()
        assert not head[-1].isspace()

    def test_a_word_is_not_cut_in_two_when_a_boundary_is_near(self) -> None:
        text = " ".join(["Zanzibar"] * 200)
        assert set(opening(text, 500).split()) == {"Zanzibar"}
        assert set(ending(text, 500).split()) == {"Zanzibar"}
