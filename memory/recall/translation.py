"""Query translation for recall (issue 28): a question asked in Chinese of memories said in English (or
the other way round) is also searched in the memories' language, and the two hit lists are fused.

The dense model is English-only, the keyword channel matches words the user wrote and the bridge
(USE v3) carries only part of a paraphrase across languages; a translated question meets the memories
on all three. Only the question is translated, never the memories: nothing is written, and when no
translation comes (no model, slow, down, nonsense) the search is the one asked. The model behind
`QueryTranslator` lives in memory/chat (query_translator.py); this module says what is asked of it and
how the answers are fused. When to translate is the retriever's (retrieval.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memory.models import ScoredMemory
from memory.text.language import Lang


class QueryTranslator(Protocol):
    async def translate(self, question: str, target: Lang) -> str | None:
        """`question` in `target`'s language; None when no translation can be had."""
        ...


def target_of(language: str) -> Lang:
    """The other of the two languages."""
    return "en" if language == "zh" else "zh"


def fuse(
    asked: Sequence[ScoredMemory], translated: Sequence[ScoredMemory], top_k: int, *, rrf_k: int = 10
) -> list[ScoredMemory]:
    """One list from the hits of the question as asked and of its translation: reciprocal rank fusion
    (a ranking score is not comparable across searches; ranks are). A memory both found keeps the
    instance with the higher relevance; equal fused scores keep the asked list's order first."""
    fused: dict[str, float] = {}
    best: dict[str, ScoredMemory] = {}
    for hits in (asked, translated):
        for rank, hit in enumerate(hits):
            mid = hit.memory.id
            fused[mid] = fused.get(mid, 0.0) + 1.0 / (rrf_k + rank + 1)
            if mid not in best or hit.relevance > best[mid].relevance:
                best[mid] = hit
    order = sorted(fused, key=lambda mid: -fused[mid])
    return [best[mid] for mid in order[:top_k]]
