"""Recalled memories are put in the prompt at most 150 characters each (seed 001 §3.3): by the LLM when
one is configured (one call for all of a turn's long memories, bounded by a timeout), extractively
otherwise or when that call fails or its answer has no line for a memory (counted in
`mnemo_llm_fallbacks_total`, purpose "compression": "failed" or "unparseable")."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence

from memory.chat.context import MEMORY_MAX_CHARS, compress
from memory.chat.llm import ChatModel, GenerationParams, PromptMessage, TurnFacts
from monitoring import metrics

log = logging.getLogger(__name__)
_NUMBERED_RE = re.compile(r"^\s*(\d+)[.)、:：]\s*(.+?)\s*$")

RULES = {
    "zh": "把下面每条记忆压缩到{n}个字以内，保留人名、地点、时间、数字和原语言，不要添加内容。按原编号逐行输出“编号. 压缩后的内容”。",
    "en": (
        "Compress each memory below to at most {n} characters. Keep names, places, dates, numbers and the "
        "original language; add nothing. Answer one line per memory as '<number>. <compressed text>'."
    ),
}


class LLMCompressor:
    def __init__(
        self, model: ChatModel, *, max_chars: int = MEMORY_MAX_CHARS, timeout_seconds: float = 5.0
    ) -> None:
        self._model = model
        self._max = max_chars
        self._timeout = timeout_seconds

    async def compress(self, texts: Sequence[str], language: str) -> list[str]:
        """Same length and order as `texts`; short texts pass through untouched."""
        out = [t if len(t) <= self._max else compress(t, self._max) for t in texts]
        long = [i for i, t in enumerate(texts) if len(t) > self._max]
        if not long:
            return out
        lang = "zh" if language == "zh" else "en"
        listing = "\n".join(f"{n + 1}. {' '.join(texts[i].split())}" for n, i in enumerate(long))
        prompt = [PromptMessage("system", RULES[lang].format(n=self._max)), PromptMessage("user", listing)]
        try:
            completion = await asyncio.wait_for(
                self._model.complete(
                    prompt,
                    # about max chars per memory, bounded (a rambling model is cut off, see the judge)
                    GenerationParams(
                        temperature=0.0, max_tokens=16 + len(long) * self._max, purpose="compression"
                    ),
                    TurnFacts(lang, (), 0.0),
                ),
                self._timeout,
            )
        except Exception:
            log.warning("LLM memory compression failed; extractive compression used", exc_info=True)
            metrics.LLM_FALLBACKS.labels("compression", "failed").inc()
            return out
        used: set[int] = set()
        for line in completion.text.splitlines():
            match = _NUMBERED_RE.match(line)
            if match and 1 <= int(match.group(1)) <= len(long):
                text = match.group(2).strip()
                if text:
                    out[long[int(match.group(1)) - 1]] = compress(text, self._max)
                    used.add(int(match.group(1)))
        if len(used) < len(long):  # a memory the answer has no numbered line for: extractive, counted
            log.warning(
                "LLM memory compression unparseable; extractive compression used",
                extra={"memories": len(long), "compressed": len(used)},
            )
            metrics.LLM_FALLBACKS.labels("compression", "unparseable").inc()
        return out
