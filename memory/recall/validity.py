"""Recall of facts that change (docs/memory.md#facts-that-change-supersession), pure: which more
candidates a question brings (the current memory of a superseded candidate's chain; for a question about
the past the older ones too; the memories stating an attribute asked about) and how validity moves
scores (a superseded memory keeps `factor` of its score unless the question is about the past; the
current one ranks at least as high as what it replaced). Superseded memories are ranked, never
filtered: "Where did I live before?" must still find them.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Collection, Hashable, Iterator, Mapping, Sequence
from dataclasses import replace

from memory.models import Memory, ScoredMemory
from memory.recall.index_views import Rule
from memory.recall.keyword_index import BM25Index
from memory.recall.query import QueryPlan
from memory.text.facts import CHANGED, HABIT, supersedes
from memory.text.profile_words import CATEGORY_FACTS, CATEGORY_STATEMENTS
from memory.text.tokens import UNIGRAM, tokenize


class Visible(Mapping[str, Memory]):
    """The user's memories over the tiers a search covers (hot, and warm/cold when asked), less the ids
    each tier must not answer for: where chains are followed and attributes looked up. Nothing is copied
    (a search reads a few entries, not all)."""

    def __init__(self, sources: Sequence[tuple[BM25Index, Collection[str]]]) -> None:
        self._sources = sources

    def __getitem__(self, mid: str) -> Memory:
        for index, hidden in self._sources:
            m = index.memories.get(mid)
            if m is not None and mid not in hidden:
                return m
        raise KeyError(mid)

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for index, hidden in self._sources:
            for mid in index.memories:
                if mid not in hidden and mid not in seen:
                    seen.add(mid)
                    yield mid

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def with_fact_keys(self, keys: Sequence[str]) -> list[Memory]:
        return [
            m
            for index, hidden in self._sources
            for m in index.views.with_fact_keys(keys)
            if m.id not in hidden
        ]

    def users_newest_first(self) -> Iterator[Memory]:
        """The user's own memories (source "user"), newest first, over every tier, made as they are
        read: a reader that wants the newest few stops early."""
        return self._merged([index.views.users_newest_first() for index, _ in self._sources])

    def newest_where(self, key: Hashable, rule: Rule) -> Iterator[Memory]:
        """`users_newest_first` of the memories `rule` picks (each tier keeps its run across writes:
        memory/recall/index_views.py)."""
        return self._merged([index.views.newest_where(key, rule) for index, _ in self._sources])

    def _merged(self, runs: Sequence[Sequence[Memory]]) -> Iterator[Memory]:
        """Each tier's newest-first run less the ids it must not answer for, merged newest first (equal
        times: the earlier tier's first, as `__getitem__`), each memory once."""
        seen: set[str] = set()
        tiers = [
            (m for m in run if m.id not in hidden)
            for run, (_, hidden) in zip(runs, self._sources, strict=True)
        ]
        for m in heapq.merge(*tiers, key=_age):
            if m.id not in seen:
                seen.add(m.id)
                yield m

    def fact_keys(self) -> set[str]:
        return {key for index, _ in self._sources for key in index.views.by_fact()}

    def chains(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for index, hidden in self._sources:
            for newer, older in index.views.chains().items():
                out.setdefault(newer, []).extend(o for o in older if o not in hidden)
        return out


def current_again(m: Memory, ids: Collection[str] | Mapping[str, Memory]) -> Memory:
    """A memory whose successor is gone (deleted, forgotten) is current again: shown without the mark."""
    if m.superseded_by and m.superseded_by not in ids:
        return replace(m, superseded_by=None, valid_to=None)
    return m


def successors(candidates: Mapping[str, Memory], memories: Mapping[str, Memory]) -> dict[str, Memory]:
    """For each superseded candidate, the current memory at the end of its chain (if it still exists)."""
    out: dict[str, Memory] = {}
    for mid, m in candidates.items():
        head = m
        for _ in range(20):  # chains are short; a cycle (never written) must not hang a search
            nxt = memories.get(head.superseded_by or "")
            if nxt is None:
                break
            head = nxt
        if head is not m:
            out[mid] = head
    return out


ATTRIBUTE_CANDIDATES = 10  # memories stating the attribute a question asks about, newest first


def changed_facts(plan: QueryPlan, candidates: Mapping[str, Memory], index: Visible) -> list[Memory]:
    """More candidates for facts that change: the memories stating the attribute the question asks
    about ("我以前开什么车？" → those stating a car), and the rest of every candidate's chain (the current
    memory that replaced it; for a question about the past, the ones it replaced too)."""
    out: dict[str, Memory] = {}
    if plan.attributes:
        stating = [m for m in index.with_fact_keys(plan.attributes) if m.source == "user"]
        stating.sort(key=lambda m: m.created_at, reverse=True)
        out.update((m.id, m) for m in stating[:ATTRIBUTE_CANDIDATES])
    seeds = {**candidates, **out}
    for head in successors(seeds, index).values():
        out.setdefault(head.id, head)
    if plan.wants_past:
        chains = index.chains()
        todo = [*seeds, *out]
        while todo:
            for older in chains.get(todo.pop(), []):
                if older not in out and older not in candidates and older in index:
                    out[older] = index[older]
                    todo.append(older)
    return [m for mid, m in out.items() if mid not in candidates]


def with_asked_changes(plan: QueryPlan, index: Visible) -> QueryPlan:
    """The plan asking, beside its attributes, the `changed:<subject>` keys the question names: their
    statements come in as candidates and rank as an attribute's do ("我们组现在的发布窗口是哪天？" among
    other teams' "…的发布窗口改到了…")."""
    asked = asked_changes(plan, index)
    return replace(plan, attributes=[*plan.attributes, *asked]) if asked else plan


def asked_changes(plan: QueryPlan, index: Visible) -> list[str]:
    """The `changed:<subject>` keys whose subject the question names, all its words ("When is our team's
    deploy window now?" names "team's deploy window"; "我们组现在的发布窗口是哪天？" names "发布窗口")."""
    said = frozenset(tokenize(plan.text)).union(plan.keyword_tokens)
    prefix = CHANGED + ":"
    return [
        key
        for key in index.fact_keys()
        if key.startswith(prefix) and (words := _subject_words(key[len(prefix) :])) and words <= said
    ]


@functools.lru_cache(maxsize=4096)
def _subject_words(subject: str) -> frozenset[str]:
    """A change's subject as words a question must all say (a Chinese one as bigrams)."""
    return frozenset(t for t in tokenize(subject) if not t.startswith(UNIGRAM))


def states_attribute(m: Memory, attributes: Sequence[str]) -> bool:
    return any(k == a or k.split(":", 1)[0] == a for k, _ in m.facts for a in attributes)


CATEGORY_CANDIDATES = 10  # memories stating a category a question asks about ("我有什么爱好？"), newest first


def _age(m: Memory) -> float:
    return -m.created_at


@functools.lru_cache(maxsize=65_536)
def _says_category(key: str, content: str) -> bool:
    """Whether the text says the words of category `key` (CATEGORY_STATEMENTS)."""
    return CATEGORY_STATEMENTS[key].search(content) is not None


def states_category(m: Memory, categories: Sequence[str]) -> bool:
    """Whether the user's own memory `m` states a value of one of `categories` (issue 40): by the
    supersession keys of its facts (CATEGORY_FACTS: "我开的是一辆丰田" states the car) or in the words of
    such a statement, said of themself ("周末我喜欢拉大提琴" states a hobby, "我女儿在学钢琴" does not)."""
    if m.source != "user" or not categories:
        return False
    if states_attribute(m, [k for c in categories for k in CATEGORY_FACTS.get(c, ())]):
        return True
    return any(_says_category(c, m.content) for c in categories if c in CATEGORY_STATEMENTS)


def category_statements(categories: Sequence[str], view: Visible) -> list[Memory]:
    """The `CATEGORY_CANDIDATES` newest memories stating a value of one of `categories` (a question about
    a category shares no word with them: "What are my hobbies?" and "I play the cello on weekends").
    Each index reads its own memories against the asked categories' words once and keeps what states
    them across writes (a scan of 29,000 own memories at 58,565 was most of a category question's
    search, at every search after a write: issue 45)."""
    if not categories:
        return []
    asked = tuple(categories)
    run = view.newest_where(("category", asked), functools.partial(states_category, categories=asked))
    return list(itertools.islice(run, CATEGORY_CANDIDATES))


def implicit_links(memories: Sequence[Memory], known: Mapping[str, Memory]) -> dict[str, Memory]:
    """Supersession read at search time among these memories: old id -> the next newer memory of the same
    speaker whose claim replaces its claim, for memories no write compared (one was in an archive tier
    when the other was written, or was stored before supersession existed). A memory with a live
    `superseded_by` is left to it."""
    by_key: dict[tuple[str, str], list[tuple[Memory, str]]] = {}
    for m in memories:
        if m.source != "user" or (m.superseded_by and m.superseded_by in known):
            continue
        for key, value in m.facts:
            if key != HABIT:
                by_key.setdefault((m.name or "", key), []).append((m, value))
    links: dict[str, Memory] = {}
    for (_, key), stated in by_key.items():
        stated.sort(key=lambda mv: mv[0].valid_since)
        for i, (old, old_value) in enumerate(stated):
            for new, new_value in stated[i + 1 :]:
                if new.valid_since > old.valid_since and supersedes((key, new_value), (key, old_value)):
                    links.setdefault(old.id, new)
                    break
    return links


def rank_validity(
    ranked: list[ScoredMemory],
    memories: Mapping[str, Memory],
    plan: QueryPlan,
    *,
    factor: float,
    as_of: float | None = None,
) -> list[ScoredMemory]:
    """Scores of the candidates adjusted for facts that changed: the current memory ranks at least as
    high as the best memory it replaced (it is about the same thing, often in other words: "I moved to
    Suzhou" for "Where do I live?"), and takes its similarity for the recall floor. Unless the question is about the past ("以前/before/when
    did I move"), a superseded memory keeps only `factor` of its score, so the current one comes first;
    for the past both keep their place and come back with their validity. A memory a person marked no
    longer true (`valid_to` at or before `as_of`, no successor) is ranked as a superseded one.
    """
    implicit = implicit_links([s.memory for s in ranked], memories)
    if implicit:  # read-time marks, as a write would have stored them (the prompt and the API show them)
        ranked = [
            replace(s, memory=replace(s.memory, superseded_by=new.id, valid_to=new.valid_since))
            if (new := implicit.get(s.memory.id)) is not None
            else s
            for s in ranked
        ]
        memories = _Overlay(memories, {s.memory.id: s.memory for s in ranked})
    heads = successors({s.memory.id: s.memory for s in ranked}, memories)
    group = {mid: head.id for mid, head in heads.items()}  # superseded candidate -> its chain's head
    best: dict[str, float] = {}
    similar: dict[str, float] = {}
    for s in ranked:
        g = group.get(s.memory.id, s.memory.id)
        best[g] = max(best.get(g, 0.0), s.score)
        similar[g] = max(similar.get(g, 0.0), s.similarity)
    chained = set(group.values())
    out = []
    for s in ranked:
        mid = s.memory.id
        if s.memory.superseded_by and mid not in group:
            s = replace(s, memory=current_again(s.memory, memories))
        if mid in chained:  # the current memory of a chain with superseded candidates
            s = _rescored(s, max(s.score, best[mid] * 1.001), similar[mid], superseded=False)
        elif mid in group and plan.wants_past:  # the earlier values come back next to the current one
            s = _rescored(s, max(s.score, best[group[mid]] * 0.99), similar[group[mid]], superseded=True)
        elif mid in group or ended(s.memory, as_of) and not plan.wants_past:
            s = _rescored(s, s.score * factor, s.similarity, superseded=True)
        out.append(s)
    return out  # unsorted: `_rank` sorts (negated last, a named month first, then score)


def ended(m: Memory, as_of: float | None) -> bool:
    """Marked no longer true by a person (an edit's `valid_to`), with no newer memory replacing it."""
    return as_of is not None and m.superseded_by is None and m.valid_to is not None and m.valid_to <= as_of


class _Overlay(Mapping[str, Memory]):
    """`base` with some memories replaced (read-time supersession marks)."""

    def __init__(self, base: Mapping[str, Memory], top: Mapping[str, Memory]) -> None:
        self._base, self._top = base, top

    def __getitem__(self, mid: str) -> Memory:
        return self._top[mid] if mid in self._top else self._base[mid]

    def __iter__(self) -> Iterator[str]:
        yield from self._top
        yield from (mid for mid in self._base if mid not in self._top)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _rescored(s: ScoredMemory, score: float, similarity: float, *, superseded: bool) -> ScoredMemory:
    breakdown = s.breakdown
    if breakdown is not None:
        ratio = score / s.score if s.score else 1.0
        breakdown = replace(
            breakdown, validity_factor=breakdown.validity_factor * ratio, superseded=superseded
        )
    return replace(s, score=score, similarity=similarity, breakdown=breakdown)
