"""Graders you can trust: checks judge the agent's run, negative controls, under-specification.

Each spec below plants one defect in an otherwise sound task (a check pinned to a solution
binding, a task solved by doing nothing or by only reading, a step no check notices, a field
no check reads, a check true everywhere, a wrong expected value) and the tests assert the one
diagnostic verification owes it. The grading tests run agents that differ from the reference
solution: other ids, another order, doing nothing, only reading, a question answered right or
wrong.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from envdsl.cli import main
from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.diagnostics.render_json import render_json
from envdsl.generated.modules import environment_class, load_module
from envdsl.pipeline import CompileResult, check_source, compile_source
from envdsl.runtime import Environment
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent

# A help desk: tickets are closed (with an optional note), looked up, or opened (auto keys).
DESK = '''
env Desk {
  """A help desk."""
  entity Ticket {
    key ticket_id: str = auto("T")
    title: str
    closed: bool = false
    note: str = ""
  }
  state {
    tickets: table Ticket
  }
  query get_ticket(ticket_id: str) -> Ticket? {
    """One ticket, or none."""
    return tickets.get(ticket_id)
  }
  query count_open() -> int {
    """How many tickets are open."""
    return count(t for t in tickets if not t.closed)
  }
  action open_ticket(title: str) -> Ticket {
    """Open a ticket."""
    return tickets.insert(Ticket(title=title))
  }
  action close(ticket_id: str, note: str = "") {
    """Close a ticket, with a note for the customer."""
    let t = tickets.get(ticket_id) else "no such ticket"
    require not t.closed else "already closed"
    t.closed = true
    t.note = note
  }
__TASK__
}
'''


def desk(task: str) -> str:
    return DESK.replace("__TASK__", task)


def check(text: str) -> CompileResult:
    return check_source(SourceFile("spec.env", text))


def found(result: CompileResult) -> list[str]:
    return [d.code.code for d in result.diagnostics]


def only(result: CompileResult, code: str) -> Diagnostic:
    assert found(result) == [code], [(d.code.code, d.message) for d in result.diagnostics]
    return result.diagnostics[0]


def build(text: str) -> type[Environment]:
    result = compile_source(SourceFile("spec.env", text))
    assert result.ok, [(d.code.code, d.message) for d in result.diagnostics]
    return environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))


# ---- 1. checks read only the agent's run -------------------------------------------------------

PINNED = desk('''
  task open_printer {
    """Open a ticket titled "printer jam"."""
    init { tickets = [] }
    solution { let t = open_ticket(title="printer jam") }
    check "the ticket is open": not tickets[t.ticket_id].closed and t.title == "printer jam"
  }
''')


def test_a_check_pinned_to_a_solution_binding_is_an_error() -> None:
    diagnostic = only(check(PINNED), "E4007")
    assert "binding 't'" in diagnostic.message
    assert diagnostic.help is not None
    for way in ("any(", "count(", "first(", "for t in tickets"):
        assert way in diagnostic.help, diagnostic.help


def test_bindings_still_pass_generated_ids_to_later_steps() -> None:
    spec = desk('''
  task open_and_close {
    """Open a ticket titled "printer jam" and close it with the note "fixed"."""
    init { tickets = [] }
    solution {
      let t = open_ticket(title="printer jam")
      close(ticket_id=t.ticket_id, note="fixed")
    }
    check "it is closed with the note":
      any(x.title == "printer jam" and x.closed and x.note == "fixed" for x in tickets)
  }
''')
    assert found(check(spec)) == []


FOUND_BY_CONTENT = desk('''
  task open_printer {
    """Open one ticket titled "printer jam"."""
    init { tickets = [Ticket(ticket_id="T-0001", title="old", closed=true)] }
    solution { open_ticket(title="printer jam") }
    check "one open printer ticket":
      count(x for x in tickets if x.title == "printer jam" and not x.closed) == 1
    check "the old ticket is untouched": tickets["T-0001"] == initial.tickets["T-0001"]
  }
''')


def test_an_extra_insert_before_the_right_one_fails_the_frame() -> None:
    assert found(check(FOUND_BY_CONTENT)) == []
    env = build(FOUND_BY_CONTENT)()
    env.reset(task="open_printer")
    # an agent opens a scratch ticket first, so its printer ticket gets another key: the
    # checks find it by content, the frame counts the scratch ticket as collateral
    first = env.call("open_ticket", {"title": "scratch"})
    assert first["success"] and first["data"]["ticket_id"] == "T-0002"
    second = env.call("open_ticket", {"title": "printer jam"})
    assert second["data"]["ticket_id"] == "T-0003"
    evaluation = env.evaluate()
    assert all(c["passed"] for c in evaluation["checks"])
    assert evaluation["frame"] == {
        "checked": True,
        "held": False,
        "violation": "2 rows inserted into tickets, the solution inserts 1",
    }
    assert evaluation["success"] is False and evaluation["reward"] == 0.0


def test_grading_rejects_doing_nothing_only_reading_and_a_wrong_row() -> None:
    env_class = build(FOUND_BY_CONTENT)
    nothing = env_class()
    nothing.reset(task="open_printer")
    assert nothing.evaluate()["success"] is False
    reading = env_class()
    reading.reset(task="open_printer")
    assert reading.call("count_open", {})["success"]
    assert reading.evaluate()["success"] is False
    wrong = env_class()
    wrong.reset(task="open_printer")
    wrong.call("open_ticket", {"title": "printer jam"})
    wrong.call("open_ticket", {"title": "printer jam"})  # two of them: not what was asked
    assert wrong.evaluate()["reward"] == 0.0


def test_grading_accepts_the_steps_in_another_order() -> None:
    spec = desk('''
  task close_both {
    """Close tickets T-0001 and T-0002."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a"), Ticket(ticket_id="T-0002", title="b")] }
    solution {
      close(ticket_id="T-0001")
      close(ticket_id="T-0002")
    }
    check "both are closed": all(t.closed for t in tickets)
    check "nothing was opened": len(tickets) == len(initial.tickets)
  }
''')
    assert found(check(spec)) == []
    env = build(spec)()
    env.reset(task="close_both")
    env.call("close", {"ticket_id": "T-0002"})
    env.call("close", {"ticket_id": "T-0001"})
    assert env.evaluate()["success"] is True


def test_a_failed_call_does_not_stop_a_replay_with_steps_left_out() -> None:
    env_class = build(desk('''
  task open_close_close {
    """Open a ticket "b" (it gets T-0002), close it, then close T-0001."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a")] }
    solution {
      open_ticket(title="b")
      close(ticket_id="T-0002")
      close(ticket_id="T-0001")
    }
    check "b is closed": any(x.title == "b" and x.closed for x in tickets)
    check "a is closed": tickets["T-0001"].closed
  }
'''))
    env = env_class()
    # without the first step the second fails (no T-0002); the third still runs
    results = env.solve("open_close_close", leave_out=[0])
    assert [r["success"] for r in results] == [False, True]
    assert env.evaluate()["checks"][1]["passed"] is True
    strict = env_class().solve("open_close_close")
    assert [r["success"] for r in strict] == [True, True, True]


# ---- 2. answer checks ----------------------------------------------------------------------------

QUESTION = desk('''
  task how_many_open {
    """How many tickets are open?"""
    init { tickets = [Ticket(title="a"), Ticket(title="b"), Ticket(title="c", closed=true)] }
    solution {
      count_open()
      answer "2 tickets are open."
    }
    check "tells the number": mentions(answer, 2)
    check "nothing was closed": not called("close")
  }
''')


def test_a_question_task_is_graded_by_the_agents_answer() -> None:
    assert found(check(QUESTION)) == []
    env_class = build(QUESTION)
    assert env_class.TASKS["how_many_open"].answer == "2 tickets are open."
    env = env_class()
    env.reset(task="how_many_open")
    env.call("count_open", {})
    right = env.evaluate(answer="There are 2 open tickets.")
    assert right["success"] is True and right["answer"] == "There are 2 open tickets."
    wrong = env.evaluate(answer="3 are open")
    # the guard "nothing was closed" holds but gives no credit: the answer is all the progress
    assert wrong["success"] is False and wrong["reward"] == 0.0
    assert wrong["progress"] == {"passed": 0, "total": 1}
    assert wrong["guards"] == {"passed": 1, "total": 1}
    assert env.evaluate()["success"] is False  # an agent that says nothing
    with pytest.raises(TypeError, match="answer must be a str"):
        env.evaluate(answer=2)  # type: ignore[arg-type]


def test_a_question_is_exempt_from_the_reading_control_not_from_doing_nothing() -> None:
    result = check(QUESTION)
    (report,) = result.task_reports
    assert report.controls == {"nothing": 0.0, "only_reading": None}
    said_nothing = desk('''
  task how_many_open {
    """How many tickets are open?"""
    init { tickets = [Ticket(title="a")] }
    solution {
      count_open()
      answer "1"
    }
    check "tells the number": len(answer) >= 0
  }
''')
    assert "E4008" in found(check(said_nothing))


def test_an_answer_check_needs_the_reference_answer() -> None:
    spec = desk('''
  task how_many_open {
    """How many tickets are open?"""
    init { tickets = [Ticket(title="a")] }
    solution { count_open() }
    check "tells the number": "1" in answer
  }
''')
    diagnostic = only(check(spec), "E4010")
    assert 'answer "..."' in (diagnostic.help or "")


def test_envdsl_run_grades_the_answer_given_on_the_command_line(tmp_path: Path) -> None:
    spec = tmp_path / "desk.env"
    spec.write_text(QUESTION, encoding="utf-8")
    calls = tmp_path / "calls.jsonl"
    calls.write_text('{"name": "count_open", "arguments": {}}\n', encoding="utf-8")
    runner = CliRunner()
    base = ["run", str(spec), "--task", "how_many_open", "--calls", str(calls)]
    answered = runner.invoke(main, [*base, "--answer", "Two: 2 are open.", "--format", "json"])
    assert answered.exit_code == 0, answered.output
    evaluation = json.loads(answered.output)["evaluation"]
    assert evaluation["success"] is True and evaluation["answer"] == "Two: 2 are open."
    silent = runner.invoke(main, base)
    assert silent.exit_code == 0, silent.output
    assert "FAIL  tells the number" in silent.output and "success: false" in silent.output
    stray = runner.invoke(main, ["run", str(spec), "--calls", str(calls), "--answer", "2"])
    assert stray.exit_code != 0 and "--task" in stray.output
    assert "Traceback" not in stray.output


# ---- 3. negative controls ------------------------------------------------------------------------


def test_a_task_solved_by_doing_nothing_is_an_error() -> None:
    spec = desk('''
  task close_t1 {
    """Close ticket T-0001."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a"), Ticket(ticket_id="T-0002", title="b")] }
    solution { close(ticket_id="T-0001") }
    check "T-0002 stays open": not tickets["T-0002"].closed
  }
''')
    result = check(spec)
    diagnostic = only(result, "E4008")
    assert "solved by doing nothing" in diagnostic.message
    assert result.task_reports[0].controls["nothing"] == 1.0


def test_a_task_solved_by_only_reading_is_an_error() -> None:
    spec = desk('''
  task close_t1 {
    """Look ticket T-0001 up, then close it."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a")] }
    solution {
      get_ticket(ticket_id="T-0001")
      close(ticket_id="T-0001")
    }
    check "it was looked up": called("get_ticket", ticket_id="T-0001")
  }
''')
    result = check(spec)
    diagnostic = only(result, "E4009")
    assert "solved by only reading" in diagnostic.message
    assert result.task_reports[0].controls == {"nothing": 0.0, "only_reading": 1.0}


def test_a_question_graded_only_by_the_lookup_is_solved_by_only_reading() -> None:
    spec = desk('''
  task how_many_open {
    """How many tickets are open?"""
    init { tickets = [Ticket(title="a")] }
    solution { count_open() }
    check "looked it up": called("count_open")
  }
''')
    diagnostic = only(check(spec), "E4009")
    assert "in answer" in (diagnostic.help or "")


def test_envdsl_verify_prints_the_reward_of_each_control(tmp_path: Path) -> None:
    spec = tmp_path / "desk.env"
    spec.write_text(
        desk('''
  task close_t1 {
    """Look ticket T-0001 up, then close it."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a")] }
    solution {
      get_ticket(ticket_id="T-0001")
      close(ticket_id="T-0001")
    }
    check "it is closed": tickets["T-0001"].closed
    check "it was looked up": called("get_ticket", ticket_id="T-0001")
  }
'''),
        encoding="utf-8",
    )
    text = CliRunner().invoke(main, ["verify", str(spec)])
    assert text.exit_code == 0, text.output
    assert "reward of doing nothing 0.00, only reading 0.50" in text.output
    assert "reward without step 2 (close): 0.50" in text.output
    document = CliRunner().invoke(main, ["verify", str(spec), "--format", "json"])
    (task,) = json.loads(document.output)["tasks"]
    assert task["controls"] == {"nothing": 0.0, "only_reading": 0.5}
    assert task["left_out"] == [{"step": 2, "tool": "close", "reward": 0.5}]


# ---- 4. under-specification ----------------------------------------------------------------------


def test_a_step_no_check_notices_is_reported() -> None:
    spec = desk('''
  task close_both {
    """Close tickets T-0001 and T-0002."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a"), Ticket(ticket_id="T-0002", title="b")] }
    solution {
      close(ticket_id="T-0001")
      close(ticket_id="T-0002")
    }
    check "T-0001 is closed": tickets["T-0001"].closed
  }
''')
    diagnostic = only(check(spec), "W5011")
    assert diagnostic.message == (
        "task 'close_both' succeeds without step 2 (close(ticket_id=\"T-0002\")): "
        "no check notices what it does"
    )


def test_leaving_out_a_step_whose_data_later_steps_use_skips_them_cleanly() -> None:
    env_class = build(desk('''
  task open_and_close {
    """Open a ticket titled "x" and close it."""
    init { tickets = [] }
    solution {
      let t = open_ticket(title="x")
      close(ticket_id=t.ticket_id)
    }
    check "it is closed": any(x.title == "x" and x.closed for x in tickets)
  }
'''))
    env = env_class()
    results = env.solve("open_and_close", leave_out=[0])
    assert results == []  # the close needed the left-out ticket: skipped, not crashed
    assert env.evaluate()["success"] is False
    assert [r["success"] for r in env.solve("open_and_close")] == [True, True]


def test_a_field_the_solution_sets_that_no_check_reads_is_reported() -> None:
    spec = desk('''
  task close_with_note {
    """Close ticket T-0001 with the note "fixed in 2.1"."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a")] }
    solution { close(ticket_id="T-0001", note="fixed in 2.1") }
    check "T-0001 is closed": tickets["T-0001"].closed
  }
''')
    diagnostic = only(check(spec), "W5012")
    assert "tickets.note" in diagnostic.message and "tickets.closed" not in diagnostic.message


def test_comparing_the_whole_row_counts_as_reading_every_field() -> None:
    spec = desk('''
  task close_with_note {
    """Close ticket T-0001 with the note "fixed in 2.1"; leave T-0002 alone."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a"), Ticket(ticket_id="T-0002", title="b")] }
    solution { close(ticket_id="T-0001", note="fixed in 2.1") }
    check "T-0001 is closed": tickets["T-0001"].closed
    check "T-0002 is untouched": tickets["T-0002"] == initial.tickets["T-0002"]
  }
''')
    assert found(check(spec)) == []


# ---- 5. discrimination ---------------------------------------------------------------------------


def test_a_check_true_in_every_state_is_reported() -> None:
    spec = desk('''
  task close_both {
    """Close tickets T-0001 and T-0002."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a"), Ticket(ticket_id="T-0002", title="b")] }
    solution {
      close(ticket_id="T-0001")
      close(ticket_id="T-0002")
    }
    check "both are closed": tickets["T-0001"].closed and tickets["T-0002"].closed
    check "the titles are short": all(len(t.title) < 10 for t in tickets)
  }
''')
    diagnostic = only(check(spec), "W5013")
    assert "the titles are short" in diagnostic.message
    assert "cannot tell a good run from a bad one" in diagnostic.message


def test_guards_are_not_reported_as_never_false() -> None:
    spec = desk('''
  task close_both {
    """Close tickets T-0001 and T-0002."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a"), Ticket(ticket_id="T-0002", title="b")] }
    solution {
      close(ticket_id="T-0001")
      close(ticket_id="T-0002")
    }
    check "both are closed": tickets["T-0001"].closed and tickets["T-0002"].closed
    check "no ticket is lost": len(tickets) == len(initial.tickets)
  }
''')
    assert found(check(spec)) == []


# ---- 6. a false check shows its values -----------------------------------------------------------

POINTS = '''
env Loyalty {
  """A loyalty programme."""
  entity Member { key member_id: str, points_spent: int = 0 }
  state {
    members: table Member
  }
  action redeem(member_id: str, points: int) {
    """Spend points."""
    let m = members.get(member_id) else "no such member"
    m.points_spent += points
  }
  task bo_redeems {
    """Bo (B) redeems 5000 points."""
    init { members = [Member(member_id="B")] }
    solution { redeem(member_id="B", points=3000) }
    check "Bo spent 5000 points": members["B"].points_spent == 5000 and len(members) == 1
  }
}
'''


def test_a_check_false_after_the_solution_shows_the_compared_values() -> None:
    result = check(POINTS)
    diagnostic = only(result, "E4005")
    assert diagnostic.message == (
        'check "Bo spent 5000 points" is false after the solution: '
        'members["B"].points_spent == 5000, where members["B"].points_spent is 3000'
    )
    (entry,) = render_json([result])["diagnostics"]
    assert entry["notes"] == ['where members["B"].points_spent is 3000']


def test_values_of_strings_enums_and_missing_rows_are_shown_as_the_spec_writes_them() -> None:
    spec = desk('''
  task close_with_note {
    """Close ticket T-0001 with the note "done"."""
    init { tickets = [Ticket(ticket_id="T-0001", title="a")] }
    solution { close(ticket_id="T-0001", note="fixed") }
    check "the note is done": tickets["T-0001"].note == "done" and tickets["T-0001"].closed
  }
''')
    message = only(check(spec), "E4005").message
    assert message.endswith('where tickets["T-0001"].note is "fixed"'), message


# ---- the verifier is a stage after codegen -------------------------------------------------------


def test_the_verifier_does_not_import_the_pipeline() -> None:
    code = "import sys, envdsl.tasks.verify; print('envdsl.pipeline' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert out.stdout.strip() == "False"


def report_of(result: CompileResult) -> dict[str, Any]:
    (report,) = result.task_reports
    as_json: dict[str, Any] = report.as_json()
    return as_json


def test_a_sound_task_reports_every_control_and_left_out_step() -> None:
    report = report_of(check(FOUND_BY_CONTENT))
    assert report["controls"] == {"nothing": 0.0, "only_reading": None}
    assert report["left_out"] == [{"step": 1, "tool": "open_ticket", "reward": 0.0}]
    assert report["problems"] == []


def test_answer_stays_a_soft_keyword() -> None:
    """`answer` still names tools, fields and parameters; only `answer "..."` in a solution
    and the bare name in a check are the agent's final message."""
    spec = '''
env Quiz {
  """A quiz."""
  entity Question { key qid: str, answer: str = "" }
  state {
    questions: table Question
  }
  action answer(qid: str, answer: str) {
    """Answer a question."""
    let q = questions.get(qid) else "no such question"
    q.answer = answer
  }
  task answer_q1 {
    """Answer Q1 with 42, then tell the user you did."""
    init { questions = [Question(qid="Q1")] }
    solution {
      answer(qid="Q1", answer="42")
      answer "Done: Q1 is answered with 42."
    }
    check "Q1 is answered": questions["Q1"].answer == "42" and called("answer", qid="Q1")
    check "says so": mentions(answer, "42")
  }
}
'''
    assert found(check(spec)) == []
    env = build(spec)()
    env.solve("answer_q1")
    assert env.evaluate(answer="42 it is")["success"] is True


# A check on the trace sees the call as the tool ran it: an argument left to its default was
# passed with the default (the reference solution's typed calls fill defaults in; an agent's
# JSON call leaving it out must be graded the same), and a value written another way in JSON
# (a datetime's offset spelled `Z`) is the same value.
TRACED = desk('''
  task close_quietly {
    """Close ticket T-0001 without a note."""
    init { tickets = [Ticket(ticket_id="T-0001", title="printer")] }
    solution { close(ticket_id="T-0001") }
    check "closed": tickets["T-0001"].closed
    check "closed with the empty note": called("close", ticket_id="T-0001", note="")
  }
''')


def test_called_sees_defaults_the_agent_left_out() -> None:
    assert found(check(TRACED)) == []
    env = build(TRACED)()
    env.reset(task="close_quietly")
    assert env.call("close", {"ticket_id": "T-0001"})["success"]
    assert env.evaluate()["success"] is True
    assert env.trace[-1].arguments == {"ticket_id": "T-0001", "note": ""}
    noted = build(TRACED)()
    noted.reset(task="close_quietly")
    assert noted.call("close", '{"ticket_id": "T-0001", "note": "done"}')["success"]
    # the solution leaves the note alone: writing one is outside the frame
    evaluation = noted.evaluate()
    assert evaluation["reward"] == 0.0
    assert evaluation["frame"]["violation"] == 'tickets["T-0001"].note changed'


def test_called_compares_values_not_their_json_spelling() -> None:
    env_class = build('''
env Clock {
  """A clock."""
  state { at: datetime? = none }
  action set_alarm(when: datetime) {
    """Set the alarm."""
    at = when
  }
  task wake {
    """Set the alarm to 2024-05-01 07:00 UTC."""
    solution { set_alarm(when=datetime("2024-05-01T07:00:00Z")) }
    check "set": at == datetime("2024-05-01T07:00:00Z")
    check "through the tool": called("set_alarm", when=datetime("2024-05-01T07:00:00Z"))
  }
}
''')
    for spelling in (
        "2024-05-01T07:00:00Z",
        "2024-05-01T07:00:00+00:00",
        "2024-05-01T09:00:00+02:00",
    ):
        env = env_class()
        env.reset(task="wake")
        assert env.call("set_alarm", {"when": spelling})["success"], spelling
        assert env.evaluate()["success"] is True, (spelling, env.evaluate())
