#!/usr/bin/env bash
# Stop the Redis, Chroma (and `LLM=local` model) servers that scripts/run.sh started (never ones it
# found running).
set -euo pipefail
cd "$(dirname "$0")/.."
for pidfile in data/llm/llm.pid data/chroma/chroma.pid data/redis/redis.pid; do
    if [ -f "$pidfile" ]; then
        pid="$(cat "$pidfile")"
        if kill "$pid" 2>/dev/null; then echo "stopped $pidfile ($pid)"; fi
        rm -f "$pidfile"
    fi
done
