"""Recorded tool calls: `{"name", "arguments"}` lines (written by `calls_lines`, read by
`parse_calls`, which also takes OpenAI assistant messages)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any


class CallParseError(Exception):
    pass


def parse_calls(text: str) -> list[tuple[str, Any]]:
    """One JSON object per line; blank lines are skipped.

    A line is either `{"name": ..., "arguments": {...} | "<json>"}` or an OpenAI chat message
    with `tool_calls: [{"function": {"name", "arguments"}}]` (non-assistant messages are skipped).
    Arguments given as JSON text are passed on as text: the environment validates them.
    """
    calls: list[tuple[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise CallParseError(f"calls line {number}: not JSON ({error.msg})") from None
        if not isinstance(item, dict):
            raise CallParseError(f"calls line {number}: expected a JSON object")
        if "tool_calls" in item or "role" in item:
            for call in item.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(function, dict) or "name" not in function:
                    raise CallParseError(
                        f"calls line {number}: a tool call without a function name"
                    )
                calls.append((str(function["name"]), function.get("arguments", {})))
            continue
        if "name" not in item:
            raise CallParseError(f'calls line {number}: expected a "name" (or OpenAI tool_calls)')
        calls.append((str(item["name"]), item.get("arguments", {})))
    return calls


def calls_lines(calls: Iterable[tuple[str, Any]]) -> list[str]:
    """The calls as `{"name", "arguments"}` JSON lines, the form `envdsl run --calls` replays
    (explore's counterexamples, verify's surviving mutants)."""
    return [
        json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        for name, arguments in calls
    ]
