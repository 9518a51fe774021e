"""The user's own things in recall, pure: a question about "my dentist", "our landlord", "我的牙医",
"我们的房东" is answered where the user says those words ("my dentist is Dr. Takeda"), not where they
tell of someone else's ("Grace's dentist is near the old train station", "李娜的牙医在老火车站附近").
The keyword channel cannot tell the two apart ("my" and "的" carry no weight in BM25), and in a long
history the other people's sentences outnumber the user's own (issue 45: a dozen "X's dentist" for one
"my dentist"). Which phrases a question says (`possessions_asked`), which memories say them
(`says_own`), and those memories as candidates (`own_statements`)."""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Collection, Iterator, Sequence

from memory.models import Memory
from memory.recall.keyword_index import BM25Index
from memory.text.tokens import UNIGRAM, tokenize

OWN_CANDIDATES = 10  # the user's memories saying what a question calls theirs, newest first
POSSESSIONS_MAX = 4  # phrases read of one query: a long message says "my …" many times, each a posting read

# "my dentist", "our product search cluster", "my son's football coach" -> "my son": up to three words
# after "my"/"our", ending before a word that cannot be part of the thing ("my daughter the violin")
_EN_STOP = frozenset(
    (
        *("a", "an", "the", "this", "that", "these", "those", "is", "are", "was", "were", "be", "been"),
        *("do", "does", "did", "to", "of", "in", "on", "at", "for", "from", "with", "by", "and", "or"),
        *("but", "now", "then", "year", "today", "called", "named", "name", "use", "uses", "run", "runs"),
    )
)
_EN_RE = re.compile(r"\b(my|our)\s+((?:[a-z][\w-]*(?:'s)?\s*){1,3})", re.IGNORECASE)
# "我的牙医", "我们的房东": 我/我们 + 的 + the two characters after it (Chinese has no spaces to end the
# noun at; two characters name the thing in nearly every such question: 牙医, 房东, 商品, 康复)
_ZH_RE = re.compile(r"(我们?的)([\u4e00-\u9fff]{2})")


def possessions_asked(text: str) -> list[str]:
    """The phrases by which a question calls something the user's own, lower-cased: "What is the name of
    my dentist?" -> ["my dentist"], "我们的房东姓什么？" -> ["我们的房东"]."""
    found: list[str] = []
    for match in _EN_RE.finditer(text):
        words: list[str] = []
        for word in match.group(2).lower().split():
            if word in _EN_STOP:
                break
            words.append(word.removesuffix("'s"))
            if word.endswith("'s"):  # "my son's coach": the son is the user's; the coach is the son's
                break
        if words:
            found.append(f"{match.group(1).lower()} {' '.join(words)}")
    found.extend(m.group(1) + m.group(2) for m in _ZH_RE.finditer(text))
    return list(dict.fromkeys(found))[:POSSESSIONS_MAX]


def says_own(m: Memory, possessions: Sequence[str]) -> bool:
    """Whether the user's own memory `m` says one of the phrases (whole words in English, any case)."""
    if m.source != "user" or not possessions:
        return False
    return any(_phrase(p).search(m.content) is not None for p in possessions)


@functools.lru_cache(maxsize=256)
def _phrase(phrase: str) -> re.Pattern[str]:
    """Chinese: the characters anywhere; English: the words not inside longer ones ("my dentist" is not
    in "my dentistry")."""
    if phrase[0] >= "\u4e00":
        return re.compile(re.escape(phrase))
    return re.compile(rf"(?<!\w){re.escape(phrase)}(?!\w)", re.IGNORECASE)


def own_statements(
    possessions: Sequence[str], sources: Sequence[tuple[BM25Index, Collection[str]]]
) -> list[Memory]:
    """The `OWN_CANDIDATES` newest memories saying one of `possessions`, over the indexes searched (each
    less the ids it must not answer for): candidates whatever their other words (a fact sentence inside
    a long turn ranks low on its words alone). An index reads only the memories whose postings hold the
    phrase's rarest term (all its terms are in each memory that says it: at 5,875 memories, the 1M-token
    set, 0.1-4.4 ms a question, a scan of all ~6 ms) and keeps what says it across writes (at 58,565,
    8.6 ms a search: issue 45)."""
    saying: dict[str, Memory] = {}
    for phrase in possessions:
        terms = [t for t in tokenize(phrase) if not t.startswith(UNIGRAM)]
        if not terms:
            continue
        rule = functools.partial(says_own, possessions=(phrase,))
        for index, hidden in sources:
            rarest = index.rarest(terms)
            if rarest is None:
                continue
            run = index.views.newest_where(("own", phrase), rule, functools.partial(_holding, index, rarest))
            mine = (m for m in run if m.id not in hidden)
            saying.update((m.id, m) for m in itertools.islice(mine, OWN_CANDIDATES))
    return sorted(saying.values(), key=lambda m: m.created_at, reverse=True)[:OWN_CANDIDATES]


def _holding(index: BM25Index, term: str) -> Iterator[Memory]:
    """The memories whose words or context hold `term`, in the index's order (its postings')."""
    return (index.memories[mid] for mid in index.holding(term))
