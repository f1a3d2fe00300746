"""`envdsl serve --transport openenv`: the OpenEnv contract on openenv-core's server, driven by
openenv-core's own client over WebSocket and its HTTP endpoints on 127.0.0.1, and by the MCP
SDK's client at `/mcp` on the same server (issue 11, item 2). The server runs in a thread of
the test process: importing openenv-core loads gradio, and doing that once instead of twice
keeps the test short."""

from __future__ import annotations

import functools
import json
import socket
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import anyio
import pytest

from mcp import Client
from servers import uvicorn_in_thread

import envdsl
from envdsl.adapters.dataset_records import task_records
from envdsl.runtime import Environment
from envdsl.serve.sessions import Sessions

if TYPE_CHECKING:
    from openenv.core.generic_client import GenericEnvClient

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
TASK = "reactivate_and_log"


# openenv-core is imported when a test runs, not when the module is collected: it loads gradio
# (4 s), which every worker of the suite would pay, also the one that runs none of these tests.
# The [openenv] extra is part of .[dev]: a missing library must fail the tests, not skip them.
def connect(base_url: str) -> GenericEnvClient:
    from openenv.core.generic_client import GenericEnvClient

    return GenericEnvClient(base_url=base_url)


def app(sessions: Sessions) -> Any:
    from envdsl.serve.openenv import build_app

    return build_app(sessions)


@functools.cache
def sleep() -> type[Environment]:
    return envdsl.load(SLEEP)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with uvicorn_in_thread(app(Sessions(sleep(), task=TASK))) as port:
        yield f"http://127.0.0.1:{port}"


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
    with connect(base_url).sync() as client:
        first = client.reset()
        assert first.observation["instruction"] == sleep().TASKS[TASK].instruction
        assert [t["function"]["name"] for t in first.observation["tools"]] == list(sleep().TOOLS)
        # the episode's reward so far: 0 at the start, whatever the checks say of it
        assert first.done is False and first.reward == 0.0
        assert first.observation["episode_id"]
        start = first.observation["state_hash"]
        failed = client.step({"name": "set_status", "arguments": {"user_id": "U9"}})
        assert failed.observation["result"]["success"] is False
        assert failed.observation["state_hash"] == start
        total = failed.reward
        for index, call in enumerate(solution):
            result = client.step({"name": call["name"], "arguments": call["arguments"]})
            assert result.observation["result"]["success"] is True
            assert result.done is (index == len(solution) - 1)
            total += result.reward
        # the step rewards add up to the final evaluation's reward
        assert result.observation["evaluation"]["reward"] == 1.0
        assert total == pytest.approx(1.0)
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
        finished = client.step({"answer": "done"})
        assert finished.done is True and finished.observation["result"]["success"] is True


def test_sessions_do_not_share_an_environment(base_url: str) -> None:
    with (
        connect(base_url).sync() as one,
        connect(base_url).sync() as two,
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
    env = EnvdslOpenEnv(Sessions(clash))
    env.reset()
    from envdsl.serve.openenv import ToolCall

    assert env.step(ToolCall(name="reset")).result == {"success": True, "data": 0}


def test_mcp_on_the_same_server(base_url: str) -> None:
    """`/mcp` is the MCP server of `--transport http`, driven by the SDK's client: one
    environment per MCP session, none shared with the OpenEnv sessions."""
    from test_serve_mcp import _episode, _read

    url = f"{base_url}/mcp"

    async def sessions() -> None:
        with connect(base_url).sync() as openenv_session:
            start = openenv_session.reset().observation["state_hash"]
            async with Client(url) as first, Client(url) as second:
                assert (await _read(second, "envdsl://state"))["hash"] == start
                await _episode(first)
                # neither the other MCP session nor the OpenEnv one saw the first's calls
                assert (await _read(second, "envdsl://state"))["hash"] == start
                assert (await _read(second, "envdsl://evaluation"))["reward"] < 1.0
                assert openenv_session.state()["state_hash"] == start

    anyio.run(sessions)


@functools.cache
def sleep_with_tasks() -> type[Environment]:
    return envdsl.load(SLEEP, [SLEEP.with_suffix(".tasks.env")])


def _post(url: str, body: bytes) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=body, headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_a_question_task_answered_with_episode_ids(base_url: str) -> None:
    # the module's server has the spec's own tasks; this one has the task file's too
    with uvicorn_in_thread(app(Sessions(sleep_with_tasks(), task=TASK))) as port:
        with connect(f"http://127.0.0.1:{port}").sync() as client:
            first = client.reset(task="nickname_and_tags_question", episode_id="ep-7")
            assert first.observation["episode_id"] == "ep-7" and first.reward == 0.0
            looked = client.step({"name": "get_user", "arguments": {"user_id": "U5"}})
            user = looked.observation["result"]["data"]
            assert looked.done is False
            text = f"{user['nickname']}, tagged {' and '.join(user['tags'])}"
            answered = client.step({"answer": text})
            assert answered.done is True
            evaluation = answered.observation["evaluation"]
            assert evaluation["answer"] == text and evaluation["success"] is True
            assert looked.reward + answered.reward == pytest.approx(evaluation["reward"])
            state = client.state()
            assert state["episode_id"] == "ep-7" and state["answer"] == text
            assert state["done"] is True and state["step_count"] == 2
            # a new episode gets a new id when none is given
            other = client.reset(task="account_status_question")
            assert other.observation["episode_id"] not in (None, "ep-7")


def test_bad_resets_answer_422_with_the_message(base_url: str) -> None:
    status, body = _post(f"{base_url}/reset", json.dumps({"task": "nope"}).encode())
    assert status == 422 and "unknown task 'nope'" in body["detail"]
    status, body = _post(
        f"{base_url}/reset", json.dumps({"state": {"users": [{"user_id": "U1"}]}}).encode()
    )
    assert status == 422 and "invalid state" in body["detail"]
    status, body = _post(f"{base_url}/reset", json.dumps({"task": TASK}).encode())
    assert status == 200 and body["observation"]["task"] == TASK
    # over the WebSocket, the same message, and the session goes on
    with connect(base_url).sync() as client:
        with pytest.raises(Exception, match="unknown task 'nope'"):
            client.reset(task="nope")
        assert client.reset().observation["task"] == TASK


def _raw_status(base_url: str, head: str, body: bytes) -> int:
    """The status of a request sent as written (urllib cannot send a body without its
    length, nor read a reply that comes before the whole body was sent)."""
    host, port = base_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as connection:
        connection.sendall(head.encode() + body)
        reply = connection.recv(65536).decode("latin-1")
    return int(reply.split()[1])


def test_step_bodies_are_limited_before_they_are_parsed(base_url: str) -> None:
    from envdsl.serve.openenv import MAX_BODY

    host = base_url.removeprefix("http://")
    declared = (
        f"POST /step HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {100 * 1024 * 1024}\r\n\r\n"
    )
    assert _raw_status(base_url, declared, b"") == 413  # answered before a byte is read
    chunk = b"x" * (MAX_BODY + 1)
    chunked = (
        f"POST /step HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"
    )
    body = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n0\r\n\r\n"
    assert _raw_status(base_url, chunked, body) == 413  # no length: counted as it comes
    small = {"action": {"name": "get_user", "arguments": {"user_id": "U1"}}}
    status, body_json = _post(f"{base_url}/step", json.dumps(small).encode())
    assert status == 200 and body_json["observation"]["result"]["success"] is True
    for action, message in [
        ({"arguments": {}}, 'needs a "name"'),
        ({"name": "get_user", "answer": "U1"}, "not both"),
    ]:
        status, body_json = _post(f"{base_url}/step", json.dumps({"action": action}).encode())
        assert status == 200 and message in body_json["observation"]["result"]["error"]
