"""Names across scripts (issue 28): a Latin name and its Chinese transliteration share a key."""

from __future__ import annotations

import pytest
from pypinyin import Style, lazy_pinyin

from memory.recall.bilingual import TRANSLITERATION
from memory.recall.query import plan_query
from memory.text.language import detect_language
from memory.text.transliteration import PINYIN, chinese_key, latin_key, names_across_scripts

# where a transliteration reads a character otherwise than pypinyin's most common reading
READ_OTHERWISE = {"什": "shi", "勒": "le"}


def test_the_pinyin_table_is_pypinyins_and_covers_the_transliteration_characters() -> None:
    assert set(TRANSLITERATION) <= set(PINYIN)
    for ch, syllable in PINYIN.items():
        assert syllable == READ_OTHERWISE.get(ch, lazy_pinyin(ch, style=Style.NORMAL)[0]), ch


@pytest.mark.parametrize(
    ("latin", "chinese"),
    [
        ("Caroline", "卡罗琳"),
        ("Melanie", "梅兰妮"),
        ("Jon", "乔恩"),
        ("Gina", "吉娜"),
        ("Mel", "梅尔"),
        ("Oscar", "奥斯卡"),
        ("Deborah", "黛博拉"),
        ("Calvin", "卡尔文"),
        ("Andrew", "安德鲁"),
        ("Jolene", "乔琳"),
        ("Karl", "卡尔"),
    ],
)
def test_a_name_and_its_transliteration_share_a_key(latin: str, chinese: str) -> None:
    assert latin_key(latin) is not None
    assert latin_key(latin) == chinese_key(chinese)


@pytest.mark.parametrize(
    ("latin", "chinese"),
    [("Caroline", "梅兰妮"), ("Melanie", "卡罗琳"), ("Oscar", "乔恩"), ("Calvin", "卡罗琳")],
)
def test_different_names_differ(latin: str, chinese: str) -> None:
    assert latin_key(latin) != chinese_key(chinese)


def test_what_is_not_a_name_has_no_key() -> None:
    assert chinese_key("什么") is None  # 么 is no transliteration character
    assert chinese_key("卡") is None  # one character is not a name
    assert latin_key("LGBTQ") is None
    assert latin_key("Al") is None  # a skeleton of one consonant matches too much


class TestNamesAcrossScripts:
    def test_english_question_chinese_speakers(self) -> None:
        assert names_across_scripts({"卡罗琳", "梅兰妮"}, "What did Caroline research?") == [
            ("Caroline", "卡罗琳")
        ]
        assert names_across_scripts({"卡罗琳", "梅兰妮"}, "When did Melanie's kids visit?") == [
            ("Melanie", "梅兰妮")
        ]

    def test_chinese_question_english_speakers(self) -> None:
        found = names_across_scripts({"Caroline", "Melanie"}, "卡罗琳和梅兰妮什么时候一起去的？")
        assert sorted(found) == [("卡罗琳", "Caroline"), ("梅兰妮", "Melanie")]

    def test_two_names_of_one_skeleton_are_told_apart_by_their_vowel(self) -> None:
        # Jon 乔恩 and Gina 吉娜 are both J-N
        assert names_across_scripts({"乔恩", "吉娜"}, "What did Jon open?") == [("Jon", "乔恩")]
        assert names_across_scripts({"乔恩", "吉娜"}, "What did Gina open?") == [("Gina", "吉娜")]
        assert names_across_scripts({"Jon", "Gina"}, "吉娜开了什么店？") == [("吉娜", "Gina")]

    def test_one_name_spelled_two_ways_is_named_both_ways(self) -> None:
        # a translation (or a user) writes Melanie 梅兰妮 and 梅拉妮: both are her, neither is dropped
        found = names_across_scripts(["卡罗琳", "梅兰妮", "梅拉妮"], "What do Melanie's kids like?")
        assert found == [("Melanie", "梅兰妮"), ("Melanie", "梅拉妮")]
        assert sorted(names_across_scripts({"Jon", "John"}, "乔恩去哪了？")) == [
            ("乔恩", "John"),
            ("乔恩", "Jon"),
        ]

    def test_question_words_months_and_days_are_not_names(self) -> None:
        # "When" has 埃文's skeleton (W-N), "June" 乔恩's (J-N)
        assert names_across_scripts({"埃文", "乔恩"}, "When is the meeting in June? On Monday") == []

    def test_names_in_the_same_script_are_not_its_business(self) -> None:
        assert names_across_scripts({"Caroline"}, "What did Caroline research?") == []
        assert names_across_scripts({"卡罗琳"}, "卡罗琳研究了什么？") == []


class TestQuestionsNamingSpeakersInTheOtherScript:
    def test_the_question_is_read_in_the_script_of_the_turns(self) -> None:
        plan = plan_query("What did Caroline research?", known_names=["卡罗琳", "梅兰妮"])
        assert plan.names == ["卡罗琳"]
        assert plan.language_text == "What did 卡罗琳 research?"
        assert detect_language(plan.language_text) == "zh"  # the turns are ranked as same-language
        assert "卡罗" in plan.keyword_tokens
        assert "carolin" in plan.keyword_tokens
        # no turn says "Caroline": it is not a word of the user's to be covered
        assert "carolin" not in plan.own_tokens
        assert "卡罗" in plan.own_tokens

    def test_a_chinese_question_over_english_turns(self) -> None:
        plan = plan_query("梅兰妮的孩子喜欢什么？", known_names=["Caroline", "Melanie"])
        assert plan.names == ["Melanie"]
        assert plan.language_text == "Melanie的孩子喜欢什么？"
        assert "melani" in plan.own_tokens
        assert "梅兰" not in plan.own_tokens

    def test_a_name_the_turns_also_spell_this_way_keeps_the_question_as_it_is(self) -> None:
        plan = plan_query("What did Gina open?", known_names=["吉娜", "乔恩", "Gina"])
        assert plan.names == ["Gina", "吉娜"]
        assert plan.language_text == plan.text
        assert "gina" in plan.own_tokens

    def test_a_question_naming_no_one_is_unchanged(self) -> None:
        plan = plan_query("Where did I go hiking?", known_names=["卡罗琳"])
        assert plan.language_text == plan.text
        assert not plan.names
