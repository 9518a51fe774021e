"""CPU seconds of processes, read from /proc (Linux): what the capacity model divides by turns; and
this process's resident memory (`rss_mib`).

`cpu_seconds(pid)` is utime + stime of one process (all its threads); `tree_cpu_seconds(pid)` adds every
live descendant (uvicorn's master and its worker processes, chroma and anything it forks). A process
that has exited counts 0 from then on, so take both readings while the processes run.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")
PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # the command name (field 2) is in parentheses and may hold spaces: split after its last ')'
    return raw[raw.rindex(")") + 2 :].split()


def rss_mib() -> float:
    """This process's resident set, MiB (/proc/self/statm's second field, in pages)."""
    with (PROC / "self" / "statm").open() as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def cpu_seconds(pid: int) -> float:
    """utime + stime of `pid` (0 if it is gone). Fields 14 and 15 of /proc/<pid>/stat, in clock ticks."""
    fields = _stat_fields(pid)
    if fields is None:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # fields[0] is field 3 (state)


def descendants(pid: int) -> list[int]:
    """Every live process under `pid`, by their parent ids."""
    parents: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields is not None:
            parents.setdefault(int(fields[1]), []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        out += children
        todo += children
    return out


def tree_cpu_seconds(pid: int) -> float:
    return cpu_seconds(pid) + sum(cpu_seconds(p) for p in descendants(pid))


@dataclass(frozen=True)
class Group:
    """A named set of process trees whose CPU is read together (e.g. "redis": the six cluster nodes)."""

    name: str
    pids: tuple[int, ...]
    tree: bool = True  # False: these processes alone (the benchmark itself, whose children are the servers)

    def seconds(self) -> float:
        return sum(tree_cpu_seconds(p) if self.tree else cpu_seconds(p) for p in self.pids)


def snapshot(groups: Iterable[Group]) -> dict[str, float]:
    return {g.name: g.seconds() for g in groups}


def delta(before: Mapping[str, float], after: Mapping[str, float]) -> dict[str, float]:
    return {name: after[name] - before.get(name, 0.0) for name in after}
