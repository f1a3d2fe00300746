"""Trajectory files for the report's tests, written by the real `envdsl rollout` against the
scripted chat server (tests/chat_server.py), for three agents on tests/rollout_specs/counter.env:
one that solves every task, one that solves only the samples sent an even seed, and one that
answers at once without calling a tool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chat_server import ChatServer, tool_calls
from click.testing import CliRunner

from envdsl.cli import main


def solver(body: dict[str, Any]) -> Any:
    messages = body["messages"]
    instruction = messages[1]["content"]
    if messages[-1]["role"] == "tool":
        result = json.loads(messages[-1]["content"])
        return f"B is at {result['data']['count']}." if "item B" in instruction else "Done."
    if "item B" in instruction:
        return tool_calls(("get_item", {"item_id": "B"}))
    return tool_calls(("bump", {"item_id": "A"}))


def wrong(body: dict[str, Any]) -> Any:
    """Calls with an id that does not exist, then gives up."""
    if body["messages"][-1]["role"] == "tool":
        return "I could not do it."
    return tool_calls(("bump", {"item_id": "Z"}))


def flaky(body: dict[str, Any]) -> Any:
    return solver(body) if body.get("seed", 1) % 2 == 0 else wrong(body)


def idle(body: dict[str, Any]) -> Any:
    return "I will not do anything."


AGENTS = {"model-solver": solver, "model-flaky": flaky, "model-idle": idle}


def write_rollouts(server: ChatServer, spec: Path, out: Path, *, samples: int) -> None:
    for model, agent in AGENTS.items():
        server.responder = agent
        arguments = ["rollout", str(spec), "--all", "-n", str(samples), "--seed", "0"]
        arguments += ["--model", model, "--base-url", server.url, "--out", str(out)]
        arguments += ["--backoff", "0", "--retries", "1", "--timeout", "5"]
        result = CliRunner().invoke(main, arguments)
        assert result.exit_code == 0, result.output
