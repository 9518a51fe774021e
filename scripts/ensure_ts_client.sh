#!/usr/bin/env bash
# Install the TypeScript client's build tools (npm ci: typescript, @types/node from package-lock.json) and
# build it (clients/typescript/dist), for its tests and the sample web chat (examples/web-chat).
# Node.js 20+ and npm are required: a missing one fails here (and the tests fail), never skips.
set -euo pipefail
cd "$(dirname "$0")/../clients/typescript"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "node and npm (Node.js 20 or newer) are needed to build and test clients/typescript" >&2
    exit 1
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
    echo "Node.js 20 or newer is needed, found $(node --version)" >&2
    exit 1
fi
# npm ci again only when the lock file changed since the last install
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "==> npm ci (clients/typescript)"
    npm ci --no-audit --no-fund --loglevel=error
fi
npm run --silent build
