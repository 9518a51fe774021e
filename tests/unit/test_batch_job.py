"""The exit contract of the batch jobs (rebalance, reembed, archive): 0 done, 1 some items failed, 2 it
could not run; the report as JSON on stdout."""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from app.cli.batch_job import run_job
from app.settings import Settings
from memory.errors import StoreUnavailable

log = logging.getLogger("mnemo.test-job")


@dataclass
class Report:
    failures: int
    moved: int = 3

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    monkeypatch.setenv("AUTH_JWT_SECRET", "k" * 48)


@pytest.mark.parametrize(("failures", "code"), [(0, 0), (2, 1)])
def test_the_report_goes_to_stdout_and_failures_exit_1(
    failures: int, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    async def job(settings: Settings) -> Report:
        assert isinstance(settings, Settings)
        return Report(failures=failures)

    assert run_job(job, log=log, name="test job", could_not_run=(StoreUnavailable,)) == code
    assert json.loads(capsys.readouterr().out) == {"failures": failures, "moved": 3}


def test_a_store_down_exits_2_with_the_reason_logged_and_no_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async def job(settings: Settings) -> Report:
        raise StoreUnavailable("chroma", "connection refused / 连接被拒绝")

    assert run_job(job, log=log, name="test job", could_not_run=(StoreUnavailable,)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    logged = [json.loads(line) for line in err.splitlines() if line.startswith("{")]  # JSON logs, stderr
    assert [(e["msg"], e["reason"]) for e in logged if e["logger"] == log.name] == [
        ("test job could not run", "chroma unavailable: connection refused / 连接被拒绝")
    ]


def test_bad_settings_exit_2_before_the_job_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUTH_JWT_SECRET", "changeme")
    ran: list[bool] = []

    async def job(settings: Settings) -> Report:
        ran.append(True)
        return Report(failures=0)

    assert run_job(job, log=log, name="test job", could_not_run=(StoreUnavailable,)) == 2
    assert ran == []
    assert "AUTH_JWT_SECRET" in capsys.readouterr().err


def test_an_exception_it_was_not_told_of_is_not_swallowed() -> None:
    async def job(settings: Settings) -> Report:
        raise RuntimeError("a bug, not an outage")

    with pytest.raises(RuntimeError, match="a bug"):
        run_job(job, log=log, name="test job", could_not_run=(StoreUnavailable,))
