"""When one claim about the user replaces another (facts that change), pure: used by the write path's
supersession (memory/write/supersession.py) and by recall, which applies it at read time to memories no
write compared (one of them in an archive tier when the other was written, or stored before
supersession existed)."""

from __future__ import annotations

import re

Claim = tuple[str, str]  # (key, normalised value); value "" = the attribute ended
HABIT = "habit"  # "I no longer play tennis": the value is the phrase, matched by its words
CHANGED = "changed"  # `changed:<subject>`: "our deploy window is now …" (memory/write/change_statements.py)
PLACEHOLDER_RE = re.compile(r"^\[[A-Z_]+\]$", re.I)


def supersedes(new: Claim, old: Claim) -> bool:
    """Does the newer claim replace the older one about the same key?"""
    if new[0] != old[0]:
        return False
    if new[1] == "" or old[1] == "":
        return new[1] != old[1] or new[1] == ""
    if PLACEHOLDER_RE.match(new[1]):
        return True
    if new[1] == "+1":
        return True
    # "杭州" / "杭州西湖边", "new york" / "new york city": the same value said more or less precisely
    return not (new[1].startswith(old[1]) or old[1].startswith(new[1]))
