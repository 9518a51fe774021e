"""Words as the keyword channel counts them (memory/text/tokens.py), zh + en: the exact tokens, in order,
so a change of how they are made (string operations in C since issue 45) cannot change what matches."""

from __future__ import annotations

import pytest

from memory.text.tokens import UNIGRAM, stem, tokenize


def u(chars: str) -> list[str]:
    return [UNIGRAM + c for c in chars]


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("发布窗口", ["发布", "布窗", "窗口", *u("发布窗口")]),
        # no bigram spans a question character (谁, 哪), none is a question word (多少), and neither a
        # question nor a stop character (我, 的, 是) is a unigram
        ("我的牙医是谁", ["我的", "的牙", "牙医", "医是", *u("牙医")]),
        ("哪个城市", ["个城", "城市", *u("城市")]),
        ("多少钱", ["少钱", *u("多少钱")]),
        ("请问发布窗口", ["问发", "发布", "布窗", "窗口", *u("请问发布窗口")]),
        ("Our team's deploy windows are now on Fridays", ["team", "deploy", "window", "friday"]),
        ("O’Brien's car: a Volvo XC60, 2 doors", ["o'brien", "car", "volvo", "xc60", "2", "door"]),
        ("I moved to 杭州 in 2023", ["move", *["杭州"], *u("杭州"), "2023"]),
        ("", []),
    ],
)
def test_tokens(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_a_word_is_the_same_token_however_often_it_is_seen() -> None:
    assert tokenize("running runs ran") == tokenize("running runs ran") == [stem("running"), "run", "ran"]
