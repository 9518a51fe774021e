"""Rule-based classification of what the user is doing in a message, in Chinese and English."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

ActionType = Literal[
    "ask_recall",
    "ask_for_code",
    "set_preference",
    "request_explanation",
    "provide_feedback",
    "chit_chat",
]
CODING_STREAK = 3

# Checked in this order: the first rule that matches wins.
_RULES: list[tuple[ActionType, re.Pattern[str]]] = [
    (
        "ask_recall",
        re.compile(
            r"还记得|记不记得|你记得|我(之前|以前|上次|刚才)(说|提|讲|告诉)|我(告诉|跟你说)过|我(住|在)哪|我叫什么|"
            r"\b(do|did) you remember\b|\bremember (what|when|where|who|that i)\b|\bwhat did i (say|tell|mention)\b|"
            r"\bdid i (mention|tell you|say)\b|\b(where|what city) do i live\b|\bwhat('s| is) my name\b|"
            r"\bi (told|mentioned to) you\b",
            re.IGNORECASE,
        ),
    ),
    (
        "ask_for_code",
        re.compile(
            r"(写|给我|帮我|实现|生成)[^。！？\n]{0,12}(代码|函数|脚本|程序|类|接口|sql|正则|算法)|代码|报错|调试|"
            r"\bpython\b|\bjava(script)?\b|\btypescript\b|\bsql\b|\bregex\b|\bbash\b|\brust\b|\bgolang\b|"
            r"\b(write|give me|implement|generate|refactor|fix)\b[^.?!\n]{0,30}\b(code|function|script|class|"
            r"query|regex|program|snippet|method|test|bug)s?\b|\bcode\b|\bdebug\b|\bstack ?trace\b|\bcompile",
            re.IGNORECASE,
        ),
    ),
    (
        "set_preference",
        re.compile(
            r"我(很|最|更|比较|超)?(喜欢|爱|讨厌|不喜欢|偏好|习惯)|以后(都|请|就)|从现在(开始|起)|请(一直|总是|始终)|不要再|"
            r"\bi (really )?(like|love|prefer|hate|dislike|can't stand)\b|\bfrom now on\b|\bplease (always|never)\b|"
            r"\b(always|never) (use|reply|answer|call|give)\b|\bmy favou?rite\b",
            re.IGNORECASE,
        ),
    ),
    (
        "request_explanation",
        re.compile(
            r"为什么|为啥|解释|什么是|是什么意思|什么意思|怎么理解|原理|区别是|怎么回事|"
            r"\bwhy\b|\bexplain\b|\bwhat (is|are|does)\b|\bhow (does|do|is|come)\b|\bwhat's the difference\b|"
            r"\bmeaning of\b",
            re.IGNORECASE,
        ),
    ),
    (
        "provide_feedback",
        re.compile(
            r"谢谢|多谢|感谢|不对|错了|没用|有用|太好了|完美|好的|收到|确认|"
            r"(回答|答案|这个|你说的|说得|方法|代码)[^。！？]{0,4}(很好|不错|对|不行)|"
            r"\bthanks?\b|\bthank you\b|\bwrong\b|\bthat'?s (not )?(right|correct|it)\b|\bgreat\b|\bperfect\b|"
            r"\b(doesn't|does not|didn't) work\b|\bworks\b|\bhelpful\b|\bok(ay)?\b|\bconfirmed?\b|\bgot it\b",
            re.IGNORECASE,
        ),
    ),
]


def classify_action(text: str) -> ActionType:
    for action, pattern in _RULES:
        if pattern.search(text):
            return action
    return "chit_chat"


def coding_mode(recent_actions_oldest_first: Sequence[str]) -> bool:
    """Coding collaboration mode: the last three actions were all ask_for_code."""
    tail = list(recent_actions_oldest_first)[-CODING_STREAK:]
    return len(tail) == CODING_STREAK and all(a == "ask_for_code" for a in tail)
