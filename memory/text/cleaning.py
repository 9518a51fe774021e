"""Text hygiene before anything is embedded or stored: emoji and control characters out, whitespace
normalised, long texts split into sentence-bounded segments (Chinese and English punctuation)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

# Emoji and pictographs, dingbats, variation selectors, zero-width joiners, skin tones, flags.
_EMOJI_RE = re.compile(
    "["
    "\U0001f000-\U0001faff"
    "\U00002600-\U000027bf"
    "\U0001f1e6-\U0001f1ff"
    "\U0000fe00-\U0000fe0f"
    "\U0000200d"
    "\U000020e3"
    "\U0001f3fb-\U0001f3ff"
    "\U000e0020-\U000e007f"
    "]+"
)
_SENTENCE_END_RE = re.compile(r"(?<=[。！？!?；;…])\s*|(?<=[.])\s+(?=[A-Z0-9\"'“(\u4e00-\u9fff])|\n+")
_SPACE_BEFORE_CJK_PUNCT_RE = re.compile(r"\s+([，。！？；：、）》」』”])")
SEGMENT_MAX_CHARS = 400


def clean_text(text: str) -> str:
    """Strip emoji and control characters (keeping newlines as spaces), NFC, collapse whitespace."""
    text = unicodedata.normalize("NFC", text)
    text = _EMOJI_RE.sub(" ", text)
    text = "".join(
        ch if not unicodedata.category(ch).startswith("C") else (" " if ch in "\n\r\t" else "") for ch in text
    )
    text = " ".join(text.split())
    return _SPACE_BEFORE_CJK_PUNCT_RE.sub(r"\1", text)


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END_RE.split(text) if s and s.strip()]


def segment(text: str, max_chars: int = SEGMENT_MAX_CHARS) -> list[str]:
    """Whole text when short; else consecutive sentences packed into segments of at most `max_chars`
    (a single longer sentence is cut at `max_chars`)."""
    if len(text) <= max_chars:
        return [text] if text else []
    segments: list[str] = []
    current = ""
    for sentence in split_sentences(text):
        while len(sentence) > max_chars:
            if current:
                segments.append(current)
                current = ""
            segments.append(sentence[:max_chars])
            sentence = sentence[max_chars:]
        joiner = "" if (current and _is_cjk(current[-1])) else " "
        candidate = f"{current}{joiner}{sentence}" if current else sentence
        if len(candidate) > max_chars:
            segments.append(current)
            current = sentence
        else:
            current = candidate
    if current:
        segments.append(current)
    return segments


def _is_cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef"


def clause_spans(text: str, parts: Sequence[str]) -> list[tuple[int, int]] | None:
    """Where each of `parts` (consecutive substrings of `text`, in order: a message's clauses) starts and
    ends; None when one is not found."""
    spans: list[tuple[int, int]] = []
    at = 0
    for part in parts:
        start = text.find(part, at)
        if start < 0 or not part:
            return None
        at = start + len(part)
        spans.append((start, at))
    return spans


_LOOSE_ENDS = " \t,，、:：;；-–—"


def join_pieces(pieces: Sequence[str]) -> str:
    """Consecutive pieces of a text (each a clause with the punctuation after it), some left out,
    joined again: a comma or colon left dangling at either end goes, whitespace is collapsed."""
    out = "".join(pieces).strip(_LOOSE_ENDS)
    return _SPACE_BEFORE_CJK_PUNCT_RE.sub(r"\1", " ".join(out.split()))
