"""`envdsl serve --transport openenv`: the OpenEnv contract on openenv-core's server, driven by
openenv-core's own client over WebSocket and its HTTP endpoints on 127.0.0.1, and by the MCP
SDK's client at `/mcp` on the same server (issue 11, item 2). The server runs in a thread of
the test process: importing openenv-core loads gradio, and doing that once instead of twice
keeps the test short."""

from __future__ import annotations

import functools
import json
import socket
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import anyio
import pytest

# the [openenv] extra is part of .[dev]: a missing library must fail here, not skip
import uvicorn
from mcp import Client
from openenv.core.generic_client import GenericEnvClient

import envdsl
from envdsl.adapters.dataset_records import task_records
from envdsl.runtime import Environment
from envdsl.serve.episodes import Episodes
from envdsl.serve.openenv import build_app

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
TASK = "reactivate_and_log"


@functools.cache
def sleep() -> type[Environment]:
    return envdsl.load(SLEEP)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(
        build_app(Episodes(sleep(), task=TASK)), host="127.0.0.1", port=port, log_level="critical"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def test_health_schema_and_metadata(base_url: str) -> None:
    assert _get(f"{base_url}/health")["status"] == "healthy"
    schema = _get(f"{base_url}/schema")
    assert {"name", "arguments"} <= set(schema["action"]["properties"])
    assert {"result", "instruction", "state_hash"} <= set(schema["observation"]["properties"])
    assert _get(f"{base_url}/metadata")["name"] == sleep().NAME


def test_an_episode_through_openenvs_client(base_url: str) -> None:
    records = task_records(sleep(), SLEEP.read_text("utf-8"))
    solution = json.loads(next(r for r in records if r["task"] == TASK)["solution"])
    with GenericEnvClient(base_url=base_url).sync() as client:
        first = client.reset()
        assert first.observation["instruction"] == sleep().TASKS[TASK].instruction
        assert [t["function"]["name"] for t in first.observation["tools"]] == list(sleep().TOOLS)
        assert (
            first.done is False and first.reward == 0.0
        )  # the two checks that hold at the start are guards
        start = first.observation["state_hash"]
        failed = client.step({"name": "set_status", "arguments": {"user_id": "U9"}})
        assert failed.observation["result"]["success"] is False
        assert failed.observation["state_hash"] == start and failed.reward == 0.0
        for index, call in enumerate(solution):
            result = client.step({"name": call["name"], "arguments": call["arguments"]})
            assert result.observation["result"]["success"] is True
            assert result.done is (index == len(solution) - 1)
        assert result.reward == 1.0
        state = client.state()
        assert state["task"] == TASK and state["step_count"] == 1 + len(solution)
        assert state["state_hash"] == result.observation["state_hash"]
        # reset takes a task name or a JSON state
        other = client.reset(task="close_account")
        assert other.observation["task"] == "close_account"
        probe = sleep()()
        probe.reset(task=TASK)
        from_state = client.reset(state=probe.state_json())
        assert from_state.observation["task"] is None
        assert from_state.observation["state_hash"] == probe.state_hash()
        finished = client.step({"name": "finish", "arguments": {}})
        assert finished.done is True


def test_sessions_do_not_share_an_environment(base_url: str) -> None:
    with (
        GenericEnvClient(base_url=base_url).sync() as one,
        GenericEnvClient(base_url=base_url).sync() as two,
    ):
        start = one.reset().observation["state_hash"]
        two.reset()
        changed = two.step(
            {"name": "set_status", "arguments": {"user_id": "U2", "status": "active"}}
        )
        assert changed.observation["state_hash"] != start
        assert one.state()["state_hash"] == start


def test_a_tool_named_like_a_contract_method_cannot_collide() -> None:
    """Tools travel inside the action: `reset` the tool and `reset` the contract method differ."""
    from test_runtime import build

    from envdsl.serve.openenv import EnvdslOpenEnv

    clash = build('''
env Clash {
  """A tool named like the contract's reset."""
  entity C { key id: str }
  state { cs: table C }
  query reset() -> int {
    """How many rows there are."""
    return len(cs)
  }
}
''')
    env = EnvdslOpenEnv(Episodes(clash))
    env.reset()
    from envdsl.serve.openenv import ToolCall

    assert env.step(ToolCall(name="reset")).result == {"success": True, "data": 0}


def test_mcp_on_the_same_server(base_url: str) -> None:
    """`/mcp` is the MCP server of `--transport http`, driven by the SDK's client: one
    environment per MCP session, none shared with the OpenEnv sessions."""
    from test_serve_mcp import _episode, _read

    url = f"{base_url}/mcp"

    async def sessions() -> None:
        with GenericEnvClient(base_url=base_url).sync() as openenv_session:
            start = openenv_session.reset().observation["state_hash"]
            async with Client(url) as first, Client(url) as second:
                assert (await _read(second, "envdsl://state"))["hash"] == start
                await _episode(first)
                # neither the other MCP session nor the OpenEnv one saw the first's calls
                assert (await _read(second, "envdsl://state"))["hash"] == start
                assert (await _read(second, "envdsl://evaluation"))["reward"] < 1.0
                assert openenv_session.state()["state_hash"] == start

    anyio.run(sessions)
