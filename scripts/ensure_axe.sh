#!/usr/bin/env bash
# Install axe-core for the console's accessibility check (tests/browser/test_console_a11y.py) from
# tests/browser/package-lock.json with `npm ci`: the pinned version, offline from npm's cache once fetched.
# Node.js 20+ and npm are required: a missing one fails here (and the test fails), never skips.
set -euo pipefail
cd "$(dirname "$0")/../tests/browser"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "node and npm (Node.js 20 or newer) are needed for the accessibility check (axe-core)" >&2
    exit 1
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
    echo "Node.js 20 or newer is needed, found $(node --version)" >&2
    exit 1
fi
# npm ci again only when the lock file changed since the last install
if [ ! -f node_modules/axe-core/axe.min.js ] || [ ! -f node_modules/.package-lock.json ] \
    || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "==> npm ci (tests/browser: axe-core)"
    npm ci --no-audit --no-fund --loglevel=error
fi
