"""The upstream model as the recall's query translator (memory/recall/translation.py): the prompt in
zh and en, the checks on what comes back, a time bound and an in-process cache (a user asks the same
question again; chat recalls every turn)."""

from __future__ import annotations

import asyncio
import logging
import re
from collections import OrderedDict
from dataclasses import dataclass

from memory.chat.llm import ChatModel, GenerationParams, PromptMessage, TurnFacts
from memory.recall.translation import target_of
from memory.text.language import Lang, detect_language
from monitoring import metrics

log = logging.getLogger(__name__)

# written in the question's language: keep names, numbers and dates; the translation alone
PROMPTS: dict[Lang, str] = {
    "zh": (
        "把下面这个问题翻译成英文，用于在英文聊天记录里检索。人名、地名、数字和日期照原样保留（中文人名写成"
        "拼音或常见的英文写法）。只输出译文，不要解释，不要回答问题。"
    ),
    "en": (
        "Translate the question below into Simplified Chinese, to search Chinese chat history with it. "
        "Keep names, places, numbers and dates (write a person's name as it is commonly written in "
        "Chinese). Output the translation only: no explanation, do not answer the question."
    ),
}
_LABEL_RE = re.compile(r"^\s*(?:translation|译文|翻译)\s*[:：]\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’「」『』`"


@dataclass(frozen=True, slots=True)
class TranslationParams:
    timeout_seconds: float = 3.0  # the search waits at most this long for the model, then goes on
    max_chars: int = 300  # longer questions are not translated (a chat turn, not a question)
    cache_size: int = 4096  # translations kept in process


def cleaned(answer: str, question: str, target: Lang) -> str | None:
    """The translation in `answer`, or None when it is not one: empty, the question itself, in the
    wrong language, or far longer than the question (the model answered it)."""
    lines = [line for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return None
    text = _LABEL_RE.sub("", lines[0]).strip().strip(_QUOTES).strip()
    if not text or text == question:
        return None
    if len(text) > 3 * len(question) + 40 or detect_language(text) != target:
        return None
    return text


class LLMQueryTranslator:
    """The question in the other language, by the upstream model; None whenever that cannot be had."""

    def __init__(self, model: ChatModel, params: TranslationParams | None = None) -> None:
        self._model = model
        self.params = params or TranslationParams()
        self._cache: OrderedDict[tuple[str, Lang], str | None] = OrderedDict()

    async def translate(self, question: str, target: Lang) -> str | None:
        text = " ".join(question.split())
        if not text or len(text) > self.params.max_chars:
            return None
        key = (text, target)
        if key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        source = target_of(target)
        prompt = [PromptMessage("system", PROMPTS[source]), PromptMessage("user", text)]
        try:
            completion = await asyncio.wait_for(
                self._model.complete(
                    prompt,
                    GenerationParams(temperature=0.0, max_tokens=200, purpose="translation"),
                    TurnFacts(source, (), 0.0),
                ),
                self.params.timeout_seconds,
            )
        except Exception as exc:  # slow, down, refused: the search goes on untranslated (not cached)
            log.warning("query translation failed", extra={"reason": type(exc).__name__})
            metrics.LLM_FALLBACKS.labels("translation", "failed").inc()
            return None
        translation = cleaned(completion.text, text, target)
        if translation is None:
            metrics.LLM_FALLBACKS.labels("translation", "unusable").inc()
        self._cache[key] = translation
        if len(self._cache) > self.params.cache_size:
            self._cache.popitem(last=False)
        return translation
