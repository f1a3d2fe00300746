"""CLI usage errors are one line on stderr with exit 2, `run --strict`, and directories and
patterns accepted by every command that takes specs (issue 14, CLI part)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import envdsl
from envdsl.cli import main

REPO = Path(__file__).resolve().parent.parent
SLEEP = REPO / "examples" / "sleep_tracking.env"
TASK = "reactivate_and_log"
SOLUTION = [
    {"name": "set_status", "arguments": {"user_id": "U2", "status": "active"}},
]


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


def one_line_usage_error(result: object, *words: str) -> None:
    assert getattr(result, "exit_code") == 2, getattr(result, "output")
    err = getattr(result, "stderr")
    assert err.startswith("envdsl: error: ") and err.count("\n") == 1, err
    assert getattr(result, "stdout") == ""
    for word in words:
        assert word in err, err


@pytest.mark.parametrize(
    "args, words",
    [
        (["check", "--bogus", "x.env"], ["No such option", "--bogus"]),
        (["frobnicate"], ["No such command"]),
        (["check"], ["Missing argument"]),
        (["run", str(SLEEP)], ["--calls"]),
        (["explore", str(SLEEP), "--max-calls", "0"], ["--max-calls"]),
        (["compile", str(SLEEP), "--output"], ["--output"]),
    ],
)
def test_every_usage_error_is_one_line(
    runner: CliRunner, args: list[str], words: list[str]
) -> None:
    one_line_usage_error(runner.invoke(main, args), *words)


def test_usage_error_from_the_console_is_one_line() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "envdsl", "check", "--nope", str(SLEEP)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert completed.returncode == 2
    assert completed.stdout == "" and completed.stderr.count("\n") == 1, completed.stderr


def test_help_and_version_still_exit_0(runner: CliRunner) -> None:
    assert runner.invoke(main, ["--help"]).exit_code == 0
    assert runner.invoke(main, ["run", "--help"]).exit_code == 0
    assert "--strict" in runner.invoke(main, ["run", "--help"]).stdout


def test_non_utf8_calls_and_state_files(runner: CliRunner, tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    calls.write_bytes(b'{"name": "get_user", "arguments": {"user_id": "caf\xe9"}}\n')
    result = runner.invoke(main, ["run", str(SLEEP), "--task", TASK, "--calls", str(calls)])
    one_line_usage_error(result, "not valid UTF-8")
    state = tmp_path / "state.json"
    state.write_bytes(b'{"users": "\xe9"}')
    result = runner.invoke(main, ["run", str(SLEEP), "--state", str(state), "--calls", str(calls)])
    one_line_usage_error(result, "cannot read state", "not valid UTF-8")
    result = runner.invoke(main, ["explore", str(SLEEP), "--state", str(state)])
    one_line_usage_error(result, "not valid UTF-8")


@pytest.mark.parametrize(
    "text",
    ["[" * 100_000, '{"now": 1' + "0" * 5000 + "}", '{"users": {"U1": {"name": "\\ud800"}}}'],
)
def test_hostile_state_files(runner: CliRunner, tmp_path: Path, text: str) -> None:
    state = tmp_path / "state.json"
    state.write_text(text, encoding="utf-8")
    calls = tmp_path / "calls.jsonl"
    calls.write_text("", encoding="utf-8")
    result = runner.invoke(main, ["run", str(SLEEP), "--state", str(state), "--calls", str(calls)])
    one_line_usage_error(result, "state")


def test_explore_without_tools(runner: CliRunner, tmp_path: Path) -> None:
    spec = tmp_path / "empty.env"
    spec.write_text('env Empty {\n  """Nothing."""\n  state { n: int = 0 }\n}\n', encoding="utf-8")
    one_line_usage_error(runner.invoke(main, ["explore", str(spec)]), "no tools")


def test_run_strict_exits_1_when_the_evaluation_fails(runner: CliRunner, tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    calls.write_text("\n".join(json.dumps(c) for c in SOLUTION) + "\n", encoding="utf-8")
    base = ["run", str(SLEEP), "--task", TASK, "--calls", str(calls)]
    plain = runner.invoke(main, base)
    assert plain.exit_code == 0 and "success: false" in plain.stdout
    strict = runner.invoke(main, [*base, "--strict"])
    assert strict.exit_code == 1 and "success: false" in strict.stdout
    as_json = runner.invoke(main, [*base, "--strict", "--format", "json"])
    assert as_json.exit_code == 1 and json.loads(as_json.stdout)["evaluation"]["success"] is False
    # from a state (no task, no evaluation), --strict fails when a call failed
    env = envdsl.load(SLEEP)()
    env.reset(task=TASK)
    state_file = tmp_path / "state.json"
    state_file.write_text(json.dumps(env.state_json()), encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"name": "get_user", "arguments": {"user_id": "nobody"}}\n', encoding="utf-8")
    from_state = ["run", str(SLEEP), "--state", str(state_file), "--calls", str(bad)]
    assert runner.invoke(main, from_state).exit_code == 0
    assert runner.invoke(main, [*from_state, "--strict"]).exit_code == 1
    assert runner.invoke(main, [*from_state[:-1], str(calls), "--strict"]).exit_code == 0


def test_directories_and_patterns_everywhere(runner: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "sleep.env").write_text(SLEEP.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "out"
    result = runner.invoke(main, ["compile", str(folder), "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert (out / "sleep_tracking.py").exists()
    for args in (["schema", str(folder)], ["verify", str(folder)], ["tasks", str(folder)]):
        assert runner.invoke(main, args).exit_code == 0, args
    pattern = str(folder / "*.env")
    assert runner.invoke(main, ["schema", pattern]).exit_code == 0
    assert runner.invoke(main, ["compile", pattern, "-o", str(out)]).exit_code == 0
    (folder / "copy.env").write_text(SLEEP.read_text(encoding="utf-8"), encoding="utf-8")
    one_line_usage_error(runner.invoke(main, ["schema", str(folder)]), "names 2 specs")
    one_line_usage_error(runner.invoke(main, ["compile", str(tmp_path / "none")]), "no such file")


def test_run_prints_lone_surrogates_as_escapes(runner: CliRunner, tmp_path: Path) -> None:
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        '{"name": "get_user", "arguments": {"user_id": "a\\ud800"}}\n'
        '{"name": "get_\\udfff", "arguments": {}}\n',
        encoding="utf-8",
    )
    base = ["run", str(SLEEP), "--task", TASK, "--calls", str(calls)]
    text = runner.invoke(main, base)
    assert text.exit_code == 0, text.output
    assert "surrogate" in text.stdout and "\\ud800" in text.stdout
    as_json = runner.invoke(main, [*base, "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    first = json.loads(as_json.stdout)["calls"][0]
    assert first["arguments"] == {"user_id": "a\ud800"} and not first["result"]["success"]
