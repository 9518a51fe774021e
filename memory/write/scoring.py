"""Write-time scoring, pure: importance (seed 001), topic, entities, anchors, and the gate (issue 24).

Importance = 0.4·preference + 0.35·task + 0.25·entity, each component in [0, 1]; a health or safety fact
stated by the user (allergy, medication, condition, dietary restriction, emergency contact) is at least
`HEALTH_IMPORTANCE`. The clock is always a keyword argument and the weights a frozen dataclass, so every
score is reproducible in a test.

The gate (`skip_reason`): small talk and acknowledgements from either speaker, and a user's question that
only asks (it names nothing: no name, place, number, task or "remember"), are not memories. The
question's words still reach recall as the keyword context of the messages after it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memory.models import Role
from memory.text.language import CJK_RE
from memory.text.lexicons import (
    DOC_NUMBER_RE,
    HEALTH_RE,
    PREFERENCE_RE,
    REMEMBER_QUESTION_RE,
    REMEMBER_RE,
    TASK_RE,
    TOPICS,
)
from memory.text.slots import extract_slots
from memory.text.turns import fold_quotes, is_health_fact, is_small_talk, only_asks

HEALTH_IMPORTANCE = 0.9  # a health or safety fact the user states: above every other kind of memory
SkipReason = Literal["small_talk", "question"]


@dataclass(frozen=True, slots=True)
class ImportanceWeights:
    preference: float = 0.4
    task: float = 0.35
    entity: float = 0.25


@dataclass(frozen=True, slots=True)
class Importance:
    preference: float
    task: float
    entity: float
    score: float


_CAPITALISED_RE = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]{2,}(?:\s[A-Z][a-z]{2,})?)\b")
_NUMBER_RE = re.compile(r"\b[A-Z]{0,4}-?\d{4,}[A-Z0-9-]*\b")
_ZH_NAME_RE = re.compile(
    r"(?:叫|和|跟|找|给|带|陪|朋友|同事|老板|老师|医生|男朋友|女朋友|老公|老婆)"
    r"([王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤][\u4e00-\u9fff]{1,2})"
)
_ZH_NAME_TRAILERS = "下上去来在说和跟是的了一也都要想会吃喝做买到回还就又再"
_EN_NOT_NAMES = frozenset(
    "The This That These Those There Then When What Where Which Who Why How Yes Yeah Okay Sure Thanks Thank Hey "
    "Hello Good Great Wow Well Also And But Just Really Maybe Monday Tuesday Wednesday Thursday Friday Saturday "
    "Sunday January February March April May June July August September October November December".split()
)


def entities(text: str, *, now: datetime | None = None) -> list[str]:
    """Names, places, dates/times and document numbers mentioned in the text (zh + en), de-duplicated.
    `now`: when the text was said, which relative dates are resolved from ("昨天", "上周五", "last
    Friday", "3 days ago" -> an ISO date; "上个月", "last month" -> YYYY-MM): the message's own time at
    write, so the memory keeps the date of the event, not of the write (issue 28). None: the clock."""
    found: list[str] = [s.value for s in extract_slots(text, now=now) if s.value]
    found += [m.group(1).rstrip(_ZH_NAME_TRAILERS) or m.group(1) for m in _ZH_NAME_RE.finditer(text)]
    found += [
        m.group(1) for m in _CAPITALISED_RE.finditer(text) if m.group(1).split()[0] not in _EN_NOT_NAMES
    ]
    found += _NUMBER_RE.findall(text)
    seen: dict[str, None] = {}
    for e in found:
        seen.setdefault(e.strip(), None)
    return [e for e in seen if e]


def importance(text: str, *, weights: ImportanceWeights = ImportanceWeights()) -> Importance:
    text = fold_quotes(text)
    preference = 1.0 if PREFERENCE_RE.search(text) else 0.0
    task = 1.0 if TASK_RE.search(text) else 0.0
    entity = min(1.0, 0.5 * len(entities(text)))
    score = weights.preference * preference + weights.task * task + weights.entity * entity
    return Importance(preference, task, entity, round(score, 4))


_NUMBER_IN_TEXT_RE = re.compile(r"\d{3,}|[A-Za-z]-?\d{2,}")


def is_explicit_anchor(text: str, *, role: Role = "user") -> bool:
    """Always stored as a fact: the user's own "remember this" (记住/别忘了/remember/don't forget; not the
    assistant saying it back, not "do you remember…?"), or a document/ID number that is actually given
    (订单号 A12345, order no. 88231; "what's my order number?" gives none)."""
    text = fold_quotes(text)
    if role == "user" and REMEMBER_RE.search(text) and not REMEMBER_QUESTION_RE.search(text):
        return True
    return bool(DOC_NUMBER_RE.search(text) and _NUMBER_IN_TEXT_RE.search(text))


def is_health(text: str, *, role: Role = "user") -> bool:
    """A health or safety fact the user states (the assistant's advice about one is not the user's fact)."""
    if role != "user":
        return False
    folded = fold_quotes(text)
    # "记住我对花生过敏好吗？" asks to remember a health fact: the request states it
    return is_health_fact(folded) or bool(REMEMBER_RE.search(folded) and HEALTH_RE.search(folded))


# A question to the other speaker presupposes something about them ("What got you into running?",
# "你那边搬完了吗"): kept. The user's questions about themself, or about nothing in particular, are not.
_SECOND_PERSON_RE = re.compile(r"你|您|\byou\b|\byour\b|\byou're\b|\byou've\b", re.I)
# "can you tell me…", "你能告诉我…": a request form, not a question about the other speaker
_REQUEST_YOU_RE = re.compile(
    r"\b(?:can|could|would|will) you(?: please)?(?: tell me| remind me| check)?\b|你(?:能|可以|能不能|可不可以|帮我)?(?:告诉我|查一下|查查|说说)|你(?:能|可以)",
    re.I,
)
_DATE_VALUE_RE = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?(?:[ T]\d{2}:\d{2})?$|^\d{1,2}:\d{2}$")


def names_something(text: str) -> bool:
    """A name, place, document or number (not a relative date: "tonight" is not something named)."""
    return bool(re.search(r"\d", text)) or any(not _DATE_VALUE_RE.match(e) for e in entities(text))


def skip_reason(text: str, *, role: Role) -> SkipReason | None:
    """Why this (cleaned, redacted) message is not a memory, or None when it is one. Small talk states
    nothing, whoever says it; a user's question that only asks states nothing either, unless it names
    something, asks for a task ("can you remind me…?") or asks to remember, or is asked of the other
    speaker ("What got you into running?": it presupposes that they run) without being a recall question
    ("do you remember…?", "你还记得…吗")."""
    if is_small_talk(text):
        return "small_talk"
    if role == "user" and only_asks(text):
        folded = fold_quotes(text)
        if names_something(folded) or TASK_RE.search(folded):
            return None
        recall = REMEMBER_QUESTION_RE.search(folded) is not None
        if REMEMBER_RE.search(folded) and not recall:
            return None
        if not recall and _SECOND_PERSON_RE.search(_REQUEST_YOU_RE.sub("", folded)):
            return None
        return "question"
    return None


def _compile_topics() -> list[tuple[str, tuple[str, ...], frozenset[str], tuple[re.Pattern[str], ...]]]:
    """Per topic: its Chinese words (substring match), its one-token English words (a set), and its
    other English phrases (compiled once). Compiling `\bword\b` on every call went through `re`'s
    512-pattern cache, which 362 lexicon words and the other rules overflowed: the writer spent 14%
    of its time recompiling (py-spy)."""
    out = []
    for topic, words in TOPICS.items():
        cjk = tuple(w for w in words if CJK_RE.search(w))
        latin = [w for w in words if not CJK_RE.search(w)]
        tokens = frozenset(w for w in latin if re.fullmatch(r"\w+", w))
        phrases = tuple(re.compile(rf"\b{re.escape(w)}\b") for w in latin if w not in tokens)
        out.append((topic, cjk, tokens, phrases))
    return out


_TOPIC_RULES = _compile_topics()
_WORD_RE = re.compile(r"\w+")


def _topic_hits(text: str) -> Counter[str]:
    """How many of each topic's words occur in the text (each word once). A one-token word matches
    `\bword\b` exactly when it is one whole run of word characters, hence the set lookup."""
    low = text.lower()
    runs = set(_WORD_RE.findall(low))
    hits: Counter[str] = Counter()
    for topic, cjk, tokens, phrases in _TOPIC_RULES:
        n = sum(1 for w in cjk if w in text) + len(tokens & runs) + sum(1 for p in phrases if p.search(low))
        if n:
            hits[topic] = n
    return hits


def topic_of(text: str) -> str | None:
    """The lexicon topic with the most hits; ties go to the lexicon's order; None when nothing matches."""
    hits = _topic_hits(text)
    if not hits:
        return None
    best = max(hits.values())
    return next(t for t in TOPICS if hits.get(t) == best)
