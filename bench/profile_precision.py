"""The profile's precision and recall, and the person entities' precision, on labelled zh/en statements
(issue 40).

    .venv/bin/python bench/profile_precision.py                  # every part, per language
    .venv/bin/python bench/profile_precision.py --show-errors    # and every wrong or missed entry
    .venv/bin/python bench/profile_precision.py --split blind    # one part only (dev, held_out, blind)
    .venv/bin/python bench/profile_precision.py --min-confidence 0   # every entry, not only the prompt's

Data: `bench/data/profile_labelled.json` (how it was made: `bench/data/profile_labelled.md`): 429
messages a user could send, 213 zh and 216 en, 273 of them hard negatives (other people's facts;
colours, titles, numbers, places, organisations and products; hypotheticals, negations, questions,
quotes and reported speech, the past), each with the profile entries (category, value) and the named
persons it should give. Three parts: `dev` (the rules were written on it), `held_out` (every third of
the first 339, run at the end) and `blind` (90 written after the rules were final, run once).

Each statement is run through what the write path runs for a user's message (`extract`, then
`attributes_of`), in process. A profile entry counts when its confidence reaches the prompt's threshold
(`PROFILE_MIN_CONFIDENCE`, memory/relations/profile.py): what the chat prompt's `[user profile]` block
would hold if this were the user's only message. An entry is right when its category is the label's
and its value key is the label's (both through `value_key`: 老师 = teacher), or one holds the other
("一家设计院" and "设计院"). A person is an entity `person:…` (a family role without a name, `kin:…`,
is a family entry, not a person); it is right when its name is a labelled person's, or one holds the
other ("Anna" of "Anna Smith").
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory.relations import profile as profile_rules  # noqa: E402
from memory.relations.extract import extract  # noqa: E402
from memory.relations.profile import attributes_of  # noqa: E402
from memory.relations.tags import value_key  # noqa: E402

DATA = ROOT / "bench" / "data" / "profile_labelled.json"
SAID_AT = 1_770_000_000.0  # 2026-02-02
TARGETS = {"profile_precision": 0.95, "profile_recall": 0.80, "person_precision": 0.95}


def threshold() -> float:
    """The prompt's threshold (0 for code without confidences: every entry reached the prompt)."""
    return float(getattr(profile_rules, "PROFILE_MIN_CONFIDENCE", 0.0))


def _key(category: str, value: str) -> str:
    return value_key(category, value).lower()


def _same_value(a: str, b: str) -> bool:
    return a == b or (min(len(a), len(b)) >= 2 and (a in b or b in a))


def _matched(predicted: Sequence[str], gold: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """(right, wrong, missed): each gold item matches at most one predicted item."""
    left = list(gold)
    right, wrong = [], []
    for p in predicted:
        hit = next((g for g in left if _same_value(p, g)), None)
        if hit is None:
            wrong.append(p)
        else:
            left.remove(hit)
            right.append(p)
    return right, wrong, left


@dataclass
class Tally:
    right: int = 0
    wrong: int = 0
    missed: int = 0

    def add(self, right: int, wrong: int, missed: int) -> None:
        self.right += right
        self.wrong += wrong
        self.missed += missed

    @property
    def precision(self) -> float:
        said = self.right + self.wrong
        return round(self.right / said, 3) if said else 1.0

    @property
    def recall(self) -> float:
        labelled = self.right + self.missed
        return round(self.right / labelled, 3) if labelled else 1.0


@dataclass
class Part:
    statements: int = 0
    profile: Tally = field(default_factory=Tally)
    persons: Tally = field(default_factory=Tally)
    errors: list[dict[str, Any]] = field(default_factory=list)

    def report(self) -> dict[str, Any]:
        return {
            "statements": self.statements,
            "profile_precision": self.profile.precision,
            "profile_recall": self.profile.recall,
            "profile_right_wrong_missed": [self.profile.right, self.profile.wrong, self.profile.missed],
            "person_precision": self.persons.precision,
            "person_recall": self.persons.recall,
            "person_right_wrong_missed": [self.persons.right, self.persons.wrong, self.persons.missed],
        }


def judge(item: dict[str, Any], min_confidence: float) -> tuple[list[str], list[str], list[str], list[str]]:
    """(profile entries said, profile entries labelled, persons said, persons labelled), as
    "category:key" and names."""
    found = extract(item["text"], said_at=SAID_AT)
    attrs = attributes_of(item["text"], found)
    said = [
        f"{a.category}:{a.key.lower()}"
        for a in attrs
        if a.key and getattr(a, "confidence", 1.0) >= min_confidence
    ]
    gold = [f"{c}:{_key(c, v)}" for c, v in item["profile"]]
    people = [e.name for e in found.entities if e.id.startswith("person:")]
    return sorted(set(said)), gold, sorted(set(people)), list(item["persons"])


def run(items: Iterable[dict[str, Any]], min_confidence: float) -> dict[tuple[str, str], Part]:
    parts: dict[tuple[str, str], Part] = {}
    for item in items:
        part = parts.setdefault((item["split"], item["lang"]), Part())
        part.statements += 1
        said, gold, people, named = judge(item, min_confidence)
        # a value matches only within its category
        right: list[str] = []
        wrong: list[str] = []
        missed: list[str] = []
        for category in sorted({s.split(":", 1)[0] for s in said + gold}):
            r, w, m = _matched(
                [s.split(":", 1)[1] for s in said if s.startswith(category + ":")],
                [g.split(":", 1)[1] for g in gold if g.startswith(category + ":")],
            )
            right += [f"{category}:{v}" for v in r]
            wrong += [f"{category}:{v}" for v in w]
            missed += [f"{category}:{v}" for v in m]
        part.profile.add(len(right), len(wrong), len(missed))
        pr, pw, pm = _matched([p.lower() for p in people], [n.lower() for n in named])
        part.persons.add(len(pr), len(pw), len(pm))
        if wrong or missed or pw or pm:
            part.errors.append(
                {
                    "id": item["id"],
                    "text": item["text"],
                    "trap": item["trap"],
                    "wrong": wrong,
                    "missed": missed,
                    "wrong_persons": pw,
                    "missed_persons": pm,
                }
            )
    return parts


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--split", choices=["dev", "held_out", "blind", "all"], default="all")
    parser.add_argument("--show-errors", action="store_true")
    parser.add_argument(
        "--min-confidence", type=float, default=None, help="instead of PROFILE_MIN_CONFIDENCE"
    )
    args = parser.parse_args(argv)
    items = json.loads(args.data.read_text(encoding="utf-8"))["items"]
    if args.split != "all":
        items = [i for i in items if i["split"] == args.split]
    min_confidence = threshold() if args.min_confidence is None else args.min_confidence
    parts = run(items, min_confidence)
    report: dict[str, Any] = {"min_confidence": min_confidence, "targets": TARGETS}
    met = True
    for (split, lang), part in sorted(parts.items()):
        numbers = part.report()
        numbers["targets_met"] = all(numbers[k] >= v for k, v in TARGETS.items())
        report[f"{split}/{lang}"] = numbers
        met = met and numbers["targets_met"]
        if args.show_errors:
            report[f"{split}/{lang}"]["errors"] = part.errors
    report["targets_met"] = met
    sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
