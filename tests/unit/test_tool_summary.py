"""Issue 41: tool turns are kept in the session's summary (as `tool_name: result`), after what the user
said and asked, never instead of it; a tool's newer result replaces its older one."""

from __future__ import annotations

from typing import Any

from memory.chat.llm import PromptMessage
from memory.chat.summary import ExtractiveSummarizer
from memory.chat.tool_turns import tool_results

CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "tea_price", "arguments": '{"kind": "oolong"}'},
}


def turn(result: str, call: dict[str, Any] = CALL) -> list[PromptMessage]:
    return [
        PromptMessage("assistant", "", tool_calls=(call,)),
        PromptMessage("tool", result, tool_call_id=str(call["id"])),
    ]


class TestToolResults:
    def test_a_result_is_named_by_its_call(self) -> None:
        assert tool_results(turn("乌龙茶：12 欧元")) == ["tea_price: 乌龙茶：12 欧元"]

    def test_a_result_without_its_call_is_named_by_the_message(self) -> None:
        orphan = [PromptMessage("tool", "sunny, 21 °C", name="weather", tool_call_id="call_9")]
        assert tool_results(orphan) == ["weather: sunny, 21 °C"]
        assert tool_results([PromptMessage("tool", "ok", tool_call_id="x")]) == ["tool: ok"]

    def test_personal_data_is_redacted_and_long_results_shortened(self) -> None:
        [line] = tool_results(turn("联系人：张三，电话 13812345678，邮箱 zhang@example.com。" + "详情" * 200))
        assert "13812345678" not in line
        assert "zhang@example.com" not in line
        assert "[PHONE]" in line
        assert "[EMAIL]" in line
        assert len(line) <= len("tea_price: ") + 120

    def test_blank_results_and_calls_alone_give_nothing(self) -> None:
        assert tool_results(turn("   ")) == []
        assert tool_results([PromptMessage("assistant", "", tool_calls=(CALL,))]) == []


class TestSummary:
    async def test_tool_results_follow_facts_and_requests_in_both_languages(self) -> None:
        s = ExtractiveSummarizer()
        zh = await s.summarize(
            None, ["我住在杭州。"], "zh", max_chars=120, tool_results=["tea_price: 乌龙茶：12 欧元"]
        )
        assert zh == "用户说过：我住在杭州；工具结果：tea_price: 乌龙茶：12 欧元"
        en = await s.summarize(
            None,
            ["Please book a table for two"],
            "en",
            max_chars=120,
            tool_results=["book: table 7 at 19:00"],
        )
        assert en == "The user asked: book a table for two; Tool result: book: table 7 at 19:00"

    async def test_a_newer_result_of_a_tool_replaces_the_older(self) -> None:
        s = ExtractiveSummarizer()
        first = await s.summarize(
            None, ["我住在杭州。"], "zh", max_chars=120, tool_results=["tea_price: 11 欧元"]
        )
        second = await s.summarize(
            first,
            ["乌龙茶现在多少钱？"],
            "zh",
            max_chars=120,
            tool_results=["weather: 晴", "tea_price: 12 欧元"],
        )
        assert second == "用户说过：我住在杭州；工具结果：tea_price: 12 欧元；工具结果：weather: 晴"

    async def test_facts_outlive_tool_results_when_space_is_short(self) -> None:
        s = ExtractiveSummarizer()
        tight = await s.summarize(
            None,
            ["My car is a red Volvo."],
            "en",
            max_chars=40,
            tool_results=["weather: sunny and warm all week"],
        )
        assert tight == "The user said: My car is a red Volvo"
