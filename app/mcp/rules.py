"""The API's rules the MCP tools state and check before sending anything (the id rule, profile tags, the
forget floors), kept here so `python -m app.mcp` starts without importing the server: `app.http.ids`,
`app.http.schemas` and `memory.service` pull in the whole `memory` package (numpy, redis, the relation
extractor: seconds of imports for a process that only calls the HTTP API).

These are copies of the server's values, not new rules: tests/mcp/test_mcp_stdio_start.py asserts that
each equals its source (and that the id check agrees with `app.http.ids` on every sample), so a change
there fails until it is made here too. Stdlib only: this module must stay light.
"""

from __future__ import annotations

import re
from typing import TypeGuard
from urllib.parse import quote

# app.http.ids
ID_ALPHABET = "A-Za-z0-9_.@:|+-"
ID_MAX_CHARS = 128
ID_RULE = f"1-{ID_MAX_CHARS} characters of [{ID_ALPHABET}], not only dots"
ID_PATTERN = f"(?!\\.+$)[{ID_ALPHABET}]{{1,{ID_MAX_CHARS}}}"
_ID_RE = re.compile(ID_PATTERN, re.ASCII)
TAGS_MAX = 10

# memory.relations.profile
TAG_CATEGORIES = {
    "occupation": "职业",
    "employer": "工作单位",
    "home": "居住地",
    "family": "家人",
    "goal": "目标",
    "preference": "喜好",
    "device": "设备",
    "diet": "饮食",
    "pet": "宠物",
}
TAG_MAX_CHARS = 64
TAG_RULE = (
    "a tag is '#<category>_<value>' with a category in Chinese or English "
    f"({', '.join(f'{zh}/{en}' for en, zh in TAG_CATEGORIES.items())}), at most {TAG_MAX_CHARS} characters "
    "(标签格式为 #类别_值，例如 #职业_教师 或 #occupation_teacher)"
)

# memory.service (a forget's default relevance floor, and how many memories it deletes without a count)
FORGET_MIN_RELEVANCE = 0.7
FORGET_CAP = 10
# app.http.forget_schemas (the lowest floors a forget may ask for)
FORGET_MIN_SIMILARITY = 0.3
FORGET_LOWEST_RELEVANCE = 0.5


def is_valid_id(value: object) -> TypeGuard[str]:
    """`app.http.ids.is_valid_id`: a full match of the id rule."""
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def path_segment(value: str) -> str:
    """`app.http.ids.path_segment`: one path segment, everything outside [A-Za-z0-9_~-] percent-encoded,
    dots too, so no URL normaliser can read it as a dot segment."""
    return quote(value, safe="").replace(".", "%2E")
