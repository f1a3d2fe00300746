"""`envdsl serve`: the MCP server, driven by the official SDK's own client over stdio, over
streamable HTTP on 127.0.0.1 (both against `envdsl serve` processes the tests start and stop)
and in process (issue 11, item 1)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from test_places import ALIASES
from test_runtime import build

import envdsl
from envdsl.adapters.dataset_records import task_records
from envdsl.cli import main
from envdsl.serve.episodes import Episodes
from envdsl.serve.mcp import build_server

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
TASK = "reactivate_and_log"


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
    assert [t.name for t in listed] == list(expected)
    for tool in listed:
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


def test_stdio_server_with_the_sdk_client() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "envdsl", "serve", str(SLEEP), "--task", TASK],
        env=_env(),
    )

    async def session() -> None:
        async with Client(params) as client:
            await _episode(client)

    anyio.run(session)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_http_server_one_environment_per_session() -> None:
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "envdsl", "serve", str(SLEEP), "--task", TASK,
         "--transport", "http", "--port", str(port)],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, server.stderr.read().decode() if server.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the server did not start in 60 s"
                time.sleep(0.1)

        async def sessions() -> None:
            async with Client(url) as first, Client(url) as second:
                start = (await _read(second, "envdsl://state"))["hash"]
                await _episode(first)
                # the other session kept its own environment, untouched by the first
                assert (await _read(second, "envdsl://state"))["hash"] == start
                assert (await _read(second, "envdsl://evaluation"))["reward"] < 1.0

        anyio.run(sessions)
    finally:
        server.terminate()
        server.wait(timeout=30)


def _in_process(episodes: Episodes) -> Callable[[Callable[[Client], Awaitable[None]]], None]:
    def run(body: Callable[[Client], Awaitable[None]]) -> None:
        async def go() -> None:
            async with Client(build_server(episodes, http=False)) as client:
                await body(client)

        anyio.run(go)

    return run


def test_internal_tools_are_hidden() -> None:
    aliases = build(ALIASES)
    assert "bump" not in aliases.TOOLS  # the runtime never exposes an internal action

    async def body(client: Client) -> None:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names == [s["function"]["name"] for s in aliases().tool_schemas()]
        assert "act" in names and "bump" not in names
        hidden = await client.call_tool("bump", {"l": {"sku": "A", "qty": 1}, "by": 1})
        assert hidden.is_error is True and "unknown tool" in hidden.content[0].text  # type: ignore[union-attr]

    _in_process(Episodes(aliases, task="start"))(body)


def test_a_json_state_starts_each_session() -> None:
    sleep = envdsl.load(SLEEP)
    probe = sleep()
    probe.reset(task=TASK)
    episodes = Episodes(sleep, state=probe.state_json())

    async def body(client: Client) -> None:
        assert (await _read(client, "envdsl://state"))["hash"] == probe.state_hash()
        with pytest.raises(Exception, match="no task"):
            await client.read_resource("envdsl://evaluation")

    _in_process(episodes)(body)


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
