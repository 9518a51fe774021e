"""Query understanding for recall (Chinese and English): negation, document-type aliases, time hints
and names of known speakers.

Negation is read for its intent. A request to leave something out ("不要推荐咖啡机", "don't suggest
coffee machines", "别给我推荐甜食") removes the phrase from the query and demotes memories naming it. A
statement or a check about the user ("I don't like watching comedy movies, right?", "我不喜欢看喜剧片，对吗？",
"X is not my birthday, right?") keeps the phrase in the query and ranks the user's own statements
about it first: the user wants that memory, not its absence."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo

from memory.recall.ownership import possessions_asked
from memory.text.lexicons import (
    CHECKED_RE,
    DOC_TYPE_ALIASES,
    FIRST_PERSON_NEGATION_RE,
    NEGATION_RE,
    REQUEST_VERB_RE,
    VERIFICATION_RE,
)
from memory.text.profile_words import ATTRIBUTE_QUESTIONS, CATEGORY_OTHER_PERSON_RE, CATEGORY_QUESTIONS
from memory.text.slots import Slot, extract_slots, is_range
from memory.text.time_words import (
    ANSWER_TYPES,
    EVENT_ANCHOR_NOT_CLAUSE_RE,
    EVENT_ANCHOR_RES,
    EVENT_ANCHOR_SUBJECT_RE,
    LAST_WEEK_RE,
    PAST_RE,
    RECENCY_RE,
    TIME_BOUND_AFTER_ZH_RE,
    TIME_BOUND_EN_LEAD_RE,
    TIME_BOUND_EN_RE,
    TIME_BOUND_SINCE_ZH_RE,
    TIME_BOUNDS,
)
from memory.text.tokens import tokenize
from memory.text.transliteration import names_across_scripts


@dataclass(frozen=True, slots=True)
class QueryPlan:
    text: str
    semantic_text: str  # what is embedded: negated phrases and known names taken out
    keyword_tokens: list[str]  # BM25 terms: aliases added, negated terms removed
    negated: list[str] = field(default_factory=list)
    negated_tokens: frozenset[str] = frozenset()
    doc_types: list[str] = field(default_factory=list)
    # "YYYY-MM-DD" when the query names a day before the day it is asked on ("我昨天去了哪里？", "on May 23,
    # 2023", "上周五"); today and a day to come are none
    day: str | None = None
    # the Monday ("YYYY-MM-DD") of the calendar week before the one asked in ("我上周去了哪里？", "last week")
    week: str | None = None
    month: str | None = None  # "YYYY-MM" when the query names a month ("我3月提交的报价单")
    # "YYYY-MM/YYYY-MM" when it names a longer period instead: a season or a year ("去年夏天", "in 2022")
    period: str | None = None
    # "before" | "after" | "since" when the month or period is one end of the time asked about: "before
    # 2020", "2020年以前" (up to its start), "after March", "5月以后" (from its end), "since 2020", "从2020年起",
    # "5月以来" (from its start)
    bound: str | None = None
    # ("before" | "after", the event's words) when it names a time by another event: "before I moved";
    # `anchor_words`: the words of the question that say it (left out of the ranking once it is dated)
    anchor: tuple[str, str] | None = None
    anchor_words: str = ""
    names: list[str] = field(default_factory=list)
    wants_recent: bool = False  # "最近/现在/recently/now...": recency weighs in ranking
    answer_types: list[str] = field(default_factory=list)  # quantity / time / organisation
    wants_past: bool = False  # "以前/before/used to/when did I move": superseded memories are not demoted
    checked: list[str] = field(default_factory=list)  # what a statement or check is about ("comedy movies")
    checked_tokens: frozenset[str] = frozenset()
    attributes: list[str] = field(default_factory=list)  # supersession keys the question asks about
    # the categories of the user's life it asks about ("我有什么爱好？": hobby; CATEGORY_QUESTIONS): only a
    # question about the user's own life (first person, no other person named)
    categories: list[str] = field(default_factory=list)
    # what it calls the user's own ("my dentist", "我们的房东"; memory/recall/ownership.py)
    possessions: list[str] = field(default_factory=list)
    # the query's own terms (no document-type aliases): what relevance's word coverage is measured on
    own_tokens: list[str] = field(default_factory=list)
    # the text with each known name it writes in the other script spelled as the user's turns do
    # ("What did 卡罗琳 research?"): which language the question is read in (empty: `text`)
    scripted: str = ""

    @property
    def language_text(self) -> str:
        return self.scripted or self.text


def negations(text: str) -> list[tuple[str, str]]:
    """(whole negated clause, its object): "不要推荐咖啡机" -> ("不要推荐咖啡机", "咖啡机")."""
    found = []
    for match in NEGATION_RE.finditer(text):
        phrase = (match.group("zh") or match.group("en") or "").strip(" ，。,.!！?？")
        if phrase:
            found.append((match.group(0), phrase))
    return found


def is_exclusion(text: str, start: int, end: int) -> bool:
    """Is the negation at text[start:end] a request to leave something out? Yes when it asks for
    something (推荐/建议/提/recommend/suggest/show …) or is said without a first-person subject ("别…",
    "don't …"); no for the user's statement about themself ("I don't like X", "我不喜欢X", "X is not my
    birthday"), least of all in a question that checks it ("…, right?", "…，对吗？"). A first-person
    negation inside a request ("I don't want coffee machines, suggest a gift") still excludes."""
    clause = text[start:end]
    if REQUEST_VERB_RE.search(clause):
        return True
    before = text[max(0, start - 24) : start]
    if FIRST_PERSON_NEGATION_RE.search(before) is None:
        return True
    return VERIFICATION_RE.search(text) is None and REQUEST_VERB_RE.search(text) is not None


def checked_phrases(text: str) -> list[str]:
    """What the user's negative statements or checks in `text` are about."""
    found = []
    for match in CHECKED_RE.finditer(text):
        for group in ("zh", "en", "subject", "object"):
            phrase = (match.group(group) or "").strip(" ，。,.!！?？")
            if phrase:
                found.append(re.sub(r"(对吗|对吧|是吧|是吗|对不对)$", "", phrase))
    return [p for p in found if p]


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


def whole_name(name: str, *, possessive: bool = False) -> str:
    """The pattern of `name` as a whole name, not inside a Latin word ("Jon" is not in "Jonathan"; 卡罗琳
    is anywhere in Chinese text); `possessive`: with its "'s" too."""
    suffix = "(?:'s|’s)?" if possessive else ""
    return rf"(?<![A-Za-z]){re.escape(name)}{suffix}(?![A-Za-z])"


def plan_query(
    text: str,
    *,
    known_names: Iterable[str] = (),
    now: float | None = None,
    negation_intent: bool = True,
    changing_facts: bool = True,
    names_across: bool = True,
    zone: tzinfo = UTC,
) -> QueryPlan:
    """`negation_intent=False` is the earlier planner (every negation excludes); `changing_facts=False`
    leaves out what supersession adds (past-question words out of the keywords, attributes asked
    about): both kept as the benchmark baseline. `zone`: the time zone "yesterday", "last week" and
    "3月" are read in (the deployment's `TIME_ZONE`)."""
    found = negations(text)
    checked: list[str] = []
    if negation_intent:
        kept = []
        for clause, phrase in found:
            start = text.find(clause)
            if is_exclusion(text, start, start + len(clause)):
                kept.append((clause, phrase))
        if len(kept) < len(found) or not found:
            checked = (
                checked_phrases(text) if (len(kept) < len(found) or VERIFICATION_RE.search(text)) else []
            )
        found = kept
    negated = [phrase for _, phrase in found]
    moment = datetime.fromtimestamp(now, zone) if now is not None else datetime.now(zone)
    slots = extract_slots(text, now=moment)
    dated = next((s for s in slots if s.name == "date" and _past_day(s, moment)), None)
    weekly = next((s for s in slots if s.name == "date" and LAST_WEEK_RE.fullmatch(s.raw)), None)
    month = next((s.value for s in slots if s.name == "month"), None)
    period = next((s.value for s in slots if s.name == "period"), None)
    named = dated or weekly or next((s for s in slots if s.name in ("month", "period")), None)
    bound = time_bound(text, named) if named is not None else None
    anchored = None if named is not None else _anchor_match(text)
    semantic = text
    for clause, _ in found:
        semantic = semantic.replace(clause, " ")
    names = [n for n in known_names if n and re.search(whole_name(n), text, re.IGNORECASE)]
    # a known name written in the other script (Caroline asked of 卡罗琳's turns, issue 28): named too,
    # and its own spelling joins the keywords, so the turns that say it match
    across = names_across_scripts([n for n in known_names if n not in names], text) if names_across else []
    stripped = semantic
    for name in [*names, *(spelled for spelled, _ in across)]:
        stripped = re.sub(whole_name(name, possessive=True), " ", stripped, flags=re.IGNORECASE)
    stripped = " ".join(stripped.split())
    scripted = text
    # a name the user's turns also spell this way keeps it; else the first spelling of the turns
    for spelled, known in {s: k for s, k in reversed(across) if s not in names}.items():
        scripted = re.sub(whole_name(spelled), known, scripted)
    doc_types = doc_types_in(text)
    expansion = [alias for d in doc_types for alias in DOC_TYPE_ALIASES[d]]
    negated_tokens = frozenset(t for phrase in negated for t in tokenize(phrase))
    wants_past = PAST_RE.search(text) is not None or bound == "before"
    # "以前/before/used to" say when, not what: as keywords they match "以后" and every "before"
    keyword_text = PAST_RE.sub(" ", semantic) if wants_past and changing_facts else semantic
    # the query's own words leave out a name the user's turns spell the other way: no turn has it, and
    # it would count as a word the user never wrote (relevance's `known` and coverage)
    own_text = keyword_text
    for spelled in {s for s, _ in across if s not in names}:
        own_text = re.sub(whole_name(spelled), " ", own_text)
    keyword_tokens = [
        t
        for t in tokenize(" ".join([keyword_text, *expansion, *(k for _, k in across)]))
        if t not in negated_tokens
    ]
    return QueryPlan(
        text=text,
        semantic_text=stripped if len(stripped) >= 3 else semantic,
        keyword_tokens=keyword_tokens,
        negated=negated,
        negated_tokens=negated_tokens,
        doc_types=doc_types,
        day=dated.value if dated is not None else None,
        week=_last_week(moment) if weekly is not None else None,
        month=month,
        period=period,
        bound=bound,
        anchor=anchored[:2] if anchored is not None else None,
        anchor_words=anchored[2] if anchored is not None else "",
        names=[*names, *(k for _, k in across)],
        wants_recent=RECENCY_RE.search(text) is not None,
        answer_types=[name for name, (asks, _) in ANSWER_TYPES.items() if asks.search(text)],
        wants_past=wants_past,
        checked=checked,
        checked_tokens=frozenset(t for phrase in checked for t in tokenize(phrase)),
        attributes=[key for key, asks in ATTRIBUTE_QUESTIONS.items() if asks.search(text)]
        if changing_facts
        else [],
        categories=categories_asked(text) if not names and not across else [],
        possessions=possessions_asked(text),
        own_tokens=[
            t for t in tokenize(" ".join([own_text, *(k for _, k in across)])) if t not in negated_tokens
        ],
        scripted=scripted if scripted != text else "",
    )


_FIRST_PERSON_RE = re.compile(r"我|\b(?:i|me|my|mine|myself|i'm|i've)\b", re.IGNORECASE)


def categories_asked(text: str) -> list[str]:
    """The categories of the user's life a question in the first person asks about (CATEGORY_QUESTIONS):
    "我有什么爱好？" -> ["hobby"], "What subject do I teach?" -> ["teaching"]; of a question about a
    relative's life ("我女儿有什么爱好？") only the family."""
    if _FIRST_PERSON_RE.search(text) is None:
        return []
    asked = [key for key, asks in CATEGORY_QUESTIONS.items() if asks.search(text)]
    if CATEGORY_OTHER_PERSON_RE.search(text):  # "我女儿有什么爱好？": the daughter's, not the user's
        return [key for key in asked if key == "family"]
    return asked


def _past_day(slot: Slot, moment: datetime) -> bool:
    """Whether a date slot names a day before the one the question is asked on (`moment`, in the
    deployment's time zone), and is a day, not "last week" read as the day a week back."""
    if LAST_WEEK_RE.fullmatch(slot.raw):
        return False
    try:
        day = datetime.fromisoformat(slot.value).date()
    except ValueError:
        return False
    return day < moment.date()


def _last_week(moment: datetime) -> str:
    """The Monday of the calendar week before the one `moment` is in."""
    day = moment.date()
    return (day - timedelta(days=day.weekday() + 7)).isoformat()


def time_bound(text: str, named: Slot) -> str | None:
    """Whether the day, month or period a question names (`named`, a slot of `text`) is one end of the time
    it asks about: "before" ("before 2020", "2020年以前", "until May"), "after" ("after March",
    "2023年以后") or "since" ("since 2020", "从2020年起", "5月以来", "from May"); None when it is the
    time itself ("in 2020", "2020年"; a range, "from 2019 to 2021", names both ends)."""
    start = text.find(named.raw)
    if start < 0 or is_range(named):
        return None
    zh = TIME_BOUND_AFTER_ZH_RE.match(text[start + len(named.raw) :])
    if zh is not None:
        rel = TIME_BOUNDS[zh.group("rel")]
        # 从2020年以后, 自5月之后: since
        return "since" if rel == "after" and TIME_BOUND_SINCE_ZH_RE.search(text[:start]) else rel
    en = TIME_BOUND_EN_LEAD_RE.match(named.raw) or TIME_BOUND_EN_RE.search(text[:start])
    return TIME_BOUNDS[" ".join(en.group("rel").lower().split())] if en is not None else None


def event_anchor(text: str) -> tuple[str, str] | None:
    """("before" | "after", the event's words) of a question that names a time by another event the
    user told of ("Where did I work before I moved?" -> ("before", "I moved"); "我结婚以后住在哪里？" ->
    ("after", "结婚")), else None. A clause that is itself a time (三年以前, 5月之前, "before 2020") is
    none: dates and periods are the month rule's."""
    found = _anchor_match(text)
    return found[:2] if found is not None else None


def _anchor_match(text: str) -> tuple[str, str, str] | None:
    """`event_anchor`, with the words of the question that say it ("before I moved", "搬家之前")."""
    for pattern in EVENT_ANCHOR_RES:
        match = pattern.search(text)
        if match is None:
            continue
        clause = EVENT_ANCHOR_SUBJECT_RE.sub("", match.group("clause").strip())
        if len(clause) < 2 or EVENT_ANCHOR_NOT_CLAUSE_RE.search(clause):
            continue
        rel = match.group("rel").lower()
        return ("before" if rel in ("before", "之前", "以前") else "after"), clause, match.group(0)
    return None
