from __future__ import annotations

import pytest

from app.cli import token
from app.http.auth import TokenCodec

SECRET = "c" * 48


def test_cli_mints_a_verifiable_admin_token(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    monkeypatch.chdir(str(tmp_path))
    monkeypatch.setenv("AUTH_JWT_SECRET", SECRET)
    assert token.main(["--sub", "alice", "--role", "admin", "--ttl", "60"]) == 0
    principal = TokenCodec(SECRET).verify(capsys.readouterr().out.strip())
    assert principal.user_id == "alice"
    assert principal.is_admin


def test_cli_refuses_without_secret(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    monkeypatch.chdir(str(tmp_path))
    monkeypatch.delenv("AUTH_JWT_SECRET", raising=False)
    assert token.main(["--sub", "alice"]) == 2
    assert "AUTH_JWT_SECRET" in capsys.readouterr().err
