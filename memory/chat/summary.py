"""The rolling session summary: at most N characters, third person, no filler, in the user's language.

`ExtractiveSummarizer` needs no model: it turns the newest user message into a third-person clause and
puts it in front of the previous summary's clauses, dropping the oldest ones that no longer fit.
`LLMSummarizer` asks the configured model with the same rules and falls back to the extractive one.
Both read a long message's window (memory/text/window.py), never all of its 32,000 characters.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Protocol

from memory.chat.context import compress
from memory.chat.llm import ChatModel, GenerationParams, PromptMessage, TurnFacts
from memory.text.window import message_window

log = logging.getLogger(__name__)

ZH_FILLERS = re.compile(
    r"[，,]?\s*(记住这个|记住了?|别忘了?|嗯+|啊+|呃+|额+|哈哈+|那个|就是说?|然后呢?|其实|反正|对吧|的话)"
)
EN_FILLERS = re.compile(
    r"\b(um+|uh+|er+|hmm+|you know|basically|actually|literally|just|really|kind of|sort of|i mean|lol|"
    r"well|so|okay|ok|oh|remember (?:that|this)|don't forget(?: that| this)?)\b[,]?\s*",
    re.IGNORECASE,
)
ZH_CLAUSE_SEP = "；"
EN_CLAUSE_SEP = "; "
_EN_UNCHANGED = {
    "can",
    "could",
    "will",
    "would",
    "should",
    "must",
    "may",
    "might",
    "was",
    "did",
    "had",
    "shall",
}
_EN_IRREGULAR = {
    "am": "is",
    "'m": "is",
    "have": "has",
    "'ve": "has",
    "do": "does",
    "go": "goes",
    "don't": "doesn't",
}
_EN_PRONOUNS = {"my": "their", "me": "them", "mine": "theirs", "myself": "themselves"}
_EN_REQUEST = re.compile(
    r"^(?:can|could|would|will) you (?:please )?|^please |^(?:help me|i need you to|i want you to) ", re.I
)
_ZH_REQUEST = re.compile(r"^(?:请你?|麻烦你?|能不能|可以|你能|帮我|给我)+")


class Summarizer(Protocol):
    async def summarize(
        self, previous: str | None, user_messages: Sequence[str], language: str, *, max_chars: int
    ) -> str: ...


def _third_person_verb(verb: str) -> str:
    low = verb.lower()
    if low in _EN_UNCHANGED or low.endswith("ed"):
        return verb
    if low in _EN_IRREGULAR:
        return _EN_IRREGULAR[low]
    if re.search(r"(s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def third_person_en(text: str) -> str:
    text = EN_FILLERS.sub("", text).strip(" ,;")
    request = _EN_REQUEST.match(text)
    if request:
        rest = text[request.end() :].rstrip("?.! ")
        rest = re.sub(r"\bme\b", "them", rest, flags=re.I)
        return f"User asked to {rest}"
    text = re.sub(r"\bI'm\b", "User is", text)
    text = re.sub(r"\bI've\b", "User has", text)
    text = re.sub(r"\bI'd\b", "User would", text)
    text = re.sub(r"\bI'll\b", "User will", text)
    text = re.sub(r"\bI (don't)\b", "User doesn't", text)
    text = re.sub(r"\bI (\w+)\b", lambda m: f"User {_third_person_verb(m.group(1))}", text)
    text = re.sub(r"\bI\b", "User", text)
    text = re.sub(
        r"\b(my|me|mine|myself)\b", lambda m: _EN_PRONOUNS[m.group(1).lower()], text, flags=re.IGNORECASE
    )
    text = text.rstrip(".!? ")
    if not text.lower().startswith("user"):
        text = f"User said {text[:1].lower()}{text[1:]}" if text else text
    return text


def third_person_zh(text: str) -> str:
    text = ZH_FILLERS.sub("", text).strip(" ，,。！!？?～~")
    request = _ZH_REQUEST.match(text)
    if request:
        rest = text[request.end() :].replace("我", "用户")
        return f"用户请求{rest}"
    text = text.replace("我们", "用户一方").replace("我", "用户").replace("你", "助手")
    if not text.startswith("用户"):
        text = f"用户提到{text}"
    return text


def _split_clauses(summary: str | None, sep: str) -> list[str]:
    if not summary:
        return []
    return [c.strip() for c in summary.split(sep.strip()) if c.strip()]


def fit(clauses: Sequence[str], sep: str, max_chars: int) -> str:
    """Join clauses newest-first while they fit; a single over-long clause is compressed."""
    out: list[str] = []
    for clause in clauses:
        candidate = sep.join([*out, clause])
        if len(candidate) <= max_chars:
            out.append(clause)
        elif not out:
            return compress(clause, max_chars)
        else:
            break
    return sep.join(out)


class ExtractiveSummarizer:
    async def summarize(
        self, previous: str | None, user_messages: Sequence[str], language: str, *, max_chars: int
    ) -> str:
        sep = ZH_CLAUSE_SEP if language == "zh" else EN_CLAUSE_SEP
        to_third = third_person_zh if language == "zh" else third_person_en
        # a message's window: the clause keeps its opening anyway, and a long one costs no more
        new = [to_third(" ".join(message_window(m).split())) for m in reversed(user_messages) if m.strip()]
        new = [c for c in new if c]
        old = [c for c in _split_clauses(previous, sep) if c not in new]
        return fit([*new, *old], sep, max_chars)


SUMMARY_RULES = {
    "zh": (
        "把对话要点写成一句不超过{n}个字的中文摘要。用第三人称（“用户……”），不要语气词和客套话，"
        "只保留事实、偏好和待办，不要编造。只输出摘要本身。"
    ),
    "en": (
        'Write a summary of at most {n} characters in English. Third person ("User ..."), no filler words '
        "or pleasantries, only facts, preferences and open tasks, nothing invented. Output only the summary."
    ),
}


class LLMSummarizer:
    """Asks the model; any failure or an empty answer falls back to the extractive summary."""

    def __init__(self, model: ChatModel, fallback: Summarizer | None = None) -> None:
        self._model = model
        self._fallback = fallback or ExtractiveSummarizer()

    async def summarize(
        self, previous: str | None, user_messages: Sequence[str], language: str, *, max_chars: int
    ) -> str:
        lang = "zh" if language == "zh" else "en"
        prompt = [
            PromptMessage("system", SUMMARY_RULES[lang].format(n=max_chars)),
            PromptMessage(
                "user",
                f"previous summary: {previous or '-'}\nnew user messages:\n"
                + "\n".join(f"- {message_window(m)}" for m in user_messages),
            ),
        ]
        try:
            completion = await self._model.complete(
                prompt, GenerationParams(temperature=0.0, max_tokens=120), TurnFacts(lang, (), 0.0)
            )
            text = " ".join(completion.text.strip().strip("\"'“”").split())
        except Exception:
            log.warning("LLM summary failed; using the extractive one", exc_info=True)
            text = ""
        if not text:
            return await self._fallback.summarize(previous, user_messages, language, max_chars=max_chars)
        return compress(text, max_chars)
