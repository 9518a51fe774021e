"""Write-time scoring, pure: importance (seed 001), topic, entities, anchors, the gate (issue 24) and the
stored text (issue 40).

Importance = 0.4·preference + 0.35·task + 0.25·entity, each component in [0, 1]; a health or safety fact
stated by the user (allergy, medication, condition, dietary restriction, emergency contact) is at least
`HEALTH_IMPORTANCE`. The clock is always a keyword argument and the weights a frozen dataclass, so every
score is reproducible in a test.

The gate (`skip_reason`): small talk and acknowledgements from either speaker, and a user's question that
only asks (it names nothing: no name, place, number, task or "remember"), are not memories; nor is a
user's request for the assistant ("tell me a fun fact", "帮我写一首诗", "怎么煮鸡蛋？", `why_not_stored`).
Their words still reach recall as the keyword context of the messages after them. What a message stores
(`stored_text`) is without the user's "remember" (the anchor, not the fact: "记住：我的车牌号是…") and
without a request that comes with a statement ("I'm vegetarian, suggest a recipe" stores "I'm vegetarian").
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from memory.models import Role
from memory.text.cleaning import clause_spans, join_pieces
from memory.text.language import CJK_RE
from memory.text.lexicons import (
    DOC_NUMBER_RE,
    EMBEDDED_QUESTION_RE,
    FILLER_RE,
    HEALTH_RE,
    HOW_TO_RE,
    PREFERENCE_RE,
    REMEMBER_CLAUSE_RE,
    REMEMBER_LEAD_RE,
    REMEMBER_QUESTION_RE,
    REMEMBER_RE,
    REMEMBER_TAG_RE,
    REQUEST_FORM_RE,
    REQUEST_RE,
    SECOND_PERSON_RE,
    SMALL_TALK_RE,
    TASK_RE,
    TODO_RE,
    TOPICS,
)
from memory.text.slots import extract_slots
from memory.text.turns import (
    Clause,
    clauses,
    fold_quotes,
    is_health_fact,
    is_small_talk,
    only_asks,
    speaks_of_self,
)

HEALTH_IMPORTANCE = 0.9  # a health or safety fact the user states: above every other kind of memory
# What `POST /messages` names (app/http/schemas.py): a request for the assistant is reported as a question
SkipReason = Literal["small_talk", "question"]
# Why a message is no memory, finer: a request ("tell me a fun fact", "帮我写一首诗", "怎么煮鸡蛋？") apart
WriteSkip = Literal["small_talk", "question", "request"]
ClauseKind = Literal["filler", "remember", "request", "how_to", "question", "statement"]


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


@functools.lru_cache(maxsize=64)
def _clauses(text: str) -> tuple[Clause, ...]:
    """`clauses`, once per text: the gate, the anchor and the stored text of one message all read them."""
    return tuple(clauses(text))


def asks_to_remember(text: str, *, role: Role = "user") -> bool:
    """The user's own "remember this": 记住/请记住/别忘了/remember that/don't forget/keep in mind, or a
    clause that only says it ("Please remember: …", "…，记住了"); not the assistant saying it back, not a
    recall question ("do you remember…?", "你还记得…吗")."""
    if role != "user":
        return False
    folded = fold_quotes(text)
    if REMEMBER_QUESTION_RE.search(folded):
        return False
    if REMEMBER_RE.search(folded):
        return True
    return any(
        REMEMBER_CLAUSE_RE.fullmatch(c.text) or REMEMBER_LEAD_RE.match(c.text) for c in _clauses(folded)
    )


def is_explicit_anchor(text: str, *, role: Role = "user") -> bool:
    """Always stored as a fact: the user's own "remember this" (`asks_to_remember`), or a document/ID
    number that is actually given (订单号 A12345, order no. 88231; "what's my order number?" gives none)."""
    if asks_to_remember(text, role=role):
        return True
    text = fold_quotes(text)
    return bool(DOC_NUMBER_RE.search(text) and _NUMBER_IN_TEXT_RE.search(text))


def is_health(text: str, *, role: Role = "user") -> bool:
    """A health or safety fact the user states (the assistant's advice about one is not the user's fact)."""
    if role != "user":
        return False
    folded = fold_quotes(text)
    # "记住我对花生过敏好吗？" asks to remember a health fact: the request states it
    return is_health_fact(folded) or bool(asks_to_remember(folded) and HEALTH_RE.search(folded))


# A question to the other speaker presupposes something about them ("What got you into running?",
# "你那边搬完了吗"): kept. The user's questions about themself, or about nothing in particular, are not.
_SECOND_PERSON_RE = SECOND_PERSON_RE
# "can you tell me…", "你能告诉我…": a request form, not a question about the other speaker
_REQUEST_YOU_RE = re.compile(
    r"\b(?:can|could|would|will) you(?: please)?(?: tell me| remind me| check)?\b|你(?:能|可以|能不能|可不可以|帮我)?(?:告诉我|查一下|查查|说说)|你(?:能|可以)",
    re.I,
)
_DATE_VALUE_RE = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?(?:[ T]\d{2}:\d{2})?$|^\d{1,2}:\d{2}$")


def names_something(text: str) -> bool:
    """A name, place, document or number (not a relative date: "tonight" is not something named)."""
    return bool(re.search(r"\d", text)) or any(not _DATE_VALUE_RE.match(e) for e in entities(text))


def clause_kind(clause: Clause) -> ClauseKind:
    """What one clause of a user's message does: small talk or filler, "remember this", a request for
    the assistant ("tell me a fun fact", "帮我写一首诗", "translate this"), a how-to ("how do I boil an
    egg", "怎么煮鸡蛋"), a question, or a statement."""
    text = clause.text
    low = text.lower()
    if REMEMBER_CLAUSE_RE.fullmatch(text):  # "记住" is small talk too when the assistant says it back
        return "remember"
    if SMALL_TALK_RE.fullmatch(low) or FILLER_RE.fullmatch(low):
        return "filler"
    if REQUEST_RE.match(text):
        return "request"
    if HOW_TO_RE.match(text):
        return "how_to"
    return "question" if clause.interrogative else "statement"


def clause_kinds(text: str, parts: Sequence[Clause]) -> list[ClauseKind]:
    """`clause_kind` of each of the clauses `parts` of `text` (folded), in their sentence: in a sentence
    with a request, a clause that tells of no one (no I, you, name or number) goes on with the request
    ("帮我写一个Python函数，把列表排序", "don't suggest coffee machines, recommend a kettle") rather than
    stating something. The other sentences keep their statements ("Thanks, Gina! Appreciate the offer.")."""
    kinds = [clause_kind(c) for c in parts]
    spans = clause_spans(text, [c.text for c in parts])
    if spans is None or ("request" not in kinds and "how_to" not in kinds):
        return kinds
    sentence, sentences = 0, []
    for n, (start, _) in enumerate(spans):
        if n and _SENTENCE_BREAK_RE.search(text[spans[n - 1][1] : start]):
            sentence += 1
        sentences.append(sentence)
    asking = {i for i, k in zip(sentences, kinds, strict=True) if k in ("request", "how_to")}
    return [
        "request" if k == "statement" and i in asking and not _tells_of_someone(c.text) else k
        for c, k, i in zip(parts, kinds, sentences, strict=True)
    ]


_SENTENCE_BREAK_RE = re.compile(r"[.。!！?？;；…\n]")


def _tells_of_someone(text: str) -> bool:
    return speaks_of_self(text) or bool(_SECOND_PERSON_RE.search(text)) or names_something(text)


def carries_the_user(clause: Clause, kind: ClauseKind) -> bool:
    """Does this request, how-to or question say something of a person beyond what it asks for? A
    request that is not asked as a question may tell of the user ("recommend a gift for my wife, she
    loves gardening", "给我女儿写一首生日诗"; "me" and "我" as its object do not count: "tell me a joke",
    "帮我写一首诗"). Asked as a question ("can you tell me my name?", "告诉我我住哪", "how do I…?"), its
    "I" and "my" ask about the user, as a question's do: only the other speaker counts ("tell me about
    your trip", like "What got you into running?")."""
    text = clause.text
    asked = REQUEST_RE.match(text) if kind == "request" else None
    what = text[asked.end() :] if asked else text
    if (
        kind in ("question", "how_to")
        or clause.interrogative
        or (asked and EMBEDDED_QUESTION_RE.search(what))
    ):
        # asked, like a question: "can you tell me my name?" and "告诉我我住哪" tell nothing of the user
        return bool(_SECOND_PERSON_RE.search(_REQUEST_YOU_RE.sub("", what)))
    return speaks_of_self(REQUEST_FORM_RE.sub(" ", text)) or bool(_SECOND_PERSON_RE.search(what))


def why_not_stored(text: str, *, role: Role, to_assistant: bool = False) -> WriteSkip | None:
    """Why this (cleaned, redacted) message is not a memory, or None when it is one.

    - Small talk states nothing, whoever says it.
    - A user's question that only asks states nothing either, unless it names something, asks for a
      task ("can you remind me…?") or asks to remember, or is asked of the other speaker ("What got you
      into running?": it presupposes that they run) without being a recall question ("do you
      remember…?", "你还记得…吗"). A greeting before it is no question to the other speaker ("你好，我住哪？").
    - A user's request for the assistant ("Tell me a fun fact number 0 about the ocean", "帮我写一首诗",
      "translate this", "怎么煮鸡蛋？"), alone or with questions and small talk, is no memory whatever it
      names, unless it says something of the user or of the other speaker (`carries_the_user`), asks for
      a to-do (remind, book, schedule: TODO_RE) or to remember, or gives a document number or a health fact.
      A request that comes with a statement keeps the statement (`stored_text`).
    - `to_assistant`: the message is a chat turn with the assistant, not a line of a conversation between
      people. A question that only asks is then kept only when it says something of the user ("Should I
      take the offer from Google?") or asks for a task or to remember: the assistant answers "长城有多长？"
      and "When did Jon open his studio?"; as memories they would crowd out what the user said."""
    if is_small_talk(text):
        return "small_talk"
    if role != "user":
        return None
    folded = fold_quotes(text)
    parts = _clauses(folded)
    kinds = clause_kinds(folded, parts)
    if "request" in kinds or "how_to" in kinds:
        if any(k in ("statement", "remember") for k in kinds):
            return None
        if TODO_RE.search(folded) or is_explicit_anchor(folded) or is_health(folded):
            return None
        if any(k != "filler" and carries_the_user(c, k) for c, k in zip(parts, kinds, strict=True)):
            return None
        return "request"
    if only_asks(text):
        if TASK_RE.search(folded):
            return None
        if names_something(folded) and (not to_assistant or speaks_of_self(folded)):
            return None
        recall = REMEMBER_QUESTION_RE.search(folded) is not None
        if asks_to_remember(folded):
            return None
        # the other speaker is asked of in a question, not in a greeting or thanks before it ("你好，…")
        asked = " ".join(c.text for c, k in zip(parts, kinds, strict=True) if k == "question")
        if not recall and not to_assistant and _SECOND_PERSON_RE.search(_REQUEST_YOU_RE.sub("", asked)):
            return None
        return "question"
    return None


def skip_reason(text: str, *, role: Role, to_assistant: bool = False) -> SkipReason | None:
    """`why_not_stored` as `POST /messages` names it: a request for the assistant is a message that only
    asks ("question")."""
    why = why_not_stored(text, role=role, to_assistant=to_assistant)
    return "question" if why == "request" else why


_SENTENCE_END_RE = re.compile(r"[.。!！;；…]")  # a question mark ends what was asked: never carried over
_LOOSE = " ,，、:：-–—/"


def stored_text(text: str, *, role: Role) -> str:
    """What of a (cleaned, redacted) message the memory keeps. The user's "remember" is the anchor
    (`asks_to_remember`), not part of the fact: "记住：我的车牌号是沪A12345" keeps "我的车牌号是沪A12345",
    "Please remember that I moved to Berlin" keeps "I moved to Berlin". A request for the assistant that
    comes with a statement keeps the statement: "I'm vegetarian, suggest a recipe" keeps "I'm
    vegetarian" (a request that says something of a person stays, `carries_the_user`). The assistant's
    words are kept as said; so is a message that would keep nothing."""
    if role != "user":
        return text
    folded = fold_quotes(text)
    if REMEMBER_QUESTION_RE.search(folded):
        return text
    parts = _clauses(folded)
    spans = clause_spans(folded, [c.text for c in parts])
    if not parts or spans is None:
        return text
    kinds = clause_kinds(folded, parts)
    states = "statement" in kinds
    pieces: list[str] = [text[: spans[0][0]]]
    lead_stripped = False

    def drop(tail: str) -> None:
        """A clause left out: the sentence it ended ends with the piece before it ("I'm vegetarian,
        remember that." keeps "I'm vegetarian.")."""
        end = _SENTENCE_END_RE.search(tail)
        if end and len(pieces) > 1 and not _SENTENCE_BREAK_RE.search(pieces[-1].rstrip()[-1:] or "x"):
            pieces[-1] = pieces[-1].rstrip(_LOOSE) + end.group(0)

    for n, (clause, kind, (start, end)) in enumerate(zip(parts, kinds, spans, strict=True)):
        tail = text[end : spans[n + 1][0] if n + 1 < len(spans) else len(text)]
        if kind == "remember":
            lead_stripped = True
            drop(tail)
            continue
        if (
            kind == "request"
            and states
            and REQUEST_RE.match(clause.text)  # a request's own words (what goes on with it stays)
            and not carries_the_user(clause, kind)
            and not names_something(clause.text)
        ):
            drop(tail)  # "I'm vegetarian, suggest a recipe"; "Can you show me one of Oscar?" names its dog
            continue
        if lead_stripped and kind == "filler" and REMEMBER_TAG_RE.fullmatch(" " + clause.text):
            continue  # "…, ok?" after "remember"
        lead = REMEMBER_LEAD_RE.match(clause.text)
        body_start = start + (lead.end() if lead else 0)
        tag = REMEMBER_TAG_RE.search(text[body_start:end]) if lead else None
        body_end = body_start + tag.start() if tag and tag.start() > 0 else end
        if body_end != end:
            tail = tail.replace("?", "").replace("？", "")  # "记住我对花生过敏好吗？": the tag asked
        lead_stripped = lead_stripped or lead is not None
        pieces.append(text[body_start:body_end] + tail)
    kept = join_pieces(pieces)
    return kept if kept.strip(" .。!！?？") else text


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
