#!/usr/bin/env bash
# Create .venv and install mnemo into it: CPU torch first (alone), then the project.
# Usage: scripts/bootstrap.sh [dev]   -- "dev" adds the test/lint tools.
# "dev" also installs the Python client (clients/python, editable) that the client tests import.
# Re-installs only when a pyproject.toml changes (a stamp file in .venv records what was installed).
set -euo pipefail
cd "$(dirname "$0")/.."

extra="${1:-}"
python="${PYTHON:-python3}"

if [ ! -x .venv/bin/python ]; then
    echo "==> creating .venv with $($python --version)"
    "$python" -m venv .venv
fi

stamp=".venv/.installed-$(cat pyproject.toml clients/python/pyproject.toml | sha256sum | cut -c1-16)${extra:+-$extra}"
if [ ! -f "$stamp" ]; then
    echo "==> installing dependencies into .venv (first run takes a few minutes)"
    .venv/bin/python -m pip install -q --upgrade pip
    # CPU build first: a bare `torch` requirement would otherwise pull a multi-GB CUDA build.
    .venv/bin/python -m pip install -q torch==2.13.0
    .venv/bin/python -m pip install -q -e ".${extra:+[$extra]}"
    if [ "$extra" = "dev" ]; then
        .venv/bin/python -m pip install -q -e clients/python
    fi
    rm -f .venv/.installed-*
    touch "$stamp"
fi
