"""`envdsl explore` as a reward-hack search, with calibrated severities and replayable traces.

- a generated run from a task's initial state that reaches the task's success without being
  its solution is a warning with a shrunk trace, which `envdsl run` replays to success;
- a tool that never succeeded only because every call failed on a lookup by a free-text value
  is a warning that says so; one with a condition that can never hold stays an error;
- the text report lists each condition it counts;
- `--trace-dir` writes each counterexample so that the printed replay command runs as printed.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from envdsl.cli import main

# A seeded defect: the task asks for the note "milk", the check only counts notes.
LOOSE_CHECK = '''
env Notes {
  """Notes."""
  entity Note {
    key note_id: str = auto("N")
    text: str
  }
  state {
    notes: table Note
  }
  action add_note(text: str "The note") -> Note {
    """Add a note."""
    require strip(text) != "" else "the note is blank"
    return notes.insert(Note(text=text))
  }
  task note_milk {
    """Note 'milk'."""
    init {
    }
    solution {
      add_note(text="milk")
    }
    check "one note": len(notes) == 1
  }
}
'''

# People are found by their full name, which no generated text is: the generator draws names
# from the state, a first or a last name, never the two joined.
NAME_LOOKUP = '''
env Staff {
  """Employees."""
  entity Employee {
    key employee_id: str
    first_name: str
    last_name: str
    active: bool = true
  }
  state {
    employees: table Employee
  }
  action deactivate_by_name(full_name: str "First and last name, e.g. Ana Ruiz") -> Employee {
    """Deactivate the employee with this full name."""
    let e = first(x for x in employees if x.first_name + " " + x.last_name == full_name)
      else f"nobody is called {full_name}"
    e.active = false
    return e
  }
  action activate(employee_id: str "The employee's id") -> Employee {
    """Activate an employee."""
    let e = employees.get(employee_id) else "no such employee"
    e.active = true
    return e
  }
  task reactivate {
    """Reactivate Ana (E1)."""
    init {
      employees = [Employee(employee_id="E1", first_name="Ana", last_name="Ruiz", active=false)]
    }
    solution {
      activate(employee_id="E1")
    }
    check "Ana is active": employees["E1"].active
    check "by her id": called("activate", employee_id="E1")
  }
}
'''


def explore(spec: Path, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["explore", str(spec), *options], catch_exceptions=False)
    return result.exit_code, result.stdout


def document_of(spec: Path, *options: str) -> dict[str, Any]:
    code, out = explore(spec, "--format", "json", *options)
    assert code in (0, 1), out
    parsed: dict[str, Any] = json.loads(out)
    return parsed


def written(tmp_path: Path, text: str, name: str = "spec.env") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_run_that_succeeds_without_the_solution_is_a_reward_hack(tmp_path: Path) -> None:
    spec = written(tmp_path, LOOSE_CHECK)
    document = document_of(spec, "--max-calls", "400")
    (hack,) = [f for f in document["findings"] if f["kind"] == "reward-hack"]
    assert hack["severity"] == "warning"
    assert "from the initial state of task 'note_milk' reach its success" in hack["message"]
    assert hack["start"] == "task note_milk"
    assert len(hack["trace"]) == 1  # shrunk: one note with another text is enough
    (call,) = hack["trace"]
    assert call["name"] == "add_note" and call["arguments"]["text"] != "milk"
    # the trace replays to success with `envdsl run`
    calls = written(tmp_path, json.dumps(call) + "\n", "hack.jsonl")
    replayed = CliRunner().invoke(
        main, ["run", str(spec), "--task", "note_milk", "--calls", str(calls)]
    )
    assert replayed.exit_code == 0 and "success: true" in replayed.output, replayed.output


def test_a_tight_check_leaves_no_reward_hack(tmp_path: Path) -> None:
    tight = LOOSE_CHECK.replace(
        'check "one note": len(notes) == 1',
        'check "one note, milk": len(notes) == 1 and all(n.text == "milk" for n in notes)',
    )
    document = document_of(written(tmp_path, tight), "--max-calls", "400")
    assert [f for f in document["findings"] if f["kind"] == "reward-hack"] == []


def test_failing_only_on_free_text_lookups_is_a_warning_not_an_error(tmp_path: Path) -> None:
    code, out = explore(written(tmp_path, NAME_LOOKUP), "--format", "json", "--max-calls", "300")
    document = json.loads(out)
    never = [f for f in document["findings"] if f["kind"] == "never-succeeds"]
    assert [(f["severity"], f["tool"]) for f in never] == [("warning", "deactivate_by_name")]
    assert "lookup by a free-text value" in never[0]["message"]
    assert code == 0 and document["ok"] is True


def test_a_condition_that_can_never_hold_stays_an_error(tmp_path: Path) -> None:
    # now some calls fail on a condition no argument can satisfy, before the lookup
    impossible = NAME_LOOKUP.replace(
        "    let e = first(",
        '    require len(full_name) > 5 and len(full_name) < 3 else "impossible"\n'
        "    let e = first(",
        1,
    )
    assert impossible != NAME_LOOKUP
    document = document_of(written(tmp_path, impossible), "--max-calls", "300")
    never = [f for f in document["findings"] if f["kind"] == "never-succeeds"]
    assert [(f["severity"], f["tool"]) for f in never] == [("error", "deactivate_by_name")]


def test_the_text_report_lists_every_condition_it_counts(tmp_path: Path) -> None:
    _, out = explore(written(tmp_path, NAME_LOOKUP), "--max-calls", "300")
    counts = re.search(
        r"(\d+) both held and failed, (\d+) never failed, (\d+) never held, (\d+) never reached",
        out,
    )
    assert counts, out
    for label, count in zip(("never failed", "never held", "never reached"), counts.groups()[1:]):
        assert out.count(f"  {label}: line ") == int(count), out
    assert re.search(r"  never held: line \d+: `let-else first\(x for x in employees if", out), out


def test_trace_dir_makes_the_printed_replay_command_work_as_printed(tmp_path: Path) -> None:
    spec = written(tmp_path, LOOSE_CHECK)
    traces = tmp_path / "traces"
    code, out = explore(spec, "--max-calls", "400", "--trace-dir", str(traces))
    assert code == 0, out
    match = re.search(r"replay: (envdsl run .*)\):", out)
    assert match, out
    command = shlex.split(match.group(1))
    calls = Path(command[command.index("--calls") + 1])
    assert calls.parent == traces and calls.suffix == ".jsonl" and calls.exists()
    replayed = CliRunner().invoke(main, command[1:])
    assert replayed.exit_code == 0 and "success: true" in replayed.output, replayed.output


def test_trace_dir_writes_the_start_state_of_a_state_start(tmp_path: Path) -> None:
    spec = Path(__file__).resolve().parent / "explore_specs" / "negative_stock.env"
    state = written(
        tmp_path, json.dumps({"items": [{"sku": "A1", "name": "bolt", "stock": 1}]}), "s.json"
    )
    traces = tmp_path / "traces"
    code, out = explore(spec, "--state", str(state), "--trace-dir", str(traces))
    assert code == 0, out
    match = re.search(r"replay: (envdsl run .*)\):", out)
    assert match, out
    command = shlex.split(match.group(1))
    assert Path(command[command.index("--state") + 1]) == traces / "state.json"
    replayed = CliRunner().invoke(main, command[1:])
    assert replayed.exit_code == 0, replayed.output
    assert '"success": false' in replayed.output.splitlines()[-2]
