"""The profile (the user's own entity) and entity merges, pure: attributes from zh/en statements, tags in
both languages, current and past values, the AND of tags, and a merge that a split undoes exactly."""

from __future__ import annotations

import pytest

from memory.relations.extract import extract
from memory.relations.graph import Graph, Merge, Record
from memory.relations.profile import Attribute, attributes_of, parse_tag, tags_of

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
