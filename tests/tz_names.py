"""Every name a request could send that points into a time zone database: the zones, and the folders and
files beside them that are none ("Europe", "America/Indiana", "zone.tab", "__pycache__")."""

from __future__ import annotations

from importlib.util import find_spec
from pathlib import Path


def database_entries() -> list[str]:
    """Every folder and file under tzdata's package and the system's /usr/share/zoneinfo, as the
    relative name a request could send."""
    spec = find_spec("tzdata")
    assert spec is not None, "tzdata is a dependency of mnemo"
    assert spec.origin is not None
    package = Path(spec.origin).parent
    names: set[str] = set()
    for root in (package, package / "zoneinfo", Path("/usr/share/zoneinfo")):
        if root.is_dir():
            names.update(p.relative_to(root).as_posix() for p in root.rglob("*"))
    return sorted(names)
