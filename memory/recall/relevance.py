"""Relevance: one number a person can read, the calibrated probability that a hit is relevant.

The ranking score (memory/recall/retrieval.py) orders the candidates of one search: its channels are
min-max normalised over those candidates, so the best of five unrelated memories still scores high.
Relevance is computed from each channel's *absolute* evidence for one memory (models.Evidence):

- `cosine`: MiniLM cosine (used only when query and memory are both English: MiniLM reads most Chinese
  characters as [UNK], so its cosine says nothing there);
- `coverage`: the idf-weighted share of the query's words (stems, CJK bigrams; single CJK characters at
  the keyword channel's 0.3 weight) that the memory holds, words of its surrounding turns at 0.9
  (as BM25 counts them: in a dialogue the question's words are often in the turn before). A query word the user never wrote counts in full against it: "xyzzy plugh" covers 0;
- `bridge`: the multilingual bridge cosine the ranking uses, when that channel took part: the
  memory's vector blended with its neighbouring turns' (0.3 each, in the query's language and across);
- `attribute`: the memory states the attribute the question asks about ("where do I live");
- `category`: the memory states a value of the category of the user's life the question asks about
  ("我有什么爱好？", "what subject do I teach"): its relevance is at least CATEGORY_RELEVANCE;
- `known` (same language only): the idf-weighted share of the query's words the user ever wrote, in
  any memory searched. A question none of whose words the user used ("xyzzy plugh", "量子计算的原理是
  什么") is seldom about anything they said, however near its vector falls.

relevance = σ(b · x), a logistic model per language pair (English query and memory; Chinese and
Chinese; query and memory in different languages), with and without the bridge. A channel that did
not match adds nothing (coverage 0, no bridge term); there is no floor. The coefficients are fitted by
`bench/relevance.py --fit` on labelled zh/en query-memory pairs (`bench/data/relevance_pairs.json`);
the reliability table (relevance bins against the observed share of relevant hits) is in
docs/benchmarks.md.

`matched_channels` is what forget by meaning adds on top: a memory is only forgotten when at least two
channels agree (MiniLM, keywords, the bridge, and the attribute rules of facts that change), so no
single channel, and never the bridge alone across languages, can select it. And `said_by` (issue 39):
the memory's own text must say every content word of the query, in either language, so a memory of
the same kind that says something else ("我对海鲜过敏" for "我对花生过敏") is never selected.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from memory.models import Evidence
from memory.recall.keyword_index import words_of
from memory.text.profile_words import ATTRIBUTE_QUESTIONS
from memory.text.tokens import UNIGRAM, stem, tokenize
from memory.text.turns import speaks_of_self

Coefficients = tuple[float, ...]


@dataclass(frozen=True, slots=True)
class RelevanceModel:
    """Logistic coefficients per feature group (`features`): intercept first, then the features in the
    order `features` lists them. Fitted by `bench/relevance.py --fit` (see the module docstring); these
    defaults are the bundled models', another model's come from a file (memory/recall/calibration.py)."""

    # fitted on the even-numbered queries of bench/data/relevance_pairs.json (the odd ones are held
    # out for the reliability table): `.venv/bin/python bench/relevance.py --fit`, "fitted_on_even_queries"
    # features, in order: 1, cosine, coverage, attribute, known, standing
    en: Coefficients = (-6.862, 13.781, 3.262, 3.328, -1.691, 1.081)
    # 1, bridge, coverage, attribute, known, standing
    zh_bridge: Coefficients = (-8.241, 6.033, 2.596, 1.206, 1.347, 5.033)
    # 1, coverage, attribute, known, standing
    zh: Coefficients = (-7.544, 3.959, 0.814, 1.623, 6.611)
    # across languages: 1, bridge, coverage, attribute. No labelled pair across languages shares a word
    # (a name, a number), so coverage got no weight there
    cross_bridge: Coefficients = (-6.663, 15.349, 0.0, 5.134)
    # 1, coverage, attribute
    cross: Coefficients = (-4.066, 0.0, 5.549)

    def coefficients(self, group: str) -> Coefficients:
        found: Coefficients = getattr(self, group)
        return found


DEFAULT_MODEL = RelevanceModel()
FUSED_CAP = 1.5  # the fused value with every boost can pass 1; beyond this it says nothing more
KNOWN_FULL = 0.1  # a query a tenth of whose (weighted) words the user wrote gets its full standing
GROUPS = ("en", "zh_bridge", "zh", "cross_bridge", "cross")


def features(e: Evidence) -> tuple[str, tuple[float, ...]]:
    """The feature group of this evidence and its feature vector (with the intercept's 1)."""
    attribute = 1.0 if e.attribute else 0.0
    # the ranking's relative standing counts only as far as the query says something the user wrote:
    # a query of unknown words ("xyzzy plugh") always has a best candidate, which means nothing
    standing = min(e.fused, FUSED_CAP) * min(1.0, e.known / KNOWN_FULL)
    if not e.cross and e.query_language == "en":
        return "en", (1.0, e.cosine, e.coverage, attribute, e.known, standing)
    if not e.cross:
        if e.bridge is not None:
            return "zh_bridge", (1.0, e.bridge, e.coverage, attribute, e.known, standing)
        return "zh", (1.0, e.coverage, attribute, e.known, standing)
    if e.bridge is not None:
        return "cross_bridge", (1.0, e.bridge, e.coverage, attribute)
    return "cross", (1.0, e.coverage, attribute)


# A query none of whose words the user ever wrote ("xyzzy plugh", "啊啊啊", "how do airplanes fly") is
# matched by meaning alone: its hits must reach at least this relevance, in either language. MiniLM and
# the bridge put gibberish as near to a memory (relevance ~0.01) as a real question is to a turn of a
# conversation it asks about; the words tell them apart (bench/relevance.py, docs/benchmarks.md#relevance).
# A question in the other language than every memory knows none of their words either: it needs this
# too (its relevant hits reach it: 37 of the 39 labelled cross-language pairs); a name or number it
# shares with them makes it known
UNKNOWN_QUERY_FLOOR = 0.1
# A query the user wrote little of (issue 42): `known` counts single CJK characters, so "火星上的天气"
# is 0.1 known through 上 and 天 (of 今天, 三天), "量子色动力学" 0.06 through 子 and 力, and a mixed or
# English one through a common word ("career stats", "weather"). Below this share, a hit that shares no
# word with the query (nothing matched, or only single CJK characters: 天 of 三天 for 天气) is matched
# by meaning alone, as a query of unknown words is: it needs UNKNOWN_QUERY_FLOOR too, unless
# - the query speaks of the speaker ("我孩子周末做什么", "我不能吃什么", "When are my dance classes?"):
#   a question about their life, in everyday words, whose answer shares a character with it at most
#   (周 of 周六, 吃 of 吃了), as a chat turn's is (memory/chat/recall_gate.py);
# - or the hit is across languages without the bridge: its relevance is then the same for every
#   memory (no channel it reads matched), the lexicon's keywords found it, and it cannot be judged.
# A hit holding a word of the query (a bigram, a stem, a name, a number) keeps the floor alone. Chosen
# with bench/relevance.py (no labelled relevant pair lost; the nearest, "What does my husband do?"
# across languages, is 0.27 known) and bench/data/nonsense_queries.json (nonsense up to 0.19 known:
# "LeBron James career stats")
WEAKLY_KNOWN = 0.25
_CJK_CHARACTER_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def shares_a_word(e: Evidence) -> bool:
    """Whether the memory holds a word of the query: a stem, a number, a CJK bigram, not a CJK
    character alone (天 of "三天" for "天气")."""
    return any(not _CJK_CHARACTER_RE.fullmatch(w) for w in e.words)


@functools.lru_cache(maxsize=256)
def _about_self(query: str) -> bool:
    return speaks_of_self(query)


def by_meaning_alone(e: Evidence, query: str | None = None) -> bool:
    """Whether this hit of `query` is matched by meaning alone, and so needs UNKNOWN_QUERY_FLOOR: none
    of the query's words known, or few (`WEAKLY_KNOWN`) and none of them in this memory. Without the
    query (None), as for a query that does not speak of the speaker."""
    if e.known <= 0:
        return True
    if e.known >= WEAKLY_KNOWN or shares_a_word(e) or (e.cross and e.bridge is None):
        return False
    return query is None or not _about_self(query)


def reaches(e: Evidence, relevance: float, floor: float, query: str | None = None) -> bool:
    """Whether a hit of this relevance passes the floor `floor` (0: every hit passes); a hit matched
    by meaning alone (`by_meaning_alone`) needs UNKNOWN_QUERY_FLOOR."""
    if floor <= 0:
        return True
    if by_meaning_alone(e, query):
        return relevance >= max(floor, UNKNOWN_QUERY_FLOOR)
    return relevance >= floor


# A memory stating a value of the category of the user's life a question asks about ("我有什么爱好？":
# "周末我喜欢拉大提琴", "What subject do I teach?": "I'm a chemistry teacher"; issue 40) is relevant at
# least this much, whatever its words: the question names the category, never the value, so coverage is
# 0 and the vectors are far (the model put it at 0.01). Above the chat floors (RECALL_MIN_RELEVANCE,
# RECALL_GENERAL_MIN_RELEVANCE 0.2). Not fitted: bench/data/relevance_pairs.json has no category question
# (docs/decisions/recall.md#category-questions-issue-40)
CATEGORY_RELEVANCE = 0.5


def relevance_of(e: Evidence, model: RelevanceModel = DEFAULT_MODEL) -> float:
    group, x = features(e)
    z = sum(b * v for b, v in zip(model.coefficients(group), x, strict=True))
    fitted = 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))
    return max(fitted, CATEGORY_RELEVANCE) if e.category else fitted


@dataclass(frozen=True, slots=True)
class ChannelFloors:
    """Where a channel counts as matched, for forget's two-channel rule (`matched_channels`)."""

    # chosen with bench/relevance.py (docs/benchmarks.md#relevance): where a channel's own measure
    # stops being what unrelated pairs also reach
    dense: float = 0.35  # MiniLM cosine, English query and memory only
    keyword: float = 0.25  # coverage: a quarter of the query's weighted words
    bridge: float = 0.35  # multilingual cosine


def matched_channels(e: Evidence, floors: ChannelFloors = ChannelFloors()) -> dict[str, float]:
    """The channels that matched this memory on their own absolute measure, with that measure."""
    out: dict[str, float] = {}
    if not e.cross and e.query_language == "en" and e.cosine >= floors.dense:
        out["dense"] = round(e.cosine, 4)
    if e.coverage >= floors.keyword:
        out["keyword"] = round(e.coverage, 4)
    if e.bridge is not None and e.bridge >= floors.bridge:
        out["bridge"] = round(e.bridge, 4)
    if e.attribute:  # the rules read the memory as stating what the question asks ("我住在哪里")
        out["attribute"] = 1.0
    return out


# what asks to forget, not what to forget: "忘掉我住在哪里" is about where I live
_FORGET_WORDS = re.compile(
    r"请?(?:帮我)?(?:忘掉|忘记|忘了|别记得|不要记得|删掉|删除|清除|抹掉)|"
    r"\b(?:please\s+)?(?:forget(?:\s+about)?|delete|remove|erase)\b(?:\s+(?:that|the fact that|about))?",
    re.IGNORECASE,
)


def forget_query(query: str) -> str:
    """The query of a forget without its command words ("忘掉…", "forget that …"); unchanged when
    nothing else would be left."""
    stripped = " ".join(_FORGET_WORDS.sub(" ", query).split())
    return stripped if stripped.strip("，。,.!！?？ ") else query


# Forget by meaning selects a memory only when the memory itself says what the query names (issue 39):
# every content word of the query must be in it, in its own words or in the other language (the
# bilingual lexicon's translations, either way round), and an attribute question ("where do I live",
# "我对什么过敏", "favourite") is said by a memory stating that attribute. Two memories of one category
# ("I'm allergic to peanuts" / "I'm allergic to shellfish", "我最喜欢的足球队…" / "我最喜欢的编程语言…")
# share their frame and differ by the word that tells them apart: the channels that read the frame
# (the attribute rules, MiniLM, the bridge) score both alike, and only that word decides.


class Lexicon(Protocol):
    """What forget reads of the bilingual lexicon (memory/recall/bilingual.py, BilingualLexicon)."""

    def words_of(self, text: str) -> list[str]: ...

    def english(self, word: str) -> list[str]: ...

    def chinese(self, stem: str) -> list[str]: ...

    def names_in(self, text: str) -> list[str]: ...


# one way of writing a word: the keyword tokens that together say it (an English stem; the CJK
# bigrams of a Chinese word, or the `u:` character of a word of one)
Spelling = frozenset[str]


@dataclass(frozen=True, slots=True)
class ForgetTerm:
    """A content word of a forget query: `forms`, the ways its own language writes it (any one says
    it: "works" for "work", 住 or 家 for 住在哪里); `translations`, the ways the other language does;
    `attribute`, the attribute question it is part of, which a memory stating that attribute says."""

    word: str
    forms: tuple[Spelling, ...]
    translations: tuple[Spelling, ...] = ()
    attribute: str | None = None


@dataclass(frozen=True, slots=True)
class Said:
    """How much of a forget query's content a memory says: the words it does not (`missing`), the
    share of them it says only in the other language (`translated`), and the person it is about when
    that is someone the query does not name (`someone_else`: "My daughter takes piano lessons" for
    "forget that I take piano lessons")."""

    missing: tuple[str, ...]
    translated: float = 0.0
    someone_else: str | None = None

    @property
    def all(self) -> bool:
        return not self.missing and self.someone_else is None


# the people a memory may be about rather than the user: one it starts with ("My sister Maria works…",
# "我女儿周六上钢琴课", "我的中文老师姓王") is its subject, and a query about the user's own life does not name
# them ("forget that I work as a lawyer"); a query naming them names them or the name said with them
# ("where does Tom live" for "My brother Tom lives in Vancouver")
PEOPLE_EN = (
    "father|dad|mother|mom|mum|parents?|husband|wife|partner|boyfriend|girlfriend|fianc[eé]e?|sons?|"
    "daughters?|kids?|child|children|baby|sisters?|brothers?|siblings?|grand(?:ma|pa|mother|father|son|"
    "daughter)s?|aunt|uncle|cousin|niece|nephew|friends?|boss|manager|colleagues?|co-?workers?|"
    "neighbou?rs?|roommates?|flatmates?|teacher|doctor|in-laws"
)
PEOPLE_ZH = (
    "爸爸|妈妈|父亲|母亲|老爸|老妈|爸妈|父母|老公|老婆|丈夫|妻子|爱人|男朋友|女朋友|男友|女友|对象|未婚夫|未婚妻|"
    "儿子|女儿|孩子|宝宝|姐姐|妹妹|哥哥|弟弟|姐妹|兄弟|爷爷|奶奶|外公|外婆|姥姥|姥爷|叔叔|阿姨|舅舅|姑姑|表哥|表姐|"
    "表弟|表妹|堂哥|堂姐|侄子|侄女|朋友|闺蜜|老板|领导|经理|上司|同事|邻居|室友|老师|同学|婆婆|公公|岳父|岳母|爸|妈"
)
_ABOUT_RE = re.compile(
    rf"^\W*(?:(?:my|our)\s+(?:[\w-]+\s+){{0,2}}?(?P<en>{PEOPLE_EN})\b(?:,?\s+(?P<name>(?-i:[A-Z][\w'’-]+)))?|"
    rf"(?:我们家的?|我家的?|我的|我们的|我)?[^和跟与同给帮对]{{0,2}}?(?P<zh>{PEOPLE_ZH}))",
    re.IGNORECASE,
)


# words that name no particular thing, so that a memory need not hold them: "forget the fact that…",
# "how much coffee", "what I usually drink", "删除我…的记录", "这件事", "我平时…", and 喜欢 as English's
# stop word "like"
GENERIC_EN = frozenset(
    {
        "thing",
        "things",
        "stuff",
        "fact",
        "facts",
        "info",
        "information",
        "detail",
        "details",
        "record",
        "records",
        "memory",
        "memories",
        "everything",
        "anything",
        "something",
        "mention",
        "mentioned",
        "talk",
        "talked",
        "remember",
        "note",
        "notes",
        "please",
        "ever",
        "much",
        "many",
        "often",
        "usually",
        "always",
        "sometimes",
        "currently",
        "recently",
        "lately",
        "normally",
        "generally",
        "nowadays",
        "want",
    }
)
GENERIC_ZH = frozenset(
    {
        "事",
        "事情",
        "东西",
        "记录",
        "信息",
        "内容",
        "资料",
        "情况",
        "相关",
        "有关",
        "一切",
        "所有",
        "全部",
        "记忆",
        "说过",
        "提到",
        "提过",
        "告诉",
        "这些",
        "那些",
        "件",
        "个",
        "条",
        "次",
        "喜欢",
        "一般",
        "平时",
        "平常",
        "平日",
        "现在",
        "目前",
        "当时",
        "那时",
    }
)
# a Chinese word counts unless the word list tags it a function word (adverb, preposition,
# conjunction, particle, pronoun, classifier, numeral, interjection, onomatopoeia, locality: 之前,
# 最近), or, for one character, a verb or an adjective (对, 最, 要, 去, 喝 say nothing of what to
# forget; 猫, 车, 书 do)
_FUNCTION_TAGS = ("d", "p", "c", "u", "r", "y", "e", "o", "q", "m", "f")
_ONE_CHARACTER_SKIP = ("v", "a")
_LATIN_RE = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_CJK_TOKEN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_PREFIX_MIN = 5  # "allerg" (allergic) and "allergi" (allergy): stems sharing their first 5+ letters
# every place an attribute question starts, overlapping ones too (家在哪 and 哪个城市 of 我家在哪个城市)
_ATTRIBUTE_STARTS = {key: re.compile(f"(?=({p.pattern}))", p.flags) for key, p in ATTRIBUTE_QUESTIONS.items()}


@functools.lru_cache(maxsize=1)
def _word_tags() -> dict[str, str]:
    """Part-of-speech tags of Chinese words, from the word list in the `jieba` package (MIT; its
    dict.txt, "word count tag" per line), read as data like memory/recall/bilingual.py reads its counts."""
    path = importlib.resources.files("jieba") / "dict.txt"
    tags: dict[str, str] = {}
    with path.open("r", encoding="utf-8") as lines:
        for line in lines:
            parts = line.split()
            if len(parts) >= 3:
                tags[parts[0]] = parts[2]
    return tags


def _is_content_zh(word: str) -> bool:
    if word in GENERIC_ZH:
        return False
    tag = _word_tags().get(word, "n")  # a word the list lacks (a name, a rare word) says something
    if tag.startswith(_FUNCTION_TAGS):
        return False
    return len(word) > 1 or not tag.startswith(_ONE_CHARACTER_SKIP)


def _attribute_spans(text: str) -> list[tuple[int, int, str]]:
    """Where `text` asks about an attribute (ATTRIBUTE_QUESTIONS), a match inside an English word
    (\\ballerg of "allergic") widened to the whole word; spans of one attribute that overlap are one."""
    spans: list[tuple[int, int, str]] = []
    for key, starts in _ATTRIBUTE_STARTS.items():
        for m in starts.finditer(text):
            start, end = m.start(1), m.end(1)
            while start > 0 and text[start - 1].isascii() and text[start - 1].isalnum():
                start -= 1
            while end < len(text) and text[end].isascii() and text[end].isalnum():
                end += 1
            if spans and spans[-1][2] == key and start < spans[-1][1]:
                start, end = spans[-1][0], max(end, spans[-1][1])
                spans.pop()
            spans.append((start, end, key))
    return spans


def _cjk_spelling(word: str) -> Spelling:
    """The keyword tokens a Chinese word is written with: its bigrams (after the canonical folding:
    猫 -> 猫咪), or its one character."""
    tokens = tokenize(word)
    bigrams = frozenset(t for t in tokens if not t.startswith(UNIGRAM))
    return bigrams or frozenset(t for t in tokens if t.startswith(UNIGRAM))


def _english_spellings(word: str, lexicon: Lexicon) -> tuple[tuple[Spelling, ...], tuple[Spelling, ...]]:
    """An English word's ways of being written ("work": its canonical stem job, or work itself) and its
    Chinese translations (names too: Lisbon -> 里斯本); none for a stop word, numbers untranslated."""
    stems = tokenize(word)
    if not stems:
        return (), ()
    forms = {stems[0], stem(word.lower().replace("’", "'").split("'")[0])}
    across = [] if stems[0].isdigit() else [z for s in sorted(forms) for z in lexicon.chinese(s)]
    across += lexicon.names_in(word)
    translations = tuple(dict.fromkeys(s for s in map(_cjk_spelling, across) if s))
    return tuple(frozenset({f}) for f in sorted(forms)), translations


def forget_terms(query: str, lexicon: Lexicon) -> tuple[ForgetTerm, ...]:
    """The content words of a forget query (its command words taken out, `forget_query`): English words
    that are no stop or generic word, numbers, and the Chinese dictionary words that are no function or
    generic word, each with its spellings, translations and the attribute question it is part of; and
    an attribute question none of whose words is a content word (住在哪里, "where do I live") as a term
    of its own, written by any of its words."""
    text = forget_query(query)
    spans = _attribute_spans(text)
    # (start, end, word, is content, forms, translations)
    words: list[tuple[int, int, str, bool, tuple[Spelling, ...], tuple[Spelling, ...]]] = []
    for m in _LATIN_RE.finditer(text):
        word = m.group(0)
        forms, translations = _english_spellings(word, lexicon)
        if forms:  # a stop word has none
            content = word.lower() not in GENERIC_EN and not any(f & GENERIC_EN for f in forms)
            words.append((m.start(), m.end(), word, content, forms, translations))
    at = 0
    for word in lexicon.words_of(text):
        found = text.find(word, at)
        start = found if found >= 0 else at
        at = start + len(word)
        spelling = _cjk_spelling(word)
        if spelling:
            english = tuple(frozenset({s}) for s in lexicon.english(word))
            words.append((start, start + len(word), word, _is_content_zh(word), (spelling,), english))
    terms: list[ForgetTerm] = []
    for start, end, word, content, forms, translations in words:
        if content:
            key = next((k for a, b, k in spans if start < b and a < end), None)
            terms.append(ForgetTerm(word, forms, translations, key))
    for a, b, key in spans:
        inside = [w for w in words if w[0] < b and a < w[1]]
        if not any(w[3] for w in inside):
            forms = tuple(f for w in inside for f in w[4])
            translations = tuple(t for w in inside for t in w[5])
            terms.append(ForgetTerm(text[a:b], forms, translations, key))
    return tuple(dict.fromkeys(terms))


def said_by(terms: Sequence[ForgetTerm], content: str, attributes: Collection[str], lexicon: Lexicon) -> Said:
    """How much of a forget query's content words `terms` a memory of this content says, in its own
    words or the other language's, or, for the words of an attribute question, by stating the
    attribute (`attributes`: the keys of the facts the memory states). A query of no content word
    names nothing to forget: everything is missing."""
    if not terms:
        return Said(("",))
    missing: list[str] = []
    translated = 0
    memory = _Written(content, lexicon)
    for term in terms:
        said = _says(term, memory, attributes)
        if said is None:
            missing.append(term.word)
        translated += said == "translated"
    about = _ABOUT_RE.match(content)
    person = (about.group("en") or about.group("zh")) if about is not None else None
    if about is not None and person is not None:  # about them: the query must name them too
        named = [_Written(w, lexicon) for w in (person, about.group("name")) if w]  # "brother" or "Tom"
        if not any(_says(term, n, ()) for term in terms for n in named):
            return Said(tuple(missing), translated / len(terms), person)
    return Said(tuple(missing), translated / len(terms))


def _says(term: ForgetTerm, memory: _Written, attributes: Collection[str]) -> str | None:
    """How `memory` says `term`: "own" (its words, or stating the attribute asked), "translated" (in
    the other language), or None."""
    if term.attribute is not None and term.attribute in attributes:
        return "own"
    if any(memory.says(s) for s in term.forms):
        return "own"
    if any(memory.says(s) for s in term.translations) or any(memory.says_across(s) for s in term.forms):
        return "translated"
    return None


class _Written:
    """A memory's words, as forget reads them: its keyword tokens, its dictionary words (for a word of
    one character: 车 of 我的车, not of 火车) and, when asked, its words in the other language."""

    def __init__(self, content: str, lexicon: Lexicon) -> None:
        self.content = content
        self.lexicon = lexicon
        self.tokens = words_of(content)
        self.latin = frozenset(
            t for t in self.tokens if not t.startswith(UNIGRAM) and not _CJK_TOKEN_RE.match(t)
        )
        self._segments: list[str] | None = None
        self._english: frozenset[str] | None = None
        self._chinese: frozenset[str] | None = None

    @property
    def segments(self) -> list[str]:
        if self._segments is None:
            self._segments = self.lexicon.words_of(self.content)
        return self._segments

    def says(self, spelling: Spelling) -> bool:
        if not spelling:
            return False
        if all(t.startswith(UNIGRAM) for t in spelling):
            return all(t.removeprefix(UNIGRAM) in self.segments for t in spelling)
        if any(_CJK_TOKEN_RE.match(t) for t in spelling):
            return spelling <= self.tokens
        return all(_stem_held(t, self.latin) for t in spelling)

    def says_across(self, spelling: Spelling) -> bool:
        """Whether the memory's words in the other language say it: the English of its Chinese words
        for an English stem ("programming": 编程), the Chinese of its English words for a Chinese word."""
        if self._english is None or self._chinese is None:
            self._english = frozenset(s for w in self.segments for s in self.lexicon.english(w))
            self._chinese = frozenset(
                t for s in self.latin for z in self.lexicon.chinese(s) for t in _cjk_spelling(z)
            )
        if any(_CJK_TOKEN_RE.match(t) for t in spelling):
            return bool(spelling) and spelling <= self._chinese
        return bool(spelling) and all(_stem_held(t, self._english) for t in spelling)


def _stem_held(stem: str, have: Collection[str]) -> bool:
    """Whether `have` holds this English stem, or one sharing its first letters with it (allerg of
    "allergic", allergi of "allergy"); numbers only as they are."""
    if stem in have:
        return True
    if len(stem) < _PREFIX_MIN or stem.isdigit():
        return False
    head = stem[:_PREFIX_MIN]
    return any(
        len(h) >= _PREFIX_MIN and h[:_PREFIX_MIN] == head and (h.startswith(stem) or stem.startswith(h))
        for h in have
    )
