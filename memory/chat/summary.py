"""The rolling session summary: at most N characters, third person, no filler, in the user's language.

`ExtractiveSummarizer` needs no model: it keeps what the user said of themselves, in their own words and
language ("用户说过：我住在杭州；…" / "The user said: I live in Hangzhou; …"), newest first, then what they
asked for, then what tools answered in the session (the newest result per tool), dropping the oldest that
no longer fit; questions give nothing (no sentence is rebuilt).
`LLMSummarizer` asks the configured model with the same rules and falls back to the extractive one, also
when its summary leaves out something the user said of themselves (checked word by word: `missing_facts`).
Both read a long message's window (memory/text/window.py), never all of its 32,000 characters.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Protocol

from memory.chat.context import compress
from memory.chat.llm import ChatModel, GenerationParams, PromptMessage, TurnFacts
from memory.relations.speech import OTHER, statements
from memory.text.tokens import UNIGRAM, tokenize
from memory.text.window import message_window
from monitoring import metrics

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
# what the user said of themselves (and of the people around them), in their own words after one lead-in,
# then what they asked for: "用户说过：我住在杭州；我的车是红色沃尔沃；用户请求：订明天去浦东机场的车"
SAID = {"zh": "用户说过：", "en": "The user said: "}
ASKED = {"zh": "用户请求：", "en": "The user asked: "}
# what tools answered in the session, last: "工具结果：tea_price：乌龙茶 12 欧元" (memory/chat/tool_turns.py)
TOOLS = {"zh": "工具结果：", "en": "Tool result: "}
_EN_REQUEST = re.compile(
    r"^(?:can|could|would|will) you (?:please )?|^please |^(?:help me|i need you to|i want you to) ", re.I
)
_ZH_REQUEST = re.compile(r"^(?:请你?|麻烦你?|能不能|可以|你能|帮我|给我)+")


class Summarizer(Protocol):
    async def summarize(
        self,
        previous: str | None,
        user_messages: Sequence[str],
        language: str,
        *,
        max_chars: int,
        tool_results: Sequence[str] = (),
    ) -> str: ...


_ASSISTANT = {"你", "您", "你们", "you"}
_LEAD_IN = re.compile(r"^(?:and|but|so|also|then)\s+", re.I)


def _clean(text: str, zh: bool) -> str:
    cleaned = (ZH_FILLERS if zh else EN_FILLERS).sub("", text)
    return _LEAD_IN.sub("", " ".join(cleaned.split())).strip(" ，,。.！!？?；;～~")


def said_of_self(message: str, zh: bool) -> tuple[list[str], str | None]:
    """(the clauses of `message` in which the user says something of themselves or of their people (a
    fact, a plan, what was), in their words; the request it makes, if any). Questions, wishes, quotes and
    small talk give nothing: a summary holds what was said, never a sentence rebuilt around it."""
    text = (ZH_FILLERS if zh else EN_FILLERS).sub("", " ".join(message_window(message).split())).strip()
    request = (_ZH_REQUEST if zh else _EN_REQUEST).match(text)
    if request:
        asked = _clean(text[request.end() :], zh)
        return [], asked or None
    facts: list[str] = []
    kept = False  # the clause before was kept: a clause that leaves its subject out continues it
    for st in statements(text):
        # someone the user names (我老公, my brother Tom), never the assistant ("你好", "you")
        other = st.subject == OTHER and st.holder.casefold() not in _ASSISTANT
        about = st.mine and (st.explicit or kept) or other and bool(st.holder)
        said = not (st.question or st.conditional or st.reported)  # plans and the past are kept too
        kept = said and about and bool(clause := _clean(st.text, zh))
        if kept:
            facts.append(clause)
    return facts, None


def _parse(summary: str | None, lang: str) -> tuple[list[str], list[str], list[str]]:
    """The facts, requests and tool results of a summary this summarizer wrote (older formats read as
    facts)."""
    if not summary:
        return [], [], []
    sep = ZH_CLAUSE_SEP if lang == "zh" else EN_CLAUSE_SEP
    facts: list[str] = []
    asked: list[str] = []
    tools: list[str] = []
    for clause in (c.strip() for c in summary.split(sep.strip())):
        if not clause:
            continue
        if clause.startswith(ASKED[lang]):
            asked.append(clause.removeprefix(ASKED[lang]))
        elif clause.startswith(TOOLS[lang]):
            tools.append(clause.removeprefix(TOOLS[lang]))
        else:
            facts.append(clause.removeprefix(SAID[lang]))
    return facts, asked, tools


def fit(clauses: Sequence[str], sep: str, max_chars: int) -> str:
    """Join clauses in order while they fit; a single over-long clause is compressed."""
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
    """Facts first, newest first (a new one that says the same as an old one replaces it), then the
    latest requests, then the latest tool results (`name: result`; a tool's new result replaces its old
    one), within `max_chars`: what the user said about themselves outlives what they asked, and both
    outlive what a tool answered."""

    async def summarize(
        self,
        previous: str | None,
        user_messages: Sequence[str],
        language: str,
        *,
        max_chars: int,
        tool_results: Sequence[str] = (),
    ) -> str:
        lang = "zh" if language == "zh" else "en"
        sep = ZH_CLAUSE_SEP if lang == "zh" else EN_CLAUSE_SEP
        old_facts, old_asked, old_tools = _parse(previous, lang)
        new_facts: list[str] = []
        new_asked: list[str] = []
        for message in reversed(user_messages):
            said, request = said_of_self(message, lang == "zh")
            new_facts += said
            new_asked += [request] if request else []
        facts = list(dict.fromkeys([*new_facts, *old_facts]))
        requests = list(dict.fromkeys([*new_asked, *old_asked]))
        clauses = [f"{SAID[lang]}{facts[0]}", *facts[1:]] if facts else []
        clauses += [f"{ASKED[lang]}{r}" for r in requests]
        # one result per tool, the newest: "tea_price: 12 EUR" replaces "tea_price: 11 EUR"
        tools: dict[str, str] = {}
        for result in [*reversed(tool_results), *old_tools]:  # newest first
            tools.setdefault(result.split(":", 1)[0], result)
        clauses += [f"{TOOLS[lang]}{r}" for r in tools.values()]
        return fit(clauses, sep, max_chars) if clauses else (previous or "")


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


FACT_COVERAGE = 0.6  # share of a fact's words (English stems, Chinese characters) a summary must hold


def _fact_words(text: str) -> set[str]:
    """English stems and single Chinese characters (a paraphrase keeps 红色沃尔沃 but not 我的车是)."""
    return {
        t for t in tokenize(text) if t.startswith(UNIGRAM) or not any("\u4e00" <= c <= "\u9fff" for c in t)
    }


def missing_facts(summary: str, facts: Sequence[str]) -> list[str]:
    """The facts (the user's own clauses) of which `summary` holds less than FACT_COVERAGE of the words."""
    held = _fact_words(summary)
    missing = []
    for fact in facts:
        words = _fact_words(fact)
        if words and len(words & held) < FACT_COVERAGE * len(words):
            missing.append(fact)
    return missing


class LLMSummarizer:
    """Asks the model; any failure, an empty answer or one that leaves out a fact the user said of
    themselves (in the new messages or the previous summary's own words) falls back to the extractive
    summary: a model's summary may reword, never drop or lose what the user told."""

    def __init__(self, model: ChatModel, fallback: Summarizer | None = None) -> None:
        self._model = model
        self._fallback = fallback or ExtractiveSummarizer()

    async def summarize(
        self,
        previous: str | None,
        user_messages: Sequence[str],
        language: str,
        *,
        max_chars: int,
        tool_results: Sequence[str] = (),
    ) -> str:
        lang = "zh" if language == "zh" else "en"
        tools = "".join(f"\ntool result: {r}" for r in tool_results)
        prompt = [
            PromptMessage("system", SUMMARY_RULES[lang].format(n=max_chars)),
            PromptMessage(
                "user",
                f"previous summary: {previous or '-'}\nnew user messages:\n"
                + "\n".join(f"- {message_window(m)}" for m in user_messages)
                + tools,
            ),
        ]
        try:
            completion = await self._model.complete(
                prompt,
                GenerationParams(temperature=0.0, max_tokens=120, purpose="summary"),
                TurnFacts(lang, (), 0.0),
            )
            text = " ".join(completion.text.strip().strip("\"'“”").split())
        except Exception:
            log.warning("LLM summary failed; using the extractive one", exc_info=True)
            text = ""
        if not text:
            metrics.LLM_FALLBACKS.labels("summary", "failed").inc()
        if text:
            text = compress(text, max_chars)
            told = [f for m in user_messages for f in said_of_self(m, lang == "zh")[0]]
            told += _parse(previous, lang)[0] if previous and previous.startswith(SAID[lang]) else []
            if not (lost := missing_facts(text, told)):
                metrics.SUMMARY_FACT_CHECKS.labels("kept").inc()
                return text
            metrics.SUMMARY_FACT_CHECKS.labels("replaced").inc()
            metrics.LLM_FALLBACKS.labels("summary", "lost_facts").inc()
            log.info("LLM summary left out %d of the user's facts; using the extractive one", len(lost))
        return await self._fallback.summarize(
            previous, user_messages, language, max_chars=max_chars, tool_results=tool_results
        )
