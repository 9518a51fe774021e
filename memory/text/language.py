"""Which language a text is in, for replies and prompt rules: Chinese when it has CJK ideographs."""

from __future__ import annotations

import re
from typing import Literal

Lang = Literal["zh", "en"]
CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def detect_language(text: str) -> Lang:
    """'zh' when at least one CJK ideograph makes up >= 20% of the letters, else 'en'."""
    cjk = len(CJK_RE.findall(text))
    if not cjk:
        return "en"
    latin = len(re.findall(r"[A-Za-z]", text))
    # an English word is ~5 letters; one ideograph is one word
    return "zh" if cjk >= 0.2 * (cjk + latin / 5) else "en"
