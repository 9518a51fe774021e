"""Every relative markdown link in the docs reaches a file, and its anchor a heading of that file (issue 43).

Checked: README.md, docs/**/*.md and clients/**/README.md (node_modules left out). A link is
`[text](target)` outside code (fenced blocks and inline code spans are not links); targets with a
scheme (`https:`, `mailto:`) are left alone. A relative target must exist (a file or a directory);
an anchor (`#…`, alone or after a markdown file) must be one GitHub gives a heading of that file:
the heading's text as rendered, lower-cased, punctuation and symbols dropped (letters of any script
kept: `## 前端与 OpenAI 客户端` is `#前端与-openai-客户端`), each space a `-`, and `-1`, `-2`… for
the second and later headings of one slug. Each check is a function of text, so the tests below can
feed it a broken copy and see it fail.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

ROOT = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_INLINE_LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//")


def doc_files(root: Path = ROOT) -> list[Path]:
    """The markdown files whose links are checked."""
    files = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    files += sorted(p for p in (root / "clients").rglob("README.md") if "node_modules" not in p.parts)
    return [p for p in files if p.is_file()]


def _outside_fences(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of every line that is not inside a fenced code block."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
        elif fence is not None and m and m.group(1) == fence:
            fence = None
        elif fence is None:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's markdown text (github-slugger over the rendered text)."""
    text = _INLINE_LINK.sub(r"\1", heading)
    text = _TAG.sub("", text).lower()
    kept = (c for c in text if c in " -_" or unicodedata.category(c)[0] in "LMN")
    return "".join(kept).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor GitHub gives the headings of a markdown text, duplicates suffixed -1, -2…"""
    seen: dict[str, int] = {}
    out: set[str] = set()
    for _, line in _outside_fences(text):
        if m := _HEADING.match(line):
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(text: str) -> Iterator[tuple[int, str]]:
    """(line number, target) of every markdown link outside code."""
    for number, line in _outside_fences(text):
        for m in _LINK.finditer(_CODE_SPAN.sub("", line)):
            yield number, m.group(1)


def broken_links(path: Path, text: str, read: dict[Path, str] | None = None) -> list[str]:
    """What is wrong with the relative links of `text` (the content of `path`), one line each."""
    cache = read if read is not None else {}
    problems: list[str] = []
    for number, target in links(text):
        if _SCHEME.match(target):
            continue
        where, _, anchor = target.partition("#")
        dest = (path.parent / unquote(where)).resolve() if where else path
        if not dest.exists():
            problems.append(f"{path.name}:{number}: {target}: no such file")
            continue
        if not anchor or dest.suffix != ".md" or dest.is_dir():
            continue
        if dest not in cache:
            cache[dest] = text if dest == path else dest.read_text(encoding="utf-8")
        if unquote(anchor) not in anchors(cache[dest]):
            problems.append(f"{path.name}:{number}: {target}: no such heading in {dest.name}")
    return problems


def test_every_relative_link_reaches_its_file_and_heading() -> None:
    read: dict[Path, str] = {}
    problems = [
        f"{p.relative_to(ROOT)}: {problem}"
        for p in doc_files()
        for problem in broken_links(p, p.read_text(encoding="utf-8"), read)
    ]
    assert problems == []


def test_the_checked_files_include_the_decisions_and_the_clients() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in doc_files()}
    assert {"README.md", "docs/decisions.md", "docs/api.md"} <= names
    assert {"clients/python/README.md", "clients/typescript/README.md"} <= names
    assert not any("node_modules" in n for n in names)


def test_slugs_follow_github_in_english_and_chinese() -> None:
    assert slug("Relevance and forget (issue 24)") == "relevance-and-forget-issue-24"
    assert slug("`memory/` is grouped by subsystem") == "memory-is-grouped-by-subsystem"
    assert slug("The floor is low, and a query of unknown words needs 0.1") == (
        "the-floor-is-low-and-a-query-of-unknown-words-needs-01"
    )
    assert slug("Proper nouns cross as names (杭州 ↔ Hangzhou, 巴黎 ↔ Paris)") == (
        "proper-nouns-cross-as-names-杭州--hangzhou-巴黎--paris"
    )
    assert slug("Front ends and OpenAI clients / 前端与 OpenAI 客户端") == (
        "front-ends-and-openai-clients--前端与-openai-客户端"
    )
    assert slug("See [the API](api.md#tools) now") == "see-the-api-now"


def test_duplicate_headings_get_numbered_anchors() -> None:
    text = "# Notes\n\n## Known limits\n\n## 已知限制\n\n## Known limits\n\n```\n## Known limits\n```\n"
    assert anchors(text) == {"notes", "known-limits", "已知限制", "known-limits-1"}


def test_a_broken_link_or_anchor_is_reported(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## 关于记忆 (memory)\n", encoding="utf-8")
    page = tmp_path / "page.md"
    text = (
        "# Page\n\n"
        "[ok](other.md#关于记忆-memory) [ok](#page) [ok](https://example.com/x#y) `[code](gone.md)`\n"
        "[file](gone.md) [heading](other.md#missing) [here](#nowhere) [encoded](other.md#%E5%85%B3)\n"
    )
    page.write_text(text, encoding="utf-8")
    assert broken_links(page, text) == [
        "page.md:4: gone.md: no such file",
        "page.md:4: other.md#missing: no such heading in other.md",
        "page.md:4: #nowhere: no such heading in page.md",
        "page.md:4: other.md#%E5%85%B3: no such heading in other.md",
    ]
