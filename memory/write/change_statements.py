"""Statements that say something of the user's changed, whatever it is (issue 45): "Our team's deploy
window is now Friday mornings", "We switched our on-call rotation to Opsgenie", "我们组的发布窗口现在改到
周五上午了", "我把闹钟改成了六点半". The attribute rules (claim_rules.py) know where a user lives or what
they drive; these know the sentence shape of a change, so a fact restated many times forms a chain
(the newest current, the older ones superseded) whatever its subject.

Each rule claims `changed:<subject>` with the new value: the subject is what the user named ("team's
deploy window" → `changed:team's deploy window`, "发布窗口"), and recall brings a key's memories in for a
question that names its subject (memory/recall/validity.py `changed_facts`). Data only: supersession.py
reads a sentence with these rules as with the others.
"""

from __future__ import annotations

from memory.text.facts import CHANGED
from memory.write.claim_rules import _Z, _ZH_WHEN, ZH_OTHERS, _r, _Rule

__all__ = ["SUBJECT_CHANGES"]

# the subject an English change names: one to four words after "our"/"my", possessives kept; not a
# person ("my sister moved to Boston" is hers) nor a clause ("my boss packed up and moved to …")
_EN_NOT_SUBJECT = (
    r"(?:and|or|then|but|so|who|that|which|just|also|has|have|had|is|are|was|were|been|"
    r"sister|brother|mom|mum|mother|dad|father|parents?|wife|husband|partner|son|daughter|kids?|"
    r"children|child|family|friends?|boyfriend|girlfriend|fianc[ée]e?|boss|colleagues?|"
    r"coworkers?|neighbou?rs?|roommates?|cousins?|aunt|uncle|grand\w+|in-laws?|relatives?)\b"
)
_EN_WORD = rf"(?!{_EN_NOT_SUBJECT})[\w-]+(?:'s)?"
_EN_SUBJECT = rf"(?P<s>(?:{_EN_WORD} ){{0,3}}?{_EN_WORD})"
_EN_VALUE = r"(?P<v>[^.,;!?\n]{1,60})"
_EN_OWNER = r"\b(?:our|my)"
_EN_WE = r"\b(?:we|I)(?:'ve| have)?(?: just| recently| finally| now)?"
_EN_MOVED = r"(?:switched|moved|changed|migrated|updated|shifted)"

# the subject a Chinese change names: two to eight characters after "我的"/"我们组的", no particles
_ZH_SUBJECT = r"(?P<s>[^，。,.！!？?；;：:\s、的了把]{2,8}?)"
_ZH_OWNER = rf"我(?:们)?(?!{ZH_OTHERS}|家人)[^，。,.！!？?；;\s的]{{0,3}}?的"
_ZH_TO = r"(?:改到|改成|改为|换成|换到|调到|调整到|调整为|变成|挪到|定在|定到)了?"

SUBJECT_CHANGES: tuple[_Rule, ...] = (
    # "our deploy window is now Friday mornings", "my standup is now at 9:30"
    _r(
        CHANGED,
        _EN_OWNER + r" " + _EN_SUBJECT + r" (?:is|are) now (?:at |on |in |set to )?" + _EN_VALUE,
        thing="s",
    ),
    # "our standup (has) moved to 10am", "my shift changed to nights"
    _r(
        CHANGED,
        _EN_OWNER
        + r" "
        + _EN_SUBJECT
        + r" (?:has |have )?(?:now )?"
        + _EN_MOVED
        + r" (?:over )?to "
        + _EN_VALUE,
        thing="s",
    ),
    # "we switched our on-call rotation to Opsgenie", "I moved my backups over to S3"
    _r(
        CHANGED,
        _EN_WE + r" " + _EN_MOVED + r" (?:our|my|the) " + _EN_SUBJECT + r" (?:over )?to " + _EN_VALUE,
        thing="s",
    ),
    # 我们组的发布窗口现在改到周五上午了, 我的工位调到了三楼
    _r(CHANGED, _ZH_OWNER + _ZH_SUBJECT + _ZH_WHEN + _ZH_TO + _Z, thing="s"),
    # 我把闹钟改成了六点半, 我们把例会改到周三了
    _r(CHANGED, r"我(?:们)?" + _ZH_WHEN + r"把(?:我们?的)?" + _ZH_SUBJECT + _ZH_TO + _Z, thing="s"),
)
