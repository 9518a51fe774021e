from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.http.fields import iso_utc, parse_timestamp
from app.http.schemas import IngestRequest, SearchRequest


class TestTimestamps:
    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            (1700000000, 1700000000.0),
            (1700000000.5, 1700000000.5),
            ("1700000000", 1700000000.0),
            ("2023-11-14T22:13:20Z", 1700000000.0),
            ("2023-11-14T22:13:20+00:00", 1700000000.0),
            ("2023-11-15T06:13:20+08:00", 1700000000.0),
            ("2023-11-14T22:13:20", 1700000000.0),  # naive = UTC
            ("2023-11-14", 1699920000.0),
        ],
    )
    def test_accepted_forms(self, raw: object, expected: float) -> None:
        assert parse_timestamp(raw) == expected

    @pytest.mark.parametrize("raw", [True, "yesterday", "2023-13-01", -5, 1e20, float("nan"), [1], None])
    def test_rejected_forms(self, raw: object) -> None:
        with pytest.raises(ValueError, match="timestamp"):
            parse_timestamp(raw)

    def test_output_is_iso_utc(self) -> None:
        assert iso_utc(1700000000.0) == "2023-11-14T22:13:20Z"


class TestIngestRequest:
    def _msg(self, **kw: object) -> dict[str, object]:
        return {"role": "user", "content": "hi", **kw}

    def test_duplicate_ids_rejected(self) -> None:
        with pytest.raises(ValidationError, match="unique"):
            IngestRequest(session_id="s", messages=[self._msg(id="a"), self._msg(id="a")])

    def test_too_long_content(self) -> None:
        with pytest.raises(ValidationError):
            IngestRequest(session_id="s", messages=[self._msg(content="x" * 32_001)])

    @pytest.mark.parametrize("content", ["", "   ", "\u200b", "\u3000\ufeff"])
    def test_blank_content_is_taken_and_marked(self, content: str) -> None:
        req = IngestRequest(
            session_id="s", messages=[self._msg(content="我住在杭州"), self._msg(content=content)]
        )
        assert [m.blank for m in req.messages] == [False, True]

    def test_max_content_accepted(self) -> None:
        req = IngestRequest(session_id="s", messages=[self._msg(content="字" * 32_000)])
        assert len(req.messages[0].content) == 32_000

    @pytest.mark.parametrize("session_id", ["", "a b", "x" * 129, "{a}"])
    def test_bad_session_id(self, session_id: str) -> None:
        with pytest.raises(ValidationError):
            IngestRequest(session_id=session_id, messages=[self._msg()])


class TestSearchRequest:
    @pytest.mark.parametrize("top_k", [0, 101, 1000])
    def test_top_k_bounds(self, top_k: int) -> None:
        with pytest.raises(ValidationError):
            SearchRequest(query="q", top_k=top_k)

    def test_since_after_until(self) -> None:
        with pytest.raises(ValidationError, match="since"):
            SearchRequest(query="q", since=200, until=100)

    def test_filters_carry_over(self) -> None:
        req = SearchRequest(query="q", exclude_session_id="s1", since="2023-11-14T22:13:20Z")
        f = req.filters()
        assert f.exclude_session_id == "s1"
        assert f.since == 1700000000.0
