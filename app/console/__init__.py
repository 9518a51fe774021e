"""The memory console: static HTML, CSS and JS served at `/console` (app/routes/console.py).

The page calls nothing but the public API, with the token the person pasted: it has no privileges of
its own. This package holds only the assets; it imports nothing.
"""

from __future__ import annotations

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
