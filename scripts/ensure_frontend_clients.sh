#!/usr/bin/env bash
# Install the Node front-end clients tests/clients/test_frontends.py drives (the openai package and the
# Vercel AI SDK, pinned in tests/clients/frontends/package-lock.json). Node.js 20+ and npm are required:
# a missing one fails here (and the tests fail), never skips.
set -euo pipefail
cd "$(dirname "$0")/../tests/clients/frontends"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "node and npm (Node.js 20 or newer) are needed for the front-end client tests" >&2
    exit 1
fi
# npm ci again only when the lock file changed since the last install
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "==> npm ci (tests/clients/frontends)"
    npm ci --no-audit --no-fund --loglevel=error
fi
