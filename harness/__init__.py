"""Real servers and helpers for the tests and the benchmarks, which both import this package (issue 43):
redis-server and a local Redis Cluster (`services`, `cluster`), `chroma run` and moto (`services`), the
model servers (`model_server`: the bundled models over HTTP; `llm_server`: llama-cpp-python with the
Gemma GGUF), a compose stack on Docker (`compose`), waiting for the writer (`outbox`) and the only test
double (`fakes.HashEmbedder`).

Nothing here fakes Redis or Chroma: each helper starts the real binary on a free loopback port and
raises when it is missing (tests fail, never skip). Not part of the installed package: like tests/ and
bench/, it is imported from the repository root (pytest's rootdir, bench scripts' `sys.path` entry).
Never imported by app/, memory/ or monitoring/.
"""
