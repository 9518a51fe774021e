"""Facts that change and negation read for its intent, in Chinese and English: the claim rules (both
ways, with near misses), the supersession decision, its application to a write round, ranking for the
present and the past, and the mark a superseded memory gets in the prompt."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from prometheus_client import REGISTRY

from memory.chat.context import assemble_prompt, memory_line, validity_note
from memory.chat.llm import Completion, PromptMessage
from memory.chat.supersession_judge import LLMSupersessionJudge, parse_verdicts
from memory.models import Memory, ScoredMemory
from memory.recall.keyword_index import BM25Index
from memory.recall.query import plan_query
from memory.recall.validity import rank_validity, successors
from memory.write.judge import judge_pairs
from memory.write.superseder import Superseder
from memory.write.supersession import claims_of, supersedes

DAY = 86400.0
T0 = datetime(2026, 1, 1, tzinfo=UTC).timestamp()


def memory(mid: str, content: str, at: float, **extra: Any) -> Memory:
    return Memory(
        id=mid,
        user_id="alice",
        content=content,
        created_at=at,
        session_id="s1",
        source="user",
        content_hash=mid,
        facts=tuple(claims_of(content)),
        **extra,
    )


class TestClaims:
    @pytest.mark.parametrize(
        ("text", "claim"),
        [
            ("I live in Hangzhou.", ("residence", "hangzhou")),
            ("I moved to Suzhou last week, new flat is great.", ("residence", "suzhou")),
            ("我住在杭州。", ("residence", "杭州")),
            ("我上周搬到苏州了，新房子很好", ("residence", "苏州")),
            ("我们又搬家了，现在住在南京。", ("residence", "南京")),
            ("I no longer live in Hangzhou", ("residence", "")),
            ("I work at Acme Bank as an analyst.", ("employer", "acme bank")),
            ("I just joined Northwind Labs.", ("employer", "northwind labs")),
            ("我现在在阿里巴巴工作", ("employer", "阿里巴巴")),
            ("我跳槽到蓝鲸科技了", ("employer", "蓝鲸科技")),
            ("我辞职了", ("employer", "")),
            ("我已经不在腾讯工作了", ("employer", "")),
            ("I study at Riverside College", ("school", "riverside college")),
            ("我在浙江大学读书", ("school", "浙江大学")),
            ("I got engaged to Daniel!", ("relationship", "engaged")),
            ("我们分手了", ("relationship", "single")),
            ("I have two kids", ("children", "2")),
            ("我有两个孩子", ("children", "2")),
            ("I have one cat called Mochi.", ("pet:cat", "1")),
            ("我养了一只猫", ("pet:cat", "1")),
            ("我的猫去世了", ("pet:cat", "")),
            ("I'm vegetarian now", ("diet", "vegetarian")),
            ("我吃素", ("diet", "vegetarian")),
            ("我又开始吃肉了", ("diet", "meat")),
            ("I'm allergic to peanuts", ("allergy:peanuts", "yes")),
            ("我对花生过敏", ("allergy:花生", "yes")),
            ("我对花生已经不过敏了", ("allergy:花生", "")),
            ("My phone number is [PHONE].", ("phone", "[phone]")),
            ("我换了手机号", ("phone", "[PHONE]")),
            ("My new email is [EMAIL]", ("email", "[email]")),
            ("I drive a Toyota Corolla", ("car", "toyota corolla")),
            ("我开的是一辆特斯拉", ("car", "特斯拉")),
            ("My favorite color is blue", ("favourite:colour", "blue")),
            ("我最喜欢的颜色是绿色", ("favourite:colour", "绿色")),
            ("I no longer play tennis", ("habit", "play tennis")),
            ("我不再喝咖啡了", ("habit", "喝咖啡")),
        ],
    )
    def test_statements_claim(self, text: str, claim: tuple[str, str]) -> None:
        assert claims_of(text) == [claim]

    @pytest.mark.parametrize(
        "text",
        [
            "Where do I live now?",  # a question
            "我现在住在哪？",
            "I want to move to Lisbon someday.",  # a plan, not a fact
            "我想搬到苏州",
            "我打算辞职",
            "My sister lives in Porto.",  # someone else
            "我妹妹搬到上海了",
            "I joined a mentorship program last weekend.",  # joined something that is no employer
            "禾木的offer下来了！入职时间定在3月16号。",  # 入职 + a date
            "I don't like watching comedy movies.",
            "我不喜欢看喜剧片",
            "I moved from Sweden 4 years ago.",
            "I work at home on Fridays.",  # how, not where
            "我在家工作",
        ],
    )
    def test_near_misses_claim_nothing(self, text: str) -> None:
        assert claims_of(text) == []

    @pytest.mark.parametrize(
        ("new", "old", "replaces"),
        [
            (("residence", "suzhou"), ("residence", "hangzhou"), True),
            (("residence", "hangzhou"), ("residence", "hangzhou"), False),
            (("residence", "杭州西湖边"), ("residence", "杭州"), False),  # said more precisely
            (("employer", ""), ("employer", "acme bank"), True),  # "I quit"
            (("employer", "initech"), ("employer", ""), True),  # a job after quitting
            (("phone", "[PHONE]"), ("phone", "[PHONE]"), True),  # the placeholder hides the change
            (("pet:dog", "1"), ("pet:cat", "2"), False),  # a dog never replaces the cats
            (("children", "+1"), ("children", "1"), True),
        ],
    )
    def test_supersedes(self, new: tuple[str, str], old: tuple[str, str], replaces: bool) -> None:
        assert supersedes(new, old) is replaces


class TestNegationIntent:
    @pytest.mark.parametrize(
        ("query", "negated"),
        [
            ("不要推荐咖啡机，给我推荐个厨房小家电", "咖啡机"),
            ("别给我推荐甜食", "甜食"),
            ("不要提我前任", "我前任"),
            ("don't suggest coffee machines, recommend a small kitchen appliance", "coffee machines"),
            ("Do not show me horror movies", "horror movies"),
            (
                "I don't want coffee machines, suggest a gift",
                "coffee machines",
            ),  # first person, but a request
        ],
    )
    def test_requests_to_leave_out_exclude(self, query: str, negated: str) -> None:
        plan = plan_query(query)
        assert plan.negated == [negated]
        assert plan.checked == []
        assert negated not in plan.semantic_text

    @pytest.mark.parametrize(
        ("query", "about"),
        [
            ("I don't like watching comedy movies, right?", "watching comedy movies"),
            ("我不喜欢看喜剧片，对吗？", "看喜剧片"),
            ("I never eat pork, right?", "pork"),
            ("我不吃香菜，对吧？", "香菜"),
            ("March 3 is not my birthday, right?", "my birthday"),
        ],
    )
    def test_checks_about_the_user_search_for_it(self, query: str, about: str) -> None:
        plan = plan_query(query)
        assert plan.negated == []
        assert about in plan.checked
        assert plan.checked_tokens
        assert plan.semantic_text == query  # nothing taken out

    def test_the_old_planner_excluded_checks_too(self) -> None:
        plan = plan_query("I don't like watching comedy movies, right?", negation_intent=False)
        assert plan.negated == ["watching comedy movies"]

    @pytest.mark.parametrize(
        ("query", "past"),
        [
            ("Where did I live before?", True),
            ("我以前住在哪？", True),
            ("When did I move to Suzhou?", True),
            ("Where do I live now?", False),
            ("我现在住在哪？", False),
        ],
    )
    def test_questions_about_the_past(self, query: str, past: bool) -> None:
        assert plan_query(query).wants_past is past


class TestWriteRound:
    async def test_newer_statement_supersedes_and_late_write_is_superseded(self) -> None:
        old = memory("m-old", "I live in Hangzhou.", T0)
        newest = memory("m-new", "I moved to Suzhou last week.", T0 + 150 * DAY)
        index = BM25Index([old, newest], np.eye(2, 4, dtype=np.float32))
        late = memory("m-late", "I live in Ningbo.", T0 + 50 * DAY)  # written now, about an earlier time
        fresh = memory("m-fresh", "We moved again, I live in Nanjing now.", T0 + 200 * DAY)
        vectors = np.ones((2, 4), dtype=np.float32)
        before = REGISTRY.get_sample_value("mnemo_memory_supersessions_total", {"source": "rule"}) or 0.0
        out, out_vectors = await Superseder(store=None, in_process_max=100).apply(  # type: ignore[arg-type]
            "alice", index, [late, fresh], vectors
        )
        by_id = {m.id: m for m in out}
        assert by_id["m-late"].superseded_by == "m-new"  # the stored newer one already replaced it
        assert by_id["m-new"].superseded_by == "m-fresh"
        assert by_id["m-new"].valid_to == fresh.created_at
        assert by_id["m-old"].superseded_by == "m-late"  # the late one slots in between: old, late, new
        assert len(out_vectors) == len(out)
        after = REGISTRY.get_sample_value("mnemo_memory_supersessions_total", {"source": "rule"})
        assert after == before + 3

    async def test_other_speakers_and_other_attributes_are_left_alone(self) -> None:
        stored = [
            memory("cat", "I have two cats.", T0),
            memory("car", "I drive a Honda Civic.", T0),
            replace(memory("bob", "I live in Lisbon.", T0), name="Bob"),
        ]
        index = BM25Index(stored, np.eye(3, 4, dtype=np.float32))
        new = [memory("dog", "I have a dog now.", T0 + DAY), memory("home", "I live in Porto.", T0 + DAY)]
        out, _ = await Superseder(store=None, in_process_max=100).apply(  # type: ignore[arg-type]
            "alice", index, new, np.ones((2, 4), dtype=np.float32)
        )
        assert [m.id for m in out] == ["dog", "home"]  # nothing stored was touched
        assert all(m.superseded_by is None for m in out)


class TestRanking:
    def test_present_puts_current_first_past_keeps_both(self) -> None:
        old = memory("old", "I live in Hangzhou.", T0, superseded_by="new", valid_to=T0 + 150 * DAY)
        new = memory("new", "I moved to Suzhou last week.", T0 + 150 * DAY)
        other = memory("other", "My sister lives in Porto.", T0)
        everything = {m.id: m for m in (old, new, other)}
        assert successors({"old": old}, everything) == {"old": new}
        ranked = [ScoredMemory(old, 0.9, 0.6), ScoredMemory(other, 0.7, 0.5), ScoredMemory(new, 0.3, 0.1)]
        present = rank_validity(ranked, everything, plan_query("Where do I live now?"), factor=0.5)
        scores = {s.memory.id: s for s in present}
        assert scores["new"].score > scores["other"].score > scores["old"].score
        assert scores["new"].similarity == 0.6  # passes the recall floor with what it replaced
        past = rank_validity(ranked, everything, plan_query("Where did I live before?"), factor=0.5)
        scores = {s.memory.id: s for s in past}
        assert min(scores["new"].score, scores["old"].score) > scores["other"].score

    def test_memories_no_write_compared_are_superseded_at_read_time(self) -> None:
        # the old one was in the warm archive when the new one was written (or stored before supersession)
        old = memory("old", "我住在杭州。", T0)
        new = memory("new", "我上周搬到苏州了。", T0 + 150 * DAY)
        someone = replace(memory("bob", "I live in Lisbon.", T0 + 10 * DAY), name="Bob")
        everything = {m.id: m for m in (old, new, someone)}
        ranked = [ScoredMemory(old, 0.9, 0.6), ScoredMemory(someone, 0.5, 0.5), ScoredMemory(new, 0.4, 0.4)]
        out = {
            s.memory.id: s
            for s in rank_validity(ranked, everything, plan_query("我现在住在哪？"), factor=0.5)
        }
        assert out["new"].score > out["old"].score
        assert out["old"].memory.superseded_by == "new"  # marked for the prompt and the API
        assert out["old"].memory.valid_to == new.created_at
        assert out["bob"].memory.superseded_by is None  # another speaker

    def test_without_the_successor_nothing_moves(self) -> None:
        old = memory("old", "I live in Hangzhou.", T0, superseded_by="gone", valid_to=T0 + DAY)
        ranked = [ScoredMemory(old, 0.9, 0.6)]
        out = rank_validity(ranked, {"old": old}, plan_query("Where do I live?"), factor=0.5)
        assert out[0].score == 0.9
        assert out[0].memory.superseded_by is None  # current again: no mark in the prompt either


class TestPrompt:
    def test_superseded_memory_is_marked_in_both_languages(self) -> None:
        until = datetime(2026, 3, 10, tzinfo=UTC).timestamp()
        assert validity_note(until, "en") == "earlier, until March 2026"
        assert validity_note(until, "zh") == "此前，至2026年3月"
        old = ScoredMemory(memory("old", "我住在杭州", T0, superseded_by="new", valid_to=until), 0.4, 0.5)
        new = ScoredMemory(memory("new", "我搬到苏州了", until), 0.8, 0.5)
        now = until + 50 * DAY
        assert memory_line(old, now=now, language="zh", text=None).startswith("- (此前，至2026年3月，")
        assert memory_line(new, now=now, language="zh", text=None).startswith("- (1个月前")
        prompt = assemble_prompt(
            language="en",
            new_message=PromptMessage("user", "Where do I live now?"),
            now=now,
            summary=None,
            recalled=[new, old],
            buffer=[],
        )
        system = prompt.messages[0].content
        assert "- (earlier, until March 2026, " in system
        assert prompt.memories_used == 2
        assert prompt.memory_chars > 0


class FakeModel:
    """A ChatModel double answering with a fixed text (or raising, or never answering)."""

    def __init__(self, answer: str = "", *, fail: bool = False, hang: bool = False) -> None:
        self.answer, self.fail, self.hang = answer, fail, hang
        self.prompts: list[list[PromptMessage]] = []
        self.params: list[Any] = []

    @property
    def name(self) -> str:
        return "fake"

    @property
    def remember_replies(self) -> bool:
        return True

    async def complete(self, messages: Any, params: Any, facts: Any) -> Completion:
        self.prompts.append(list(messages))
        self.params.append(params)
        if self.fail:
            raise RuntimeError("upstream down")
        if self.hang:
            await asyncio.sleep(10)
        return Completion(text=self.answer, model="fake")

    def stream(self, messages: Any, params: Any, facts: Any) -> Any:
        raise NotImplementedError


class TestJudge:
    @pytest.mark.parametrize(
        ("text", "verdicts"),
        [
            ('{"supersedes": [true, false]}', [True, False]),
            (' {"supersedes": [false, false]}\n', [False, False]),
            ('{"supersedes": [true]}', None),  # one verdict for two pairs
            ('{"supersedes": ["yes", false]}', None),  # not booleans
            ('```json\n{"supersedes": [true, false]}\n```', None),  # strict: no fences
            ("Yes, the first one does.", None),
            ("[true, false]", None),
        ],
    )
    def test_only_the_strict_answer_counts(self, text: str, verdicts: list[bool] | None) -> None:
        assert parse_verdicts(text, 2) == verdicts

    async def test_one_call_in_the_pairs_language_and_failures_are_no_answer(self) -> None:
        old = memory("o", "我每个周末都去湖边划船。", T0)
        new = memory("n", "这些天我周末都去攀岩了，不划船了。", T0 + 30 * DAY)
        model = FakeModel('{"supersedes": [true]}')
        assert await LLMSupersessionJudge(model).judge([(new, old)]) == [True]
        assert len(model.prompts) == 1
        assert model.prompts[0][0].content.startswith("下面每一对")
        assert "划船" in model.prompts[0][1].content
        assert await LLMSupersessionJudge(FakeModel("not json")).judge([(new, old)]) is None
        assert await LLMSupersessionJudge(FakeModel(fail=True)).judge([(new, old)]) is None
        hanging = LLMSupersessionJudge(FakeModel(hang=True), timeout_seconds=0.05)
        assert await hanging.judge([(new, old)]) is None

    async def test_the_answer_is_bounded_and_an_unusable_one_is_counted_by_reason(self) -> None:
        """A small local model that rambles past the JSON is cut off (it would hold the server long after
        the timeout gave up), and each answer the judge cannot use is one fallback, by reason."""
        pairs = [
            (memory("n", "这些天我周末都去攀岩了。", T0 + DAY), memory("o", "我每个周末都去湖边划船。", T0)),
            (memory("n2", "Now I work from Lisbon.", T0 + DAY), memory("o2", "I work in Porto.", T0)),
        ]
        model = FakeModel('{"supersedes": [true, false]}')
        assert await LLMSupersessionJudge(model).judge(pairs) == [True, False]
        assert model.params[0].max_tokens == 24 + 8 * len(pairs)

        def fallbacks(reason: str) -> float:
            return (
                REGISTRY.get_sample_value("mnemo_llm_fallbacks_total", {"purpose": "judge", "reason": reason})
                or 0.0
            )

        unparseable, failed = fallbacks("unparseable"), fallbacks("failed")
        assert await LLMSupersessionJudge(FakeModel("Sure! 好的")).judge(pairs) is None
        assert await LLMSupersessionJudge(FakeModel(fail=True)).judge(pairs) is None
        assert (fallbacks("unparseable"), fallbacks("failed")) == (unparseable + 1, failed + 1)

    def test_pairs_are_unread_user_statements_near_an_older_memory_of_the_same_speaker(self) -> None:
        old = memory("o", "I spend every weekend sailing on the lake.", T0)
        other = replace(memory("b", "I spend every weekend sailing on the lake.", T0), name="Bob")
        index = BM25Index([old, other], np.asarray([[1, 0, 0, 0], [1, 0, 0, 0]], dtype=np.float32))
        new = memory("n", "These days I go climbing on weekends instead.", T0 + DAY)
        ruled = memory("r", "I live in Porto.", T0 + DAY)  # the rules read it: not asked
        question = memory("q", "Do I still go sailing?", T0 + DAY)
        far = memory("f", "The weather was awful.", T0 + DAY)
        vectors = np.asarray([[1, 0, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0]], dtype=np.float32)
        pairs = judge_pairs(index, [new, ruled, question, far], vectors)
        assert [(a.id, b.id) for a, b in pairs] == [("n", "o")]
        assert judge_pairs(None, [new], vectors[:1]) == []

    async def test_marking_the_verdicts(self) -> None:
        old = memory("o", "I spend every weekend sailing on the lake.", T0)
        index = BM25Index([old], np.ones((1, 4), dtype=np.float32))
        new = memory("n", "These days I go climbing on weekends instead.", T0 + DAY)
        before = REGISTRY.get_sample_value("mnemo_memory_supersessions_total", {"source": "llm"}) or 0.0
        out, vectors = await Superseder(store=None, in_process_max=100).mark(  # type: ignore[arg-type]
            "alice", index, [new], np.zeros((1, 4), dtype=np.float32), [(new, old)]
        )
        assert [m.id for m in out] == ["n", "o"]
        assert out[1].superseded_by == "n"
        assert out[1].valid_to == new.created_at
        assert vectors.shape == (2, 4)
        after = REGISTRY.get_sample_value("mnemo_memory_supersessions_total", {"source": "llm"})
        assert after == before + 1
