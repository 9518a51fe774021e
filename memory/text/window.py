"""The bounded parts of a long message that per-message rules read (issue 39), and that a memory keeps
of its neighbours (issue 45).

A chat message may hold 32,000 characters (the request limit); recall, the recall gate, slot extraction
and the summaries read at most `MESSAGE_WINDOW_CHARS` of it, the search API's own query limit, so a chat
turn never asks recall for more than a search may. A longer message's window is its first quarter of
that (1,000 characters: where an instruction or the topic usually stands, "帮我看看这份合同：…",
"Summarize the following: …") and its last three quarters (3,000: where the question stands after
pasted text, "…这份合同的违约金是多少？", "…so what should I ask for?"), each cut where a word or a
sentence ends. What must see every character (redaction, the stored text, the prompt) still does.

`opening` and `ending` are the two cuts alone: a memory's keyword context keeps the end of each message
before it and the opening of the one after it (the words nearest to it), not whole long turns.
"""

from __future__ import annotations

MESSAGE_WINDOW_CHARS = 4000
# characters a part may end or start at: whitespace, and Chinese and Latin punctuation
_BOUNDARIES = frozenset(" \t\n\r\u3000。！？；，、：.!?;,:…")
_SLACK = 100  # how far from a cut a boundary is looked for (then the cut stays where it is)


def opening(text: str, max_chars: int) -> str:
    """The first `max_chars` characters of `text` at most, ending where a word or a sentence ends when
    one is within reach of the cut (`text` itself when it fits)."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    for i in range(len(head) - 1, max(len(head) - _SLACK, 0) - 1, -1):
        if head[i] in _BOUNDARIES:
            return head[: i + 1].rstrip()
    return head


def ending(text: str, max_chars: int) -> str:
    """The last `max_chars` characters of `text` at most, starting where a word or a sentence starts when
    one is within reach of the cut (`text` itself when it fits)."""
    if len(text) <= max_chars:
        return text
    tail = text[len(text) - max_chars :] if max_chars > 0 else ""
    for i in range(min(_SLACK, len(tail))):
        if tail[i] in _BOUNDARIES:
            return tail[i + 1 :].lstrip()
    return tail


def message_window(text: str, max_chars: int = MESSAGE_WINDOW_CHARS) -> str:
    """`text` itself when it fits in `max_chars`; else its opening and its end, at most `max_chars` in
    all, joined by a newline."""
    if len(text) <= max_chars:
        return text
    head_chars = max_chars // 4
    tail_chars = max_chars - head_chars - 1  # one for the newline
    return f"{opening(text, head_chars)}\n{ending(text, tail_chars)}"
