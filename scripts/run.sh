#!/usr/bin/env bash
# `make run`: install, make sure Redis and Chroma answer (starting local ones if not), serve on :8000.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/bootstrap.sh
py=.venv/bin/python

if [ ! -f .env ]; then
    echo "AUTH_JWT_SECRET=$($py -c 'import secrets; print(secrets.token_urlsafe(48))')" > .env
    chmod 600 .env
    echo "==> wrote a random AUTH_JWT_SECRET to .env (keep it; tokens are signed with it)"
fi
set -a
# shellcheck disable=SC1091
. ./.env
set +a
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379/0}"
export CHROMA_URL="${CHROMA_URL:-http://127.0.0.1:8001}"
mkdir -p data/redis data/chroma

if $py scripts/probe.py redis "$REDIS_URL"; then
    echo "==> using the Redis at $REDIS_URL"
else
    scripts/ensure_redis_server.sh
    port="$($py scripts/probe.py port "$REDIS_URL")"
    echo "==> starting redis-server on 127.0.0.1:$port (data in ./data/redis, AOF on)"
    redis-server --port "$port" --bind 127.0.0.1 --daemonize yes --dir "$PWD/data/redis" \
        --appendonly yes --save "60 1" --logfile "$PWD/data/redis/redis.log" --pidfile "$PWD/data/redis/redis.pid"
    $py scripts/probe.py redis "$REDIS_URL" --wait 30 || { echo "redis-server did not start; see data/redis/redis.log" >&2; exit 1; }
fi

if $py scripts/probe.py chroma "$CHROMA_URL"; then
    echo "==> using the Chroma server at $CHROMA_URL"
else
    port="$($py scripts/probe.py port "$CHROMA_URL")"
    echo "==> starting chroma on 127.0.0.1:$port (data in ./data/chroma)"
    nohup .venv/bin/chroma run --path "$PWD/data/chroma" --host 127.0.0.1 --port "$port" \
        > data/chroma/chroma.log 2>&1 &
    echo $! > data/chroma/chroma.pid
    $py scripts/probe.py chroma "$CHROMA_URL" --wait 90 || { echo "chroma did not start; see data/chroma/chroma.log" >&2; exit 1; }
fi

# `make run LLM=local`: real answers without an API key. The local model of the real-model lane
# (llama-cpp-python's OpenAI-compatible server with the Gemma 3 270M GGUF from PyPI, in .venv-llm:
# scripts/ensure_llm_server.sh) on 127.0.0.1:${LLM_PORT:-8081}, started here unless one answers there.
if [ "${LLM:-}" = "local" ]; then
    llm_port="${LLM_PORT:-8081}"
    export LLM_BASE_URL="http://127.0.0.1:$llm_port/v1"
    export LLM_MODEL="${LLM_MODEL_LOCAL:-gemma-3-270m-q4_k_m}"
    # one request at a time on CPU: the compression of long recalled memories, asked on every turn that
    # recalls one, timed out (5 s) on nearly every turn and held the server after that (docs/operations.md,
    # the real-model lane); extractive compression instead unless asked for. Query translation is off
    # by default already.
    export LLM_COMPRESS_MEMORIES="${LLM_COMPRESS_MEMORIES:-false}"
    if curl -fs "$LLM_BASE_URL/models" >/dev/null 2>&1; then
        echo "==> using the model server at $LLM_BASE_URL"
    else
        gguf="$(scripts/ensure_llm_server.sh | tail -n 1)"
        mkdir -p data/llm
        echo "==> starting the local model ($LLM_MODEL, llama-cpp-python) on 127.0.0.1:$llm_port"
        nohup .venv-llm/bin/python -m llama_cpp.server --model "$gguf" --model_alias "$LLM_MODEL" \
            --host 127.0.0.1 --port "$llm_port" --n_ctx 4096 --interrupt_requests False \
            > data/llm/llm.log 2>&1 &
        echo $! > data/llm/llm.pid
        for _ in $(seq 1 300); do
            curl -fs "$LLM_BASE_URL/models" >/dev/null 2>&1 && break
            sleep 1
        done
        curl -fs "$LLM_BASE_URL/models" >/dev/null 2>&1 || { echo "the model server did not start; see data/llm/llm.log" >&2; exit 1; }
    fi
fi

# Prometheus multiprocess mode: every worker writes its metrics here; wiped before each start.
export PROMETHEUS_MULTIPROC_DIR="${PROMETHEUS_MULTIPROC_DIR:-$PWD/data/metrics}"
rm -rf "$PROMETHEUS_MULTIPROC_DIR"
mkdir -p "$PROMETHEUS_MULTIPROC_DIR"

port="${PORT:-8000}"
# A console link for a local admin: the token rides in the URL fragment, which browsers never send to
# the server (so it is in no access log); the page moves it to sessionStorage and drops it from the
# address bar. It is minted for this start only and expires in an hour.
console_token="$($py -m app.cli.token --sub local-admin --role admin --ttl 3600)"
cat <<TXT

==> mnemo is starting on http://127.0.0.1:$port with ${WORKERS:-2} workers and a long-term writer process
    token:  TOKEN=\$(.venv/bin/python -m app.cli.token --sub alice)
    store:  curl -s -X POST localhost:$port/v1/memory/alice/messages -H "Authorization: Bearer \$TOKEN" \\
              -H 'content-type: application/json' \\
              -d '{"session_id":"s1","messages":[{"role":"user","content":"我住在杭州，记住这个","id":"m1"}]}'
    search: curl -s -X POST localhost:$port/v1/memory/alice/search -H "Authorization: Bearer \$TOKEN" \\
              -H 'content-type: application/json' -d '{"query":"我住在哪个城市？"}'
    metrics: curl -s localhost:$port/metrics
    console: http://127.0.0.1:$port/console/#token=$console_token
             (a local admin, valid 1 h; another one: .venv/bin/python -m app.cli.token --sub local-admin --role admin)
    mcp:    http://127.0.0.1:$port/mcp (Bearer token), or stdio: .venv/bin/python -m app.mcp --token \$TOKEN
    stop:   Ctrl-C (then 'make stop' to stop the Redis/Chroma/local model this script started)

TXT
# Long-term writes run in their own niced process (python -m app.cli.writer), not in the API workers:
# measured on 2 cores, chat turns wait far less that way (docs/performance.md).
export OUTBOX_WORKER=false
.venv/bin/python -m app.cli.writer &
writer_pid=$!
trap 'kill "$writer_pid" 2>/dev/null || true' EXIT INT TERM
# keep-alive longer than clients reuse idle connections (entrypoint.sh says why)
.venv/bin/uvicorn --factory app.main:create_app --http app.http.protocol:EnvelopeH11Protocol --host "${HOST:-0.0.0.0}" --port "$port" \
    --workers "${WORKERS:-2}" --no-access-log --timeout-keep-alive "${KEEPALIVE_SECONDS:-75}"
