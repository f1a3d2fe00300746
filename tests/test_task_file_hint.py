"""A command asked for a task that only a task file beside the spec declares names that file.

Commands read only the files they are given (`envdsl run shop.env --task t` does not load
`shop.tasks.env`), so `check examples/` passes while `run examples/shop.env --task t` says the
task is unknown; the usage error then says where the task is and what to give.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from envdsl.cli import main
from envdsl.tasks.task_files import Bundle, unloaded_task_files

SPEC = '''
env Counter {
  """A counter."""
  entity Tally {
    key name: str
    value: int = 0
  }
  state { tallies: table Tally }
  action add(name: str "the tally's name") -> Tally {
    """Add a tally at 0."""
    return tallies.insert(Tally(name=name))
  }
  task first {
    """Add a tally named a."""
    init { tallies = [] }
    solution { add(name="a") }
    check "a is there": tallies.get("a") != none
  }
}
'''

TASKS = '''
tasks for "counter.env" {
  task second {
    """Add a tally named b."""
    init { tallies = [Tally(name="a")] }
    solution { add(name="b") }
    check "b is there": tallies.get("b") != none
    check "a is kept": tallies.get("a") == initial.tallies.get("a")
  }
}
'''


@pytest.fixture()
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "counter.env"
    path.write_text(SPEC, "utf-8")
    (tmp_path / "counter.tasks.env").write_text(TASKS, "utf-8")
    other = TASKS.replace('"counter.env"', '"other.env"')
    (tmp_path / "other.tasks.env").write_text(other, "utf-8")  # another env's: never named
    return path


def test_finds_the_task_file_that_declares_the_task(spec: Path) -> None:
    tasks = str(spec.parent / "counter.tasks.env")
    assert unloaded_task_files(Bundle(str(spec)), "second") == [tasks]
    assert unloaded_task_files(Bundle(str(spec)), "secon") == []  # a whole name only
    assert unloaded_task_files(Bundle(str(spec)), "first") == []  # the spec's own
    assert unloaded_task_files(Bundle(str(spec), (tasks,)), "second") == []  # given


@pytest.mark.parametrize(
    "command",
    [
        ["run", "{spec}", "--task", "second", "--calls", "-"],
        ["state", "{spec}", "--task", "second"],
        ["explore", "{spec}", "--task", "second"],
        ["rollout", "{spec}", "--model", "m", "--tasks", "second", "--out", "{spec}.jsonl"],
    ],
    ids=["run", "state", "explore", "rollout"],
)
def test_unknown_task_names_the_task_file(spec: Path, command: list[str]) -> None:
    arguments = [part.replace("{spec}", str(spec)) for part in command]
    result = CliRunner().invoke(main, arguments, input="")
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert message == (
        "envdsl: error: unknown task 'second'; tasks: first "
        f"(it is in '{spec.parent / 'counter.tasks.env'}': give that file after the spec)"
    )


def test_a_task_no_file_declares_gets_no_hint(spec: Path) -> None:
    result = CliRunner().invoke(main, ["state", str(spec), "--task", "nope"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "envdsl: error: unknown task 'nope'; tasks: first"


def test_given_the_task_file_the_task_runs(spec: Path) -> None:
    tasks = spec.parent / "counter.tasks.env"
    result = CliRunner().invoke(main, ["state", str(spec), str(tasks), "--task", "second"])
    assert result.exit_code == 0, result.output
    assert '"name": "a"' in result.stdout
