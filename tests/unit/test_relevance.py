"""Calibrated relevance (memory/recall/relevance.py): absolute channel evidence, no floors, forget's
two-channel rule, and the command words a forget query loses. Chinese and English throughout."""

from __future__ import annotations

import pytest

from memory.models import Evidence, Memory
from memory.recall.fusion import _minmax
from memory.recall.keyword_index import BM25Index, coverage
from memory.recall.relevance import forget_query, matched_channels, reaches, relevance_of, shares_a_word
from memory.text.tokens import tokenize


def mem(mid: str, text: str) -> Memory:
    return Memory(
        id=mid, user_id="u", content=text, created_at=0.0, session_id="s", source="user", content_hash=mid
    )


def ev(
    q: str = "en",
    m: str = "en",
    *,
    cosine: float = 0.1,
    coverage: float = 0.0,
    bridge: float | None = None,
    attribute: bool = False,
    known: float = 1.0,
    fused: float = 0.0,
    words: tuple[str, ...] = (),
) -> Evidence:
    return Evidence(
        q,  # type: ignore[arg-type]
        m,  # type: ignore[arg-type]
        cosine=cosine,
        coverage=coverage,
        bridge=bridge,
        attribute=attribute,
        known=known,
        fused=fused,
        words=words,
    )


class TestRelevance:
    @pytest.mark.parametrize(
        "e",
        [
            # "xyzzy plugh": raw similarity 0.149, no word matches, none of its words known, yet the best
            # candidate of its search (fused 0.5)
            ev(cosine=0.149, known=0.0, fused=0.5),
            # "啊啊啊" over a Chinese memory: MiniLM [UNK] noise
            ev("zh", "zh", cosine=0.7, bridge=0.15, known=0.0, fused=0.5),
            ev("en", "zh", cosine=0.05, bridge=0.2),  # an unrelated memory in the other language
            ev("zh", "en", cosine=0.1),  # across languages without the bridge
        ],
    )
    def test_nothing_matched_is_near_zero(self, e: Evidence) -> None:
        assert relevance_of(e) < 0.05

    def test_in_zero_one_and_rising_with_each_channel(self) -> None:
        base = ev(cosine=0.3, coverage=0.3)
        values = [
            relevance_of(base),
            relevance_of(ev(cosine=0.6, coverage=0.3)),
            relevance_of(ev(cosine=0.6, coverage=0.9)),
            relevance_of(ev(cosine=0.6, coverage=0.9, attribute=True)),
        ]
        assert all(0.0 <= v <= 1.0 for v in values)
        assert values == sorted(values)
        zh = [relevance_of(ev("zh", "zh", bridge=b, coverage=0.5)) for b in (0.2, 0.4, 0.6, 0.8)]
        assert zh == sorted(zh)

    def test_a_clear_match_is_likely_relevant_in_both_languages(self) -> None:
        # "When is my dentist appointment?", "我的血型是什么": the best candidate, every word matched
        assert relevance_of(ev(cosine=0.8, coverage=1.0, fused=1.0)) > 0.9
        assert relevance_of(ev("zh", "zh", bridge=0.85, coverage=1.0, fused=1.0)) > 0.9

    def test_standing_counts_only_for_a_known_query(self) -> None:
        """The best candidate of a search for unknown words is not thereby relevant."""
        unknown = [relevance_of(ev(cosine=0.2, known=0.0, fused=f)) for f in (0.0, 0.5, 1.0)]
        assert max(unknown) - min(unknown) < 1e-9
        known = [relevance_of(ev("zh", "zh", bridge=0.3, coverage=0.2, fused=f)) for f in (0.0, 0.5, 1.0)]
        assert known == sorted(known)
        assert known[-1] > known[0]

    def test_minilm_cosine_does_not_count_for_chinese(self) -> None:
        """MiniLM reads Chinese as [UNK]: its cosine (0.5-0.9 for any two Chinese texts) is ignored."""
        assert relevance_of(ev("zh", "zh", cosine=0.95, bridge=0.3)) == relevance_of(
            ev("zh", "zh", cosine=0.0, bridge=0.3)
        )


class TestChannels:
    def test_the_bridge_alone_across_languages_is_one_channel(self) -> None:
        assert list(matched_channels(ev("en", "zh", cosine=0.9, bridge=0.9))) == ["bridge"]
        assert list(matched_channels(ev("zh", "en", cosine=0.9, bridge=0.9))) == ["bridge"]

    def test_same_language_channels(self) -> None:
        assert set(matched_channels(ev(cosine=0.6, coverage=0.5))) == {"dense", "keyword"}
        # Chinese: MiniLM never counts, keywords and the bridge do
        assert set(matched_channels(ev("zh", "zh", cosine=0.9, coverage=0.5, bridge=0.6))) == {
            "keyword",
            "bridge",
        }
        assert matched_channels(ev("zh", "zh", cosine=0.9, coverage=0.1, bridge=0.1)) == {}


class TestCoverage:
    def test_unseen_words_cover_nothing(self) -> None:
        index = BM25Index([mem("a", "I live in Hangzhou"), mem("b", "我住在杭州")])
        assert index.coverage(["a"], tokenize("xyzzy plugh")) == [(0.0, ())]
        assert index.coverage(["b"], tokenize("啊啊啊"))[0][0] == 0.0

    def test_share_of_the_query_words(self) -> None:
        index = BM25Index([mem("a", "I live in Hangzhou"), mem("b", "我住在杭州西湖边")])
        [(full, words)] = index.coverage(["a"], tokenize("live Hangzhou"))
        assert full == pytest.approx(1.0)
        assert set(words) == {"live", "hangzhou"}
        [(part, words)] = index.coverage(["b"], tokenize("我住在苏州"))
        assert 0.0 < part < 1.0
        assert "住在" in words
        assert "苏州" not in words

    def test_context_words_count_as_bm25_counts_them(self) -> None:
        own, _ = coverage(["x"], {"x"}, set(), {"x": 1.0}, 5.0)
        around, _ = coverage(["x"], set(), {"x"}, {"x": 1.0}, 5.0)
        assert around == pytest.approx(own * 0.9)


class TestNoFloors:
    def test_a_channel_that_matched_nothing_adds_nothing(self) -> None:
        assert _minmax({"a": 0.0, "b": 0.0}) == {"a": 0.0, "b": 0.0}  # was 1.0 each ("keyword 0.500")
        assert _minmax({"a": 2.0, "b": 2.0}) == {"a": 1.0, "b": 1.0}
        assert _minmax({"a": 0.0, "b": 3.0}) == {"a": 0.0, "b": 1.0}


class TestForgetQuery:
    @pytest.mark.parametrize(
        ("query", "meant"),
        [
            ("忘掉我住在哪里", "我住在哪里"),
            ("请帮我删除我的订单号", "我的订单号"),
            ("Forget that I live in Hangzhou", "I live in Hangzhou"),
            ("please forget about my job", "my job"),
            ("我的工作", "我的工作"),
            ("忘掉", "忘掉"),  # nothing else: kept as it is
            ("delete", "delete"),
        ],
    )
    def test_command_words_go(self, query: str, meant: str) -> None:
        assert forget_query(query) == meant


class TestFloor:
    def test_a_query_of_unknown_words_needs_more(self) -> None:
        """ "xyzzy plugh", "啊啊啊": none of their words in any memory; their hits stay under 0.1."""
        gibberish = ev(cosine=0.2, known=0.0)
        assert not reaches(gibberish, 0.05, 0.005)
        assert reaches(gibberish, 0.3, 0.005)  # a paraphrase that means it ("What race am I preparing for?")
        assert reaches(ev(cosine=0.2, known=0.4), 0.05, 0.005)
        assert reaches(gibberish, 0.0, 0.0)  # min_relevance 0: every candidate

    def test_across_languages_too(self) -> None:
        """ "xyzzy plugh" over Chinese memories: the bridge alone puts them near 0.01."""
        assert not reaches(ev("en", "zh", bridge=0.15, known=0.0), 0.012, 0.005)
        # "Where do I live?" over "我住在杭州": the bridge and the attribute rules agree
        assert reaches(ev("en", "zh", bridge=0.5, known=0.0), 0.5, 0.005)
        # a known question: the floor alone, in either language
        assert not reaches(ev("en", "zh", bridge=0.05, known=0.3), 0.002, 0.005)
        assert reaches(ev("en", "zh", bridge=0.05, known=0.3), 0.006, 0.005)

    def test_a_weakly_known_query_needs_a_word_in_common(self) -> None:
        """Issue 42: "火星上的天气" is 0.1 known through 上 and 天, and found "下个月我要去成都出差三天"
        (relevance 0.067, through 天) and two English memories (0.009, nothing in common); "LeBron James
        career stats" (0.19 known) found three at ~0.01."""
        through_a_character = ev("zh", "zh", bridge=0.2, coverage=0.03, known=0.1, words=("天",))
        assert not reaches(through_a_character, 0.067, 0.005)
        assert not reaches(ev("zh", "en", bridge=0.13, known=0.1), 0.009, 0.005)
        assert not reaches(ev("en", "en", cosine=0.18, known=0.19), 0.015, 0.005)
        assert not reaches(ev("en", "zh", bridge=0.15, known=0.19), 0.012, 0.005)
        # what means it passes: a strong match by meaning ("my cat's name" over "我家的猫叫团子", 0.09
        # known), or a word in common, in either language ("周末打什么球" is known 0.6 anyway)
        assert reaches(ev("en", "zh", bridge=0.59, known=0.09), 0.92, 0.005)
        assert reaches(ev("zh", "zh", coverage=0.3, known=0.2, words=("国庆", "国")), 0.03, 0.005)
        assert reaches(ev("en", "en", coverage=0.2, known=0.2, words=("learn",)), 0.02, 0.005)
        # a well known query keeps the floor alone, whatever this memory shares with it
        assert reaches(ev("zh", "en", bridge=0.1, known=0.27), 0.01, 0.005)
        assert reaches(ev("zh", "zh", known=0.4, words=("吃",)), 0.01, 0.005)
        assert reaches(through_a_character, 0.0, 0.0)  # min_relevance 0: every candidate

    def test_a_word_is_more_than_one_character(self) -> None:
        assert not shares_a_word(ev("zh", "zh", words=("天", "月")))
        assert not shares_a_word(ev("en", "en"))
        assert shares_a_word(ev("zh", "zh", words=("天气", "天")))
        assert shares_a_word(ev("en", "en", words=("chess",)))
        assert shares_a_word(ev("zh", "zh", words=("tb20240518",)))

    @pytest.mark.parametrize(
        "query",
        ["我孩子周末做什么？", "我不能吃什么？", "When are my dance classes?", "what do I eat on weekends"],
    )
    def test_a_question_about_the_speaker_keeps_the_floor(self, query: str) -> None:
        """ "我孩子周末做什么" over "我女儿每周六上午去少年宫学小提琴" (0.079, through 周, 0.09 known): a
        question about the speaker's life in everyday words; the same hit of a question about the world
        ("火星上的天气") needs the unknown query's floor."""
        weak = ev("zh", "zh", bridge=0.36, coverage=0.03, known=0.09, words=("周",))
        assert reaches(weak, 0.079, 0.005, query)
        assert not reaches(weak, 0.079, 0.005, "火星上的天气")
        assert not reaches(weak, 0.079, 0.005, "what is the weather on Mars")
        assert not reaches(weak, 0.079, 0.005)  # no query: as one about the world
        # a query of no known word needs it, whoever it speaks of
        assert not reaches(ev("zh", "zh", bridge=0.3, known=0.0), 0.05, 0.005, query)

    def test_across_languages_without_the_bridge_the_floor_alone(self) -> None:
        """The bridge off: "我们从收容所领养了什么？" finds "We finally adopted a puppy" by the lexicon's
        keywords; relevance is σ(intercept) for every such hit, nothing to judge by."""
        lexicon_only = ev("zh", "en", bridge=None, known=0.18)
        assert relevance_of(lexicon_only) < 0.1
        assert reaches(lexicon_only, relevance_of(lexicon_only), 0.005, "量子色动力学")
        assert not reaches(ev("zh", "en", bridge=0.15, known=0.18), 0.017, 0.005, "量子色动力学")
