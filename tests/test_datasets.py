"""`envdsl tasks --format jsonl` and `envdsl state`: dataset records of tasks, read back with
`datasets.load_dataset("json", ...)` and replayed (issue 11, item 5)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import envdsl
from envdsl.cli import main

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
LIBRARY = ROOT / "examples" / "library_lending.env"
COLUMNS = {
    "env", "spec_hash", "task", "instruction", "tools", "initial_state", "solution", "checks",
    "envdsl_version",
}  # fmt: skip


def _records(spec: Path) -> list[dict[str, object]]:
    result = CliRunner().invoke(main, ["tasks", str(spec), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def test_records_hold_what_a_harness_needs_and_replay() -> None:
    sleep = envdsl.load(SLEEP)
    records = _records(SLEEP)
    assert [r["task"] for r in records] == list(sleep.TASKS)
    for record in records:
        assert set(record) == COLUMNS and record["env"] == sleep.NAME
        assert record["envdsl_version"] == envdsl.__version__
        assert json.loads(str(record["tools"])) == sleep().tool_schemas()
        env = sleep()
        env.reset(task=str(record["task"]))
        assert json.loads(str(record["initial_state"])) == env.state_json()
        for call in json.loads(str(record["solution"])):
            assert env.call(call["name"], call["arguments"])["success"] is True
        evaluation = env.evaluate()
        assert evaluation["success"] is True
        assert record["checks"] == [c["check"] for c in evaluation["checks"]]


def test_records_of_several_specs_load_as_one_dataset(tmp_path: Path) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local file: nothing to fetch
    import datasets  # the [datasets] extra, part of .[dev]

    data = tmp_path / "tasks.jsonl"
    records = _records(SLEEP) + _records(LIBRARY)
    data.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    loaded = datasets.load_dataset(
        "json", data_files=str(data), split="train", cache_dir=str(tmp_path / "cache")
    )
    assert loaded.num_rows == len(records) and set(loaded.column_names) == COLUMNS
    row = loaded[0]
    sleep = envdsl.load(SLEEP)
    env = sleep()
    env.reset(state=json.loads(row["initial_state"]))
    for call in json.loads(row["solution"]):
        assert env.call(call["name"], call["arguments"])["success"] is True
    assert loaded[len(records) - 1]["env"] != row["env"]


def test_state_prints_a_tasks_initial_state() -> None:
    sleep = envdsl.load(SLEEP)
    result = CliRunner().invoke(main, ["state", str(SLEEP), "--task", "close_account"])
    assert result.exit_code == 0
    env = sleep()
    env.reset(task="close_account")
    assert json.loads(result.output) == env.state_json()
    env.reset(state=json.loads(result.output))  # and it is a state `reset` takes back
    bad = CliRunner().invoke(main, ["state", str(SLEEP), "--task", "nope"])
    assert bad.exit_code == 2 and "unknown task 'nope'" in bad.output
