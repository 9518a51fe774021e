"""Facts that change: what a user's statement says about them, and whether it replaces an older one.

`claims_of(text)` reads the attributes people state most, in Chinese and English, from a user's own
first-person statement: where they live, where they work (and their job), school, relationship,
children, pets, diet and allergies, phone and e-mail (redacted placeholders), car, favourite things,
and "I no longer … / 我不再… / 我已经不…了". Each claim is `(key, value)`: the value normalised
(lower case, time words and particles cut off), "" when the statement only ends the attribute
("I quit my job", "我辞职了", "I no longer live in Hangzhou").

A sentence shaped as a change of anything else of the user's ("our deploy window is now …", "我把闹钟改成
了…") claims `changed:<subject>` (change_statements.py), read only when no attribute rule matched.

`supersedes(new, old)`: a newer claim of the same key replaces an older one when the values differ
(or the value is a redacted placeholder, which hides whether it changed, or the new claim ends the
attribute). Keys of things a user can have several of carry the thing in the key (`allergy:peanuts`,
`pet:cat`), so "I have a dog" never replaces "I have two cats". Questions, plans and wishes ("Where do I
live?", "I want to move to Suzhou", "我想搬到苏州") state nothing. The write pipeline applies this under
the user's lock (policy.py); old memories are kept, marked `superseded_by` and `valid_to`.
"""

from __future__ import annotations

import re

from memory.text.facts import CHANGED, HABIT, PLACEHOLDER_RE, Claim, supersedes
from memory.text.tokens import UNIGRAM, tokenize
from memory.text.turns import fold_quotes
from memory.write.change_statements import SUBJECT_CHANGES
from memory.write.claim_rules import (
    _ZH_WHEN,
    RULES,
    _canon,
    _clean,
    _Rule,
)

__all__ = ["HABIT", "PLACEHOLDER_RE", "Claim", "claims_of", "habit_tokens", "supersedes"]


# values that say how or when, not which place or company: "I work at home", "I live in fear", "我在家工作"
_NOT_VALUES = frozenset(
    (
        "home",
        "night",
        "nights",
        "weekends",
        "the moment",
        "fear",
        "peace",
        "hope",
        "denial",
        "myself",
        "家",
        "家里",
    )
)
_NOT_FACT_EN = re.compile(
    r"\b(?:if|want to|wants to|would like to|'d like to|plan(?:ning)? to|thinking (?:of|about)|might|may|"
    r"going to|gonna|hope to|dream of|wish|should i|could i|will i)\b",
    re.I,
)
_NOT_FACT_ZH = re.compile(r"想|打算|准备|计划|如果|要是|希望|考虑|可能|会不会|是不是|要不要|能不能|梦想")
_QUESTION_END = re.compile(r"[?？]\s*$|[吗呢么]\s*[?？]?\s*$")


_NO_LONGER = (
    re.compile(r"\bI(?:'ve| have)? no longer (?P<rest>[^.,;!?\n]{3,60})", re.I),
    re.compile(r"\bI (?:don't|do not|can't|cannot) (?P<rest>[^.,;!?\n]{3,60}?) any ?more\b", re.I),
    re.compile(r"\bI(?:'ve| have)? (?:stopped|given up|gave up|quit) (?P<rest>[^.,;!?\n]{3,60})", re.I),
    re.compile(r"我" + _ZH_WHEN + r"不再(?P<rest>[^，。,.！!？?；;\s]{1,15})"),
    re.compile(r"我" + _ZH_WHEN + r"已经不(?P<rest>[^，。,.！!？?；;\s]{1,15}?)了"),
    re.compile(r"我" + _ZH_WHEN + r"(?:戒了|戒掉了)(?P<rest>[^，。,.！!？?；;\s]{1,10})"),
)
_ALL_RULES = (*RULES, *SUBJECT_CHANGES)  # the subject-free change shapes last
_SENTENCE_RE = re.compile(r"[^。！？!?;；\n.]+(?:[。！？!?;；\n]|\.(?!\w)|$)")


def _value(rule: _Rule, match: re.Match[str]) -> str:
    if isinstance(rule.value, str):
        return rule.value
    if rule.value is not None:
        return rule.value(match)
    return _canon(_clean(match.group("v") or ""))


def _sentence_claims(sentence: str) -> list[Claim]:
    out: list[Claim] = []
    taken: set[str] = set()
    ended: dict[str, tuple[int, int]] = {}  # key -> where the words ending it are
    for rule in _ALL_RULES:
        if rule.key == CHANGED and out:
            break  # a sentence that states a known attribute is about it, not a change of anything else
        if rule.key in taken and rule.thing is None and rule.key not in ended:
            continue
        match = rule.pattern.search(sentence)
        if match is None:
            continue
        # a plan or a wish ("我以后可能会搬到大理", "I might move"): in the 8 characters before the match,
        # or anywhere in it before the value
        value_at = match.start("v") if "v" in match.re.groupindex and match.start("v") >= 0 else -1
        before = sentence[max(0, match.start() - 8) : max(match.start() + 3, value_at)]
        if _NOT_FACT_EN.search(before) or _NOT_FACT_ZH.search(before):
            continue
        key = rule.key
        if rule.thing is not None:
            thing = _canon(_clean(match.group(rule.thing) or ""))
            if not thing:
                continue
            key = f"{key}:{thing}"
        value = _value(rule, match)
        if rule.value is None and (not value or value in _NOT_VALUES):
            continue
        if key in taken:
            # "I quit teaching, now I'm a data analyst", "现在做厨师，不做咖啡了": a value said beside the
            # end is the new value ("我对花生已经不过敏了" holds "对花生…过敏" inside its end: not beside it)
            if key in ended and value and (match.start() >= ended[key][1] or match.end() <= ended[key][0]):
                out[out.index((key, ""))] = (key, value)
                del ended[key]
            continue
        out.append((key, value))
        taken.update((key, rule.key))
        if value == "":
            ended[key] = (match.start(), match.end())
    if not out:
        for pattern in _NO_LONGER:
            match = pattern.search(sentence)
            if match is None:
                continue
            rest = match.group("rest").strip()
            # "I no longer live in Hangzhou" is the end of a known attribute; anything else is a habit
            restated = _sentence_claims(("我" if re.match(r"[\u4e00-\u9fff]", rest) else "I ") + rest)
            if restated:
                return [(k, "") for k, _ in restated]
            words = habit_tokens(rest)
            if words:
                return [(HABIT, rest.lower().rstrip("了啦"))]
    return out


def claims_of(text: str) -> list[Claim]:
    """Every (key, value) the user's statement `text` asserts about themself; questions and plans
    assert nothing."""
    out: list[Claim] = []
    for sentence in _SENTENCE_RE.findall(fold_quotes(text)):
        s = sentence.strip()
        if not s or _QUESTION_END.search(s):
            continue
        for claim in _sentence_claims(s):
            if all(claim[0] != k for k, _ in out):
                out.append(claim)
            elif claim[1] and (claim[0], "") in out:  # ended in one sentence, the new value in the next
                out[out.index((claim[0], ""))] = claim
    return out


def habit_tokens(phrase: str) -> frozenset[str]:
    """The words a habit's old statement must contain ("play tennis" → play, tenni; "喝咖啡" → bigrams)."""
    return frozenset(t for t in tokenize(phrase) if not t.startswith(UNIGRAM))
