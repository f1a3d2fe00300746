"""One agent action as a tool call: what the in-process adapters accept from a policy."""

from __future__ import annotations

import json
from typing import Any


class BadAction(ValueError):
    """An action that is not a tool call (the adapters answer it as a failed call)."""


def parse_action(action: Any) -> tuple[str, Any]:
    """(tool name, arguments) of one tool call.

    Accepted: `{"name", "arguments"}`, an OpenAI tool-call object
    `{"type": "function", "function": {"name", "arguments"}}`, an assistant message with exactly
    one entry in `tool_calls`, or any of these as JSON text.  Arguments may be an object or
    JSON text: `Environment.call` parses and validates them either way.
    """
    if isinstance(action, (str, bytes)):
        try:
            action = json.loads(action)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise BadAction(f"the action is not valid JSON: {error}") from None
    if not isinstance(action, dict):
        raise BadAction('an action is a tool call: {"name": ..., "arguments": {...}}')
    if "tool_calls" in action:
        calls = action["tool_calls"]
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
    return name, action.get("arguments", {})
