"""The locustfile loads, defines its users and mints tokens the service accepts.

Importing locust monkeypatches the standard library with gevent, which would break asyncio and ssl for the
rest of the pytest process, so the locustfile is only ever imported in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jwt

from app.http.auth import TokenCodec

ROOT = Path(__file__).resolve().parents[2]
LOCUSTFILE = ROOT / "locustfile.py"
SECRET = "locust-test-secret-" + "z" * 40

_PROBE = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("mnemo_locustfile", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
users = {}
for name in ("ChatUser", "SearchUser", "AdminUser"):
    cls = getattr(module, name)
    users[name] = {
        "http_user": issubclass(cls, module.HttpUser),
        "abstract": cls.abstract,
        "weight": cls.weight,
        "tasks": sorted({t.__name__ for t in cls.tasks}),
        "wait": [cls.wait_time(None) for _ in range(50)],
        "host": cls.host,
    }
user_id = module.new_user_id()
admin_id = module.new_admin_id()
json.dump({
    "users": users,
    "user_id": user_id,
    "user_token": module.mint_token(user_id),
    "admin_id": admin_id,
    "admin_token": module.mint_token(admin_id, role=module.ADMIN_ROLE),
    "names": [module.CHAT, module.SEARCH, module.LIST, module.DELETE, module.SESSION],
}, sys.stdout)
"""


def _env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"AUTH_JWT_SECRET", "AUTH_JWT_AUDIENCE", "AUTH_JWT_ISSUER"}
    }
    env.update(extra)
    return env


def _probe(cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(LOCUSTFILE)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_user_classes_have_tasks_and_pace_under_the_rate_limit(tmp_path: Path) -> None:
    result = _probe(tmp_path, _env(AUTH_JWT_SECRET=SECRET))
    users = result["users"]
    assert set(users) == {"ChatUser", "SearchUser", "AdminUser"}
    for name, user in users.items():
        assert user["http_user"], name
        assert not user["abstract"], name
        assert user["tasks"], name
        assert min(user["wait"]) >= 1, name  # ≤ 2 requests a task: well under 100 requests a minute
        assert user["host"] == "http://127.0.0.1:8000"
    assert {"ask_recall", "ask_recall_streaming", "tell_fact"} <= set(users["ChatUser"]["tasks"])
    assert "search" in users["SearchUser"]["tasks"]
    assert {"list_and_delete", "read_session"} <= set(users["AdminUser"]["tasks"])
    assert users["AdminUser"]["weight"] < users["SearchUser"]["weight"] < users["ChatUser"]["weight"]
    assert "/v1/memory/[user]/search" in result["names"]


def test_tokens_verify_with_the_secret(tmp_path: Path) -> None:
    result = _probe(tmp_path, _env(AUTH_JWT_SECRET=SECRET))
    assert result["user_id"] == "load-1"
    codec = TokenCodec(SECRET)
    user = codec.verify(result["user_token"])
    assert user.user_id == "load-1"
    assert not user.is_admin
    assert jwt.decode(result["user_token"], SECRET, algorithms=["HS256"])["sub"] == "load-1"
    admin = codec.verify(result["admin_token"])
    assert admin.user_id == result["admin_id"]
    assert admin.is_admin
    assert codec.verify(result["admin_token"]).user_id != user.user_id


def test_secret_and_audience_fall_back_to_dotenv_in_cwd(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        f"# written by make run\nAUTH_JWT_SECRET={SECRET}\nAUTH_JWT_AUDIENCE='mnemo-api'\n", encoding="utf-8"
    )
    result = _probe(tmp_path, _env())
    principal = TokenCodec(SECRET, audience="mnemo-api").verify(result["user_token"])
    assert principal.user_id == "load-1"


def test_locust_lists_the_user_classes(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "locust", "-f", str(LOCUSTFILE), "--list"],
        cwd=tmp_path,
        env=_env(AUTH_JWT_SECRET=SECRET),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    listed = done.stdout.split()
    assert {"ChatUser", "SearchUser", "AdminUser"} <= set(listed)
    assert "MnemoUser" not in listed
