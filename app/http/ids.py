"""The one rule for every identifier a client sends: token `sub`, user and session ids in paths, bodies,
queries and the `X-Session-ID` header, memory and message ids, and `X-Request-ID`; plus the rule for
audit stream ids.

Ids become parts of Redis keys (`mnemo:{alice}:s:s1:buffer`) and of log lines, so the alphabet has no
braces (Redis Cluster hash tags), slashes, spaces or control characters. The check is `re.fullmatch`:
a `$`-anchored `re.match` also accepts a trailing newline, which once let a token's `sub` write keys no
path could name again.

Ids are path segments too, so an id made only of dots (`.`, `..`, `...`) is refused: URL normalisers
(browsers, curl, httpx) remove the dot segments `.` and `..`, and `DELETE /v1/memory/u/.` would reach
the route above it (`DELETE /v1/memory/u`, the erase). `path_segment` is how every internal client
puts an id into a path: percent-encoded, dots included, so no normaliser can treat it as a dot segment.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, TypeGuard
from urllib.parse import quote

from pydantic import AfterValidator, WithJsonSchema

from memory.relations.tags import TAG_MAX_CHARS, TAG_RULE, parse_tag

ID_ALPHABET = "A-Za-z0-9_.@:|+-"
ID_MAX_CHARS = 128
ID_RULE = f"1-{ID_MAX_CHARS} characters of [{ID_ALPHABET}], not only dots"
# a lookahead refuses ids made only of dots: they are dot segments in a URL path
_ID_PATTERN = f"(?!\\.+$)[{ID_ALPHABET}]{{1,{ID_MAX_CHARS}}}"
_ID_RE = re.compile(_ID_PATTERN, re.ASCII)
ID_JSON_SCHEMA: dict[str, Any] = {
    "type": "string",
    # the same rule without a lookahead (schema tools generate from it): at least one non-dot character
    "pattern": f"^[{ID_ALPHABET}]*[{ID_ALPHABET.replace('.', '')}][{ID_ALPHABET}]*$",
    "minLength": 1,
    "maxLength": ID_MAX_CHARS,
    "description": ID_RULE,
}


def is_valid_id(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def check_id(value: str) -> str:
    """The pydantic validator behind `Id`."""
    if not is_valid_id(value):
        raise ValueError(f"must be {ID_RULE}")
    return value


Id = Annotated[str, AfterValidator(check_id), WithJsonSchema(ID_JSON_SCHEMA)]
"""Any client-given identifier, in a body field, a path, a query or a header."""


def path_segment(value: str) -> str:
    """`value` as one URL path segment: every character outside [A-Za-z0-9_~-] percent-encoded, `.`
    too (an unreserved character that `quote` leaves alone), so that neither a dot segment nor a
    slash can come out of it, whatever a client's URL normaliser does."""
    return quote(value, safe="").replace(".", "%2E")


# -- profile tags (relation memory: memory/relations/profile.py) ----------------------------------------

TAGS_MAX = 10  # per request


def check_tag(value: str) -> str:
    """A profile tag in Chinese or English (`#职业_教师`, `#occupation_teacher`); refused with the rule."""
    parse_tag(value)
    return value


Tag = Annotated[
    str,
    AfterValidator(check_tag),
    WithJsonSchema({"type": "string", "maxLength": TAG_MAX_CHARS, "description": TAG_RULE}),
]
"""A profile tag: `#<category>_<value>`, the category in Chinese or English; zh and en forms are one tag."""


def tag_keys(tags: list[str] | None) -> list[tuple[str, str]]:
    """(category, value key) of each tag given, once each (a tag's zh and en forms are one)."""
    return list(dict.fromkeys(parse_tag(t) for t in tags or ()))


def _issued(pattern: str, rule: str, rule_zh: str) -> tuple[AfterValidator, WithJsonSchema]:
    """The checks of a path id mnemo itself issued (a merge's, an import's): exactly `pattern`, nothing
    normalised; the error says the rule in English and Chinese."""
    compiled = re.compile(pattern, re.ASCII)

    def check(value: str) -> str:
        if compiled.fullmatch(value) is None:
            raise ValueError(f"must be {rule} ({rule_zh})")
        return value

    return AfterValidator(check), WithJsonSchema(
        {"type": "string", "pattern": f"^{pattern}$", "description": rule}
    )


_MERGE_ID = _issued(
    "mg-[0-9a-f]{16}",
    "a merge id as the merge answered it: 'mg-' and 16 lower-case hex digits",
    "合并 id 格式为 mg- 加 16 位小写十六进制",
)
_IMPORT_ID = _issued(
    "imp_[0-9a-f]{32}",
    "an import id as the import answered it: 'imp_' and 32 lower-case hex digits",
    "导入 id 格式为 imp_ 加 32 位小写十六进制",
)
MergeId = Annotated[str, _MERGE_ID[0], _MERGE_ID[1]]  # entity merges (relation memory): the id a split names
ImportId = Annotated[str, _IMPORT_ID[0], _IMPORT_ID[1]]  # imports: the id a status request names


# -- Idempotency-Key (draft-ietf-httpapi-idempotency-key-header) ----------------------------------------

IDEMPOTENCY_KEY_MAX_CHARS = 255
_IDEMPOTENCY_KEY_RE = re.compile(rf"[\x21-\x7e]{{1,{IDEMPOTENCY_KEY_MAX_CHARS}}}", re.ASCII)
IDEMPOTENCY_KEY_RULE = f"1-{IDEMPOTENCY_KEY_MAX_CHARS} visible ASCII characters, bare or quoted"


def check_idempotency_key(value: str) -> str:
    """The key itself: a quoted structured-field string loses its quotes."""
    key = value.strip()
    if len(key) >= 2 and key[0] == key[-1] == '"':
        key = key[1:-1]
    if _IDEMPOTENCY_KEY_RE.fullmatch(key) is None:
        raise ValueError(f"must be {IDEMPOTENCY_KEY_RULE}")
    return key


IdempotencyKeyValue = Annotated[str, AfterValidator(check_idempotency_key)]


# -- Redis stream ids (the audit trail's entry ids) --------------------------------------------------

UINT64_MAX = 2**64 - 1
# canonical decimal only (no leading zeros, no sign, ASCII digits): the form Redis itself returns
_STREAM_ID_RE = re.compile(r"(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,19})", re.ASCII)
STREAM_ID_RULE = "an entry id '<ms>-<seq>' as returned in next_before (decimal, each part below 2^64)"


def check_exclusive_end(value: str) -> str:
    """A stream id to read strictly before: well-formed, each part within uint64, and not `0-0`
    (nothing comes before the smallest id, and Redis refuses `(0-0` as an end)."""
    found = _STREAM_ID_RE.fullmatch(value)
    if found is None:
        raise ValueError(f"must be {STREAM_ID_RULE}")
    ms, seq = int(found.group(1)), int(found.group(2))
    if ms > UINT64_MAX or seq > UINT64_MAX:
        raise ValueError(f"must be {STREAM_ID_RULE}; {value} is out of range")
    if ms == 0 and seq == 0:
        raise ValueError("0-0 is the smallest stream id: there is nothing before it")
    return value


ExclusiveStreamEnd = Annotated[
    str,
    AfterValidator(check_exclusive_end),
    WithJsonSchema({"type": "string", "pattern": r"^(0|[1-9][0-9]{0,19})-(0|[1-9][0-9]{0,19})$"}),
]


# -- model ids (GET /v1/models/{model_id}) ---------------------------------------------------------------

MODEL_ID_MAX_CHARS = 200
# A model id as servers spell them (`gpt-4o-mini`, `qwen2.5:7b`, `Qwen/Qwen2.5-7B-Instruct`, `通义-7b`):
# segments of letters (any script), digits and `_.:@+-`, each starting with a letter or digit, joined by
# single slashes. So no `.`/`..` segment, empty segment, space, control character, backslash or percent
# sign gets through, and the id never names another resource.
_MODEL_SEGMENT = r"[^\W_][\w.:@+\-]*"
_MODEL_ID_RE = re.compile(rf"{_MODEL_SEGMENT}(?:/{_MODEL_SEGMENT})*")
MODEL_ID_RULE = (
    f"at most {MODEL_ID_MAX_CHARS} characters of letters, digits and _.:@+- in segments joined by single "
    "slashes, each starting with a letter or digit (模型 id 只能含字母、数字和 _.:@+-，以单个斜杠分段)"
)


def is_valid_model_id(value: str) -> bool:
    return len(value) <= MODEL_ID_MAX_CHARS and _MODEL_ID_RE.fullmatch(value) is not None
