"""The profile (the user's own entity) and entity merges, pure: attributes from zh/en statements, tags in
both languages, current and past values, the AND of tags, and a merge that a split undoes exactly."""

from __future__ import annotations

import pytest

from memory.relations.extract import extract
from memory.relations.graph import Graph, Merge, Record
from memory.relations.profile import (
    LEGACY_CONFIDENCE,
    PROFILE_MIN_CONFIDENCE,
    Attribute,
    attributes_of,
)
from memory.relations.speech import statements
from memory.relations.tags import parse_tag, tags_of

DAY = 86_400.0
T0 = 1_770_000_000.0


def attrs(text: str) -> set[tuple[str, str]]:
    return {(a.category, a.key) for a in attributes_of(text, extract(text, said_at=T0))}


def record(text: str, at: float, *, user: bool = True) -> Record:
    found = extract(text, said_at=at)
    return Record.of(found, at, attributes_of(text, found) if user else ())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我是一名小学老师，正在备考雅思", {("occupation", "teacher"), ("goal", "ielts")}),
        ("I'm a teacher and I'm preparing for IELTS", {("occupation", "teacher"), ("goal", "ielts")}),
        ("我住在杭州", {("home", "hangzhou")}),
        ("I live in Hangzhou", {("home", "hangzhou")}),
        ("我喜欢喝咖啡", {("preference", "coffee")}),
        ("I love hiking on weekends", {("preference", "hiking")}),
        ("我用的是iPhone 15", {("device", "iphone")}),
        ("I use a MacBook Pro for work", {("device", "macbook")}),
        ("我妈妈是医生", {("family", "mother")}),
        ("My sister Anna lives in Berlin", {("family", "sister")}),
    ],
)
def test_statements_give_attributes_in_both_languages(text: str, expected: set[tuple[str, str]]) -> None:
    assert expected <= attrs(text)


@pytest.mark.parametrize(
    "text", ["我不喜欢咖啡", "I don't like coffee", "你喜欢咖啡吗？", "Do you like coffee?"]
)
def test_negations_and_questions_say_nothing(text: str) -> None:
    assert ("preference", "coffee") not in attrs(text)


def test_a_tag_in_either_language_is_one_tag() -> None:
    assert parse_tag("#职业_教师") == parse_tag("#occupation_teacher") == parse_tag("#职业_老师")
    assert parse_tag("#目标_备考雅思") == parse_tag("#goal_ielts") == ("goal", "ielts")
    assert tags_of("occupation", "teacher") == ("#职业_教师", "#occupation_teacher")
    assert tags_of("goal", "ielts") == ("#目标_备考雅思", "#goal_ielts")
    assert tags_of("home", "hangzhou") == ("#居住地_杭州", "#home_hangzhou")
    for tag_zh, tag_en in (tags_of("family", "younger_sister"), tags_of("device", "iphone")):
        assert parse_tag(tag_zh) == parse_tag(tag_en)


@pytest.mark.parametrize(
    "bad", ["职业_教师", "#爱好", "#hobby_chess", "#职业_", "#职业_a b", "#职业_教师\n", "#" + "x" * 70, ""]
)
def test_malformed_tags_are_refused_with_the_rule_in_both_languages(bad: str) -> None:
    with pytest.raises(ValueError, match="标签格式") as err:
        parse_tag(bad)
    assert "#occupation_teacher" in str(err.value)


def test_a_newer_occupation_makes_the_old_one_past() -> None:
    graph = Graph(
        {
            "m1": record("我是一名小学老师", T0),
            "m2": record("I'm preparing for IELTS", T0 + DAY),
            "m3": record("我现在是护士了，不当老师了", T0 + 30 * DAY),
        }
    )
    profile = graph.profile()
    current = {(e.category, e.key): e for e in profile.current}
    assert set(current) == {("occupation", "nurse"), ("goal", "ielts")}
    assert [(e.key, e.valid_to) for e in profile.past] == [("teacher", T0 + 30 * DAY)]
    assert "#occupation_nurse" in profile.tags
    assert "#职业_护士" in profile.tags
    assert "#occupation_teacher" not in profile.tags
    assert profile.compact(zh=True) == "职业：护士；目标：备考雅思"
    assert profile.compact(zh=False) == "occupation: nurse; goal: ielts"


def test_the_assistant_says_nothing_of_the_user() -> None:
    graph = Graph({"m1": record("I'm a teacher too, as it happens", T0, user=False)})
    assert graph.profile().current == ()


def test_tags_select_memories_stating_every_one() -> None:
    graph = Graph(
        {
            "both": record("我是老师，正在备考雅思", T0),
            "job": record("I'm a teacher at a middle school", T0 + 1),
            "goal": record("I'm preparing for IELTS in June", T0 + 2),
        }
    )
    assert graph.tagged([parse_tag("#职业_教师")]) == {"both", "job"}
    assert graph.tagged([parse_tag("#goal_ielts")]) == {"both", "goal"}
    assert graph.tagged([parse_tag("#职业_教师"), parse_tag("#goal_ielts")]) == {"both"}
    assert graph.tagged([parse_tag("#pet_cat")]) == set()


def test_an_old_record_without_attributes_still_loads() -> None:
    rec = Record.loads('{"t":1.0,"e":[["place:paris","place","Paris"]],"r":[],"a":[]}')
    assert rec.attrs == ()
    assert rec
    again = Record.loads(record("我是老师", T0).dumps())
    assert again.attrs == (Attribute("occupation", "teacher", "老师"),)


def test_a_merge_resolves_old_and_new_mentions_and_a_split_undoes_it() -> None:
    records = {
        "m1": record("I had lunch with Kit yesterday", T0),
        "m2": record("Katherine called about the contract", T0 + 1),
    }
    before = Graph(records)
    assert {"person:kit", "person:katherine"} <= set(before.nodes)
    merge = Merge("mg-0123456789abcdef", "person:kit", "person:katherine", T0 + 2)
    merged = Graph({**records, "m3": record("Kit sent me the photos", T0 + 3)}, [merge])
    assert "person:kit" not in merged.nodes
    node = merged.nodes["person:katherine"]
    assert node.memories == {"m1", "m2", "m3"}  # before and after the merge
    assert "Kit" in node.aliases
    assert merged.resolve("person:kit") == "person:katherine"
    split = Graph({**records, "m3": record("Kit sent me the photos", T0 + 3)}, [])
    assert split.nodes["person:kit"].memories == {"m1", "m3"}
    assert split.nodes["person:katherine"].memories == {"m2"}


def test_the_prompt_takes_the_profile_within_the_memory_budget() -> None:
    from memory.chat.context import assemble_prompt, fit_profile
    from memory.chat.llm import PromptMessage, estimate_tokens

    line = "职业：护士；居住地：杭州；目标：备考雅思；喜好：徒步"
    assert fit_profile(line, 1000) == line
    cut = fit_profile(line, estimate_tokens("职业：护士；居住地：杭州"))
    assert cut == "职业：护士；居住地：杭州"
    assert fit_profile("occupation: nurse; home: hangzhou", estimate_tokens("occupation: nurse")) == (
        "occupation: nurse"
    )
    for lang, label, text in (("zh", "[用户资料]", line), ("en", "[user profile]", "occupation: nurse")):
        prompt = assemble_prompt(
            language=lang,
            new_message=PromptMessage("user", "我适合什么工作？"),
            now=T0,
            summary=None,
            recalled=[],
            buffer=[],
            profile=text,
        )
        system = prompt.messages[0].content
        assert f"{label}\n{text}" in system
        assert system.index(f"{label}\n") < system.index(
            "\n[长期记忆]\n" if lang == "zh" else "\n[long-term memories]\n"
        )
    without = assemble_prompt(
        language="en", new_message=PromptMessage("user", "hi"), now=T0, summary=None, recalled=[], buffer=[]
    )
    assert "[user profile]" not in without.messages[0].content


def test_racing_merges_never_make_a_cycle_the_first_holds() -> None:
    records = {
        "m1": record("I had lunch with Kit yesterday", T0),
        "m2": record("Katherine called about the contract", T0 + 1),
        "m3": record("Bella sent me the photos", T0 + 2),
    }
    back = [
        Merge("mg-0000000000000001", "person:kit", "person:katherine", T0 + 3),
        Merge("mg-0000000000000002", "person:katherine", "person:kit", T0 + 4),
        Merge("mg-0000000000000003", "person:kit", "person:bella", T0 + 5),
    ]
    graph = Graph(records, back)
    assert graph.resolve("person:kit") == "person:katherine"
    assert graph.resolve("person:katherine") == "person:katherine"
    assert graph.nodes["person:katherine"].memories == {"m1", "m2"}
    assert graph.nodes["person:bella"].memories == {"m3"}


def test_a_value_keeps_the_case_it_was_said_in() -> None:
    said = attributes_of(
        "I use an iPhone and a MacBook", extract("I use an iPhone and a MacBook", said_at=T0)
    )
    assert {(a.key, a.value) for a in said} == {("iphone", "iPhone"), ("macbook", "MacBook")}
    zh = attributes_of("我在备考IELTS", extract("我在备考IELTS", said_at=T0))
    assert [(a.key, a.value) for a in zh] == [("ielts", "IELTS")]


# --- issue 40: a profile that is only true ------------------------------------------------------------
# One seeded user's messages (the issue's report): the prompt's profile block said "工作单位：一家设计院…
# 设备：Pixel、ThinkPad、白色" and a book title's "one hundred" was a preference.
SEEDED = [
    "我是一名护士，住在杭州。",
    "我老公是建筑师，在一家设计院上班。",
    "我的新车是白色的。",
    "My favourite book is One Hundred Years of Solitude.",
    "I use a Pixel 8 for work and a ThinkPad X1 Carbon at home.",
    "We went to see the Berlin Philharmonic, then walked around West Lake.",
]


def said(text: str) -> dict[tuple[str, str], Attribute]:
    return {(a.category, a.key): a for a in attributes_of(text, extract(text, said_at=T0)) if a.key}


class TestOnlyTrue:
    def test_the_husbands_employer_is_not_the_users(self) -> None:
        got = said("我老公是建筑师，在一家设计院上班。")
        assert not any(c in ("employer", "occupation") for c, _ in got), got
        assert ("family", "husband") in got
        mine = said("我是建筑师，在一家设计院上班。")  # the same said of the user is the user's
        assert ("occupation", "architect") in mine
        assert any(c == "employer" and "设计院" in a.value for (c, _), a in mine.items())

    @pytest.mark.parametrize(
        "text",
        [
            "我的新车是白色的。",
            "My new car is white.",
            "My car is a grey Volvo.",
            "我的车是一辆灰色的沃尔沃。",
        ],
    )
    def test_a_cars_colour_is_no_device(self, text: str) -> None:
        assert not any(c == "device" for c, _ in said(text))

    @pytest.mark.parametrize(
        "text",
        [
            "My favourite book is One Hundred Years of Solitude.",
            "我最喜欢的书是《百年孤独》。",
            "My favourite colour is green.",
            "我最喜欢的颜色是蓝色。",
            "My lucky number is seven.",
            "我的幸运数字是8。",
            "我最爱的电影是《霸王别姬》。",
        ],
    )
    def test_titles_colours_and_numbers_are_no_preference(self, text: str) -> None:
        assert not any(c == "preference" for c, _ in said(text)), said(text)

    @pytest.mark.parametrize(
        ("text", "expected"),
        [("My favourite sport is tennis.", "tennis"), ("我最喜欢的运动是游泳。", "swimming")],
    )
    def test_a_favourite_of_the_lexicon_still_is_one(self, text: str, expected: str) -> None:
        assert ("preference", expected) in said(text)

    @pytest.mark.parametrize(
        "text",
        [
            "If I were a doctor I'd work fewer nights.",
            "要是我住在北京就好了。",
            "I wish I had a dog.",
            "如果我是医生，我会更忙。",
            "I don't have a dog.",
            "I have no cats.",
            "我不喜欢咖啡。",
            "我不住在北京。",
            "Do you like cats?",
            "我住哪？",
            "Am I a good programmer?",
            "我是不是应该学日语？",
            'He said, "I live in Oslo."',
            "小张说“我在华为上班”。",
            "Ben thinks I work at Google.",
            "我妈说我应该去当老师。",
            "I used to live in Beijing.",
            "我在北京住过三年。",
        ],
    )
    def test_hypotheticals_negations_questions_and_reported_speech_say_nothing(self, text: str) -> None:
        got = {k for k in said(text) if k[0] != "family"}
        assert got == set(), got

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("I'm not a teacher, I'm a tutor.", ("occupation", "teacher")),
            ("I don't eat meat.", ("diet", "no_meat")),
            ("我不吃肉。", ("diet", "no_meat")),
            ("我不喜欢跑步，但很喜欢游泳。", ("preference", "swimming")),
            ("我以前住在北京，现在住在杭州。", ("home", "hangzhou")),
            ("I prefer tea to coffee.", ("preference", "tea")),
        ],
    )
    def test_what_a_negation_leaves_stated_is_still_said(self, text: str, expected: tuple[str, str]) -> None:
        got = said(text)
        assert expected in got, got
        assert ("preference", "coffee") not in got
        assert ("home", "beijing") not in got

    def test_the_seeded_users_prompt_line_holds_only_what_is_true(self) -> None:
        graph = Graph({f"m{i}": record(text, T0 + i) for i, text in enumerate(SEEDED)})
        zh = graph.profile().compact(zh=True)
        en = graph.profile().compact(zh=False)
        for false in ("设计院", "白色", "one", "hundred", "孤独", "Philharmonic", "West"):
            assert false.lower() not in zh.lower(), zh
            assert false.lower() not in en.lower(), en
        assert zh == "职业：护士；居住地：杭州；家人：老公；设备：Pixel、ThinkPad"
        assert en == "occupation: nurse; home: hangzhou; family: husband; device: pixel, thinkpad"


class TestConfidence:
    def test_each_attribute_has_a_confidence_and_a_hedge_lowers_it(self) -> None:
        sure = said("I'm a nurse.")[("occupation", "nurse")]
        hedged = said("I think I'm probably a night owl and maybe a nurse.")
        assert sure.confidence >= PROFILE_MIN_CONFIDENCE
        assert all(a.confidence < PROFILE_MIN_CONFIDENCE for a in hedged.values())

    def test_below_the_threshold_an_entry_is_kept_but_left_out_of_the_prompt(self) -> None:
        once = Graph({"m1": record("我每天早上都喝咖啡。", T0), "m2": record("我是护士。", T0 + 1)})
        entry = next(e for e in once.profile().current if e.key == "coffee")
        assert entry.confidence < PROFILE_MIN_CONFIDENCE
        assert [e.key for e in once.profile().sure()] == ["nurse"]
        assert once.profile().compact(zh=True) == "职业：护士"
        assert "#preference_coffee" in once.profile().tags  # the route and the tags still show it
        twice = Graph(
            {
                "m1": record("我每天早上都喝咖啡。", T0),
                "m2": record("I drink coffee every morning.", T0 + DAY),
                "m3": record("我是护士。", T0 + 1),
            }
        )
        assert twice.profile().compact(zh=True) == "职业：护士；喜好：咖啡"  # said twice: 1 - 0.4 * 0.4

    def test_a_record_keeps_its_confidences_and_one_written_before_has_the_legacy_one(self) -> None:
        again = Record.loads(record("我是老师", T0).dumps())
        assert [(a.key, a.confidence) for a in again.attrs] == [("teacher", 0.9)]
        old = Record.loads('{"t":1.0,"e":[],"r":[],"a":[],"p":[["device","白色","白色"]]}')
        assert [(a.key, a.confidence) for a in old.attrs] == [("白色", LEGACY_CONFIDENCE)]
        assert Graph({"m1": old}).profile().compact(zh=True) == ""
        # five old records saying the same make no entry of the prompt's; one rated memory does
        many = {
            f"m{i}": Record.loads(f'{{"t":{i}.0,"e":[],"r":[],"a":[],"p":[["occupation","teacher","老师"]]}}')
            for i in range(5)
        }
        assert Graph(many).profile().compact(zh=True) == ""
        assert "#occupation_teacher" in Graph(many).profile().tags  # the route still shows it
        rated = Graph({**many, "m9": record("我是老师", T0 + DAY)})
        assert rated.profile().compact(zh=True).startswith("职业：")


class TestStatements:
    """memory/relations/speech.py: each clause's subject and how it is said."""

    @pytest.mark.parametrize(
        ("text", "subjects"),
        [
            ("我老公是建筑师，在一家设计院上班。", [("other", "我老公"), ("other", "我老公")]),
            ("我是建筑师，在一家设计院上班。", [("me", ""), ("me", "")]),
            ("My husband is a doctor and I'm a nurse.", [("other", "My husband"), ("me", "")]),
            ("I live in Toronto and work at Shopify.", [("me", ""), ("me", "")]),
            ("Lake Tahoe is gorgeous, we loved it.", [("thing", ""), ("me", "")]),
        ],
    )
    def test_a_clause_without_a_subject_continues_the_one_before(
        self, text: str, subjects: list[tuple[str, str]]
    ) -> None:
        assert [(s.subject, s.holder) for s in statements(text)] == subjects

    def test_after_a_reporting_verb_the_sentence_is_someone_elses_words(self) -> None:
        for text in (
            "我妈说我应该去当老师，当个小学老师。",
            "My mom said I should be a teacher, a good one.",
        ):
            reporter, *words = statements(text)
            assert not reporter.reported
            assert words
            assert all(s.reported for s in words)

    @pytest.mark.parametrize(
        ("text", "flag"),
        [
            ("要是我住在北京就好了", "conditional"),
            ("If I lived in Paris, I'd eat croissants", "conditional"),
            ("我不喜欢咖啡", "negated"),
            ("I hate running", "negated"),
            ("我住哪？", "question"),
            ("Do you like cats?", "question"),
            ("我打算明年搬到深圳", "intent"),
            ("I'm thinking about getting a cat", "intent"),
            ("我以前住在北京", "past"),
            ("I used to live in Beijing", "past"),
            ("我好像有点喜欢跑步", "hedged"),
            ("I think I'm a night owl", "hedged"),
        ],
    )
    def test_how_a_clause_is_said(self, text: str, flag: str) -> None:
        assert all(getattr(s, flag) for s in statements(text)), statements(text)

    @pytest.mark.parametrize(
        "text", ["我特别爱吃火锅", "I'm a nurse", "我不得不搬到北京", "I can't wait to see Oslo"]
    )
    def test_words_that_only_look_negative_negate_nothing(self, text: str) -> None:
        assert not any(s.negated for s in statements(text))
