"""The bridge channel's pure parts: the multilingual model, per-user rows, and how recall fuses them."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pytest

from harness.fakes import HashEmbedder
from memory.embedding.multilingual import MultilingualEmbedder, bridge_model_name
from memory.models import Memory, RecallRequest
from memory.recall.crosslingual import (
    BridgeCache,
    BridgeChannel,
    BridgeWeights,
    cross_language,
    nearest,
    needs_bridge,
    rows_from,
)
from memory.recall.query import plan_query
from memory.recall.retrieval import HybridRetriever, Scope

TOP_2 = RecallRequest("", top_k=2, as_of=0.0)  # what _rank reads of a request: top_k (min_relevance 0)


def memory(mid: str, text: str, *, at: float = 0.0, session: str = "s") -> Memory:
    return Memory(
        id=mid, user_id="u", content=text, created_at=at, session_id=session, source="user", content_hash=mid
    )


@pytest.fixture(scope="module")
def bridge_model() -> MultilingualEmbedder:
    return MultilingualEmbedder()


class TestMultilingualEmbedder:
    def test_unit_vectors_of_512(self, bridge_model: MultilingualEmbedder) -> None:
        vectors = bridge_model.embed_sync(["My daughter is allergic to peanuts.", "我女儿对花生过敏。"])
        assert vectors.shape == (2, 512)
        assert vectors.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        assert bridge_model.embed_sync([]).shape == (0, 512)

    @pytest.mark.parametrize(
        ("fact", "question", "small_talk"),
        [
            ("My daughter is allergic to peanuts.", "我女儿对什么过敏？", "今天天气真不错啊。"),
            (
                "我对青霉素过敏，打针前一定要提醒医生。",
                "Which medicine am I allergic to?",
                "Traffic was terrible.",
            ),
        ],
    )
    def test_a_question_lands_near_its_fact_in_the_other_language(
        self, bridge_model: MultilingualEmbedder, fact: str, question: str, small_talk: str
    ) -> None:
        f, q, t = bridge_model.embed_sync([fact, question, small_talk])
        assert float(q @ f) > float(q @ t) + 0.1

    async def test_callers_share_the_model(self, bridge_model: MultilingualEmbedder) -> None:
        write = bridge_model.for_caller("write")
        a = await write.embed(["我住在杭州"])
        b = bridge_model.embed_sync(["我住在杭州"])
        np.testing.assert_allclose(a, b, atol=1e-6)

    def test_the_model_name_carries_the_wheel_version(self) -> None:
        assert bridge_model_name() == "use-multilingual-v3@0.2.1"


class TestBridgeRows:
    def test_rows_follow_the_index_and_reuse_what_was_fetched(self) -> None:
        a, b, c = memory("a", "I live in Lisbon"), memory("b", "我住在杭州"), memory("c", "new one")
        v = np.eye(3, dtype=np.float32)
        first = rows_from({"a": a, "b": b}, {"a": v[0], "b": v[1]}, None)
        assert first.ids == ("a", "b")
        assert first.languages == ("en", "zh")
        assert first.present == frozenset({"en", "zh"})
        # b deleted, c written: only c comes from the store, a is kept, b dropped
        second = rows_from({"a": a, "c": c}, {"c": v[2]}, first)
        assert second.ids == ("a", "c")
        np.testing.assert_allclose(second.matrix.rows([0, 1]), v[[0, 2]], atol=1e-6)
        np.testing.assert_array_equal(second.matrix.codes[0], first.matrix.codes[0])  # a's codes kept
        # an id without a vector is left out: the caller sees the rows are incomplete
        third = rows_from({"a": a, "b": b, "c": c}, {}, second)
        assert len(third) == 2

    @pytest.mark.parametrize("limit", [1, 3, 10, 40])
    def test_the_nearest_rows_are_a_full_sorts_with_few_sorted(self, limit: int) -> None:
        """The bridge's nearest (only the best few sorted, more when `keep` turns rows away) are the
        first `limit` kept of a full stable sort: ties in row order, zh and en rows."""
        rng = np.random.default_rng(limit)
        texts = ["我住在杭州", "I live in Lisbon", "我的牙医姓林", "My dentist is Dr. Takeda"]
        mems = {f"m{i}": memory(f"m{i}", texts[i % 4], at=float(i)) for i in range(300)}
        vectors = rng.standard_normal((300, 8)).astype(np.float32)
        vectors[::7] = vectors[0]  # many equal cosines
        rows = rows_from(mems, {mid: vectors[i] for i, mid in enumerate(mems)}, None)
        sims = rows.cosine(vectors[0])
        for keep in (lambda m: True, lambda m: "杭州" in m.content, lambda m: m.created_at > 280):
            full = [
                rows.ids[int(j)] for j in np.argsort(-sims, kind="stable") if keep(mems[rows.ids[int(j)]])
            ]
            assert [mid for mid, _ in nearest(rows, sims, mems, limit=limit, keep=keep)] == full[:limit]

    def test_neighbours_blend_within_a_session_only(self) -> None:
        ms = {
            "q": memory("q", "你新工作怎么样", at=1),
            "r": memory("r", "挺好的，在做一个游戏服务器", at=2),
            "x": memory("x", "other session", at=3, session="t"),
        }
        v = np.eye(3, dtype=np.float32)
        rows = rows_from(ms, {"q": v[0], "r": v[1], "x": v[2]}, None)
        at = rows.row_of()
        # the question before the reply counts for the reply; nothing across sessions
        assert rows.blended_cosine(ms, 0.5, v[0], [at["r"]])[0] > 0
        assert rows.blended_cosine(ms, 0.5, v[0], [at["x"]])[0] == 0
        assert rows.blended_cosine(ms, 0.5, v[2], [at["x"]])[0] == pytest.approx(1.0, abs=1e-3)
        assert rows.neighbours(ms) is rows.neighbours(ms)  # made once per rows

    def test_neighbours_blend_as_the_per_row_definition_says(self) -> None:
        """Against the definition, row by row: 3 sessions, shuffled rows, equal times (which keep
        row order) and a one-memory session; any subset of rows, in any order."""
        rng = np.random.default_rng(5)
        n = 40
        sessions = ["a", "b", "c"]
        ms = {
            f"m{i}": memory(
                f"m{i}", "x", at=float(rng.integers(0, 12)), session=sessions[i % 3] if i else "solo"
            )
            for i in range(n)
        }
        ids = list(ms)
        rng.shuffle(ids)
        v = rng.normal(size=(n, 8)).astype(np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        rows = rows_from({mid: ms[mid] for mid in ids}, {mid: v[i] for i, mid in enumerate(ids)}, None)
        base = rows.matrix.rows(range(n))
        expected = base.copy()
        by_session: dict[str, list[int]] = {}
        for r, mid in enumerate(rows.ids):
            by_session.setdefault(ms[mid].session_id, []).append(r)
        for members in by_session.values():
            members.sort(key=lambda r: ms[rows.ids[r]].created_at)
            for k, r in enumerate(members):
                for j in (k - 2, k - 1, k + 1):
                    if 0 <= j < len(members):
                        expected[r] += 0.3 * base[members[j]]
        expected /= np.linalg.norm(expected, axis=1, keepdims=True)
        query = rng.normal(size=8).astype(np.float32)
        picked = [int(r) for r in rng.permutation(n)[:15]]
        np.testing.assert_allclose(
            rows.blended_cosine(ms, 0.3, query, picked), expected[picked] @ query, atol=1e-5
        )
        unit = base / np.linalg.norm(base, axis=1, keepdims=True)  # weight 0: each row alone
        np.testing.assert_allclose(
            rows.blended_cosine(ms, 0.0, query, picked), unit[picked] @ query, atol=1e-5
        )

    def test_when_the_bridge_takes_part(self) -> None:
        v = np.eye(2, dtype=np.float32)
        english = rows_from({"a": memory("a", "I live in Lisbon")}, {"a": v[0]}, None)
        mixed = rows_from(
            {"a": memory("a", "I live in Lisbon"), "b": memory("b", "我住在杭州")},
            {"a": v[0], "b": v[1]},
            None,
        )
        weights = BridgeWeights()  # en 0: an English query over English memories ranks as before
        assert not needs_bridge("en", english, weights)
        assert needs_bridge("zh", english, weights)
        assert needs_bridge("en", mixed, weights)
        assert cross_language(mixed, "en", ["a", "b"]) == {"b"}


def retriever(bridge: BridgeChannel | None) -> HybridRetriever:
    # _rank is pure: the store and versions are never touched
    return HybridRetriever(cast(Any, None), HashEmbedder(), cast(Any, None), bridge=bridge)


def channel() -> BridgeChannel:
    # the cache is never asked here either: _rank gets the bridge cosines as arguments
    return BridgeChannel(embedder=HashEmbedder(), cache=BridgeCache(cast(Any, None)), weights=BridgeWeights())


class TestFusion:
    fact = memory("fact", "My daughter is allergic to peanuts.")
    chat = memory("chat", "我女儿昨天在学校玩得很开心。")
    candidates = {"fact": fact, "chat": chat}
    # what the channels said about "我女儿对什么过敏？": MiniLM and BM25 favour the Chinese small talk
    cosine = {"fact": 0.12, "chat": 0.35}
    keyword = {"fact": 0.0, "chat": 4.0}
    bridge = {"fact": 0.62, "chat": 0.30}

    def rank(self, r: HybridRetriever, **kw: Any) -> list[str]:
        plan = plan_query("我女儿对什么过敏？")
        hits = r._rank(plan, self.candidates, self.cosine, self.keyword, set(), TOP_2, Scope(0.0), **kw)
        return [h.memory.id for h in hits]

    def test_without_the_bridge_the_other_language_loses(self) -> None:
        assert self.rank(retriever(None)) == ["chat", "fact"]

    def test_the_bridge_ranks_a_fact_stated_in_the_other_language_first(self) -> None:
        r = retriever(channel())
        assert self.rank(r, bridge=self.bridge, cross={"fact"}) == ["fact", "chat"]

    def test_a_weak_match_in_the_other_language_does_not_outrank_the_words_that_answer(self) -> None:
        """Among a bilingual user's segments of long turns every bridge cosine is weak (0.1-0.25):
        min-max gave the best of them the bridge's whole share, above the memory that says the
        question's words (issue 45: `bench/token_history.py` at 1M tokens)."""
        own = memory("own", "我们的房东姓范，她只在晚上回消息。")
        other = memory("other", "小林的房东又涨了房租，小林的会计让他把每张发票都留好。")
        weak = memory("weak", "We keep the Sentry dashboards for billing next to the runbook.")
        r = retriever(channel())
        hits = r._rank(
            plan_query("我们的房东姓什么？"), {"own": own, "other": other, "weak": weak},
            {"own": 0.35, "other": 0.3, "weak": 0.0}, {"own": 12.0, "other": 5.0, "weak": 0.0}, set(),
            TOP_2, Scope(0.0), bridge={"own": 0.07, "other": 0.0, "weak": 0.15}, cross={"weak"},
        )  # fmt: skip
        assert [h.memory.id for h in hits] == ["own", "weak"]
        strong = r._rank(
            plan_query("我们的房东姓什么？"), {"own": own, "other": other, "weak": weak},
            {"own": 0.35, "other": 0.3, "weak": 0.0}, {"own": 12.0, "other": 5.0, "weak": 0.0}, set(),
            TOP_2, Scope(0.0), bridge={"own": 0.07, "other": 0.0, "weak": 0.64}, cross={"weak"},
        )  # fmt: skip
        assert [h.memory.id for h in strong] == ["weak", "own"]  # a real match still leads

    def test_a_cross_language_hit_reports_its_bridge_similarity(self) -> None:
        r = retriever(channel())
        plan = plan_query("我女儿对什么过敏？")
        hits = r._rank(
            plan, self.candidates, self.cosine, self.keyword, set(), TOP_2, Scope(0.0),
            bridge=self.bridge, cross={"fact"},
        )  # fmt: skip
        by_id = {h.memory.id: h.similarity for h in hits}
        assert by_id == {"fact": pytest.approx(0.62), "chat": pytest.approx(0.35)}

    def test_english_over_english_is_unchanged_by_the_channel(self) -> None:
        a, b = memory("a", "I moved to Lisbon last May"), memory("b", "My sister is a nurse in Porto")
        plan = plan_query("Where does my sister work?")
        args = ({"a": a, "b": b}, {"a": 0.2, "b": 0.6}, {"a": 0.0, "b": 2.0}, set[str]())
        before = retriever(None)._rank(plan, *args, TOP_2, Scope(0.0))
        after = retriever(channel())._rank(
            plan, *args, TOP_2, Scope(0.0), bridge={"a": 0.9, "b": 0.1}, cross=set()
        )
        assert [(h.memory.id, h.score) for h in before] == [(h.memory.id, h.score) for h in after]
