"""PII redaction to typed placeholders, applied before anything is embedded or stored.

E-mail addresses, phone numbers (Chinese mobile and international), Chinese resident ID numbers (with
their ISO 7064 check digit) and payment card numbers (Luhn-checked) become [EMAIL], [PHONE],
[ID_NUMBER], [CARD]. Numbers that fail their checksum are left alone (order numbers look like digits too).
"""

from __future__ import annotations

import re

from memory.text.cleaning import clean_text

# a local part is at most 64 characters (RFC 5321): unbounded, every start in a long run of letters or
# digits without an @ rescanned the rest of the run (0.8 s for 32,000 of them, issue 39)
_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_CN_ID_RE = re.compile(r"(?<![0-9A-Za-z])(\d{17}[\dXx])(?![0-9A-Za-z])")
_CARD_RE = re.compile(r"(?<![0-9A-Za-z])((?:\d[ -]?){12,18}\d)(?![0-9A-Za-z])")
_CN_MOBILE_RE = re.compile(r"(?<![0-9A-Za-z])(?:\+?86[ -]?)?1[3-9]\d(?:[ -]?\d{4}){2}(?![0-9A-Za-z])")
_INTL_PHONE_RE = re.compile(r"(?<![0-9A-Za-z+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?![0-9A-Za-z])")
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"


def valid_cn_id(number: str) -> bool:
    if len(number) != 18 or not number[:17].isdigit():
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _ID_WEIGHTS, strict=True))
    return _ID_CHECK[total % 11] == number[17].upper()


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def redact(text: str) -> str:
    text = _EMAIL_RE.sub("[EMAIL]", text)
    text = _CN_ID_RE.sub(lambda m: "[ID_NUMBER]" if valid_cn_id(m.group(1)) else m.group(0), text)

    def card(m: re.Match[str]) -> str:
        digits = re.sub(r"[ -]", "", m.group(1))
        return "[CARD]" if 13 <= len(digits) <= 19 and luhn_ok(digits) else m.group(0)

    # phones first: a "+86 138 ..." number can pass a Luhn check by chance
    text = _CN_MOBILE_RE.sub("[PHONE]", text)
    text = _INTL_PHONE_RE.sub("[PHONE]", text)
    return _CARD_RE.sub(card, text)


def sanitize(text: str) -> str:
    """Clean, then redact: what may be stored or embedded of a user's text."""
    return redact(clean_text(text))
