"""Relation memory in recall (issue 26): which entities a question names, which links they make, and
where a linked memory enters the top k (memory/relations/graph.py, memory/recall/retrieval.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.models import Memory, ScoredMemory
from memory.recall.fusion import place_linked
from memory.recall.keyword_index import BM25Index
from memory.recall.links import Link
from memory.relations.extract import ME, extract, person_id
from memory.relations.graph import Graph, Record
from memory.text.tokens import tokenize

MARCH = datetime(2026, 3, 10, tzinfo=UTC).timestamp()
APRIL = datetime(2026, 4, 8, tzinfo=UTC).timestamp()
MAY = datetime(2026, 5, 2, tzinfo=UTC).timestamp()


def graph(memories: dict[str, tuple[str, float]]) -> Graph:
    return Graph({mid: Record.of(extract(t, said_at=at), at) for mid, (t, at) in memories.items()})


def people(text: str) -> set[str]:
    return {e.id for e in extract(text, said_at=MARCH).entities if e.id.startswith("person:")}


def rels(text: str) -> set[tuple[str, str, str]]:
    return {(r.subject, r.relation, r.object) for r in extract(text, said_at=MARCH).relations}


class TestNames:
    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("Maya booked a hotel in Madrid for next month", "maya"),  # a verb in the past
            ("Ben takes leave next month and is off to Seattle", "ben"),
            ("Hana highly recommends the book Dune", "hana"),  # an adverb, then the verb
            ("Noah's cousin came to visit", "noah"),  # whose relative: still someone
        ],
    )
    def test_a_name_opening_a_sentence_before_a_verb(self, text: str, name: str) -> None:
        assert f"person:{name}" in people(text)

    @pytest.mark.parametrize(
        "text",
        [
            "Painting's great for expressing myself.",  # "X's" = "X is"
            "Life's tough but it's worth it.",
            "Art's allowed me to explore my transition",
            "Sounds good to me",
        ],
    )
    def test_a_capitalised_word_opening_a_sentence_is_no_one(self, text: str) -> None:
        assert people(text) == set()

    def test_what_something_is_called_is_no_one(self) -> None:
        assert people("Lucas told me I should try a cafe called Blue Door") == {"person:lucas"}

    @pytest.mark.parametrize(
        ("text", "name"),
        [
            ("我妈叫王芳，她是老师", "王芳"),
            ("我朋友李雷推荐了《三体》", "李雷"),
            ("我同事小王说周五聚餐", "小王"),
            ("我朋友褚健推荐了一本书", "褚健"),  # 百家姓's first line: 赵钱孙李周吴郑王冯陈褚卫
            ("我同事卫东说周五聚餐", "卫东"),
        ],
    )
    def test_a_chinese_name_after_a_role(self, text: str, name: str) -> None:
        assert person_id(name) in people(text)

    @pytest.mark.parametrize("surname", list("赵钱孙李周吴郑王冯陈褚卫蒋沈韩杨"))
    def test_every_surname_of_the_first_lines_of_the_hundred_names(self, surname: str) -> None:
        assert person_id(surname + "鼎") in people(f"我朋友{surname}鼎推荐了一本书")

    @pytest.mark.parametrize(
        "text",
        [
            "我尽量吧，我妈肯定要做一桌子",
            "我妈小时候住在杭州",
            "我朋友已经到了",
            "我同事卫生做得很好",
            "我岳父说周五来",
        ],
    )
    def test_a_common_word_after_a_role_is_no_name(self, text: str) -> None:
        assert people(text) == set()


class TestRelations:
    @pytest.mark.parametrize(
        "text",
        [
            "I met the cousin of Noah in Tokyo",
            "I met Noah's cousin in Tokyo",
            "我在东京认识了Noah的表哥",
            "我在东京遇到了Noah的同事",
        ],
    )
    def test_the_relative_of_someone_is_who_was_met_not_them(self, text: str) -> None:
        assert not any(r[1] in ("met", "met_in") and "person:noah" in (r[0], r[2]) for r in rels(text))
        assert "person:noah" in people(text)

    @pytest.mark.parametrize(
        "text",
        [
            "I met Noah in Tokyo",
            "我在东京认识了Noah",
            "Got to know Noah on my trip to Tokyo",  # the user left out
            "在东京旅行的时候遇到了Noah",
            "Noah是我在东京认识的朋友",
        ],
    )
    def test_who_was_met_where(self, text: str) -> None:
        assert {(ME, "met", "person:noah"), ("person:noah", "met_in", "place:tokyo")} <= rels(text)

    @pytest.mark.parametrize("text", ["Lucas在东京遇到了Noah", "Lucas ran into Noah in Tokyo"])
    def test_someone_else_meeting_someone_is_not_the_user(self, text: str) -> None:
        assert not any(r[1] == "met" for r in rels(text))

    @pytest.mark.parametrize(
        ("text", "role", "name"),
        [
            ("My son is called Iris and just changed jobs", "kin:son", "person:iris"),
            ("My wife's name is Rosa", "kin:wife", "person:rosa"),
            ("Rosa, my wife, just changed jobs", "kin:wife", "person:rosa"),
            ("我姐姐Maya最近刚换了工作", "kin:elder_sister", "person:maya"),  # no 叫, the script changes
            ("Leo是我哥哥，最近刚换了工作", "kin:elder_brother", "person:leo"),
            ("王芳是我妈妈", "kin:mother", person_id("王芳")),
        ],
    )
    def test_a_role_named(self, text: str, role: str, name: str) -> None:
        assert (role, name) in extract(text, said_at=MARCH).aliases

    def test_a_role_unnamed(self) -> None:
        assert extract("他是我哥哥", said_at=MARCH).aliases == ()

    @pytest.mark.parametrize(
        "text",
        [
            "Lucas told me I should try a cafe called Blue Door",
            "Lucas suggested the documentary Planet Earth to me",
            "Lucas跟我安利一家叫青藤的咖啡馆",
            "Lucas说一定要试试纪录片《地球脉动》",
            "Lucas种草了一款降噪耳机",
            "Lucas swears by the Hoka running shoes",
        ],
    )
    def test_ways_of_recommending(self, text: str) -> None:
        assert any(s == "person:lucas" and r == "recommended" for s, r, _ in rels(text))


class TestIds:
    @pytest.mark.parametrize(
        ("text", "number"),
        [("Tracking says 880141 is out for delivery", "880141"), ("880141这单显示已经在派送了", "880141")],
    )
    def test_a_long_bare_number_is_an_id(self, text: str, number: str) -> None:
        assert f"doc:{number}" in {e.id for e in extract(text, said_at=MARCH).entities}

    @pytest.mark.parametrize(
        "text", ["月租4200元", "I paid 120000 yuan", "it was 3.1415926", "a $250000 loan"]
    )
    def test_an_amount_or_a_short_number_is_not(self, text: str) -> None:
        assert not any(e.id.startswith("doc:") for e in extract(text, said_at=MARCH).entities)


class TestQuestionEntities:
    def test_a_person_is_named_by_the_name_as_written(self) -> None:
        g = graph({"m1": ("Painting's great, I love it", MARCH), "m2": ("I met Paint in Rome", MARCH)})
        assert g.entities_in("What inspired her painting?", said_at=MAY) == []
        assert g.entities_in("Where did I meet Paint?", said_at=MAY) == ["person:paint"]

    def test_a_place_and_an_id_in_any_case(self) -> None:
        g = graph({"m1": ("I moved to Hangzhou", MARCH), "m2": ("Quote Q-2024-031 was approved", MARCH)})
        assert "place:hangzhou" in g.entities_in("what about hangzhou?", said_at=MAY)
        assert "doc:q-2024-031" in g.entities_in("is q-2024-031 approved?", said_at=MAY)

    def test_an_event_word_or_a_lower_case_product_links_nothing(self) -> None:
        g = graph({"m1": ("Anna's birthday party was fun", MARCH), "m2": ("I bought a podcast", MARCH)})
        named = g.entities_in("what did I do for the birthday, and the podcast?", said_at=MAY)
        assert g.linked([], named) == {}


class TestLinks:
    def test_a_second_hop_only_through_what_the_memory_relates(self) -> None:
        g = graph(
            {
                "a": ("I met Lucas in Tokyo last year", MARCH),
                "b": ("Lucas recommended the book Dune", APRIL),
                "trap": ("I met the cousin of Noah in Tokyo", MARCH),
                "noah": ("Noah recommended the film Heat", APRIL),
            }
        )
        linked = g.linked([], g.entities_in("What did the friend I met in Tokyo recommend?", said_at=MAY))
        assert linked["b"] == ("Lucas → recommended Dune", "a")
        assert "noah" not in linked

    def test_a_second_hop_zh(self) -> None:
        g = graph(
            {
                "a": ("我去年在东京认识了Lucas", MARCH),
                "b": ("Lucas跟我安利一家叫青藤的咖啡馆", APRIL),
                "trap": ("我在东京认识了Noah的表哥", MARCH),
                "noah": ("Noah推荐了《三体》", APRIL),
            }
        )
        linked = g.linked([], g.entities_in("我在东京认识的那个朋友推荐了什么？", said_at=MAY))
        assert linked["b"][1] == "a"
        assert "noah" not in linked

    @pytest.mark.parametrize(
        ("question", "said", "alias"),
        [
            ("苏州的天气怎么样？", "苏州的天气不错", "The weather in Suzhou is nice"),
            ("How is the weather in Suzhou?", "The weather in Suzhou is nice", "苏州的天气不错"),
        ],
    )
    def test_a_memory_naming_the_entity_as_the_question_does_is_an_echo(
        self, question: str, said: str, alias: str
    ) -> None:
        g = graph({"same": (said, MARCH), "other": (alias, APRIL)})
        named = g.entities_in(question, said_at=MAY)
        assert named == ["place:suzhou"]
        assert g.says_as("same", question, named)
        assert not g.says_as("other", question, named)  # the other language: only the link finds it

    def test_a_memory_stating_a_relation_of_the_entity_is_no_echo(self) -> None:
        g = graph({"a": ("I met Lucas in Tokyo", MARCH), "b": ("Everyone I know in Tokyo posts food", MARCH)})
        question = "What did the friend I met in Tokyo recommend?"
        named = g.entities_in(question, said_at=MAY)
        assert not g.says_as("a", question, named)  # Tokyo → Lucas met_in: more than the word
        assert g.says_as("b", question, named)

    def test_the_memory_saying_who_a_role_is_is_no_echo(self) -> None:
        g = graph({"a": ("My wife Rosa just changed jobs", MARCH), "b": ("Rosa is flying to Toronto", APRIL)})
        named = g.entities_in("Where is my wife travelling?", said_at=MAY)
        assert named == ["person:rosa"]
        assert not g.says_as("a", "Where is my wife travelling?", named)


def scored(mid: str, score: float) -> ScoredMemory:
    memory = Memory(
        id=mid, user_id="u", content=mid, created_at=MARCH, session_id="s", source="user", content_hash=""
    )
    return ScoredMemory(memory=memory, score=score, similarity=0.0)


def order(ranked: list[ScoredMemory]) -> list[str]:
    return [s.memory.id for s in ranked]


class TestPlacement:
    RANKED = [scored(f"m{i}", 1 - i / 20) for i in range(12)]

    def test_a_second_hop_enters_right_after_its_origin(self) -> None:
        out = place_linked(self.RANKED, {"m11": Link("x", via="m1")}, top_k=5, cap=2)
        assert order(out)[:5] == ["m0", "m1", "m11", "m2", "m3"]

    def test_at_most_cap_enter_and_never_above_their_origin(self) -> None:
        links = {"m9": Link("x", via="m0"), "m10": Link("x", via="m0"), "m11": Link("x", via="m0")}
        out = place_linked(self.RANKED, links, top_k=5, cap=2)
        assert order(out)[:5] == ["m0", "m9", "m10", "m1", "m2"]

    def test_a_hop_from_a_question_entity_or_from_below_the_top_is_not_placed(self) -> None:
        links = {"m9": Link("x"), "m10": Link("x", via="m8")}
        assert order(place_linked(self.RANKED, links, top_k=5, cap=2)) == order(self.RANKED)

    def test_one_the_placements_would_push_out_is_kept_first(self) -> None:
        links = {"m4": Link("x", via="m0"), "m11": Link("x", via="m1")}
        out = place_linked(self.RANKED, links, top_k=5, cap=2)
        assert order(out)[:5] == ["m0", "m4", "m1", "m11", "m2"]

    def test_below_the_relevance_floor_it_enters_only_when_placed(self) -> None:
        floor = [scored("low", 0.01), scored("other", 0.01)]
        links = {"low": Link("x", via="m0"), "other": Link("x", via="m11")}
        out = place_linked(self.RANKED[:6], links, top_k=5, cap=2, pool=[*self.RANKED[:6], *floor])
        assert order(out) == ["m0", "low", "m1", "m2", "m3", "m4", "m5"]


def test_bm25_of_a_candidate_below_the_channel_limit() -> None:
    memories = [
        Memory(
            id=f"m{i}",
            user_id="u",
            content=text,
            created_at=MARCH,
            session_id="s",
            source="user",
            content_hash="",
        )
        for i, text in enumerate(["我妈妈叫Rosa", "我妈妈下个月旅行", "同事下个月旅行", "天气不错"])
    ]
    index = BM25Index(memories)
    tokens = tokenize("我妈妈下个月去哪里旅行")
    top = dict(index.search(tokens, limit=1))
    scores = index.scores_of(tokens, ["m0", "m3", "missing"])
    assert set(scores) == {"m0", "m3"}
    assert scores["m0"] > 0
    assert scores["m3"] == 0
    assert scores["m0"] == pytest.approx(dict(index.search(tokens, limit=10))["m0"])
    assert "m0" not in top
