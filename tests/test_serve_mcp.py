"""`envdsl serve`: the MCP server, driven by the official SDK's own client over stdio, over
streamable HTTP on 127.0.0.1 (both against `envdsl serve` processes the tests start and stop)
and in process (issue 11, item 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from servers import free_port, uvicorn_in_thread, wait_until_listening
from test_places import ALIASES
from test_runtime import build

import envdsl
from envdsl.runtime import Environment
from envdsl.adapters.dataset_records import task_records
from envdsl.cli import main
from envdsl.serve.sessions import Sessions
from envdsl.serve.mcp import ANSWER_TOOL, START_TOOL, build_server

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
SLEEP_TASKS = ROOT / "examples" / "sleep_tracking.tasks.env"
TASK = "reactivate_and_log"
QUESTION = "account_status_question"
EPISODE_TOOLS = [START_TOOL, ANSWER_TOOL]


def _solution() -> list[dict[str, Any]]:
    env_class = envdsl.load(SLEEP)
    record = next(r for r in task_records(env_class, SLEEP.read_text("utf-8")) if r["task"] == TASK)
    calls: list[dict[str, Any]] = json.loads(record["solution"])
    return calls


def _env() -> dict[str, str]:
    # the server process must import this tree's envdsl, whatever is installed
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


async def _read(client: Client, uri: str) -> Any:
    result = await client.read_resource(uri)
    return json.loads(result.contents[0].text)  # type: ignore[union-attr]


async def _episode(client: Client) -> None:
    """The contract end to end: tools, a failed call, the solution, the reward."""
    expected = {s["function"]["name"]: s["function"] for s in envdsl.load(SLEEP)().tool_schemas()}
    listed = (await client.list_tools()).tools
    assert [t.name for t in listed] == [*expected, *EPISODE_TOOLS]
    for tool in listed[: len(expected)]:
        assert tool.description == expected[tool.name]["description"]
        assert tool.input_schema == expected[tool.name]["parameters"]
    assert next(t for t in listed if t.name == "get_user").annotations.read_only_hint is True  # type: ignore[union-attr]
    task = await _read(client, "envdsl://task")
    assert task["task"] == TASK and "Reactivate" in task["instruction"]

    before = await _read(client, "envdsl://state")
    failed = await client.call_tool("set_status", {"user_id": "U9", "status": "active"})
    assert failed.is_error is True
    assert json.loads(failed.content[0].text) == {"success": False, "error": "user not found"}  # type: ignore[union-attr]
    bad = await client.call_tool("set_status", {"user_id": "U2", "status": "bogus"})
    assert bad.is_error is True and "invalid argument status" in bad.content[0].text  # type: ignore[union-attr]
    assert (await _read(client, "envdsl://state"))["hash"] == before["hash"]

    # right after reset: the guards hold and give no credit, nothing is done yet
    start = await _read(client, "envdsl://evaluation")
    assert start["reward"] == 0.0 and start["frame"]["held"] is True
    assert start["guards"] == {"passed": 2, "total": 2}
    collateral = await client.call_tool("set_status", {"user_id": "U1", "status": "suspended"})
    assert collateral.is_error is False
    harmed = await _read(client, "envdsl://evaluation")
    assert harmed["frame"]["violation"] == 'users["U1"].status changed' and harmed["reward"] == 0
    undone = await client.call_tool("set_status", {"user_id": "U1", "status": "active"})
    assert undone.is_error is False
    for call in _solution():
        result = await client.call_tool(call["name"], call["arguments"])
        assert result.is_error is False, result
        assert json.loads(result.content[0].text)["success"] is True  # type: ignore[union-attr]
    evaluation = await _read(client, "envdsl://evaluation")
    assert evaluation["reward"] == 1.0 and evaluation["success"] is True


async def _question_after(client: Client) -> None:
    """The same session then runs a question task: listed as a prompt, started, answered."""
    prompts = {p.name: p for p in (await client.list_prompts()).prompts}
    assert QUESTION in prompts and TASK in prompts
    prompt = await client.get_prompt(QUESTION)
    instruction = prompt.messages[0].content.text  # type: ignore[union-attr]
    assert "status and the email" in instruction
    started = await client.call_tool(START_TOOL, {"task": QUESTION})
    assert started.is_error is False
    data = json.loads(started.content[0].text)["data"]  # type: ignore[union-attr]
    assert data["task"] == QUESTION and data["instruction"] == instruction
    assert (await _read(client, "envdsl://evaluation"))["success"] is False
    looked_up = await client.call_tool("get_user", {"user_id": "U1"})
    user = json.loads(looked_up.content[0].text)["data"]  # type: ignore[union-attr]
    text = f"The account is {user['status']}; the email on file is {user['email']}."
    answered = await client.call_tool(ANSWER_TOOL, {"text": text})
    assert answered.is_error is False
    evaluation = await _read(client, "envdsl://evaluation")
    assert evaluation["answer"] == text and evaluation["success"] is True
    # the episode is over: a change is refused until the next start
    late = await client.call_tool("set_status", {"user_id": "U1", "status": "active"})
    assert late.is_error is True and "episode has ended" in late.content[0].text  # type: ignore[union-attr]
    assert (await _read(client, "envdsl://state"))["state"]["users"]["U1"]["status"] == "suspended"


def test_stdio_server_with_the_sdk_client() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "envdsl", "serve", str(SLEEP), str(SLEEP_TASKS), "--task", TASK],
        env=_env(),
    )

    async def session() -> None:
        async with Client(params) as client:
            await _episode(client)
            await _question_after(client)

    anyio.run(session)


def test_http_server_one_environment_per_session() -> None:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "envdsl", "serve", str(SLEEP), str(SLEEP_TASKS), "--task", TASK,
         "--transport", "http", "--port", str(port)],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        wait_until_listening(server, port)

        async def sessions() -> None:
            async with Client(url) as first, Client(url) as second:
                start = (await _read(second, "envdsl://state"))["hash"]
                await _episode(first)
                await _question_after(first)
                # the other session kept its own environment, untouched by the first
                assert (await _read(second, "envdsl://state"))["hash"] == start
                assert (await _read(second, "envdsl://evaluation"))["reward"] < 1.0

        anyio.run(sessions)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _in_process(sessions: Sessions) -> Callable[[Callable[[Client], Awaitable[None]]], None]:
    def run(body: Callable[[Client], Awaitable[None]]) -> None:
        async def go() -> None:
            async with Client(build_server(sessions, http=False)) as client:
                await body(client)

        anyio.run(go)

    return run


def test_internal_tools_are_hidden() -> None:
    aliases = build(ALIASES)
    assert "bump" not in aliases.TOOLS  # the runtime never exposes an internal action

    async def body(client: Client) -> None:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == [s["function"]["name"] for s in aliases().tool_schemas()] + EPISODE_TOOLS
        assert "act" in names and "bump" not in names
        hidden = await client.call_tool("bump", {"l": {"sku": "A", "qty": 1}, "by": 1})
        assert hidden.is_error is True and "unknown tool" in hidden.content[0].text  # type: ignore[union-attr]

    _in_process(Sessions(aliases, task="start"))(body)


def test_a_json_state_starts_each_session() -> None:
    sleep = envdsl.load(SLEEP)
    probe = sleep()
    probe.reset(task=TASK)
    sessions = Sessions(sleep, state=probe.state_json())

    async def body(client: Client) -> None:
        assert (await _read(client, "envdsl://state"))["hash"] == probe.state_hash()
        with pytest.raises(Exception, match="no task"):
            await client.read_resource("envdsl://evaluation")

    _in_process(sessions)(body)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--task", "nope"], "unknown task 'nope'"),
        (["--task", TASK, "--state", "s.json"], "give --task or --state, not both"),
        (["--state", "missing.json"], "cannot read state 'missing.json'"),
        (["--transport", "carrier-pigeon"], "Invalid value for '--transport'"),
        (["--transport", "openenv", "--task", "nope"], "unknown task 'nope'"),
    ],
)
def test_bad_serve_arguments_are_one_line_usage_errors(
    arguments: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["serve", str(SLEEP), *arguments])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_an_invalid_state_file_is_a_usage_error(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"users": [{"user_id": "U1"}]}), "utf-8")
    result = CliRunner().invoke(main, ["serve", str(SLEEP), "--state", str(state)])
    assert result.exit_code == 2 and "invalid initial state" in result.output
    assert len(result.output.strip().splitlines()) == 1


def _with_slow_lookups(env_class: type[Environment], seconds: float) -> type[Environment]:
    """The class with a get_user that takes `seconds` (a tool call as slow as a heavy spec's)."""

    class Slow(env_class):  # type: ignore[valid-type,misc]
        def call(self, name: str, arguments: Any = None) -> Any:
            if name == "get_user":
                time.sleep(seconds)
            return super().call(name, arguments)

    return Slow


def test_a_slow_call_does_not_hold_up_other_requests() -> None:
    sessions = Sessions(_with_slow_lookups(envdsl.load(SLEEP), 2.0), task=TASK)

    async def body(client: Client) -> None:
        waited: list[float] = []

        async def slow() -> None:
            result = await client.call_tool("get_user", {"user_id": "U1"})
            assert result.is_error is False

        async def listing() -> None:
            await anyio.sleep(0.3)  # the slow call is running by now
            started = time.monotonic()
            assert len((await client.list_tools()).tools) > 2
            await client.list_prompts()
            waited.append(time.monotonic() - started)

        started = time.monotonic()
        async with anyio.create_task_group() as group:
            group.start_soon(slow)
            group.start_soon(listing)
        assert time.monotonic() - started >= 2.0
        assert waited[0] < 1.0, f"list_tools waited {waited[0]:.1f} s behind a 2 s call"

    _in_process(sessions)(body)


def test_start_refuses_an_unknown_task_or_a_bad_state_and_changes_nothing() -> None:
    sessions = Sessions(envdsl.load(SLEEP), task=TASK)

    async def body(client: Client) -> None:
        before = (await _read(client, "envdsl://state"))["hash"]
        for arguments, message in [
            ({"task": "nope"}, "unknown task 'nope'"),
            ({"state": {"users": [{"user_id": "U1"}]}}, "invalid state"),
            ({"task": TASK, "state": {}}, "not both"),
            ({"tasks": TASK}, "unexpected argument"),
        ]:
            result = await client.call_tool(START_TOOL, arguments)
            assert result.is_error is True and message in result.content[0].text  # type: ignore[union-attr]
        assert (await _read(client, "envdsl://state"))["hash"] == before
        bad = await client.call_tool(ANSWER_TOOL, {"text": 7})
        assert bad.is_error is True
        # with neither, a start begins the server's own task again
        await client.call_tool("set_status", {"user_id": "U2", "status": "active"})
        again = await client.call_tool(START_TOOL, {})
        assert json.loads(again.content[0].text)["data"]["task"] == TASK  # type: ignore[union-attr]
        assert (await _read(client, "envdsl://state"))["hash"] == before
        with pytest.raises(Exception, match="unknown task 'nope'"):
            await client.get_prompt("nope")

    _in_process(sessions)(body)


def test_sessions_are_bounded_by_memory_least_recently_used_first() -> None:
    sleep = envdsl.load(SLEEP)
    one = Sessions(sleep, task=TASK).default_size
    sessions = Sessions(sleep, task=TASK, max_bytes=3 * one)
    for key in "abcd":
        sessions.get(key)
    assert len(sessions) == 3 and "a" not in sessions and sessions.bytes == 3 * one
    sessions.get("b")  # used again: "c" is now the least recently used
    sessions.get("e")
    assert "c" not in sessions and "b" in sessions
    sessions.close("b")
    assert "b" not in sessions and sessions.bytes == 2 * one


def test_a_deleted_http_session_frees_its_environment_at_once() -> None:
    from envdsl.serve.mcp import SessionCloser

    sessions = Sessions(envdsl.load(SLEEP), task=TASK)
    app = build_server(sessions, http=True).streamable_http_app(json_response=True)
    app.add_middleware(SessionCloser, sessions=sessions)
    with uvicorn_in_thread(app) as port:

        async def go() -> None:
            for _ in range(3):
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    await client.call_tool("set_status", {"user_id": "U2", "status": "active"})
                    assert len(sessions) == 1
                assert len(sessions) == 0  # the client's DELETE freed it

        anyio.run(go)


def test_a_delete_frees_the_environment_before_its_answer_goes_out() -> None:
    """The client may look the moment it has the DELETE's answer: the session must be gone by
    then, not freed after the answer was sent (which a loaded machine showed, 1 run in 9)."""
    from envdsl.serve.mcp import SessionCloser

    sessions = Sessions(envdsl.load(SLEEP), task=TASK)
    sessions.get("abc")
    sessions.get("other")
    held_when_answered: list[bool] = []

    async def sdk_app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def client_side(message: Any) -> None:
        if message["type"] == "http.response.start":
            held_when_answered.append("abc" in sessions)

    closer = SessionCloser(sdk_app, sessions)

    async def request(method: str, path: str = "/mcp") -> None:
        scope = {"type": "http", "method": method, "path": path,
                 "headers": [(b"Mcp-Session-Id", b"abc")]}  # fmt: skip
        await closer(scope, None, client_side)

    async def go() -> None:
        await request("POST")  # not a DELETE: the session stays
        await request("DELETE", "/elsewhere")  # not the MCP endpoint's
        await request("DELETE")

    anyio.run(go)
    assert held_when_answered == [True, True, False]
    assert "abc" not in sessions and "other" in sessions
