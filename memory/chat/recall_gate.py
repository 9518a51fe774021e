"""Which recalled memories a chat turn may put in the prompt (issue 24: unrelated memories never enter).

Search ranks a user's memories for any query, so the world's questions ("地球到月球有多远", "give me three
tips for a job interview") always have a best candidate, and its calibrated relevance, fitted on
questions *about the user*, still reaches the search floor through a character or an embedding's
nearness ("明天股市会涨吗" finds "下个月我要去成都出差三天" through 天). A chat turn is not a search: a
memory that answers nothing it asks misleads the model. So a memory enters the prompt when its relevance
reaches `min_relevance` (RECALL_MIN_RELEVANCE, the search floor) and one of these holds:

- the message speaks of the speaker (I, my, 我, 咱; their family as Chinese names it; "remember", "上次"):
  `memory.text.turns.speaks_of_self`;
- the message names the memory's speaker, in either script ("卡罗琳何时参加了支持小组？" over Caroline's
  turns);
- the memory holds a name or an id of the message ("What did Caroline research?", "INV-88231": a
  conversation's questions name its people), two of its Chinese words ("卡罗琳何时参加了支持小组" over a
  turn naming 卡罗琳: 卡罗 and 罗琳; "周明的吉他老师是谁": 周明 and 吉他), or the keyword channel matched
  it on its own measure (coverage ≥ 0.25, as forget's two-channel rule counts it); one common word in
  common ("准备", "喜欢", "计算") is not enough;
- its relevance reaches `general_min_relevance` (RECALL_GENERAL_MIN_RELEVANCE): a strong match answers
  a question about the world too ("what should I cook tonight" for a favourite dish); a memory sharing
  no word with the message (near by topic alone, often across languages) needs `unworded_min_relevance`
  (0.5: more likely relevant than not).

Measured by `bench/chat_recall.py` (docs/benchmarks.md#chat-turns-on-unrelated-questions): the labelled
set the rule was chosen on, a held-out set written after it, and the questions of LoCoMo and the Chinese
conversation asked as chat turns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.models import Evidence, ScoredMemory
from memory.recall.relevance import ChannelFloors, shares_a_word
from memory.text.tokens import tokenize
from memory.text.transliteration import names_across_scripts
from memory.text.turns import speaks_of_self

# a capitalised word that does not open a sentence (a name: "Caroline", "Biscuit"), or a word with a
# digit (an id or a number: "INV-88231", "TB20240518", "Q3")
_NAME_RE = re.compile(r"(?<![.!?。！？]\s)(?<![.!?。！？])(?<=\s)[A-Z][\w'-]*|\b[\w-]*\d[\w-]*\b")
KEYWORD_MATCH = ChannelFloors().keyword  # the coverage at which the keyword channel matched on its own


def names_of(message: str) -> frozenset[str]:
    """The message's names and ids, as the keyword index spells them (stems)."""
    return frozenset(t for m in _NAME_RE.finditer(message) for t in tokenize(m.group(0)))


_CJK_PAIR_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2}")
_NUMERALS = frozenset("零一二三四五六七八九十百千万两〇")


def chinese_words(words: tuple[str, ...]) -> int:
    """How many of the words found are Chinese two-character words (bigrams) other than numbers."""
    return sum(1 for w in words if _CJK_PAIR_RE.fullmatch(w) and not set(w) <= _NUMERALS)


def named(evidence: Evidence | None, names: frozenset[str]) -> bool:
    """The memory holds a name or id of the message, two of its Chinese words (a name of three
    characters is two: 卡罗, 罗琳), or enough of its words for the keyword channel."""
    if evidence is None:
        return False
    return (
        evidence.coverage >= KEYWORD_MATCH
        or bool(names.intersection(evidence.words))
        or chinese_words(evidence.words) >= 2
    )


@dataclass(frozen=True, slots=True)
class RecallGate:
    """`min_relevance`: what every memory must reach (the search floor); `general_min_relevance`: what a
    memory must reach for a message about the world that it shares no name with."""

    min_relevance: float = 0.0
    general_min_relevance: float = 0.0
    # a memory that shares no word with a message about the world is near it by topic alone (团子 the cat
    # for "Why do cats purr?", a favourite lasagna for "教我做一道家常菜"): it enters only when more likely
    # relevant than not (the calibrated relevance is that probability)
    unworded_min_relevance: float = 0.5

    def admitted(self, message: str, hits: Sequence[ScoredMemory]) -> list[ScoredMemory]:
        """The hits that may enter the prompt of a turn saying `message`, in their order."""
        kept = [h for h in hits if h.relevance >= self.min_relevance]
        if self.general_min_relevance <= self.min_relevance or speaks_of_self(message):
            return kept
        names = names_of(message)
        speakers = speakers_named(message, {h.memory.name for h in kept if h.memory.name})
        return [
            h
            for h in kept
            if named(h.evidence, names)
            or h.memory.name in speakers
            or h.relevance >= self.general_min_relevance
            and (
                h.evidence is None or shares_a_word(h.evidence) or h.relevance >= self.unworded_min_relevance
            )
        ]


def speakers_named(message: str, speakers: set[str]) -> set[str]:
    """The memories' speakers (LoCoMo's Caroline, a group chat's 卡罗琳) that `message` names, in their
    own script or the other one ("卡罗琳何时…" names Caroline's turns: memory/text/transliteration.py)."""
    if not speakers:
        return set()
    folded = message.casefold()
    own = {
        s
        for s in speakers
        if re.search(rf"(?<!\w){re.escape(s.casefold())}(?!\w)", folded) or (not s.isascii() and s in message)
    }
    return own | {known for _, known in names_across_scripts(speakers, message)}
