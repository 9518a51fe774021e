"""Offline checks of docker-compose.cluster.yml and its files (deploy/): as test_deploy.py does for
docker-compose.yml, `docker-compose config` parses and interpolates, nothing is run."""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.settings import Settings
from tests.unit.test_deploy import EXTRA_APP_ENV, ROOT, SECRET, compose_config, compose_env, run, tool

CLUSTER_FILE = "docker-compose.cluster.yml"
REDIS_NODES = [f"redis-{i}" for i in range(1, 7)]
CHROMAS = ["chroma-a", "chroma-b"]
APPS = ["app-1", "app-2"]
WRITERS = ["writer-1", "writer-2"]
INIT = "redis-cluster-init"
SERVICES = {*REDIS_NODES, INIT, *CHROMAS, *APPS, *WRITERS, "nginx"}
CLUSTER_NODES = ",".join(f"{name}:6379" for name in REDIS_NODES)
CHROMA_URLS = "a=http://chroma-a:8000,b=http://chroma-b:8000"
NGINX_CONF = ROOT / "deploy/nginx/mnemo.conf"
INIT_SCRIPT = ROOT / "deploy/redis/cluster-init.sh"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The cluster file with what it mounts and builds, without any `.env`."""
    project_dir = tmp_path / "project"
    project_dir.mkdir()
    for name in (CLUSTER_FILE, "docker-compose.yml", "Dockerfile", "entrypoint.sh"):
        shutil.copy2(ROOT / name, project_dir / name)
    shutil.copytree(ROOT / "deploy", project_dir / "deploy")
    shutil.copytree(ROOT / "monitoring", project_dir / "monitoring")  # docker-compose.yml, for comparisons
    return project_dir


def cluster_compose(
    project_dir: Path, tmp_path: Path, *args: str, secret: str | None = SECRET, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    return run(
        [tool("docker-compose"), "-f", CLUSTER_FILE, *args],
        cwd=project_dir,
        env={**compose_env(tmp_path, secret=secret), **extra_env},
    )


def cluster_config(project_dir: Path, tmp_path: Path, **extra_env: str) -> dict[str, Any]:
    result = cluster_compose(project_dir, tmp_path, "config", "--format", "json", **extra_env)
    assert result.returncode == 0, result.stderr
    config: dict[str, Any] = json.loads(result.stdout)
    return config


def named_volumes(service: dict[str, Any]) -> dict[str, str]:
    """target -> volume name"""
    return {v["target"]: v["source"] for v in service.get("volumes", []) if v.get("type") == "volume"}


def healthy(*names: str) -> dict[str, dict[str, Any]]:
    return {name: {"condition": "service_healthy", "required": True} for name in names}


def nginx_directives(text: str) -> list[str]:
    """The config's statements, comments dropped and whitespace collapsed."""
    without_comments = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    return [" ".join(part.split()) for part in re.split(r"[;{}]", without_comments) if part.strip()]


def nginx_block(text: str, header: str) -> str:
    """The body of the first `header { ... }` block (no nested braces inside it)."""
    found = re.search(re.escape(header) + r"\s*\{([^{}]*)\}", text)
    assert found, f"no `{header} {{ ... }}` block in {NGINX_CONF.name}"
    return found.group(1)


# ------------------------------------------------------------------ `config -q`


def test_cluster_config_is_valid_with_secret_and_without_dotenv(project: Path, tmp_path: Path) -> None:
    result = cluster_compose(project, tmp_path, "config", "-q")
    assert result.returncode == 0, result.stderr


def test_cluster_config_fails_without_jwt_secret(project: Path, tmp_path: Path) -> None:
    result = cluster_compose(project, tmp_path, "config", "-q", secret=None)
    assert result.returncode != 0
    assert "AUTH_JWT_SECRET" in result.stderr + result.stdout


def test_cluster_is_its_own_project_and_standalone(project: Path, tmp_path: Path) -> None:
    config = cluster_config(project, tmp_path)
    assert config["name"] == "mnemo-cluster", "a separate project: no shared containers or volumes"
    assert set(config["services"]) == SERVICES, "standalone: every service is in the cluster file"


# ------------------------------------------------------------------ wiring


def test_redis_cluster_nodes(project: Path, tmp_path: Path) -> None:
    config = cluster_config(project, tmp_path)
    services = config["services"]
    main = compose_config(project, tmp_path)["services"]
    subnet = ipaddress.ip_network(config["networks"]["default"]["ipam"]["config"][0]["subnet"])
    dynamic = ipaddress.ip_network(config["networks"]["default"]["ipam"]["config"][0]["ip_range"])

    volumes, addresses = set(), set()
    for name in REDIS_NODES:
        node = services[name]
        assert node["image"] == main["redis"]["image"]
        command = " ".join(node["command"])
        assert "--cluster-enabled yes" in command
        assert "--appendonly yes" in command
        assert not node.get("ports"), f"{name}: Redis publishes no port"
        assert "redis-cli ping" in " ".join(node["healthcheck"]["test"])
        mounted = named_volumes(node)
        assert set(mounted) == {"/data"}, f"{name}: nodes.conf and the AOF live on the volume"
        volumes.add(mounted["/data"])
        # a fixed address in the subnet, outside the range Docker hands out to the other containers
        address = ipaddress.ip_address(node["networks"]["default"]["ipv4_address"])
        assert address in subnet
        assert address not in dynamic
        addresses.add(address)
    assert len(volumes) == len(addresses) == 6, "one volume and one address per node"
    assert volumes <= set(config["volumes"])


def test_redis_cluster_subnet_can_be_moved(project: Path, tmp_path: Path) -> None:
    config = cluster_config(project, tmp_path, MNEMO_CLUSTER_NET="10.77.5")
    assert config["networks"]["default"]["ipam"]["config"][0]["subnet"] == "10.77.5.0/24"
    assert config["services"]["redis-3"]["networks"]["default"]["ipv4_address"] == "10.77.5.13"


def test_redis_cluster_init_job(project: Path, tmp_path: Path) -> None:
    services = cluster_config(project, tmp_path)["services"]
    init = services[INIT]
    assert init["image"] == services["redis-1"]["image"]
    assert init["depends_on"] == healthy(*REDIS_NODES)
    assert init["restart"] == "no", "a one-shot job"
    assert init["environment"]["REDIS_CLUSTER_NODES"] == CLUSTER_NODES
    mounts = {v["target"]: Path(v["source"]) for v in init["volumes"] if v["type"] == "bind"}
    script_target = init["entrypoint"][-1]
    assert mounts[script_target].resolve() == (project / "deploy/redis/cluster-init.sh").resolve()
    assert init["entrypoint"][0] == "sh", "mounted read-only: run by the shell, no exec bit needed"

    script = INIT_SCRIPT.read_text(encoding="utf-8")
    assert "redis-cli --cluster create" in script
    assert "--cluster-replicas 1 --cluster-yes" in script
    assert 'cluster_state)" = ok' in script, "skips a cluster that is already ok"
    assert "set -eu" in script


def test_chroma_servers(project: Path, tmp_path: Path) -> None:
    services = cluster_config(project, tmp_path)["services"]
    main = compose_config(project, tmp_path)["services"]
    volumes = set()
    for name in CHROMAS:
        chroma = services[name]
        assert chroma["image"] == main["chroma"]["image"]
        assert not chroma.get("ports"), "Chroma has no authentication: it must not publish ports"
        assert "/api/v2/heartbeat" in " ".join(chroma["healthcheck"]["test"])
        mounted = named_volumes(chroma)
        assert set(mounted) == {"/data"}
        volumes.add(mounted["/data"])
    assert len(volumes) == 2, "each Chroma server has its own volume"


def test_app_and_writer_replicas(project: Path, tmp_path: Path) -> None:
    services = cluster_config(project, tmp_path)["services"]
    main = compose_config(project, tmp_path)["services"]
    depends = {
        INIT: {"condition": "service_completed_successfully", "required": True},
        **healthy(*REDIS_NODES, *CHROMAS),
    }
    shared = {
        "REDIS_CLUSTER_NODES": CLUSTER_NODES,
        "REDIS_MIN_REPLICAS_ACK": "1",
        "OUTBOX_PARTITIONS": "32",
        "CHROMA_URLS": CHROMA_URLS,
        "CHROMA_URL": "http://chroma-a:8000",  # the first of CHROMA_URLS, for the one-Chroma code
        "AUTH_JWT_SECRET": SECRET,
    }
    for name in APPS + WRITERS:
        service = services[name]
        assert service["build"] == main["app"]["build"], f"{name}: the project's image, built as in compose"
        assert service["depends_on"] == depends
        assert not service.get("ports"), f"{name}: only nginx publishes a port"
        assert service["healthcheck"]["test"]
        env = service["environment"]
        for key, value in shared.items():
            assert env[key] == value, f"{name}: {key}"
        # entrypoint.sh waits for REDIS_URL; it must be one of the cluster's nodes
        assert env["REDIS_URL"].removeprefix("redis://").split("/")[0] in CLUSTER_NODES.split(",")
    for name in APPS:
        env = services[name]["environment"]
        assert env["OUTBOX_WORKER"] == "false", "long-term writes belong to the writers"
        assert env["PORT"] == "8000", "nginx's upstream targets :8000"
        assert services[name].get("command") in (None, []), "the entrypoint's default role: the API"
        assert "/healthz" in " ".join(services[name]["healthcheck"]["test"])
    for name in WRITERS:
        assert services[name]["command"] == ["writer"]
        assert services[name]["healthcheck"] == main["writer"]["healthcheck"]
        assert services[name]["environment"].get("OUTBOX_WORKER", "true") != "false"


def test_cluster_environment_names_are_known(project: Path, tmp_path: Path) -> None:
    services = cluster_config(project, tmp_path)["services"]
    settings_names = {name.upper() for name in Settings.model_fields}
    for name in APPS + WRITERS:
        unknown = set(services[name]["environment"]) - settings_names - EXTRA_APP_ENV
        assert not unknown, f"{name} environment variables that nothing reads: {sorted(unknown)}"


def test_every_long_running_service_has_a_healthcheck(project: Path, tmp_path: Path) -> None:
    services = cluster_config(project, tmp_path)["services"]
    for name in SERVICES - {INIT}:  # the init job's signal is its exit status
        assert services[name].get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        assert services[name]["restart"] == "unless-stopped", name


def test_nginx_service(project: Path, tmp_path: Path) -> None:
    services = cluster_config(project, tmp_path)["services"]
    nginx = services["nginx"]
    image, _, tag = nginx["image"].partition(":")
    assert image == "nginx"
    assert re.fullmatch(r"1\.(2[89]|[3-9]\d)(\.\d+)?-alpine", tag), "pinned"
    assert [(p["target"], p["published"]) for p in nginx["ports"]] == [(8000, "8000")]
    assert [name for name, s in services.items() if s.get("ports")] == ["nginx"]
    assert nginx["depends_on"] == healthy(*APPS)
    assert "/readyz" in " ".join(nginx["healthcheck"]["test"])
    mounts = {v["target"]: v for v in nginx["volumes"] if v["type"] == "bind"}
    conf = mounts["/etc/nginx/conf.d/default.conf"]
    assert conf["read_only"] is True
    assert Path(conf["source"]).resolve() == (project / "deploy/nginx/mnemo.conf").resolve()

    published = cluster_config(project, tmp_path, PORT="9100")["services"]["nginx"]["ports"]
    assert [(p["target"], p["published"]) for p in published] == [(8000, "9100")]


# ------------------------------------------------------------------ nginx config


def test_nginx_upstream_names_both_api_replicas() -> None:
    text = NGINX_CONF.read_text(encoding="utf-8")
    upstream = nginx_directives(nginx_block(text, "upstream mnemo_api"))
    servers = [d.split()[1] for d in upstream if d.startswith("server ")]
    assert servers == [f"{name}:8000" for name in APPS]
    # resolved once at start (no `resolve`: nginx 1.22 lacks it): the replicas' addresses are fixed
    assert not any(" resolve" in d for d in upstream if d.startswith("server "))


def test_api_replicas_have_fixed_addresses(project: Path, tmp_path: Path) -> None:
    config = cluster_config(project, tmp_path)
    dynamic = ipaddress.ip_network(config["networks"]["default"]["ipam"]["config"][0]["ip_range"])
    addresses = {config["services"][name]["networks"]["default"]["ipv4_address"] for name in APPS}
    assert len(addresses) == len(APPS)
    assert not any(ipaddress.ip_address(a) in dynamic for a in addresses), "outside Docker's dynamic range"


def test_nginx_proxies_streams_unbuffered() -> None:
    text = NGINX_CONF.read_text(encoding="utf-8")
    directives = nginx_directives(text)
    assert "proxy_buffering off" in directives, "SSE chunks must reach the client as they come"
    assert "proxy_buffering on" not in directives
    assert "proxy_http_version 1.1" in directives
    assert "listen 8000" in directives, "the port docker-compose.cluster.yml publishes"
    assert directives.count("proxy_pass http://mnemo_api") >= 1

    def seconds(name: str) -> float:
        value = next(d.split()[1] for d in directives if d.startswith(name + " "))
        return float(value.removesuffix("s"))

    def default(name: str) -> float:
        value = Settings.model_fields[name].default
        assert isinstance(value, int | float)
        return float(value)

    llm_wait = default("llm_timeout_seconds") * default("llm_max_attempts")
    assert seconds("proxy_read_timeout") >= llm_wait, "a turn may wait that long for the LLM"
    assert seconds("proxy_connect_timeout") <= 10
    body_limit = next(d.split()[1] for d in directives if d.startswith("client_max_body_size "))
    assert int(body_limit.removesuffix("m")) * 1024 * 1024 > default("max_body_bytes"), (
        "the app's 413 answers"
    )


def test_nginx_keeps_ids_and_metrics_in() -> None:
    text = NGINX_CONF.read_text(encoding="utf-8")
    log_format = re.search(r"log_format\s+mnemo\s+(.*?);", text, re.DOTALL)
    assert log_format, "an access log format of its own"
    for variable in ("$request ", "$request_uri", "$uri", "$args", "$query_string"):
        assert variable not in log_format.group(1) + " ", f"paths carry user ids: no {variable.strip()}"
    assert "access_log /var/log/nginx/access.log mnemo" in nginx_directives(text)
    metrics = nginx_directives(nginx_block(text, "location = /metrics"))
    assert metrics == ["return 404"], "per-replica metrics are for a scraper inside the network"
