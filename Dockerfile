# mnemo API image: the ONNX embedding model baked in (no torch), non-root (uid 1001), starts offline.
#   docker build -t mnemo .        (or: docker compose up --build)
#   docker build --build-arg EXTRAS=torch -t mnemo:torch .   (EMBEDDING_BACKEND=torch: + CPU torch, ~1 GB)
# Builds with BuildKit and with the classic builder alike (what Compose uses without buildx): no
# `# syntax=` line (BuildKit would pull a frontend image) and no BuildKit-only flags (COPY --chmod).

# ---------------------------------------------------------------- builder: the virtualenv
FROM python:3.11-slim AS builder

# Optional extras of pyproject.toml to install too (comma-separated), e.g. "torch".
ARG EXTRAS=""
# Where the CPU build of torch comes from when EXTRAS names torch (from PyPI, `torch` is the multi-GB
# CUDA build). Only torch itself is taken from there; its dependencies come from PyPI.
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PATH=/opt/venv/bin:$PATH

WORKDIR /src
# Only the dependency list first: editing the code reuses this layer (no download).
COPY pyproject.toml ./
COPY scripts/requirements.py scripts/requirements.py
# Every dependency is pinned in pyproject.toml. mnemo itself is not installed: the runtime stage runs
# the code from /app, so there is exactly one copy of it.
RUN python -m venv /opt/venv \
    && python scripts/requirements.py "$EXTRAS" > /tmp/requirements.txt \
    && if grep -q '^torch==' /tmp/requirements.txt; then \
        pip install --no-cache-dir --no-deps "$(grep '^torch==' /tmp/requirements.txt)" --index-url "$TORCH_INDEX_URL"; \
    fi \
    && pip install --no-cache-dir -r /tmp/requirements.txt

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
# executable in git (tests/unit/test_deploy.py checks it); COPY keeps the mode with either builder
COPY entrypoint.sh /app/entrypoint.sh

USER 1001:1001
EXPOSE 8000

# Liveness only (no Redis/Chroma round trip); python because the slim image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '8000') + '/healthz', timeout=4).status == 200 else 1)"]

ENTRYPOINT ["/app/entrypoint.sh"]
