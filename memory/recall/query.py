"""Query understanding for recall (Chinese and English): negation, document-type aliases, time hints
and names of known speakers."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from memory.recall.keyword_index import tokenize
from memory.text.lexicons import ANSWER_TYPES, DOC_TYPE_ALIASES, NEGATION_RE, RECENCY_RE
from memory.text.slots import extract_slots


@dataclass(frozen=True, slots=True)
class QueryPlan:
    text: str
    semantic_text: str  # what is embedded: negated phrases and known names taken out
    keyword_tokens: list[str]  # BM25 terms: aliases added, negated terms removed
    negated: list[str] = field(default_factory=list)
    negated_tokens: frozenset[str] = frozenset()
    doc_types: list[str] = field(default_factory=list)
    month: str | None = None  # "YYYY-MM" when the query names a month ("我3月提交的报价单")
    names: list[str] = field(default_factory=list)
    wants_recent: bool = False  # "最近/现在/recently/now...": recency weighs in ranking
    answer_types: list[str] = field(default_factory=list)  # quantity / time / organisation


def negations(text: str) -> list[tuple[str, str]]:
    """(whole negated clause, its object): "不要推荐咖啡机" -> ("不要推荐咖啡机", "咖啡机")."""
    found = []
    for match in NEGATION_RE.finditer(text):
        phrase = (match.group("zh") or match.group("en") or "").strip(" ，。,.!！?？")
        if phrase:
            found.append((match.group(0), phrase))
    return found


def doc_types_in(text: str) -> list[str]:
    low = text.lower()
    found = []
    for doc_type, aliases in DOC_TYPE_ALIASES.items():
        if any(
            (a in text) if re.search(r"[\u4e00-\u9fff]", a) else re.search(rf"\b{re.escape(a)}s?\b", low)
            for a in aliases
        ):
            found.append(doc_type)
    return found


def plan_query(text: str, *, known_names: Iterable[str] = (), now: float | None = None) -> QueryPlan:
    found = negations(text)
    negated = [phrase for _, phrase in found]
    semantic = text
    for clause, _ in found:
        semantic = semantic.replace(clause, " ")
    names = [
        n
        for n in known_names
        if n and re.search(rf"(?<![A-Za-z]){re.escape(n)}(?![A-Za-z])", text, re.IGNORECASE)
    ]
    stripped = semantic
    for name in names:
        stripped = re.sub(
            rf"(?<![A-Za-z]){re.escape(name)}(?:'s|’s)?(?![A-Za-z])", " ", stripped, flags=re.IGNORECASE
        )
    stripped = " ".join(stripped.split())
    doc_types = doc_types_in(text)
    expansion = [alias for d in doc_types for alias in DOC_TYPE_ALIASES[d]]
    negated_tokens = frozenset(t for phrase in negated for t in tokenize(phrase))
    keyword_tokens = [t for t in tokenize(" ".join([semantic, *expansion])) if t not in negated_tokens]
    moment = datetime.fromtimestamp(now, UTC) if now is not None else None
    month = next((s.value for s in extract_slots(text, now=moment) if s.name == "month"), None)
    return QueryPlan(
        text=text,
        semantic_text=stripped if len(stripped) >= 3 else semantic,
        keyword_tokens=keyword_tokens,
        negated=negated,
        negated_tokens=negated_tokens,
        doc_types=doc_types,
        month=month,
        names=names,
        wants_recent=RECENCY_RE.search(text) is not None,
        answer_types=[name for name, (asks, _) in ANSWER_TYPES.items() if asks.search(text)],
    )
