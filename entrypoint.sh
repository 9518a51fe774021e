#!/usr/bin/env bash
# Container entrypoint: wait for Redis and Chroma (bounded), load the embedding model once so a
# broken image fails here rather than on the first request, reset the Prometheus multiprocess
# directory, then exec uvicorn (PID 1 receives the stop signal directly).
set -euo pipefail
cd /app

: "${REDIS_URL:?REDIS_URL is not set}"
# several Chroma servers (CHROMA_URLS, name=url or url entries) or the one of CHROMA_URL
chroma_urls="${CHROMA_URLS:-${CHROMA_URL:?CHROMA_URL (or CHROMA_URLS) is not set}}"
wait_timeout="${WAIT_TIMEOUT_SECONDS:-60}"
data_dir="${DATA_DIR:-/app/data}"
metrics_dir="${PROMETHEUS_MULTIPROC_DIR:-/tmp/mnemo-metrics}"

log() { printf '%s entrypoint: %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*" >&2; }

mkdir -p "$data_dir"

# URLs are logged without their user:password part.
redis_target="${REDIS_URL#*://}"
redis_target="${redis_target##*@}"
log "waiting up to ${wait_timeout}s for Redis at $redis_target"
if ! python scripts/probe.py redis "$REDIS_URL" --wait "$wait_timeout"; then
    log "ERROR: Redis at $redis_target did not answer PING within ${wait_timeout}s (REDIS_URL, WAIT_TIMEOUT_SECONDS)"
    exit 1
fi

IFS=',' read -r -a chroma_entries <<< "$chroma_urls"
for entry in "${chroma_entries[@]}"; do
    chroma_url="${entry##*=}"  # name=url: the URL
    chroma_url="${chroma_url// /}"
    [ -n "$chroma_url" ] || continue
    chroma_target="${chroma_url#*://}"
    chroma_target="${chroma_target##*@}"
    log "waiting up to ${wait_timeout}s for Chroma at $chroma_target"
    if ! python scripts/probe.py chroma "$chroma_url" --wait "$wait_timeout"; then
        log "ERROR: Chroma at $chroma_target did not answer GET /api/v2/heartbeat within ${wait_timeout}s (CHROMA_URL/CHROMA_URLS, WAIT_TIMEOUT_SECONDS)"
        exit 1
    fi
done

# Also validates the configuration: a missing or placeholder secret fails here, with its message.
log "checking the configuration and loading the embedding model"
python -c 'from app.composition import build_embedder; from app.settings import Settings; build_embedder(Settings())'

# Stale per-pid files from a previous run would be summed into the new process's metrics.
case "$metrics_dir" in
    "" | "/") log "ERROR: refusing PROMETHEUS_MULTIPROC_DIR='$metrics_dir'"; exit 1 ;;
esac
mkdir -p -- "$metrics_dir"
find "$metrics_dir" -mindepth 1 -delete
export PROMETHEUS_MULTIPROC_DIR="$metrics_dir"

if [ "${1:-api}" = "writer" ]; then
    log "starting the long-term writer"
    exec python -m app.cli.writer
fi

# Idle keep-alive connections stay open longer than clients and load balancers reuse them (60 s is a
# common idle timeout): with uvicorn's 5 s, a client sending on a connection the server had just closed
# got "connection closed without response" (the likely cause of what locust saw on requests 2-5 s apart).
log "starting uvicorn on port ${PORT:-8000} with ${WORKERS:-2} workers"
exec uvicorn --factory app.main:create_app --http app.http.protocol:EnvelopeH11Protocol --host 0.0.0.0 --port "${PORT:-8000}" \
    --workers "${WORKERS:-2}" --no-access-log --timeout-keep-alive "${KEEPALIVE_SECONDS:-75}"
