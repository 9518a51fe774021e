"""Tool turns in the session: what follows the newest user message in a chat request (the assistant's
tool calls and the tool results the client sends back), in the prompt and in the buffer.

A client runs a tool loop by resending the conversation: `[user, assistant(tool_calls), tool, ...]`.
The session already holds what mnemo answered before (the user message and the calls), so the prompt
is the buffer up to that user message, then the request's own tool turn; the buffer gets only what it
does not hold yet. Tool calls and results stay in the session (the buffer, and the summary as
`tool_name: result`) and never become long-term memories by themselves (`remember=False`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memory.chat.context import AssembledPrompt, compress
from memory.chat.llm import PromptMessage, coherent_tool_history, estimate_tokens
from memory.session.store import BufferedMessage
from memory.text.privacy import redact


def _keys(m: PromptMessage | BufferedMessage) -> set[str]:
    """What a tool-turn message is, for knowing whether the buffer holds it already."""
    if m.role == "tool":
        return {f"result:{m.tool_call_id}"}
    return {f"call:{c.get('id')}" for c in m.tool_calls}


def prompt_buffer(
    buffer: Sequence[BufferedMessage], message: str, tool_turn: Sequence[PromptMessage]
) -> tuple[list[PromptMessage], frozenset[str] | None]:
    """The buffer as prompt messages and, for a tool turn whose user message the buffer holds already
    (followed by nothing but tool calls and results), the buffer cut before it and what of the tool turn
    it holds (None: the user message is new)."""
    messages = [PromptMessage(m.role, m.content, m.name, m.tool_calls, m.tool_call_id) for m in buffer]
    if not tool_turn:
        return messages, None
    said = redact(message)
    for i in range(len(buffer) - 1, -1, -1):
        m = buffer[i]
        if m.role == "user":
            if m.content != said:
                return messages, None
            held = frozenset(k for later in buffer[i + 1 :] for k in _keys(later))
            return messages[:i], held
        if not (m.tool_calls or m.role == "tool"):
            return messages, None
    return messages, None


def with_tool_turn(prompt: AssembledPrompt, tool_turn: Sequence[PromptMessage]) -> AssembledPrompt:
    """The assembled prompt followed by the request's tool turn, with every call answered and every
    result's call present (memory/chat/llm.py coherent_tool_history)."""
    messages = coherent_tool_history([*prompt.messages, *tool_turn])
    if messages == prompt.messages:
        return prompt
    added = sum(estimate_tokens(m.content) + sum(len(str(c)) // 4 for c in m.tool_calls) for m in tool_turn)
    return replace(prompt, messages=messages, estimated_tokens=prompt.estimated_tokens + added)


def buffered_tool_turn(
    user: BufferedMessage,
    tool_turn: Sequence[PromptMessage],
    reply: BufferedMessage,
    *,
    held: frozenset[str] | None,
) -> list[BufferedMessage]:
    """What the turn adds to the buffer: the user message unless the buffer holds it, the tool turn's
    messages it does not hold yet (kept for the session only), the reply."""
    out = [] if held is not None else [user]
    step = (reply.timestamp - user.timestamp) / (len(tool_turn) + 1)
    for i, m in enumerate(tool_turn):
        if _keys(m) and _keys(m) <= (held or frozenset()):
            continue
        out.append(
            BufferedMessage(
                f"{user.id.rsplit(':', 1)[0]}:t{i}",
                m.role,
                redact(m.content),
                user.timestamp + step * (i + 1),
                m.name,
                remember=False,
                tool_calls=m.tool_calls,
                tool_call_id=m.tool_call_id,
            )
        )
    return [*out, reply]


TOOL_RESULT_CHARS = 120  # a tool result as the session summary keeps it


def tool_results(tool_turn: Sequence[PromptMessage]) -> list[str]:
    """The tool turn's results as the summary keeps them, in order: `tool_name: result` (redacted,
    shortened); a result whose call is not in the turn is named by the message's `name`, else "tool"."""
    names = {c.get("id"): c.get("function", {}).get("name") for m in tool_turn for c in m.tool_calls}
    out = []
    for m in tool_turn:
        if m.role != "tool" or not m.content.strip():
            continue
        name = names.get(m.tool_call_id) or m.name or "tool"
        out.append(f"{name}: {compress(redact(m.content), TOOL_RESULT_CHARS)}")
    return out
