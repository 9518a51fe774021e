.DEFAULT_GOAL := help
SHELL := /bin/bash

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-17s %s\n", $$1, $$2}'

run: ## install, start Redis + Chroma if needed, serve the API on :8000 (2 workers); LLM=local: + a local model (Gemma 3 270M)
	LLM="$(LLM)" scripts/run.sh

stop: ## stop the Redis/Chroma servers that `make run` started
	scripts/stop.sh

install-dev:
	scripts/bootstrap.sh dev
	scripts/ensure_redis_server.sh
	scripts/ensure_chromium.sh
	scripts/ensure_axe.sh
	scripts/ensure_ts_client.sh
	scripts/ensure_frontend_clients.sh

lint: install-dev ## ruff, ruff format --check, mypy --strict
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/mypy

test: lint ## the whole suite: lint + type check + every test against real Redis/Chroma, the cluster pass, then the compose stacks on a real Docker engine
	@echo "==> unit, integration and MCP tests in 3 processes (each its own Redis and Chroma), as make test-fast"
	.venv/bin/pytest -n 3 tests/unit tests/integration tests/mcp
	@echo "==> every other test (browser, clients, contract, faults, ...) in one process"
	.venv/bin/pytest --ignore=tests/unit --ignore=tests/integration --ignore=tests/mcp
	@echo "==> cluster pass: the integration suite again, against a local Redis Cluster (3 masters, 3 replicas), in 3 processes (each its own cluster)"
	MNEMO_TEST_REDIS=cluster .venv/bin/pytest -n 3 tests/integration
	@$(MAKE) --no-print-directory deploy-suite

test-deploy: install-dev deploy-suite ## only the compose suite (tests/deploy) on a real Docker engine: starts dockerd when none answers

# the compose suite, without install-dev (`make test` ran it already)
deploy-suite:
	scripts/ensure_docker.sh
	tests/deploy/standins/build.sh
	@echo "==> compose suite: the image built once, then each stack in turn (its log says '==> stack {\"running\": ...}'):"
	@echo "==>   cluster (docker-compose.cluster.yml) through nginx; one node (docker-compose.yml) through its published port; upgrade (previous image, then this one)"
	time .venv/bin/pytest -p no:cacheprovider -o log_cli=true --log-cli-level=INFO --durations=0 tests/deploy

deploy-clean: ## remove the images test-deploy made (label org.mnemo.deploy-suite: stand-ins, built images) and their dangling layers; not dockerd, not other images
	@# children before parents (a base with images built on it cannot go first): a few passes
	@for pass in 1 2 3 4 5; do \
	  ids=$$(/usr/bin/docker image ls -q --filter label=org.mnemo.deploy-suite | sort -u); \
	  [ -z "$$ids" ] && break; \
	  /usr/bin/docker rmi -f $$ids >/dev/null 2>&1 || true; \
	done; \
	left=$$(/usr/bin/docker image ls -q --filter label=org.mnemo.deploy-suite); \
	if [ -n "$$left" ]; then echo "still there (in use?): $$left" >&2; fi
	-/usr/bin/docker image prune -f --filter label=org.mnemo.deploy-suite

test-llm: install-dev ## the real-model lane: mnemo's model steps through a local Gemma 3 270M (llama-cpp-python, from PyPI; not in `make test`)
	scripts/ensure_llm_server.sh >/dev/null
	.venv/bin/pytest -p no:cacheprovider tests/llm
	.venv/bin/python bench/llm_lane.py

test-llm-compose: install-dev ## compose's profile `llm` for real: the stack with the local model (deploy/llm, llama.cpp compiled in the image) on a real Docker engine, zh/en chat turns answered by it (not in `make test`)
	scripts/ensure_docker.sh
	tests/deploy/standins/build.sh
	time .venv/bin/pytest -p no:cacheprovider -o log_cli=true --log-cli-level=INFO --durations=0 tests/llm_compose

test-unit: install-dev ## only the fast unit tests
	.venv/bin/pytest tests/unit

test-fast: lint ## lint + unit + integration + MCP against real Redis/Chroma in 3 processes (each with its own servers): no Docker, no browser, no cluster pass
	.venv/bin/pytest -n 3 tests/unit tests/integration tests/mcp

format: install-dev ## apply ruff's fixes and formatting
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .

bench: install-dev ## search latency at 10k memories across 100 users
	.venv/bin/python bench/search_latency.py

.PHONY: help run stop install-dev lint test test-deploy test-llm test-llm-compose deploy-suite deploy-clean test-unit test-fast format bench
