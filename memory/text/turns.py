"""What kind of turn a message is, pure, Chinese and English (the write policy's gate, issue 24).

- *Small talk*: every clause is an acknowledgement, thanks, a greeting, laughter or filler ("好的，我记住了",
  "Sure, noted!", "哈哈", "thanks", "ok cool", "Got it, I'll keep that in mind"). It states nothing.
- *Questions*: `clauses` splits a message into clauses and marks the interrogative ones, so the write
  policy can tell a question that only asks ("我住在哪个城市？", "what's my dog's name?") from one that
  also states something ("I moved to Suzhou, any good restaurants?").
- *About oneself*: `speaks_of_self` tells a message about the speaker's own life, family or what was
  said before ("我住在哪", "女儿在学什么乐器", "when is my dentist appointment?") from one about the world
  ("地球到月球有多远", "give me three tips for a job interview"): chat recall asks more of a memory
  before it answers the latter with it.
- *Health and safety*: allergies, medication, conditions, dietary restrictions, pregnancy, disability,
  blood type and emergency contacts (`HEALTH_RE` in lexicons.py).

Typographic apostrophes and quotes are folded first ("I’m allergic" is "I'm allergic"): the English
rules are written with ASCII quotes and a phone keyboard types curly ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.text.lexicons import FILLER_RE, HEALTH_RE, SELF_RE, SELF_REQUEST_RE, SMALL_TALK_RE

_QUOTES = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\uff07": "'", "\u201c": '"', "\u201d": '"', "\u02bc": "'"}
)
# a sentence ends at 。！？!?；; or a full stop before a space or the end; a clause also at commas and colons
_SENTENCE_RE = re.compile(r"[^。！？!?；;\n]+?(?:[。！？!?；;\n]+|\.(?=\s|$)|$)")
# a space between two Chinese runs separates clauses too ("先学会再说吧 你最近忙吗？": an emoji was there)
_CLAUSE_SPLIT_RE = re.compile(
    r"[，,、：:]|\s[-–—]+\s|\.{3}|…|(?<=[\u4e00-\u9fff》」）)])\s+(?=[\u4e00-\u9fff《「（(])"
)
_PUNCT = " \t。！？!?；;.,，、：:~～…\"'()（）[]【】-–—*"
_QUESTION_MARK_RE = re.compile(r"[?？]")
_ZH_QUESTION_WORD_RE = re.compile(
    r"什么|哪|谁|怎么|怎样|几|多少|为什么|为啥|啥|是否|有没有|是不是|要不要|能不能|可不可以"
)
_ZH_QUESTION_END_RE = re.compile(r"(?:吗|么|嘛)$|(?:呢)$")
_EN_QUESTION_START_RE = re.compile(
    r"^(?:what|where|when|who|whom|whose|why|how|which)\b|"
    r"^(?:do|does|did|can|could|would|will|should|shall|is|are|am|was|were|have|has|had|may|might)\s+"
    r"(?:you|i|we|my|it|there|he|she|they|this|that|your)\b",
    re.I,
)


def fold_quotes(text: str) -> str:
    """Curly apostrophes and quotes as ASCII ones, for matching (what is stored is left as typed)."""
    return text.translate(_QUOTES)


@dataclass(frozen=True, slots=True)
class Clause:
    text: str  # without its punctuation
    interrogative: bool


def clauses(text: str) -> list[Clause]:
    """The message's clauses in order, each marked interrogative or not. A sentence ending in a question
    mark (or, unpunctuated, in 吗, in 呢 after a question word, or starting like an English question) is
    a question: its last clause is interrogative, and so is every clause of it that reads as a question
    on its own; the others ("I moved to Suzhou" in "I moved to Suzhou, any good places?") are not."""
    out: list[Clause] = []
    for sentence in _SENTENCE_RE.findall(fold_quotes(text)):
        s = sentence.strip()
        if not s.strip(_PUNCT):
            continue
        parts = [p.strip(_PUNCT) for p in _CLAUSE_SPLIT_RE.split(s)]
        parts = [p for p in parts if p]
        if not parts:
            continue
        asked = bool(_QUESTION_MARK_RE.search(s[-2:])) or _reads_as_question(parts[-1], terminal=s[-1:])
        if asked and len(parts) > 1 and parts[-1].lower() in ("right", "correct", "isn't it", "no", "yes"):
            asked = False  # "you moved to Porto, right?": a check of what the clause before states
        for n, part in enumerate(parts):
            last = n == len(parts) - 1
            question = (asked and last) or _reads_as_question(part, terminal="")
            out.append(Clause(part, question and not _STATES_RE.search(part)))
    return out


# A question that states what it checks ("小雨是你女朋友对吧？", "you moved to Porto, right?") or a
# rhetorical one ("你以前不是最讨厌体育课吗"): it states something, so it is not a question that only asks.
_STATES_RE = re.compile(
    r"(?:对吧|对吗|是吧|是吗|对不对|是不是|没错吧|没错吗|吧)$|不是.{1,20}吗$|"
    r"(?:,\s*|\s)(?:right|correct|isn't it|aren't you|don't you|didn't you|wasn't it|no)$",
    re.I,
)


def _reads_as_question(part: str, *, terminal: str) -> bool:
    """Unpunctuated questions: "你还记得我住哪吗", "我住哪个城市呢", "what's my dog's name"."""
    if terminal in (".", "。", "!", "！"):
        return False
    if _ZH_QUESTION_END_RE.search(part):
        return part.endswith(("吗", "么", "嘛")) or bool(_ZH_QUESTION_WORD_RE.search(part))
    return bool(_EN_QUESTION_START_RE.search(part)) and not re.search(r"[\u4e00-\u9fff]", part)


def is_small_talk(text: str) -> bool:
    """Every clause is an acknowledgement, thanks, greeting, laughter or filler: nothing is stated."""
    parts = [c.text for c in clauses(text)]
    return bool(parts) and all(SMALL_TALK_RE.fullmatch(p.lower()) for p in parts)


def only_asks(text: str) -> bool:
    """Every clause is a question, small talk or a discourse filler ("by the way", "对了", "请问"): the
    message asks and states nothing of its own (what it names is checked by the write policy)."""
    parts = clauses(text)
    return any(c.interrogative for c in parts) and all(
        c.interrogative or SMALL_TALK_RE.fullmatch(c.text.lower()) or FILLER_RE.fullmatch(c.text.lower())
        for c in parts
    )


def stated(text: str) -> str:
    """The message without its interrogative clauses: what it states."""
    return "，".join(c.text for c in clauses(text) if not c.interrogative)


def is_health_fact(text: str) -> bool:
    """A health or safety fact stated (not asked): allergy, medication, condition, dietary restriction,
    pregnancy, disability, blood type, emergency contact."""
    return bool(HEALTH_RE.search(stated(text)))


def speaks_of_self(text: str) -> bool:
    """The message speaks of the speaker (I, my, 我, 咱), their family as Chinese names it without a
    pronoun (妈妈, 女儿, 老公) or what was said before ("remember", "上次"); "me" and "我" as the object of a
    request ("give me", "帮我", "告诉我") do not count."""
    return bool(SELF_RE.search(SELF_REQUEST_RE.sub(" ", fold_quotes(text))))
