"""Time words and patterns (Chinese and English) of query understanding: recency, the past of a fact that
changed, times relative to an event the user told of, named times left open on one side, and the kind of
answer a question wants (quantity, time, organisation). Data only: the functions that use them live in
memory/recall/query.py and memory/recall/fusion.py."""

from __future__ import annotations

import re

# A query that asks about the present or the latest state: only then does recency weigh in ranking.
RECENCY_RE = re.compile(
    r"最近|最新|现在|目前|如今|刚刚|刚才|这几天|近期|近来|还在|仍然|眼下|"
    r"\b(recent|recently|latest|lately|now|currently|current|these days|nowadays|still|anymore|newest|last time)\b",
    re.IGNORECASE,
)

# A time relative to another event the user told of: "before I moved", "after we got married", "since
# my son was born", "搬家之前", "我结婚以后" (memory/recall/retrieval.py dates it by the memory that tells
# of the event). The clause is the event's words; a clause that is itself a time (三年以前, 5月之前, 上次) or
# speaks of the conversation ("你还记得我之前说过什么", "what I told you before") is none.
EVENT_ANCHOR_RES = (
    re.compile(
        r"\b(?P<rel>before|after|since) (?P<clause>(?:i|we|my \w+|our \w+)\s+\w+(?:\s+\w+){0,3})",
        re.IGNORECASE,
    ),
    re.compile(r"(?P<clause>[\u4e00-\u9fff]{2,8}?)(?P<rel>之前|以前|之后|以后)"),
)
EVENT_ANCHOR_NOT_CLAUSE_RE = re.compile(
    r"[0-9０-９年月日号天周点]|星期|礼拜|小时|分钟|时候|上次|刚才|记得|记住|告诉|[说提聊问讲][过了的到]"
    r"|\b(?:said|told|asked|mentioned|talked|remember|last time)\b",
    re.IGNORECASE,
)
# A named time left open on one side (issue 28): "before 2020", "2020年以前", "since May", "5月以来",
# "从2020年起", "after March", "2023年以后". Read around the month or period the question names: the
# words after it (Chinese) or before it (English, also inside the slot's own words: "since 2020").
TIME_BOUND_AFTER_ZH_RE = re.compile(
    r"^\s*的?(?P<rel>以前|之前|以后|之后|以来|起|开始|前(?![天日年月周个后])|后(?![来天日年月周个]))"
)
LAST_WEEK_RE = re.compile(r"上个?(?:周|星期|礼拜)|last week", re.IGNORECASE)  # a week, not a day
TIME_BOUND_SINCE_ZH_RE = re.compile(r"(?:自从?|从)\s*$")
_TIME_BOUND_EN = r"(?P<rel>before|until|till|prior to|up to|after|since|from|starting(?: in| from)?)\s+"
TIME_BOUND_EN_RE = re.compile(rf"\b{_TIME_BOUND_EN}$", re.IGNORECASE)  # the words before the time
TIME_BOUND_EN_LEAD_RE = re.compile(_TIME_BOUND_EN, re.IGNORECASE)  # the time's own first word ("since 2020")
TIME_BOUNDS = {
    "before": "before",
    "until": "before",
    "till": "before",
    "prior to": "before",
    "up to": "before",
    "以前": "before",
    "之前": "before",
    "前": "before",
    "after": "after",
    "以后": "after",
    "之后": "after",
    "后": "after",
    "since": "since",
    "from": "since",
    "starting": "since",
    "starting in": "since",
    "starting from": "since",
    "以来": "since",
    "起": "since",
    "开始": "since",
}
EVENT_ANCHOR_SUBJECT_RE = re.compile(r"^(?:在|当|等|我们|咱们|我|你)+")

# What kind of answer a question wants, and what a memory holding such an answer contains (zh + en).
_ZH_NUM = "[0-9０-９一二两三四五六七八九十百千万几]"
ANSWER_TYPES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "quantity": (
        re.compile(r"多少|几[个只次天年岁桌位口家件本回]|\bhow (many|much|long|old|often|far)\b", re.I),
        re.compile(
            rf"{_ZH_NUM}+\s*[个只次天年岁桌位口家件本回元块万%]|\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|dozen|hundred)\b",
            re.I,
        ),
    ),
    "time": (
        re.compile(
            r"什么时候|哪天|几号|几点|哪一年|哪年|哪个月|\bwhen\b|\bwhat (time|date|day|year|month)\b", re.I
        ),
        re.compile(
            r"[0-9一二三四五六七八九十]+[月号日点]|今天|明天|昨天|前天|后天|上周|下周|周[一二三四五六日末]|去年|今年|明年|"
            r"\b(yesterday|today|tomorrow|tonight|last|next|ago|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
            r"january|february|march|april|may|june|july|august|september|october|november|december|\d{4})\b",
            re.I,
        ),
    ),
    "organisation": (
        re.compile(
            r"哪家(公司|单位|医院|银行|餐厅|店)|什么公司|\b(which|what) (company|firm|employer|store|shop|bank)\b|\bwork(s|ed)? (at|for)\b",
            re.I,
        ),
        re.compile(
            r"[\u4e00-\u9fff]{2,6}(科技|公司|集团|银行|游戏|工作室|医院|大学|餐厅|酒店)|\b[A-Z][a-z]+ (Inc|Ltd|Corp|Company|Bank|Studio|Labs?)\b|\boffer\b",
            re.I,
        ),
    ),
}

# A query about the past of a fact that changed: superseded memories are not pushed down for it.
PAST_RE = re.compile(
    r"以前|之前|从前|原来|过去|曾经|早先|当初|当时|先前|搬家前|什么时候搬|哪年搬|几月搬|什么时候换|什么时候辞|"
    r"什么时候开始|什么时候离|还没搬|老地址|旧号码|原先|"
    r"\b(before|previously|used to|formerly|former|earlier|in the past|previous|originally|at first|"
    r"old (address|job|number|place|car|school|phone)|when did i (move|start|quit|leave|switch|change|stop|get|buy|sell|join)|"
    r"how long did i|did i (use|ever)|back when|history of)\b",
    re.IGNORECASE,
)
