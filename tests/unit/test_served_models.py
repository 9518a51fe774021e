"""The pure parts of models served over HTTP (issue 44): the circuit breaker, the rerank protocols'
shapes, and the reranking stage's fusion and budget with a stand-in reranker whose scores the test
sets."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from app.clients.breaker import CircuitBreaker, CircuitOpen
from app.clients.rerank import RerankFailed, parse_scores, request_body
from memory.models import Memory, ScoredMemory
from memory.recall.rerank import RerankPolicy, reorder, rerank
from monitoring import metrics


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TestCircuitBreaker:
    def test_opens_after_failures_in_a_row_then_lets_calls_out_again(self) -> None:
        clock = Clock()
        breaker = CircuitBreaker(kind="embeddings", model="m", failures=3, reset_seconds=10, clock=clock)
        breaker.failure()
        breaker.failure()
        breaker.success()  # a success in between: the count starts again
        breaker.failure()
        breaker.failure()
        breaker.before()  # still closed: two in a row
        breaker.failure()
        assert breaker.is_open
        assert metrics.MODEL_CIRCUIT_OPEN.labels("embeddings", "m")._value.get() == 1
        with pytest.raises(CircuitOpen):
            breaker.before()
        clock.now += 10
        breaker.before()  # half-open: a call goes out
        breaker.failure()  # and fails: open again at once, for another 10 s
        with pytest.raises(CircuitOpen):
            breaker.before()
        clock.now += 10
        breaker.before()
        breaker.success()
        assert not breaker.is_open
        assert metrics.MODEL_CIRCUIT_OPEN.labels("embeddings", "m")._value.get() == 0

    def test_refuses_nonsense(self) -> None:
        with pytest.raises(ValueError, match="failures"):
            CircuitBreaker(kind="rerank", model="m", failures=0)


class TestRerankProtocols:
    def test_cohere_shape(self) -> None:
        body = request_body("cohere", "bge-reranker", "我住在哪里？", ["I live in Lisbon", "午饭吃了面"])
        assert body == {
            "model": "bge-reranker",
            "query": "我住在哪里？",
            "documents": ["I live in Lisbon", "午饭吃了面"],
            "top_n": 2,
        }
        answer = {"results": [{"index": 1, "relevance_score": 0.1}, {"index": 0, "relevance_score": 0.9}]}
        assert parse_scores("cohere", answer, 2) == [0.9, 0.1]

    def test_tei_shape(self) -> None:
        assert request_body("tei", "", "where do I live", ["a", "b"]) == {
            "query": "where do I live",
            "texts": ["a", "b"],
        }
        assert parse_scores("tei", [{"index": 1, "score": 2.0}, {"index": 0, "score": -1.0}], 2) == [
            -1.0,
            2.0,
        ]

    def test_a_document_left_out_ranks_last_and_bad_answers_fail(self) -> None:
        assert parse_scores("cohere", {"results": [{"index": 1, "relevance_score": 0.5}]}, 2) == [
            float("-inf"),
            0.5,
        ]
        with pytest.raises(RerankFailed, match="out of range"):
            parse_scores("tei", [{"index": 5, "score": 1.0}], 2)
        with pytest.raises(RerankFailed):
            parse_scores("cohere", {"error": "overloaded"}, 2)
        with pytest.raises(RerankFailed):
            parse_scores("tei", [{"index": 0}], 1)


def hit(mid: str, text: str) -> ScoredMemory:
    memory = Memory(
        id=mid, user_id="u", content=text, created_at=0.0, session_id="s", source="user", content_hash=mid
    )
    return ScoredMemory(memory, score=1.0, similarity=0.5, relevance=0.7)


HITS = [
    hit("a", "I live in Lisbon."),
    hit("b", "我住在成都。"),
    hit("c", "The weather is nice."),
    hit("d", "午饭吃了面。"),
]


class StandIn:
    """A reranker whose scores the test sets; `hold` keeps it from answering until released."""

    def __init__(self, told: dict[str, float], hold: asyncio.Event | None = None) -> None:
        self.told = told
        self.hold = hold
        self.asked: list[str] = []

    async def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        self.asked = list(documents)
        if self.hold is not None:
            await self.hold.wait()
        return [self.told.get(d, 0.0) for d in documents]


class TestRerankStage:
    async def test_orders_as_told_over_the_first_n_only(self) -> None:
        told = {"午饭吃了面。": 3.0, "我住在成都。": 2.0, "I live in Lisbon.": 1.0}
        reranker = StandIn(told)
        out, outcome = await rerank("住在哪", HITS, reranker, RerankPolicy(candidates=3, weight=1.0))
        assert outcome == "reranked"
        assert reranker.asked == [h.memory.content for h in HITS[:3]]  # the first N candidates only
        assert [h.memory.id for h in out] == ["b", "a", "c", "d"]  # d was not a candidate: it stays last
        assert [h.relevance for h in out] == [0.7] * 4  # relevance stays the first stage's

    def test_fusion_weight_moves_between_the_two_orders(self) -> None:
        scores = [0.0, 0.0, 0.0, 9.0]  # the reranker puts the last first
        assert [h.memory.id for h in reorder(HITS, scores, 0.0)] == ["a", "b", "c", "d"]
        assert [h.memory.id for h in reorder(HITS, scores, 1.0)][0] == "d"
        assert [h.memory.id for h in reorder(HITS, scores, 0.5)][0] in {"a", "d"}

    async def test_past_its_budget_the_first_stage_order_stands(self) -> None:
        hold = asyncio.Event()  # never set: the reranker never answers
        reranker = StandIn({"午饭吃了面。": 9.0}, hold)
        out, outcome = await rerank(
            "x", HITS, reranker, RerankPolicy(candidates=4, budget_seconds=0.05, weight=1.0)
        )
        assert outcome == "timeout"
        assert out == HITS

    async def test_a_failing_reranker_keeps_the_order(self) -> None:
        class Broken:
            async def scores(self, query: str, documents: Sequence[str]) -> list[float]:
                return [1.0]  # one score for four documents

        out, outcome = await rerank("x", HITS, Broken(), RerankPolicy())
        assert (out, outcome) == (HITS, "error")
