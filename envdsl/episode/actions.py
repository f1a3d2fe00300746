"""One agent action: a tool call, or the final answer that ends the episode.

What every face accepts from a policy (Gymnasium's action, OpenEnv's step body, a TRL or
rollout turn): the forms agents and their libraries already write, so none needs a wrapper.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


class BadAction(ValueError):
    """An action that is neither a tool call nor an answer (answered as a failed call)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: Any  # an object or JSON text: Environment.call parses and validates either


@dataclass(frozen=True, slots=True)
class FinalAnswer:
    """The agent's last message to the user: what the task's checks read as `answer`."""

    text: str


Action = ToolCall | FinalAnswer


def parse_action(action: Any) -> Action:
    """The tool call or final answer an action holds.

    A tool call: `{"name", "arguments"}`, an OpenAI tool-call object
    `{"type": "function", "function": {"name", "arguments"}}`, or an assistant message with
    exactly one entry in `tool_calls`.  A final answer: `{"answer": "text"}`, or an assistant
    message without tool calls (`{"role": "assistant", "content": "text"}`), as a chat model
    ends its turn.  Any of these may come as JSON text.  An `answer` key can never be a tool:
    the key of a tool call is `name`, so no spec's tool names collide with it.
    """
    if isinstance(action, (str, bytes)):
        try:
            action = json.loads(action)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise BadAction(f"the action is not valid JSON: {error}") from None
    if not isinstance(action, dict):
        raise BadAction(
            'an action is a tool call {"name": ..., "arguments": {...}} or an answer '
            '{"answer": "..."}'
        )
    if "answer" in action:
        if "name" in action:
            raise BadAction("give a tool call or an answer, not both")
        return FinalAnswer(_text(action["answer"]))
    calls = action.get("tool_calls")
    if action.get("role") == "assistant" and not calls:
        return FinalAnswer(_text(action.get("content") or ""))
    if "tool_calls" in action:
        if not isinstance(calls, list) or len(calls) != 1:
            raise BadAction("an action is one tool call: give exactly one entry in tool_calls")
        action = calls[0]
        if not isinstance(action, dict):
            raise BadAction("a tool call is a JSON object")
    if isinstance(action.get("function"), dict):
        action = action["function"]
    name = action.get("name")
    if not isinstance(name, str):
        raise BadAction('a tool call needs a "name" (the tool to call)')
    return ToolCall(name, action.get("arguments", {}))


def _text(answer: Any) -> str:
    if not isinstance(answer, str):
        raise BadAction(f"an answer is text, not {type(answer).__name__}")
    return answer
