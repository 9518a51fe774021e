"""The input rules on their own: ids, audit stream ids, the JSON body reader, well-formed Unicode,
visible text and JWT date claims. Chinese and English in each."""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
import pytest
from pydantic import ValidationError

from app.http.auth import TokenCodec
from app.http.body import MAX_JSON_DEPTH, first_lone_surrogate, json_depth, parse_json_body
from app.http.chat_schemas import ChatCompletionRequest
from app.http.errors import Unauthorized
from app.http.fields import has_visible_text
from app.http.forget_schemas import ForgetRequest
from app.http.ids import check_exclusive_end, is_valid_id
from app.http.schemas import IngestRequest, SearchRequest

SECRET = "s" * 48


class TestIds:
    @pytest.mark.parametrize("value", ["alice", "a", "x" * 128, "user@example.com", "a.b:c|d+e-f_g", "0"])
    def test_valid(self, value: str) -> None:
        assert is_valid_id(value)

    @pytest.mark.parametrize(
        "value",
        [
            "",
            "x" * 129,
            "alice\n",
            "alice\r\n",
            "\nalice",
            "a b",
            "a{b}",
            "a/b",
            "张三",
            "用户1",
            "ａlice",
            "a\x00",
            5,
            None,
        ],
    )
    def test_invalid(self, value: object) -> None:
        assert not is_valid_id(value)

    def test_token_sub_follows_the_rule(self) -> None:
        codec = TokenCodec(SECRET)
        for sub in ("t6nl\n", "李四", "a b"):
            with pytest.raises(Unauthorized) as info:
                codec.verify(codec.mint(sub))
            assert info.value.code == "invalid_token"
        assert codec.verify(codec.mint("t6nl")).user_id == "t6nl"

    def test_body_ids_follow_the_rule(self) -> None:
        with pytest.raises(ValidationError):
            IngestRequest(session_id="s1\n", messages=[{"role": "user", "content": "我住在杭州"}])
        with pytest.raises(ValidationError):
            IngestRequest(session_id="s1", messages=[{"role": "user", "content": "hi", "id": "m 1"}])
        with pytest.raises(ValidationError):
            ChatCompletionRequest.model_validate(
                {"messages": [{"role": "user", "content": "你好"}], "session_id": "s\n"}
            )


class TestStreamIds:
    @pytest.mark.parametrize(
        "value", ["0-1", "1-0", "1700000000000-0", "18446744073709551615-18446744073709551615"]
    )
    def test_valid(self, value: str) -> None:
        assert check_exclusive_end(value) == value

    @pytest.mark.parametrize(
        ("value", "reason"),
        [
            ("0-0", "nothing before it"),
            ("0-00", "as returned"),
            ("18446744073709551616-0", "out of range"),
            ("99999999999999999999-0", "out of range"),
            ("1-18446744073709551616", "out of range"),
            ("007-1", "as returned"),
            ("1-0\n", "as returned"),
            ("１-０", "as returned"),  # full-width digits
            ("+1-0", "as returned"),
            ("1", "as returned"),
            ("下一页", "as returned"),
        ],
    )
    def test_invalid(self, value: str, reason: str) -> None:
        with pytest.raises(ValueError, match=reason):
            check_exclusive_end(value)


class TestJsonBody:
    def test_utf8_with_or_without_bom(self) -> None:
        body = json.dumps({"q": "我住在哪 where"}, ensure_ascii=False).encode()
        assert parse_json_body(body) == {"q": "我住在哪 where"}
        assert parse_json_body(b"\xef\xbb\xbf" + body) == {"q": "我住在哪 where"}

    @pytest.mark.parametrize(
        ("body", "reason"),
        [
            (json.dumps({"q": "我住在哪"}).encode("utf-16"), "not UTF-8"),
            (json.dumps({"q": "where"}).encode("utf-16-le"), "NUL"),
            (json.dumps({"q": "where"}).encode("utf-32-be"), "NUL"),
            (b'{"q": "caf\xe9"}', "not UTF-8"),  # latin-1
            (b"[" * 100_000 + b"]" * 100_000, "deeper"),
            (b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1), "deeper"),
            (b"{broken", "Expecting"),
        ],
    )
    def test_refused(self, body: bytes, reason: str) -> None:
        with pytest.raises(json.JSONDecodeError, match=reason):
            parse_json_body(body)

    def test_depth(self) -> None:
        assert json_depth("标量 scalar") == 0
        assert json_depth({"a": [1, {"b": []}]}) == 4
        nested = b"[" * MAX_JSON_DEPTH + b"]" * MAX_JSON_DEPTH
        assert json_depth(parse_json_body(nested)) == MAX_JSON_DEPTH


class TestWellFormedUnicode:
    def test_finds_the_path_of_a_lone_surrogate(self) -> None:
        assert first_lone_surrogate({"messages": [{"content": "我住在杭州"}, {"content": "hi \udfff"}]}) == (
            "messages.1.content"
        )
        assert first_lone_surrogate({"meta": {"\ud800": "x"}}) == "meta (a key)"
        assert first_lone_surrogate("\udc00") == "body"
        assert first_lone_surrogate({"a": ["好 \U0001f600 ok", 1, None, True]}) is None

    @pytest.mark.parametrize(
        "model",
        [
            lambda: IngestRequest.model_validate(
                {"session_id": "s", "messages": [{"role": "user", "content": "我\udfff"}]}
            ),
            lambda: SearchRequest.model_validate({"query": "where \ud83d"}),
            lambda: ForgetRequest.model_validate({"topic": "旅行\udfff"}),
            lambda: ChatCompletionRequest.model_validate(
                {"messages": [{"role": "user", "content": "hi"}], "metadata": {"k": "\udfff"}}
            ),
        ],
    )
    def test_every_body_model_refuses_them(self, model: Any) -> None:
        with pytest.raises(ValidationError, match="lone surrogate"):
            model()


class TestVisibleText:
    @pytest.mark.parametrize(
        "text", ["", " ", "\u3000", "\u200b", "\ufeff", "\x00\x07", "\u200d\u2060", "\t\n"]
    )
    def test_blank(self, text: str) -> None:
        assert not has_visible_text(text)

    @pytest.mark.parametrize("text", ["好", "a", " x ", "\u200b好", "\U0001f600", "1"])
    def test_visible(self, text: str) -> None:
        assert has_visible_text(text)

    def test_chat_needs_a_visible_user_message(self) -> None:
        for messages in (
            [{"role": "system", "content": "简短 brief"}],
            [{"role": "user", "content": "\u200b"}],
            [{"role": "user", "content": "你好"}, {"role": "user", "content": "\u3000"}],
        ):
            with pytest.raises(ValidationError, match="user message"):
                ChatCompletionRequest.model_validate({"messages": messages})
        ok = ChatCompletionRequest.model_validate({"messages": [{"role": "user", "content": "你好 hi"}]})
        assert ok.messages[0].text == "你好 hi"


class TestNumericDates:
    @pytest.mark.parametrize("claim", ["exp", "iat", "nbf"])
    def test_string_dates_are_refused(self, claim: str) -> None:
        now = int(time.time())
        claims: dict[str, object] = {"sub": "alice", "exp": now + 600, "iat": now, "nbf": now - 5}
        claims[claim] = str(claims[claim])
        token = jwt.encode(claims, SECRET, algorithm="HS256")
        with pytest.raises(Unauthorized, match=claim) as info:
            TokenCodec(SECRET).verify(token)
        assert info.value.code == "invalid_token"

    def test_numbers_are_accepted(self) -> None:
        now = time.time()
        token = jwt.encode({"sub": "alice", "exp": now + 600.25, "iat": int(now)}, SECRET, algorithm="HS256")
        assert TokenCodec(SECRET).verify(token).user_id == "alice"
