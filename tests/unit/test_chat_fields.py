"""Every field of OpenAI's chat-completions request is passed to the upstream, read by mnemo, or refused
with a 422 naming it, never silently dropped (issue 41); docs/api.md's table says which, and agrees."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from app.clients.upstream import OpenAICompatibleLLM
from app.http.chat_schemas import FIELDS, MNEMO_EXTRAS, ChatCompletionRequest
from app.routes.chat import _to_input

DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
USER = {"role": "user", "content": "你好 hello"}
# a value for each field OpenAI's request defines that goes upstream as given
PASSED: dict[str, Any] = {
    "temperature": 0.3,
    "top_p": 0.9,
    "max_tokens": 64,
    "stop": ["\n\n", "。"],
    "presence_penalty": 0.5,
    "frequency_penalty": -0.5,
    "logit_bias": {"50256": -100},
    "seed": 7,
    "response_format": {"type": "json_object"},
    "user": "end-user-1",
    "safety_identifier": "hash-1",
    "prompt_cache_key": "k1",
    "service_tier": "auto",
    "store": False,
    "metadata": {"app": "前端"},
    "prediction": {"type": "content", "content": "x"},
    "reasoning_effort": "low",
    "verbosity": "low",
    "web_search_options": {"search_context_size": "low"},
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "tool_choice": "auto",
    "parallel_tool_calls": False,
}
REFUSED: dict[str, Any] = {
    "logprobs": True,
    "top_logprobs": 3,
    "modalities": ["text", "audio"],
    "audio": {"voice": "alloy", "format": "wav"},
    "functions": [{"name": "f"}],
    "function_call": "auto",
}


def documented() -> dict[str, str]:
    section = re.search(
        r"^### Request fields\n(.*?)(?=^#{2,3} |\Z)", DOCS.read_text(), re.MULTILINE | re.DOTALL
    )
    assert section, "docs/api.md has no '### Request fields' section"
    table: dict[str, str] = {}
    for row in [line for line in section.group(1).splitlines() if line.startswith("|")][2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        for name in re.findall(r"`([a-z_]+)`", cells[0]):
            assert name not in table, f"{name} is in the table twice"
            table[name] = cells[1]
    return table


def payload(body: dict[str, Any]) -> dict[str, Any]:
    request = ChatCompletionRequest.model_validate({"messages": [USER], **body})
    chat = _to_input(request, "alice", "s1", None)
    llm = OpenAICompatibleLLM(httpx.AsyncClient(base_url="http://upstream.test/v1/"), model="m")
    return llm._payload([], chat.params, stream=False)


class TestFieldTable:
    def test_the_docs_table_is_the_schema(self) -> None:
        assert documented() == dict(FIELDS)

    def test_every_field_is_declared_and_the_table_covers_the_samples(self) -> None:
        declared = set(ChatCompletionRequest.model_fields)
        assert set(FIELDS) <= declared
        assert declared - set(FIELDS) == MNEMO_EXTRAS  # mnemo's own: session_id, user_id, time_zone, debug
        assert {k for k, v in FIELDS.items() if v == "pass"} == set(PASSED) | {"max_completion_tokens"}
        assert {k for k, v in FIELDS.items() if v == "refuse"} == set(REFUSED)


class TestPassThrough:
    def test_every_pass_field_reaches_the_upstream_as_given(self) -> None:
        sent = payload(PASSED)
        for name, value in PASSED.items():
            assert sent[name] == value, name

    def test_max_completion_tokens_is_sent_as_max_tokens(self) -> None:
        assert payload({"max_completion_tokens": 99})["max_tokens"] == 99

    def test_fields_openai_does_not_define_pass_unchanged(self) -> None:
        sent = payload({"top_k": 40, "chat_template_kwargs": {"enable_thinking": False}})
        assert sent["top_k"] == 40
        assert sent["chat_template_kwargs"] == {"enable_thinking": False}

    def test_mnemo_fields_do_not_go_upstream(self) -> None:
        sent = payload(
            {"session_id": "s1", "user_id": "alice", "debug": True, "time_zone": "Asia/Shanghai", "n": 1}
        )
        assert not {"session_id", "user_id", "debug", "time_zone", "n"} & set(sent)

    def test_a_field_given_as_null_goes_as_null(self) -> None:
        assert payload({"seed": None})["seed"] is None


class TestRefused:
    @pytest.mark.parametrize(("name", "value"), REFUSED.items(), ids=list(REFUSED))
    def test_refused_with_its_name(self, name: str, value: Any) -> None:
        with pytest.raises(ValidationError) as info:
            ChatCompletionRequest.model_validate({"messages": [USER], name: value})
        assert name in str(info.value)

    def test_n_above_one_is_refused(self) -> None:
        with pytest.raises(ValidationError, match="n"):
            ChatCompletionRequest.model_validate({"messages": [USER], "n": 2})

    @pytest.mark.parametrize("body", [{"logprobs": False}, {"modalities": ["text"]}])
    def test_what_asks_for_nothing_refused_is_accepted(self, body: dict[str, Any]) -> None:
        ChatCompletionRequest.model_validate({"messages": [USER], **body})

    @pytest.mark.parametrize(
        "message",
        [
            {"role": "tool", "content": "结果 result"},  # no tool_call_id
            {"role": "user", "content": "hi", "tool_calls": [{"id": "c", "function": {"name": "f"}}]},
            {"role": "assistant", "tool_calls": [{"id": "", "function": {"name": "f"}}]},
        ],
    )
    def test_malformed_tool_messages(self, message: dict[str, Any]) -> None:
        with pytest.raises(ValidationError):
            ChatCompletionRequest.model_validate({"messages": [USER, message]})
