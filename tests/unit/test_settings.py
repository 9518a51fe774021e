from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.settings import Settings

GOOD = "k" * 48


class TestJwtSecret:
    @pytest.mark.parametrize(
        "secret", ["", "   ", "changeme", "secret", "CHANGE-ME", "<your secret>", "short"]
    )
    def test_placeholder_or_short_secret_is_refused(self, secret: str) -> None:
        with pytest.raises(ValidationError, match="AUTH_JWT_SECRET"):
            Settings(_env_file=None, auth_jwt_secret=secret)

    def test_missing_secret_is_refused_with_help(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("AUTH_JWT_SECRET", raising=False)
        with pytest.raises(ValidationError, match="secrets.token_urlsafe"):
            Settings(_env_file=None)

    def test_random_secret_is_accepted(self) -> None:
        s = Settings(_env_file=None, auth_jwt_secret=GOOD)
        assert s.auth_jwt_secret.get_secret_value() == GOOD
        assert GOOD not in repr(s)


class TestEnvironmentNames:
    def test_seed_variable_names_are_honoured(self, monkeypatch: pytest.MonkeyPatch) -> None:
        env = {
            "REDIS_URL": "redis://example:6390/2",
            "CHROMA_URL": "http://chroma:8000",
            "AUTH_JWT_SECRET": GOOD,
            "LLM_MODEL": "qwen2.5:7b",
            "LLM_BASE_URL": "http://ollama:11434/v1",
            "EMBEDDING_MODEL": "/models/minilm",
            "MEMORY_SHARDS": "32",
            "RATE_LIMIT_PER_MINUTE": "50",
        }
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        s = Settings(_env_file=None)
        assert s.redis_url == "redis://example:6390/2"
        assert s.chroma_url == "http://chroma:8000"
        assert s.llm_model == "qwen2.5:7b"
        assert s.llm_base_url == "http://ollama:11434/v1"
        assert s.embedding_model == "/models/minilm"
        assert s.memory_shards == 32
        assert s.rate_limit_per_minute == 50

    def test_dotenv_file_is_read(self, tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
        from pathlib import Path

        assert isinstance(tmp_path, Path)
        monkeypatch.delenv("AUTH_JWT_SECRET", raising=False)
        env_file = tmp_path / ".env"
        env_file.write_text(f"AUTH_JWT_SECRET={GOOD}\nMEMORY_SHARDS=7\n")
        s = Settings(_env_file=env_file)
        assert s.memory_shards == 7

    @pytest.mark.parametrize("shards", ["0", "-1", "many"])
    def test_bad_shard_count_is_refused(self, shards: str, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("MEMORY_SHARDS", shards)
        with pytest.raises(ValidationError, match="memory_shards"):
            Settings(_env_file=None, auth_jwt_secret=GOOD)


class TestArchiveSettings:
    def test_defaults(self) -> None:
        s = Settings(_env_file=None, auth_jwt_secret=GOOD)
        assert (s.archive_warm_after_days, s.archive_cold_after_days) == (30.0, 365.0)
        assert s.archive_cold_url == "./data/archive"
        assert s.archive_storage_options == {}

    def test_s3_endpoint_goes_to_fsspec(self) -> None:
        s = Settings(
            _env_file=None,
            auth_jwt_secret=GOOD,
            archive_cold_url="s3://bucket/archive",
            archive_s3_endpoint_url="http://127.0.0.1:9000",
        )
        assert s.archive_storage_options == {"client_kwargs": {"endpoint_url": "http://127.0.0.1:9000"}}

    @pytest.mark.parametrize(
        ("field", "value", "message"),
        [
            ("archive_warm_after_days", 400, "below ARCHIVE_COLD_AFTER_DAYS"),
            ("archive_warm_server", "nowhere", "unknown server"),
        ],
    )
    def test_refused(self, field: str, value: object, message: str) -> None:
        with pytest.raises(ValidationError, match=message):
            Settings(_env_file=None, auth_jwt_secret=GOOD, **{field: value})  # type: ignore[arg-type]
