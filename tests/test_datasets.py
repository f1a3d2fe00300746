"""`envdsl tasks --format jsonl` and `envdsl state`: dataset records of tasks, read back with
`datasets.load_dataset("json", ...)` and replayed (issue 11, item 5); one dataset over many
specs, with a chat prompt and the reference answer (issue 25, point 6)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import shutil

import pytest
from click.testing import CliRunner
from example_specs import BUNDLES

import envdsl
from envdsl.cli import main
from envdsl.rollout.episode import system_message

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
LIBRARY = ROOT / "examples" / "library_lending.env"
COLUMNS = {
    "env", "spec", "task_files", "spec_hash", "task", "prompt", "instruction", "tools",
    "initial_state", "solution", "answer", "checks", "envdsl_version",
}  # fmt: skip


def _records(*arguments: str | Path) -> list[dict[str, object]]:
    result = CliRunner().invoke(main, ["tasks", *map(str, arguments), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


def _load_dataset(records: list[dict[str, object]], tmp_path: Path) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local file: nothing to fetch
    import datasets  # the [datasets] extra, part of .[dev]

    data = tmp_path / "tasks.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return datasets.load_dataset(
        "json", data_files=str(data), split="train", cache_dir=str(tmp_path / "cache")
    )


def test_records_hold_what_a_harness_needs_and_replay() -> None:
    sleep = envdsl.load(SLEEP)
    records = _records(SLEEP)
    assert [r["task"] for r in records] == list(sleep.TASKS)
    for record in records:
        assert set(record) == COLUMNS and record["env"] == sleep.NAME
        assert record["envdsl_version"] == envdsl.__version__
        assert record["spec"] == str(SLEEP) and record["task_files"] == []
        assert record["prompt"] == [
            {"role": "system", "content": system_message(sleep)},
            {"role": "user", "content": record["instruction"]},
        ]
        assert record["answer"] == (sleep.TASKS[str(record["task"])].answer or "")
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
    records = _records(SLEEP) + _records(LIBRARY)
    loaded = _load_dataset(records, tmp_path)
    assert loaded.num_rows == len(records) and set(loaded.column_names) == COLUMNS
    row = loaded[0]
    sleep = envdsl.load(SLEEP)
    env = sleep()
    env.reset(state=json.loads(row["initial_state"]))
    for call in json.loads(row["solution"]):
        assert env.call(call["name"], call["arguments"])["success"] is True
    assert loaded[len(records) - 1]["env"] != row["env"]


def test_one_command_writes_the_dataset_of_a_directory(tmp_path: Path) -> None:
    """`envdsl tasks examples/ --format jsonl`: every task of every example, with the tasks
    of its task file, each record naming its env; question tasks carry their answer, and the
    answer is what their checks grade."""
    records = _records(ROOT / "examples")
    expected = [
        (bundle.path, list(bundle.task_files), name)
        for bundle in BUNDLES
        for name in envdsl.load(bundle.path, bundle.task_files).TASKS
    ]
    assert [(r["spec"], r["task_files"], r["task"]) for r in records] == expected
    loaded = _load_dataset(records, tmp_path)
    assert loaded.num_rows == len(expected) and set(loaded.column_names) == COLUMNS
    assert len(set(loaded["env"])) == len(BUNDLES)
    assert loaded.features["prompt"].feature["role"].dtype == "string"  # chat messages
    questions = [row for row in loaded if row["answer"]]
    assert questions and len(questions) < loaded.num_rows
    classes: dict[str, Any] = {}
    for row in loaded:
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert row["prompt"][1]["content"] == row["instruction"]
    for row in questions[:8]:  # replayed with their answer, then without it
        key = row["spec"]
        if key not in classes:
            classes[key] = envdsl.load(row["spec"], row["task_files"])
        env = classes[key]()
        assert classes[key].NAME == row["env"]
        env.reset(task=row["task"])
        assert json.loads(row["initial_state"]) == env.state_json()
        for call in json.loads(row["solution"]):
            assert env.call(call["name"], call["arguments"])["success"] is True
        assert env.evaluate(answer=row["answer"])["success"] is True, row["task"]
        assert env.evaluate(answer="I could not find out.")["success"] is False, row["task"]


def test_patterns_and_files_make_one_dataset_in_the_order_given() -> None:
    by_pattern = _records(str(ROOT / "examples" / "s*.env"), LIBRARY)
    sleep = envdsl.load(SLEEP, [ROOT / "examples" / "sleep_tracking.tasks.env"])
    library = envdsl.load(LIBRARY)
    assert [r["task"] for r in by_pattern] == list(sleep.TASKS) + list(library.TASKS)
    assert {r["env"] for r in by_pattern} == {sleep.NAME, library.NAME}
    assert by_pattern[0]["task_files"] == [str(ROOT / "examples" / "sleep_tracking.tasks.env")]


def test_a_spec_with_errors_leaves_no_partial_dataset(tmp_path: Path) -> None:
    shutil.copy(SLEEP, tmp_path / "a_good.env")
    (tmp_path / "b_broken.env").write_text('env Broken {\n  """Doc."""\n  state { n: nat }\n}\n')
    result = CliRunner().invoke(main, ["tasks", str(tmp_path), "--format", "jsonl"])
    assert result.exit_code == 1 and "b_broken.env" in result.output
    assert not any(line.startswith('{"env"') for line in result.output.splitlines())
    missing = CliRunner().invoke(main, ["tasks", str(tmp_path / "none"), "--format", "jsonl"])
    assert missing.exit_code == 2 and len(missing.output.splitlines()) == 1
    several = CliRunner().invoke(main, ["tasks", str(tmp_path), "--format", "json"])
    assert several.exit_code == 2 and "give one" in several.output  # one listing, one spec


def test_the_readme_snippet_runs(tmp_path: Path) -> None:
    """The README's Datasets commands, as a user runs them in a checkout (the pip line is
    test_packaging's business)."""
    readme = (ROOT / "README.md").read_text("utf-8")
    found = re.search(r"\*\*Datasets\*\*.*?```\n(.*?)```", readme, flags=re.S)
    assert found is not None
    lines = [line for line in found.group(1).splitlines() if not line.startswith("pip ")]
    assert lines[0].startswith("envdsl tasks examples/ ") and lines[1].startswith("python -c")
    script = "\n".join(lines)
    script = script.replace("envdsl ", f"{sys.executable} -m envdsl ", 1)
    script = script.replace("python -c", f"{sys.executable} -c", 1)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    environment = dict(os.environ, PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1")
    environment["HF_DATASETS_CACHE"] = str(tmp_path / "cache")
    done = subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = (tmp_path / "tasks.jsonl").read_text("utf-8").splitlines()
    assert len(rows) == sum(len(envdsl.load(b.path, b.task_files).TASKS) for b in BUNDLES)
    assert f"num_rows: {len(rows)}" in done.stdout and "prompt" in done.stdout


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
