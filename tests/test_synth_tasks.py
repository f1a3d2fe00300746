"""`envdsl synth tasks`: rounds of tasks verified by the compiler, against a scripted server.

The server (tests/test_synth.py's ChatServer on 127.0.0.1) answers round prompts and repair
prompts from a script keyed on the request; the real `openai` client talks to it. The script
offers good tasks, a duplicate of the spec's own task, a task solved by doing nothing (repaired
into a question), a broken init (repaired badly, then dropped) and a name that is taken.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from test_synth import ChatServer, client_for, server  # noqa: F401 - the fixture

from envdsl.cli import main
from envdsl.llm.synth_tasks import SynthTasksOptions, TaskSynthError, run_synth_tasks, signature
from envdsl.pipeline import check_file

DEMO = Path(__file__).parent / "task_files" / "demo.env"

RAISE_LIMIT = '''
  task raise_limit {
    """The counter is at 90: raise its limit to 200, then add 50."""
    init { count = 90 }
    solution {
      set_limit(limit_value=200)
      add(n=50)
    }
    check "the limit is 200": limit == 200
    check "the counter is 140": count == 140
  }
'''
# the spec's own add_two with other numbers: the same tools and check shapes
ADD_FIVE = '''
  task add_five {
    """Add five to the counter, which is at 1."""
    init { count = 1 }
    solution { add(n=5) }
    check "the counter is 6": count == 6
  }
'''
NOOP = '''
  task noop {
    """Look at the counter."""
    solution { get_count() }
    check "the counter is 0": count == 0
  }
'''
NOOP_REPAIRED = '''
  task noop {
    """What is the counter's value?"""
    init { count = 4 }
    solution {
      get_count()
      answer "4"
    }
    check "the answer says 4": mentions(answer, 4)
  }
'''
OVER_LIMIT = '''
  task over_limit {
    """Add one to the counter."""
    init { count = 500 }
    solution { add(n=1) }
    check "the counter is 501": count == 501
  }
'''
# named like the spec's own task: renamed add_two_2
LOWER_LIMIT = '''
  task add_two {
    """The counter is at 10: lower its limit to 50."""
    init { count = 10 }
    solution { set_limit(limit_value=50) }
    check "the limit is 50": limit == 50
  }
'''

RAISE_AND_REPORT = '''
  task raise_and_report {
    """Raise the limit to 150, then tell me the counter's value."""
    init { count = 7 }
    solution {
      set_limit(limit_value=150)
      get_count()
      answer "7"
    }
    check "the limit is 150": limit == 150
    check "the answer says 7": mentions(answer, 7)
  }
'''


def block(*tasks: str) -> str:
    return '```envdsl\ntasks for "demo.env" {' + "".join(tasks) + "}\n```\n"


def script(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    if "rejected this task" in prompt:
        if "task noop" in prompt:
            return block(NOOP_REPAIRED)
        return block(OVER_LIMIT)  # the same broken init again
    if "raise_limit:" not in prompt:  # round 1: nothing accepted yet
        return "Here are four tasks.\n\n" + block(RAISE_LIMIT, ADD_FIVE, NOOP, OVER_LIMIT)
    return block(LOWER_LIMIT, RAISE_AND_REPORT)


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    target = tmp_path / "demo.env"
    shutil.copy(DEMO, target)
    return target


def run(chat: ChatServer, spec: Path, count: int, log: Path | None = None) -> Any:
    options = SynthTasksOptions(count=count, per_round=4, max_repairs=1)
    output = spec.with_name("demo.tasks.env")
    return run_synth_tasks(client_for(chat), spec, output, options, str(log) if log else None)


def test_synth_tasks_converges_on_the_scripted_replies(server: ChatServer, spec: Path) -> None:
    server.responder = script
    log = spec.with_name("log.jsonl")
    result = run(server, spec, 4, log)
    assert result.accepted == ["raise_limit", "noop", "add_two_2", "raise_and_report"]
    assert result.rounds == 2
    statuses = [(a.task, a.repair, a.status) for a in result.attempts]
    assert statuses == [
        ("raise_limit", 0, "accepted"),
        ("add_five", 0, "duplicate"),
        ("noop", 0, "rejected"),
        ("noop", 1, "accepted"),
        ("over_limit", 0, "rejected"),
        ("over_limit", 1, "rejected"),
        ("add_two_2", 0, "accepted"),
        ("raise_and_report", 0, "accepted"),
    ]
    rejected = {a.task: a.codes for a in result.attempts if a.status == "rejected"}
    assert "E4006" in rejected["noop"] and rejected["over_limit"] == ["E4003"]
    # the task file is clean with the spec and holds exactly the accepted tasks
    output = spec.with_name("demo.tasks.env")
    checked = check_file(output)
    assert checked.ok and checked.diagnostics == [], checked.diagnostics
    assert [r.task for r in checked.task_reports] == ["add_two", *result.accepted]
    # the second round saw the first round's tasks and the coverage gaps
    first, second = (r["body"]["messages"][-1]["content"] for r in server.requests[::3][:2])
    assert "no read-only question task" in first and "tools no solution calls yet" in first
    assert "raise_limit: set_limit -> add" in second
    assert "tools no solution calls yet" not in second  # noop (get_count) was accepted
    # the repair request carried the diagnostics of the rejected task only
    repair = next(r for r in server.requests if "task over_limit" in str(r["body"]["messages"]))
    assert "E4003" in repair["body"]["messages"][-1]["content"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["status"] for r in records[:-1]] == [s for _, _, s in statuses]
    assert records[-1]["phase"] == "done" and records[-1]["tasks"] == 4
    assert sum(r["prompt_tokens"] for r in records[:-1]) == 100 * len(server.requests)


def test_synth_tasks_resumes_from_its_task_file(server: ChatServer, spec: Path) -> None:
    server.responder = script
    first = run(server, spec, 2)  # round 1 stops once raise_limit and noop are in
    assert first.accepted == ["raise_limit", "noop"] and first.attempts[-1].task == "noop"
    asked = len(server.requests)
    result = run(server, spec, 4)
    assert result.resumed == 2
    assert result.accepted == ["raise_limit", "noop", "add_two_2", "raise_and_report"]
    assert len(server.requests) == asked + 1  # one more round, no repair
    assert check_file(spec.with_name("demo.tasks.env")).ok


def test_duplicates_are_the_same_tools_with_the_same_check_shapes(spec: Path) -> None:
    from envdsl.syntax import ast

    result = check_file(DEMO, task_files=[DEMO.with_name("demo.tasks.env")])
    assert result.spec is not None and result.spec.env is not None
    tasks = {t.name.text: t for t in result.spec.env.of_type(ast.TaskDecl)}
    assert signature(tasks["add_two"]) == (("add",), ("Compare((NameRef(count),IntLit),(==))",))
    assert signature(tasks["raise_limit"]) != signature(tasks["add_two"])


def test_the_task_file_must_be_able_to_name_the_spec(server: ChatServer, spec: Path) -> None:
    elsewhere = spec.parent / "out"
    elsewhere.mkdir()
    options = SynthTasksOptions(count=1)
    with pytest.raises(TaskSynthError, match="spec's directory or above"):
        run_synth_tasks(client_for(server), spec, elsewhere / "t.tasks.env", options)
    assert server.requests == []


def test_cli_synth_tasks(server: ChatServer, spec: Path) -> None:
    server.responder = script
    output = spec.with_name("demo.tasks.env")
    arguments = ["synth", "tasks", str(spec), "-n", "4", "--per-round", "4", "--max-repairs"]
    arguments += ["1", "-o", str(output), "--model", "m", "--base-url", server.url]
    result = CliRunner().invoke(main, arguments, env={"OPENAI_API_KEY": "test"})
    assert result.exit_code == 0, result.output
    assert "wrote" in result.output and "4 tasks (4 new, 0 resumed) after 2 rounds" in result.output
    assert "round 1: add_five duplicate" in result.stderr
    # too few accepted within the rounds allowed: exit 1, the file keeps what was accepted
    again = CliRunner().invoke(
        main, [*arguments[:4], "9", *arguments[5:], "--rounds", "1"], env={"OPENAI_API_KEY": "t"}
    )
    assert again.exit_code == 1 and "run again to resume" in again.stderr
    assert check_file(output).ok
