"""Words as the keyword channel counts them, in Chinese and English (`tokenize`).

English (and other Latin-script) words are lower-cased, put in their canonical spelling, stop-worded
and Snowball-stemmed; CJK runs, after their canonical spellings, become overlapping character bigrams
(none across a question character, none a question word) followed by their single characters
(prefixed `UNIGRAM`; stop and question characters left out), so Chinese names, places and numbers
match without a segmenter. Every text mnemo ranks, writes or forgets by its words goes through here:
the keyword index (memory/recall/keyword_index.py), relevance, forget, supersession's habits.
"""

from __future__ import annotations

import functools
import re
import threading
from operator import add

import snowballstemmer

from memory.text.lexicons import (
    EN_CANONICAL,
    EN_STOPWORDS,
    ZH_CANONICAL,
    ZH_QUESTION_CHARS,
    ZH_QUESTION_WORDS,
    ZH_STOPWORDS,
)

__all__ = ["UNIGRAM", "stem", "tokenize"]

UNIGRAM = "u:"  # prefix of CJK single-character tokens: they match 爸 in 我爸 for 爸爸, at a lower weight

_TOKEN_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+|[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
_CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_stemmer = snowballstemmer.stemmer("english")
_stem_lock = threading.Lock()

_ZH_CANON = {v: k for k, vs in ZH_CANONICAL.items() for v in (k, *vs)}
_ZH_CANON_RE = re.compile("|".join(sorted(_ZH_CANON, key=len, reverse=True)))
_EN_CANON = {v: k for k, vs in EN_CANONICAL.items() for v in vs}
# a CJK run is cut at its question characters (no bigram spans one); the question words that are
# bigrams are dropped from a piece that holds one; stop and question characters make no unigram
_QUESTION_CHARS_RE = re.compile("[" + "".join(map(re.escape, sorted(ZH_QUESTION_CHARS))) + "]+")
_QUESTION_PAIRS_RE = re.compile("|".join(map(re.escape, sorted(w for w in ZH_QUESTION_WORDS if len(w) == 2))))
_NOT_UNIGRAMS = {ord(c): None for c in (*ZH_STOPWORDS, *ZH_QUESTION_CHARS) if len(c) == 1}


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    with _stem_lock:  # snowballstemmer objects are not thread-safe
        return str(_stemmer.stemWord(word))


def tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    for run in _TOKEN_RE.findall(text):
        if _CJK_RE.match(run):
            tokens.extend(_cjk_tokens(_ZH_CANON_RE.sub(_zh_canon, run)))
        elif token := _word_token(run):
            tokens.append(token)
    return tokens


def _zh_canon(match: re.Match[str]) -> str:
    return _ZH_CANON[match.group(0)]


def _cjk_tokens(run: str) -> list[str]:
    """A CJK run's bigrams, then its unigrams (string operations in C: a long turn's context is
    thousands of characters, and a search reads its candidates' contexts)."""
    out: list[str] = []
    for piece in _QUESTION_CHARS_RE.split(run) if _QUESTION_CHARS_RE.search(run) else (run,):
        pairs = list(map(add, piece, piece[1:]))
        if _QUESTION_PAIRS_RE.search(piece):
            pairs = [p for p in pairs if p not in ZH_QUESTION_WORDS]
        out.extend(pairs)
    out.extend(map(UNIGRAM.__add__, run.translate(_NOT_UNIGRAMS)))
    return out


@functools.lru_cache(maxsize=65_536)
def _word_token(run: str) -> str:
    """A Latin-script word's token, "" for a stop word (words repeat: each is worked out once)."""
    word = run.lower().replace("’", "'")
    word = word.split("'")[0] if word.endswith(("'s", "'re", "'ve", "'ll", "'d", "'m")) else word
    word = _EN_CANON.get(word, word)
    if word in EN_STOPWORDS or len(word) < 2 and not word.isdigit():
        return ""
    return stem(word)
