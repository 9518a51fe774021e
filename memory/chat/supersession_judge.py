"""The LLM behind the writer's supersession judge (memory/write/judge.py): one call per write round,
strict JSON, bounded by a timeout; anything else is no answer and the rules' result stands."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from memory.chat.llm import ChatModel, GenerationParams, PromptMessage, TurnFacts
from memory.models import Memory
from memory.text.language import detect_language
from monitoring import metrics

log = logging.getLogger(__name__)

RULES = {
    "zh": (
        "下面每一对是同一个用户先后说的两句话。判断“新”是否取代了“旧”说的事实（例如搬家、换工作、不再做某事），"
        "也就是说“旧”已经不再成立。只回答JSON，不要别的文字："
        '{"supersedes": [true 或 false, ...]}，每对一个，按编号顺序。'
    ),
    "en": (
        "Each pair below is two things one user said, the old one first. Decide whether NEW replaces the "
        "fact OLD states (a move, a new job, something they no longer do), so that OLD is no longer true. "
        'Answer only JSON, nothing else: {"supersedes": [true or false, ...]}, one per pair, in order.'
    ),
}


def parse_verdicts(text: str, expected: int) -> list[bool] | None:
    """The strict answer or None: one JSON object, `supersedes` a list of exactly `expected` booleans."""
    try:
        data = json.loads(text.strip())
    except ValueError:
        return None
    verdicts = data.get("supersedes") if isinstance(data, dict) else None
    if not isinstance(verdicts, list) or len(verdicts) != expected:
        return None
    if not all(isinstance(v, bool) for v in verdicts):
        return None
    return list(verdicts)


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


class LLMSupersessionJudge:
    def __init__(self, model: ChatModel, *, timeout_seconds: float = 5.0) -> None:
        self._model = model
        self._timeout = timeout_seconds

    async def judge(self, pairs: Sequence[tuple[Memory, Memory]]) -> list[bool] | None:
        if not pairs:
            return []
        zh = sum(detect_language(new.content) == "zh" for new, _ in pairs) * 2 >= len(pairs)
        lang = "zh" if zh else "en"
        old_label, new_label = ("旧", "新") if zh else ("OLD", "NEW")
        listing = "\n".join(
            f"{n + 1}. {old_label} ({_day(old.created_at)}): {' '.join(old.content.split())}\n"
            f"   {new_label} ({_day(new.created_at)}): {' '.join(new.content.split())}"
            for n, (new, old) in enumerate(pairs)
        )
        prompt = [PromptMessage("system", RULES[lang]), PromptMessage("user", listing)]
        try:
            completion = await asyncio.wait_for(
                self._model.complete(
                    prompt,
                    # the JSON asked for is ~8 tokens a pair: a model that rambles on is cut off instead
                    # of holding a local server for minutes after the timeout gave up on it
                    GenerationParams(temperature=0.0, max_tokens=24 + 8 * len(pairs), purpose="judge"),
                    TurnFacts(lang, (), 0.0),
                ),
                self._timeout,
            )
        except Exception:
            log.warning("LLM supersession judge failed; the rules' result stands", exc_info=True)
            metrics.LLM_FALLBACKS.labels("judge", "failed").inc()
            return None
        verdicts = parse_verdicts(completion.text, len(pairs))
        if verdicts is None:
            metrics.LLM_FALLBACKS.labels("judge", "unparseable").inc()
            log.warning(
                "LLM supersession judge answered outside the JSON asked for; the rules' result stands"
            )
        return verdicts
