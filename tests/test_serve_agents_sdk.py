"""`envdsl serve` under the OpenAI Agents SDK (issue 25): an agent whose model is the SDK's own
`ScriptedModel` runs a question task against `envdsl serve` processes over stdio
(`MCPServerStdio`) and over streamable HTTP (`MCPServerStreamableHttp`), through
`Runner.run`. The scripted model looks the user up, builds its answer from what the tool
returned, and gives it with the episode tool `envdsl-answer`; the evaluation resource then
gives the task's reward. Over HTTP a second agent, in a session of its own, answers wrong and
gets no reward, while the first one's episode is untouched by it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from servers import free_port, wait_until_listening

from envdsl.serve.mcp import ANSWER_TOOL

if TYPE_CHECKING:
    from agents import Agent
    from agents.mcp import MCPServer, MCPServerStreamableHttp
    from agents.testing import ModelCall, ScriptedModel

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
SLEEP_TASKS = ROOT / "examples" / "sleep_tracking.tasks.env"
QUESTION = "account_status_question"
SERVE = ["-m", "envdsl", "serve", str(SLEEP), str(SLEEP_TASKS), "--task", QUESTION]
TIMEOUT_S = 120.0  # a request under a loaded CI machine; a session takes about a second idle


@pytest.fixture(autouse=True)
def _agents_sdk() -> None:
    """The SDK is imported by the tests, not when the module is collected: it loads openai's
    types (1.2 s), which every worker of the suite would pay, also one that runs no test here."""
    pytest.importorskip("agents", reason="the OpenAI Agents SDK is part of .[dev]")


def _env() -> dict[str, str]:
    # the server process must import this tree's envdsl, whatever is installed
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _tool_output(call: ModelCall, call_id: str) -> Any:
    """The data of the tool result that the agent fed back to the model for `call_id`."""
    for item in call.input:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            if item.get("call_id") == call_id:
                # an MCP result's text content, passed on as the model's input text
                output = item["output"]
                parts = [output] if isinstance(output, str) else [p["text"] for p in output]
                envelope = json.loads("".join(parts))
                assert envelope["success"] is True, envelope
                return envelope["data"]
    raise AssertionError(f"no output for {call_id} in the model's input: {call.input!r}")


def scripted_agent(server: MCPServer, *, truthful: bool) -> tuple[Agent[Any], ScriptedModel]:
    """An agent that looks U1 up, answers from what it read (or claims the account is active
    when not `truthful`) with `envdsl-answer`, then ends its turn."""
    from agents import Agent
    from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call

    said: list[str] = []

    def look_up(call: ModelCall) -> Any:
        offered = {tool.name for tool in call.tools}
        assert {"get_user", "set_status", ANSWER_TOOL} <= offered, offered
        return [function_call("get_user", {"user_id": "U1"}, call_id="lookup")]

    def answer(call: ModelCall) -> Any:
        user = _tool_output(call, "lookup")
        status = user["status"] if truthful else "active"
        text = f"The account is {status}; the email on file is {user['email']}."
        said.append(text)
        return [function_call(ANSWER_TOOL, {"text": text}, call_id="answer")]

    def finish(call: ModelCall) -> Any:
        given = _tool_output(call, "answer")
        assert given == {"answer": said[0]}, given  # the server took the answer as given
        return [assistant_message("I have told the user.")]

    model = ScriptedModel(
        [ModelStep.respond(look_up), ModelStep.respond(answer), ModelStep.respond(finish)]
    )
    agent: Agent[Any] = Agent(
        name="support", instructions="Answer the user's question.", model=model,
        mcp_servers=[server],
    )  # fmt: skip
    return agent, model


async def _read(server: MCPServer, uri: str) -> Any:
    result = await server.read_resource(uri)
    return json.loads(result.contents[0].text)  # type: ignore[union-attr]


async def run_question(server: MCPServer, *, truthful: bool) -> dict[str, Any]:
    """One agent run on the server's question task; the evaluation resource after it."""
    from agents import RunConfig, Runner

    prompt = await server.get_prompt(QUESTION)
    instruction = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "status and the email" in instruction
    agent, model = scripted_agent(server, truthful=truthful)
    # no trace leaves the machine, whatever key the environment holds
    offline = RunConfig(tracing_disabled=True)
    result = await Runner.run(agent, instruction, max_turns=5, run_config=offline)
    model.assert_complete()
    assert result.final_output == "I have told the user."
    evaluation: dict[str, Any] = await _read(server, "envdsl://evaluation")
    return evaluation


def test_an_agents_sdk_agent_answers_over_stdio() -> None:
    from agents.mcp import MCPServerStdio

    server = MCPServerStdio(
        params={"command": sys.executable, "args": SERVE, "env": _env()},
        client_session_timeout_seconds=TIMEOUT_S,
        name="envdsl-stdio",
    )

    async def go() -> None:
        async with server:
            evaluation = await run_question(server, truthful=True)
            assert evaluation["success"] is True and evaluation["reward"] == 1.0
            assert evaluation["answer"] == (
                "The account is suspended; the email on file is ana.k@x.org."
            )
            # the answer ended the episode: the state is the task's, unchanged
            state = await _read(server, "envdsl://state")
            assert state["state"]["users"]["U1"]["status"] == "suspended"

    anyio.run(go)


def test_agents_sdk_agents_over_streamable_http_get_their_own_rewards() -> None:
    from agents.mcp import MCPServerStreamableHttp

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, *SERVE, "--transport", "http", "--port", str(port)],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip

    def connect(name: str) -> MCPServerStreamableHttp:
        return MCPServerStreamableHttp(
            params={"url": f"http://127.0.0.1:{port}/mcp", "timeout": TIMEOUT_S},
            client_session_timeout_seconds=TIMEOUT_S,
            name=name,
        )

    async def go() -> None:
        async with connect("truthful") as truthful, connect("wrong") as wrong:
            right = await run_question(truthful, truthful=True)
            assert right["success"] is True and right["reward"] == 1.0
            bad = await run_question(wrong, truthful=False)
            assert bad["answer"] == "The account is active; the email on file is ana.k@x.org."
            assert bad["success"] is False and bad["reward"] < 1.0
            failed = {c["check"] for c in bad["checks"] if not c["passed"]}
            assert failed == {"names the status"}, bad["checks"]
            # each session kept its own episode: the wrong answer did not reach the first
            assert (await _read(truthful, "envdsl://evaluation")) == right

    try:
        wait_until_listening(process, port)
        anyio.run(go)
    finally:
        process.terminate()
        process.wait(timeout=30)
