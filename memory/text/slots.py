"""Slot extraction from user messages (Chinese and English): date, time, place and document numbers.

Each slot keeps the words the user wrote (`raw`) and, when it can be computed, a normalised `value`
(ISO date, 24 h time, the bare number). A period longer than a month (a season: "去年夏天", "last
summer", "2023年秋天"; a year: "去年", "in 2022"; a range of months or years: "2019年到2021年", "from
March to May 2023") is the slot `period`, its value the first and last month it spans ("2025-06/2025-08"),
found only when no day is named (and, but for a range, no month).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memory.text.window import message_window

_ZH_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_WEEKDAYS_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WEEKDAYS_EN = {
    d: i for i, d in enumerate(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])
}
_MONTHS_EN = {
    m: i + 1
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ]
    )
}
_MONTHS_EN.update({k[:3]: v for k, v in list(_MONTHS_EN.items())})
_RELATIVE_DAYS = {
    "今天": 0,
    "今日": 0,
    "明天": 1,
    "明日": 1,
    "后天": 2,
    "大后天": 3,
    "昨天": -1,
    "前天": -2,
    "大前天": -3,
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
    "yesterday": -1,
    "the day after tomorrow": 2,
    "the day before yesterday": -2,
    # a week back, as an approximate event day ("上周我去了杭州", "last week I moved")
    "上周": -7,
    "上星期": -7,
    "上个星期": -7,
    "上礼拜": -7,
    "上个礼拜": -7,
    "last week": -7,
}
_EN_COUNTS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_RELATIVE_YEARS = {"今年": 0, "去年": -1, "前年": -2}


def _zh_number(text: str) -> int | None:
    """'3', '十二', '二十三', '十' -> int."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = _ZH_DIGITS.get(tens, 1) if tens else 1
        o = _ZH_DIGITS.get(ones, 0) if ones else 0
        return t * 10 + o
    if len(text) == 1 and text in _ZH_DIGITS:
        return _ZH_DIGITS[text]
    return None


@dataclass(frozen=True, slots=True)
class Slot:
    name: str  # date | month | time | place | order_number | contract_number | quote_number | id_number
    raw: str
    value: str


_NUM = r"(?:\d{1,2}|[一二两三四五六七八九十]{1,3})"
_DATE_PATTERNS = [
    re.compile(r"(?P<iso>\d{4}-\d{1,2}-\d{1,2})"),
    re.compile(r"(?P<y>\d{4})年(?P<m>\d{1,2})月(?P<d>\d{1,2})[日号]"),
    re.compile(rf"(?P<m>{_NUM})月(?P<d>{_NUM})[日号]"),
    re.compile(r"(?P<rel>大后天|大前天|今天|今日|明天|明日|后天|昨天|前天)"),
    re.compile(r"(?P<next>下个?|这个?|本|上个?)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])"),
    re.compile(
        r"\b(?P<rel>the day after tomorrow|the day before yesterday|today|tonight|tomorrow|yesterday)\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?P<next>next |this |on |last )?(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
        re.IGNORECASE,
    ),
    # days or weeks back from the message's own time ("3天前", "两周前", "2 days ago", "a week ago")
    re.compile(rf"(?P<ago>{_NUM})(?P<unit>天|周|个?星期|个?礼拜)(?:以|之)?前"),
    re.compile(
        r"\b(?P<ago>\d{1,2}|a|one|two|three|four|five|six) (?P<unit>days?|weeks?) ago\b", re.IGNORECASE
    ),
    re.compile(r"(?P<rel>上周|上个?星期|上个?礼拜)(?![一二三四五六日天])"),
    re.compile(r"\b(?P<rel>last week)\b", re.IGNORECASE),
    # "May 5", "May 5th, 2023", "5 May 2023", "the 5th of May": the year when it is written
    re.compile(
        r"\b(?P<mon>[A-Za-z]{3,9})\.? (?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?:,? (?P<y>(?:19|20)\d{2})\b)?"
    ),
    re.compile(
        r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)? (?:of )?(?P<mon>[A-Za-z]{3,9})\b(?:,? (?P<y>(?:19|20)\d{2})\b)?"
    ),
]
_MONTH_PATTERNS = [
    re.compile(
        rf"(?:(?P<y>\d{{4}})年|(?P<ry>去年|前年|今年))?(?P<m>{_NUM})月份?(?![\d一二三四五六七八九十]|[日号])"
    ),
    re.compile(r"(?P<back>上个?月)|\b(?P<back_en>last month)\b", re.IGNORECASE),
    # a month with its year ("May 2023", "in May, 2023") before one without ("in May": the latest May)
    re.compile(r"\b(?P<mon>(?!may\b)[A-Za-z]{3,9})\.?,? (?P<y>(?:19|20)\d{2})\b"),
    re.compile(
        r"\b(?:in|since|during|last|this|from|before|after|until|till) (?P<mon>[A-Za-z]{3,9})\b",
        re.IGNORECASE,
    ),
]
# seasons as the months they span (meteorological, northern hemisphere): winter runs into the next year
_SEASONS = {
    "春": (3, 5),
    "夏": (6, 8),
    "秋": (9, 11),
    "冬": (12, 14),
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "winter": (12, 14),
}
# a season is a period only when a year anchors it (去年夏天, 2023年秋天, "last summer", "summer 2023"):
# alone it names a kind of time ("我夏天喜欢游泳", "summer plans", "what I do in the summer")
_SEASON_PATTERNS = [
    re.compile(r"(?:(?P<y>\d{4})年的?|(?P<ry>去年|前年|今年)的?)(?P<season>[春夏秋冬])(?:天|季)"),
    re.compile(
        r"\b(?:(?P<rel>last|this|next) (?P<season>spring|summer|autumn|fall|winter)"
        r"|(?:the )?(?P<season2>spring|summer|autumn|fall|winter)(?: of)? (?P<y>(?:19|20)\d{2})"
        r"|(?P<y2>(?:19|20)\d{2}) (?P<season3>spring|summer|autumn|fall|winter))\b"
        r"(?! festival)",  # the Spring Festival is the lunar new year, in January or February
        re.IGNORECASE,
    ),
]
_YEAR_PATTERNS = [
    re.compile(r"(?P<y>(?:19|20)\d{2})年(?!\d|[一二两三四五六七八九十]|的?[春夏秋冬][天季])"),
    re.compile(r"(?P<ry>去年|前年|今年)(?!\d|[一二两三四五六七八九十]|的?[春夏秋冬][天季])"),
    re.compile(
        r"\b(?:in|during|since|of|back in|before|after|until|till|from|prior to) (?P<y>(?:19|20)\d{2})\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?P<rel>last|this) year\b|\bthe (?P<before_last>year before last)\b", re.IGNORECASE),
]
# a range of months or years is one period: "2019年到2021年", "2023年3月至5月", "3到5月", "from 2019 to
# 2021", "between March and May 2023", "2019-2021" (a day range is left to its first day)
_TO = r"\s*(?:到|至|—|–|-|~|～)\s*"
_TO_EN = r"\s*(?:to|until|till|through|and|-|–)\s*"  # lower case: "May" the month, "may" the verb
_RANGE_PATTERNS = [
    re.compile(rf"(?P<y1>(?:19|20)\d{{2}})年?{_TO}(?P<y2>(?:19|20)\d{{2}})年(?!\d|{_NUM}月)"),
    re.compile(
        rf"(?:(?P<y1>(?:19|20)\d{{2}})年|(?P<ry1>去年|前年|今年))?(?P<m1>{_NUM})(?:月份?)?{_TO}"
        rf"(?:(?P<y2>(?:19|20)\d{{2}})年|(?P<ry2>去年|前年|今年))?(?P<m2>{_NUM})月份?"
        r"(?![\d一二三四五六七八九十]|[日号])"
    ),
    re.compile(
        rf"\b(?:from |between )?(?P<y1>(?:19|20)\d{{2}}){_TO_EN}(?P<y2>(?:19|20)\d{{2}})\b", re.IGNORECASE
    ),
    re.compile(
        rf"\b(?:[Ff]rom |[Bb]etween )?(?P<mon1>(?!may\b)[A-Za-z]{{3,9}})(?:,? (?P<y1>(?:19|20)\d{{2}}))?"
        rf"{_TO_EN}(?P<mon2>(?!may\b)[A-Za-z]{{3,9}})\b(?:,? (?P<y2>(?:19|20)\d{{2}})\b)?",
    ),
]
_TIME_PATTERNS = [
    re.compile(
        rf"(?P<period>凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里)?(?P<h>{_NUM})[点时](?:(?P<half>半)|(?P<min>\d{{1,2}}|[一二三四五六七八九十]{{1,3}})分?)?"
    ),
    re.compile(
        r"\b(?P<h>\d{1,2})(?::(?P<min>\d{2}))?\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?![A-Za-z])", re.IGNORECASE
    ),
    re.compile(r"\b(?P<h>[01]?\d|2[0-3]):(?P<min>[0-5]\d)\b"),
    re.compile(r"\b(?P<word>noon|midnight)\b", re.IGNORECASE),
]
_PLACE_SUFFIX = r"国际机场|机场|火车站|高铁站|汽车站|地铁站|车站|酒店|宾馆|医院|大学|学院|公园|广场|大厦|中心|商场|博物馆|体育馆|码头|景区"
_ZH_PLACE_SUFFIX_RE = re.compile(rf"(?:{_PLACE_SUFFIX})")
# Characters that end a place name when walking back from its suffix (verbs, particles, pronouns).
_ZH_PLACE_STOP = set("去到在从往回的了点半号日月年是我你他她们和与跟给把被坐乘飞住送接离开至由向这那个")
_PLACE_PATTERNS = [
    re.compile(
        r"\b(?:to|at|in|from|near)\s+(?:the\s+)?(?P<place>(?:[A-Z][\w'-]+\s){0,3}"
        r"(?:Airport|Station|Hotel|Hospital|University|Park|Square|Center|Centre|Museum|Mall|Stadium))\b"
    ),
    re.compile(r"\b(?:to|at|in|from|near)\s+(?P<place>[A-Z][a-z]+(?:\s[A-Z][a-z]+){0,2})\b"),
]


# Cities that need no suffix (the ones users name most); anything with a suffix is found by the rule.
_ZH_CITIES = re.compile(
    "北京|上海|广州|深圳|杭州|南京|苏州|成都|重庆|武汉|西安|天津|长沙|青岛|厦门|大连|宁波|昆明|郑州|济南|合肥|福州|"
    "沈阳|哈尔滨|无锡|珠海|三亚|拉萨|桂林|丽江|香港|澳门|台北|东京|大阪|京都|首尔|新加坡|曼谷|纽约|伦敦|巴黎|悉尼|"
    "洛杉矶|旧金山|柏林|罗马|迪拜"
)


def _zh_places(text: str) -> list[tuple[str, str]]:
    """Chinese place names: a known suffix (机场, 酒店, 广场...) plus up to 8 ideographs before it,
    else a well-known city name."""
    places = []
    for match in _ZH_PLACE_SUFFIX_RE.finditer(text):
        start = match.start()
        while start > 0 and match.start() - start < 8:
            ch = text[start - 1]
            if not ("\u4e00" <= ch <= "\u9fff") or ch in _ZH_PLACE_STOP:
                break
            start -= 1
        if start < match.start():
            name = text[start : match.end()]
            places.append((name, name))
    if not places:
        places.extend((m.group(0), m.group(0)) for m in _ZH_CITIES.finditer(text))
    return places


_DOC_PATTERNS = [
    ("order_number", re.compile(r"订单(?:编号|号码|号)?[是为:：\s#]*(?P<num>[A-Za-z0-9][A-Za-z0-9-]{3,39})")),
    (
        "contract_number",
        re.compile(r"合同(?:编号|号码|号)[是为:：\s#]*(?P<num>[A-Za-z0-9][A-Za-z0-9-]{3,39})"),
    ),
    (
        "quote_number",
        re.compile(r"报价单?(?:编号|号码|号)[是为:：\s#]*(?P<num>[A-Za-z0-9][A-Za-z0-9-]{3,39})"),
    ),
    (
        "order_number",
        re.compile(
            r"\border\s*(?:no\.?|number|num|id|#)\s*(?:is\s*)?[:#]?\s*(?P<num>[A-Za-z0-9-]{4,40})", re.I
        ),
    ),
    (
        "contract_number",
        re.compile(
            r"\bcontract\s*(?:no\.?|number|id|#)\s*(?:is\s*)?[:#]?\s*(?P<num>[A-Za-z0-9-]{4,40})", re.I
        ),
    ),
    (
        "quote_number",
        re.compile(
            r"\bquot(?:e|ation)\s*(?:no\.?|number|id|#)\s*(?:is\s*)?[:#]?\s*(?P<num>[A-Za-z0-9-]{4,40})", re.I
        ),
    ),
]
_EN_STOP_PLACES = {"I", "The", "A", "An", "My", "It", "This", "That", "We", "You", "He", "She", "They"}


def _date(match: re.Match[str], now: datetime) -> str:
    groups = match.groupdict()
    if groups.get("iso"):
        y, m, d = (int(x) for x in groups["iso"].split("-"))
        return f"{y:04d}-{m:02d}-{d:02d}"
    if groups.get("rel"):
        return (now + timedelta(days=_RELATIVE_DAYS[groups["rel"].lower()])).date().isoformat()
    if groups.get("ago"):
        raw = groups["ago"].lower()
        count = _EN_COUNTS.get(raw) or _zh_number(raw) or 0
        unit = groups["unit"].lower()
        days = count * (1 if unit.startswith(("天", "day")) else 7)
        return (now - timedelta(days=days)).date().isoformat() if 0 < days <= 366 else ""
    if groups.get("wd"):
        wd_raw = groups["wd"].lower()
        target = _WEEKDAYS_ZH.get(wd_raw, _WEEKDAYS_EN.get(wd_raw, 0))
        which = (groups.get("next") or "").strip().lower()
        monday = now - timedelta(days=now.weekday())
        if which.startswith("上"):  # 上周五: the Friday of the previous calendar week
            day = monday + timedelta(days=target - 7)
        elif which == "last":  # last Friday: the latest Friday before today
            day = now - timedelta(days=(now.weekday() - target - 1) % 7 + 1)
        elif which.startswith(("下", "next")):  # next calendar week
            day = monday + timedelta(days=7 + target)
        elif which.startswith(("这", "本", "this")):  # this calendar week
            day = monday + timedelta(days=target)
        else:  # the next time that weekday comes (today counts)
            day = now + timedelta(days=(target - now.weekday()) % 7)
        return day.date().isoformat()
    month_raw = groups.get("m")
    mon_name = (groups.get("mon") or "").lower()
    mo: int | None = _zh_number(month_raw) if month_raw else _MONTHS_EN.get(mon_name)
    dd: int | None = _zh_number(groups["d"]) if groups.get("d") else None
    y = int(groups["y"]) if groups.get("y") else now.year
    if mo and dd and 1 <= mo <= 12 and 1 <= dd <= 31:
        return f"{y:04d}-{mo:02d}-{dd:02d}"
    return ""


def _month(match: re.Match[str], now: datetime) -> str:
    """'3月' / 'in March' -> 'YYYY-MM': the given year, else the latest such month not in the future."""
    g = match.groupdict()
    if g.get("back") or g.get("back_en"):  # 上个月 / last month
        return f"{now.year - (now.month == 1):04d}-{(now.month - 2) % 12 + 1:02d}"
    month = _zh_number(g["m"]) if g.get("m") else _MONTHS_EN.get((g.get("mon") or "").lower())
    if not month or not 1 <= month <= 12:
        return ""
    if g.get("ry"):  # 去年5月: that month of last year
        return f"{now.year + _RELATIVE_YEARS[g['ry']]:04d}-{month:02d}"
    year = int(g["y"]) if g.get("y") else (now.year if month <= now.month else now.year - 1)
    return f"{year:04d}-{month:02d}"


def _span(first: tuple[int, int], last: tuple[int, int]) -> str:
    """(year, month) to (year, month), months past 12 carried into the next year: 'YYYY-MM/YYYY-MM'."""
    (y1, m1), (y2, m2) = first, last
    y1, m1 = y1 + (m1 - 1) // 12, (m1 - 1) % 12 + 1
    y2, m2 = y2 + (m2 - 1) // 12, (m2 - 1) % 12 + 1
    return f"{y1:04d}-{m1:02d}/{y2:04d}-{m2:02d}"


def _season(match: re.Match[str], now: datetime) -> str:
    """A season -> its months: of the year named (2023年夏天, "summer 2023", 去年夏天: a winter is named by
    the year it begins in); "this" one (the one under way, else this year's), "next" one, or "last"
    one (the latest that has ended)."""
    g = match.groupdict()
    first, last = _SEASONS[(g.get("season") or g.get("season2") or g.get("season3") or "").lower()]
    named = g.get("y") or g.get("y2")
    rel = (g.get("rel") or "").lower()
    begun = now.year if now.month >= first else now.year - 1  # the latest that has begun

    def ended(year: int) -> bool:
        return (now.year, now.month) > (year + (last - 1) // 12, (last - 1) % 12 + 1)

    if named:
        year = int(named)
    elif g.get("ry"):
        year = now.year + _RELATIVE_YEARS[g["ry"]]
    elif rel == "this":
        year = now.year if ended(begun) else begun
    elif rel == "next":
        year = begun + 1
    else:  # last
        year = begun if ended(begun) else begun - 1
    return _span((year, first), (year, last))


def _year(match: re.Match[str], now: datetime) -> str:
    """A year -> its twelve months: 2022年 / "in 2022", 去年 / "last year", 今年 / "this year"."""
    g = match.groupdict()
    if g.get("y"):
        year = int(g["y"])
    elif g.get("ry"):
        year = now.year + _RELATIVE_YEARS[g["ry"]]
    elif g.get("before_last"):
        year = now.year - 2
    else:
        year = now.year - ((g.get("rel") or "").lower() == "last")
    return _span((year, 1), (year, 12))


def _range(match: re.Match[str], now: datetime) -> str:
    """A range of months or years -> one period 'YYYY-MM/YYYY-MM'. A year only on one side is the other
    side's too (a range that wraps, 11月到2月, ends in the next year); months with no year are the latest
    such range that has begun. '' for what is not a range forward (two words that are not months, "5到3月")."""
    g = match.groupdict()
    y1, y2 = (
        int(g[k]) if g.get(k) else now.year + _RELATIVE_YEARS[g["r" + k]] if g.get("r" + k) else None
        for k in ("y1", "y2")
    )
    if "m1" not in g and "mon1" not in g:  # years
        return _span((y1, 1), (y2, 12)) if y1 and y2 and y1 <= y2 <= y1 + 100 else ""
    m1 = _zh_number(g["m1"]) if g.get("m1") else _MONTHS_EN.get((g.get("mon1") or "").lower())
    m2 = _zh_number(g["m2"]) if g.get("m2") else _MONTHS_EN.get((g.get("mon2") or "").lower())
    if not (m1 and m2 and 1 <= m1 <= 12 and 1 <= m2 <= 12):
        return ""
    wraps = m2 < m1
    if y1 is None and y2 is None:
        y1 = now.year if (now.month >= m1) else now.year - 1
    if y1 is None:
        y1 = y2 - wraps if y2 is not None else None
    if y2 is None and y1 is not None:
        y2 = y1 + wraps
    if y1 is None or y2 is None or (y2, m2) <= (y1, m1) or y2 > y1 + 100:
        return ""
    return _span((y1, m1), (y2, m2))


def is_range(slot: Slot) -> bool:
    """Whether a period slot is a range of months or years ("2019年到2021年", "from March to May 2023")."""
    return slot.name == "period" and any(p.fullmatch(slot.raw) for p in _RANGE_PATTERNS)


def _time(match: re.Match[str]) -> str:
    g = match.groupdict()
    if g.get("word"):
        return "12:00" if g["word"].lower() == "noon" else "00:00"
    hour = _zh_number(g["h"])
    if hour is None:
        return ""
    minute = 30 if g.get("half") else (_zh_number(g["min"]) if g.get("min") else 0) or 0
    period = g.get("period") or ""
    ampm = (g.get("ampm") or "").lower().replace(".", "")
    if (period in {"下午", "傍晚", "晚上", "夜里"} or ampm == "pm") and hour < 12:
        hour += 12
    if period == "中午" and hour < 6:
        hour += 12
    if ampm == "am" and hour == 12:
        hour = 0
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return ""
    return f"{hour:02d}:{minute:02d}"


def extract_slots(text: str, *, now: datetime | None = None) -> list[Slot]:
    """Every slot found in `text`'s window (all of a text up to 4,000 characters; of a longer one its
    opening and its end: memory/text/window.py); the first match per slot name wins."""
    now = now or datetime.now(UTC)
    text = message_window(text)
    found: dict[str, Slot] = {}
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            value = _date(match, now)
            if value and "date" not in found:
                found["date"] = Slot("date", match.group(0).strip(), value)
    if "date" not in found:  # a range of months or years is one period, before any month of it
        for pattern in _RANGE_PATTERNS:
            for match in pattern.finditer(text):
                value = _range(match, now)
                if value and "period" not in found:
                    found["period"] = Slot("period", match.group(0).strip(), value)
    if "date" not in found and "period" not in found:
        for pattern in _MONTH_PATTERNS:
            for match in pattern.finditer(text):
                value = _month(match, now)
                if value and "month" not in found:
                    found["month"] = Slot("month", match.group(0).strip(), value)
    if not found.keys() & {"date", "month", "period"}:  # a longer period: a season, else a year
        for patterns, resolve in ((_SEASON_PATTERNS, _season), (_YEAR_PATTERNS, _year)):
            for pattern in patterns:
                for match in pattern.finditer(text):
                    value = resolve(match, now)
                    if value and "period" not in found:
                        found["period"] = Slot("period", match.group(0).strip(), value)
    for pattern in _TIME_PATTERNS:
        for match in pattern.finditer(text):
            value = _time(match)
            if value and "time" not in found:
                found["time"] = Slot("time", match.group(0).strip(), value)
    for raw, place in _zh_places(text):
        found.setdefault("place", Slot("place", raw, place))
    for pattern in _PLACE_PATTERNS:
        for match in pattern.finditer(text):
            place = match.group("place").strip()
            if place in _EN_STOP_PLACES or place.lower() in _MONTHS_EN or place.lower() in _WEEKDAYS_EN:
                continue
            if "place" not in found:
                found["place"] = Slot("place", place, place)
    for name, pattern in _DOC_PATTERNS:
        doc = pattern.search(text)
        if doc and name not in found:
            found[name] = Slot(name, doc.group(0).strip(), doc.group("num").upper())
    return list(found.values())
