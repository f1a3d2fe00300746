"""`envdsl rollout` and `envdsl run --rollout`: the agent loop through the real `openai` client
against the scripted chat server of tests/chat_server.py on 127.0.0.1.

The scripts are real agent behaviour: tool calls, malformed arguments, unknown tools, a final
answer, server errors that are retried. Backoff is zero, so every test is bounded in time.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Iterator

import pytest
from chat_server import ChatServer, Status, tool_calls
from click.testing import CliRunner

from envdsl.cli import main
from envdsl.llm.client import ClientConfig
from envdsl.pipeline import compile_file
from envdsl.rollout import runner
from envdsl.rollout.metrics import pass_at_k, pass_hat_k, summarize
from envdsl.rollout.plan import env_source
from envdsl.rollout.records import Sampling
from envdsl.util.backends import Backend

SPEC = (Path(__file__).parent / "rollout_specs" / "counter.env").read_text("utf-8")


@pytest.fixture
def server() -> Iterator[ChatServer]:
    chat = ChatServer()
    yield chat
    chat.close()


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "counter.env"
    path.write_text(SPEC, encoding="utf-8")
    return path


def agent(body: dict[str, Any]) -> Any:
    """A scripted agent that solves both tasks: look at the instruction, call, answer."""
    messages = body["messages"]
    instruction = messages[1]["content"]
    if messages[-1]["role"] == "tool":
        result = json.loads(messages[-1]["content"])
        return f"Done: B is at {result['data']['count']}." if "item B" in instruction else "Done."
    if "item B" in instruction:
        return tool_calls(("get_item", {"item_id": "B"}))
    return tool_calls(("bump", {"item_id": "A"}))


def rollout(server: ChatServer, spec: Path, out: Path, *args: str) -> Any:
    arguments = ["rollout", str(spec), "--model", "m", "--base-url", server.url, "--out"]
    arguments += [str(out), "--backoff", "0", "--retries", "2", "--timeout", "5", *args]
    return CliRunner().invoke(main, arguments)


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.read_text("utf-8").splitlines() if line.strip()]


def test_a_rollout_records_an_sft_ready_trajectory(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    server.responder = agent
    out = tmp_path / "traj.jsonl"
    result = rollout(server, spec, out, "--all", "-n", "2", "--seed", "7", "--temperature", "0.5")
    assert result.exit_code == 0, result.output
    made = records(out)
    assert [(r["task"], r["sample"]) for r in made] == [
        ("bump_once", 0),
        ("bump_once", 1),
        ("read_count", 0),
        ("read_count", 1),
    ]
    first = made[0]
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert "A shared counter of items." in first["messages"][0]["content"]
    assert first["messages"][1]["content"] == "Bump item A once."
    call = first["messages"][2]["tool_calls"][0]
    assert call["function"] == {"name": "bump", "arguments": '{"item_id": "A"}'}
    tool_message = first["messages"][3]
    assert tool_message["tool_call_id"] == call["id"]
    assert json.loads(tool_message["content"])["success"] is True
    assert first["reward"] == 1.0 and first["success"] is True and first["finish"] == "answer"
    assert first["evaluation"] == [{"check": "A counts one", "passed": True, "kind": "progress"}]
    assert (first["turns"], first["tool_calls"], first["failed_calls"]) == (2, 1, 0)
    assert first["tokens"] == {"prompt": 200, "completion": 20}
    assert set(first["timings"]) == {"total_s", "model_s", "env_s"}
    assert [t["function"]["name"] for t in first["tools"]] == ["bump", "get_item"]
    origin = first["provenance"]
    assert origin["model"] == "m" and origin["sampling"]["temperature"] == 0.5
    assert {"spec_hash", "task_hash", "checks_hash", "envdsl_version"} <= set(origin)
    # the answer is what the checks of a question read
    assert made[2]["answer"] == "Done: B is at 7." and made[2]["success"] is True
    # the server got the tools, the sampling and one seed per sample
    bodies = [r["body"] for r in server.requests]
    assert all(b["tools"] == first["tools"] and b["temperature"] == 0.5 for b in bodies)
    assert sorted({b["seed"] for b in bodies}) == [7, 8]
    assert "overall: 2 tasks, 4 rollouts, mean reward 1.000" in result.output
    assert "pass@2 1.000, pass^2 1.000" in result.output


def test_malformed_calls_get_the_runtimes_error_result(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    server.replies = [
        tool_calls(("bump", '{"item_id": "A"')),  # not JSON
        tool_calls(("bmp", {"item_id": "A"}), ("bump", {"item_id": 5})),  # unknown, bad type
        tool_calls(("bump", {"item_id": "A"})),
        "Bumped A.",
    ]
    out = tmp_path / "traj.jsonl"
    result = rollout(server, spec, out, "--tasks", "bump_once")
    assert result.exit_code == 0, result.output
    (record,) = records(out)
    results = [json.loads(m["content"]) for m in record["messages"] if m["role"] == "tool"]
    assert [r["success"] for r in results] == [False, False, False, True]
    assert "not valid JSON" in results[0]["error"]
    assert "unknown tool" in results[1]["error"] and "did you mean 'bump'" in results[1]["error"]
    assert "item_id" in results[2]["error"]
    assert (record["tool_calls"], record["failed_calls"], record["turns"]) == (4, 3, 4)
    assert record["success"] is True
    assert "failed calls 75.0%" in result.output


def test_the_turn_limit_ends_a_rollout(server: ChatServer, spec: Path, tmp_path: Path) -> None:
    server.responder = lambda body: tool_calls(("get_item", {"item_id": "A"}))
    out = tmp_path / "traj.jsonl"
    result = rollout(server, spec, out, "--tasks", "bump_once", "--max-turns", "3")
    assert result.exit_code == 0, result.output
    (record,) = records(out)
    assert record["finish"] == "max_turns" and record["turns"] == 3 and record["answer"] == ""
    assert record["reward"] == 0.0 and len(server.requests) == 3


def test_server_errors_are_retried_then_recorded_and_rerun(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    out = tmp_path / "traj.jsonl"
    server.replies = [Status(500), tool_calls(("bump", {"item_id": "A"})), Status(503), "Done."]
    assert rollout(server, spec, out, "--tasks", "bump_once").exit_code == 0
    assert records(out)[0]["success"] is True and len(server.requests) == 4
    # three failures in a row exhaust --retries 2: an error record, exit 1
    server.replies = [Status(500)] * 3
    result = rollout(server, spec, out, "--tasks", "bump_once", "-n", "2")
    assert result.exit_code == 1
    assert "1 rollout(s) failed at the server" in result.output
    error = records(out)[-1]
    assert error["finish"] == "error" and error["error"]["kind"] == "server"
    assert "HTTP 500" in error["error"]["message"]
    # a rerun skips the scored sample and retries the failed one
    server.requests.clear()
    server.replies = [tool_calls(("bump", {"item_id": "A"})), "Done."]
    result = rollout(server, spec, out, "--tasks", "bump_once", "-n", "2")
    assert result.exit_code == 0, result.output
    assert "ran 1 rollouts (1 already in" in result.output
    assert len(server.requests) == 2
    assert "overall: 1 tasks, 2 rollouts" in result.output


def test_the_summary_leaves_out_other_spec_versions(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    server.responder = agent
    out = tmp_path / "traj.jsonl"
    assert rollout(server, spec, out, "--tasks", "bump_once").exit_code == 0
    spec.write_text(SPEC.replace("Add one to", "Add 1 to"), encoding="utf-8")
    result = rollout(server, spec, out, "--tasks", "bump_once", "--format", "json")
    assert result.exit_code == 0, result.output
    assert "1 record(s) in" in result.stderr and "another version of" in result.stderr
    document = json.loads(result.stdout)
    assert document["ran"] == 1 and document["overall"]["records"] == 1
    assert len(records(out)) == 2


def test_local_processes_keep_the_input_order(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    server.responder = agent
    out = tmp_path / "traj.jsonl"
    result = rollout(
        server, spec, out, "--all", "-n", "3", "--processes", "2", "--concurrency", "4"
    )
    assert result.exit_code == 0, result.output
    made = records(out)
    assert [(r["task"], r["sample"]) for r in made] == [
        (task, sample) for task in ("bump_once", "read_count") for sample in range(3)
    ]
    assert all(r["success"] for r in made)


def test_replay_regrades_a_record_on_the_current_spec(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    server.responder = agent
    out = tmp_path / "traj.jsonl"
    assert rollout(server, spec, out, "--all").exit_code == 0
    runner = CliRunner()
    replayed = runner.invoke(main, ["run", str(spec), "--rollout", str(out), "--index", "1"])
    assert replayed.exit_code == 0, replayed.output
    assert '[1] get_item("{\\"item_id\\": \\"B\\"}")' in replayed.output
    assert "pass  says seven" in replayed.output
    assert "recorded: reward 1.0, success True, state hash same" in replayed.output
    assert replayed.stderr == ""
    spec.write_text(
        SPEC.replace("mentions(answer, 7)", 'startswith(answer, "B")'), encoding="utf-8"
    )
    arguments = ["run", str(spec), "--rollout", str(out), "--index", "-1", "--format", "json"]
    regraded = runner.invoke(main, arguments)
    assert regraded.exit_code == 0, regraded.output
    assert "another version of" in regraded.stderr and "re-graded" in regraded.stderr
    document = json.loads(regraded.stdout)
    assert document["evaluation"]["reward"] == 0.0 and document["recorded"]["reward"] == 1.0


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([], "give --tasks a,b or --all"),
        (["--all", "--tasks", "x"], "give --tasks a,b or --all"),
        (["--tasks", "nope"], "unknown task 'nope'"),
        (["--all", "--address", "auto"], "--address is for --backend ray"),
        (["--all", "--backend", "ray", "--address", "127.0.0.1:1"], "cannot reach the Ray"),
    ],
)
def test_rollout_usage_errors(
    server: ChatServer, spec: Path, tmp_path: Path, arguments: list[str], message: str
) -> None:
    result = rollout(server, spec, tmp_path / "traj.jsonl", *arguments)
    assert result.exit_code == 2 and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not server.requests


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--index", "5"], "--index 5 is out of range"),
        (["--task", "bump_once"], "give no --calls, --task, --state or --answer"),
        (["--answer", "7"], "give no --calls, --task, --state or --answer"),
    ],
)
def test_replay_usage_errors(
    spec: Path, tmp_path: Path, arguments: list[str], message: str
) -> None:
    out = tmp_path / "traj.jsonl"
    out.write_text("", encoding="utf-8")
    result = CliRunner().invoke(main, ["run", str(spec), "--rollout", str(out), *arguments])
    assert result.exit_code == 2 and message in result.stderr


def test_pass_at_k_and_pass_hat_k() -> None:
    assert pass_at_k(4, 1, 1) == 0.25 and pass_hat_k(4, 1, 1) == 0.25
    assert pass_at_k(4, 1, 2) == 0.5 and pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_at_k(3, 0, 3) == 0.0 and pass_hat_k(3, 3, 3) == 1.0
    row = {"tool_calls": 2, "failed_calls": 1, "turns": 3}
    summary = summarize(
        [
            {"env": "E", "task": "a", "reward": 1.0, "success": True, **row},
            {"env": "E", "task": "a", "reward": 0.5, "success": False, **row},
            {"env": "E", "task": "b", "reward": 1.0, "success": True, **row},
        ]
    )
    overall = summary["overall"]
    assert overall["pass_at_k"] == {"1": 0.75} and overall["mean_reward"] == 0.875
    assert overall["failed_call_rate"] == 0.5 and overall["mean_turns"] == 3.0


def test_a_simulated_user_talks_to_the_agent(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    def respond(body: dict[str, Any]) -> Any:
        messages = body["messages"]
        if body["model"] == "customer":  # the user's side: the agent's words are its input
            said = messages[-1]["content"]
            if said.startswith("Hi!"):
                return "Hello, could you bump an item for me?"
            if "Which item" in said:
                return "Item A, please."
            return "###STOP###"
        if messages[-1]["role"] == "tool":
            return "Done, A is bumped."
        if "Item A" in messages[-1]["content"]:
            return tool_calls(("bump", {"item_id": "A"}))
        return "Which item?"

    server.responder = respond
    out = tmp_path / "traj.jsonl"
    result = rollout(server, spec, out, "--tasks", "bump_once", "--user-model", "customer")
    assert result.exit_code == 0, result.output
    (record,) = records(out)
    agent_side = [(m["role"], m.get("content")) for m in record["messages"]]
    assert agent_side == [
        ("system", record["messages"][0]["content"]),
        ("user", "Hello, could you bump an item for me?"),
        ("assistant", "Which item?"),
        ("user", "Item A, please."),
        ("assistant", ""),
        ("tool", record["messages"][5]["content"]),
        ("assistant", "Done, A is bumped."),
    ]
    # the agent never saw the instruction; the user was given it
    assert all("Bump item A once." not in str(m.get("content")) for m in record["messages"])
    user = record["user"]
    assert user["model"] == "customer" and "Bump item A once." in user["messages"][0]["content"]
    assert [m["role"] for m in user["messages"][1:]] == ["user", "assistant"] * 3
    assert user["messages"][-1]["content"] == "###STOP###"
    assert record["success"] is True and record["answer"] == "Done, A is bumped."
    assert record["finish"] == "answer" and record["turns"] == 3
    assert record["provenance"]["sampling"]["user_model"] == "customer"


def test_progress_is_one_line_redrawn_and_cleared(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    server.responder = agent
    sources = (env_source(str(spec), SPEC, compile_file(spec, formatted=False)),)
    sampling = Sampling("m", None, None, None, max_turns=5)
    config = ClientConfig(base_url=server.url, model="m", api_key="x", retries=0, timeout=5)
    jobs = runner.plan(sources, None, 2, sampling)
    progress = io.StringIO()
    report = runner.run(
        runner.Rollouts(sources, config, sampling), jobs, tmp_path / "t.jsonl", Backend(), progress
    )
    assert report.ran == 4 and report.summary["overall"]["success_rate"] == 1.0
    shown = progress.getvalue()
    assert "\rrollouts 4/4  mean reward 1.000  errors 0" in shown
    assert "\n" not in shown and shown.endswith("\r")  # cleared at the end


def test_threads_loading_one_new_environment_all_get_its_class(tmp_path: Path) -> None:
    """Rollout threads load a spec's module at once: none may see it half executed."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    example = Path(__file__).resolve().parent.parent / "examples" / "clinic_scheduling.env"
    text = example.read_text("utf-8") + f"\n# {tmp_path.name}\n"  # a module not loaded yet
    path = tmp_path / "fresh.env"
    path.write_text(text, encoding="utf-8")
    source = env_source(str(path), text, compile_file(path, formatted=False))
    start = threading.Barrier(8)

    def load(_: int) -> object:
        start.wait()
        return source.environment_class()

    with ThreadPoolExecutor(8) as pool:
        classes = list(pool.map(load, range(8)))
    assert len(set(classes)) == 1 and classes[0].NAME == "ClinicScheduling"


def test_a_server_that_rejects_the_first_rollout_stops_the_run(
    server: ChatServer, spec: Path, tmp_path: Path
) -> None:
    server.responder = lambda body: Status(404, "The model `m` does not exist.")
    out = tmp_path / "traj.jsonl"
    result = rollout(server, spec, out, "--all", "-n", "5", "--concurrency", "1")
    assert result.exit_code == 1
    assert "rejected the request with HTTP 404: The model `m` does not exist." in result.stderr
    assert result.stderr.strip().endswith(
        "check --base-url (it usually ends in /v1) and --model; stopped"
    )
    assert len(records(out)) == 1 and len(server.requests) == 1  # 404 is not retried
