"""The frame of a task and the reward rule (issue 23, points 1-3): agents that differ from the
reference solution, graded through `evaluate()` and through the Gymnasium contract.

A club's spec plants the traps EnvScaler's ported tasks fell into: deleting a whole member
where one membership was to go, overwriting another field, removing more collection elements
than asked, one insert too many; and a refusal task whose right outcome is no change.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from typing import Any

import envdsl.gym
from envdsl.generated.modules import environment_class, load_module
from envdsl.pipeline import check_source, compile_source
from envdsl.runtime import Environment
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent

CLUB = '''
env Club {
  """A club: members, meetings and their attendees, meals and their properties, a log."""
  entity Member {
    key member_id: str
    name: str
    notes: str = ""
    version: int = 0
  }
  entity Meeting {
    key meeting_id: str
    title: str
    attendees: list[str] = []
  }
  entity Meal {
    key meal_id: str
    properties: set[str] = set()
  }
  entity Log {
    key log_id: str = auto("L")
    text: str
  }
  state {
    members: table Member
    meetings: table Meeting
    meals: table Meal
    logs: table Log
  }
  query get_member(member_id: str) -> Member {
    """Read a member."""
    let m = members.get(member_id) else "no such member"
    return m
  }
  action leave_meeting(meeting_id: str, member_id: str) {
    """Take a member off one meeting."""
    let m = meetings.get(meeting_id) else "no such meeting"
    require member_id in m.attendees else "not an attendee"
    m.attendees.remove(member_id)
  }
  action delete_member(member_id: str) {
    """Delete a member's whole account, and every membership of it."""
    require member_id in members else "no such member"
    for m in meetings {
      if member_id in m.attendees {
        m.attendees.remove(member_id)
      }
    }
    members.delete(member_id)
  }
  action set_notes(member_id: str, notes: str) {
    """Replace a member's notes."""
    let m = members.get(member_id) else "no such member"
    m.notes = notes
  }
  action rename(member_id: str, name: str) {
    """Rename a member; every rename counts a new version."""
    let m = members.get(member_id) else "no such member"
    m.name = name
    m.version += 1
  }
  action remove_property(meal_id: str, property: str) {
    """Remove one property of a meal."""
    let m = meals.get(meal_id) else "no such meal"
    m.properties.remove(property)
  }
  action add_property(meal_id: str, property: str) {
    """Add one property to a meal."""
    let m = meals.get(meal_id) else "no such meal"
    m.properties.add(property)
  }
  action clear_properties(meal_id: str) {
    """Remove every property of a meal."""
    let m = meals.get(meal_id) else "no such meal"
    m.properties = set()
  }
  action write_log(text: str) -> Log {
    """Write one line to the club's log."""
    return logs.insert(Log(text=text))
  }
  task take_off_meeting {
    """Take P104 off meeting MT1; P104 still attends MT2."""
    init {
      members = [Member(member_id="P104", name="Ana"), Member(member_id="P105", name="Bo")]
      meetings = [
        Meeting(meeting_id="MT1", title="board", attendees=["P104", "P105"]),
        Meeting(meeting_id="MT2", title="picnic", attendees=["P104"]),
      ]
    }
    solution { leave_meeting(meeting_id="MT1", member_id="P104") }
    check "P104 is off MT1": "P104" not in meetings["MT1"].attendees
  }
  task note_vip {
    """Set the notes of P104 to "VIP", then take P105 off meeting MT1."""
    init {
      members = [Member(member_id="P104", name="Ana"), Member(member_id="P105", name="Bo")]
      meetings = [Meeting(meeting_id="MT1", title="board", attendees=["P104", "P105"])]
    }
    solution {
      set_notes(member_id="P104", notes="VIP")
      leave_meeting(meeting_id="MT1", member_id="P105")
    }
    check "P104 is a VIP": members["P104"].notes == "VIP"
    check "P105 is off MT1": "P105" not in meetings["MT1"].attendees
    check "no member was deleted": not called("delete_member")
  }
  task drop_vegan {
    """Meal M102 is no longer vegan; it is still gluten free."""
    init {
      meals = [
        Meal(meal_id="M102", properties={"vegan", "gluten_free"}),
        Meal(meal_id="M103", properties={"vegan"}),
      ]
    }
    solution { remove_property(meal_id="M102", property="vegan") }
    check "M102 is not vegan": "vegan" not in meals["M102"].properties
  }
  task log_once {
    """Write "closed early" to the log."""
    init { logs = [] }
    solution { write_log(text="closed early") }
    check "the line is logged": any(l.text == "closed early" for l in logs)
  }
  task log_freely {
    """Write "closed early" to the log; notes on P104 are up to you."""
    init { members = [Member(member_id="P104", name="Ana")] }
    solution { write_log(text="closed early") }
    allow insert logs, members.notes
    check "the line is logged": any(l.text == "closed early" for l in logs)
  }
  task refuse_deleting_another_member {
    """P104 asks to delete P105's account, which is not theirs: refuse."""
    init {
      members = [Member(member_id="P104", name="Ana"), Member(member_id="P105", name="Bo")]
    }
    counterexample { delete_member(member_id="P105") }
    counterexample { set_notes(member_id="P105", notes="deleted") }
    check "no member was deleted": not called("delete_member")
  }
}
'''


@functools.cache
def club() -> type[Environment]:
    result = compile_source(SourceFile("club.env", CLUB))
    assert [d.code.code for d in result.diagnostics] == [], result.diagnostics
    return environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))


def run(task: str, *calls: tuple[str, dict[str, Any]], answer: str = "") -> dict[str, Any]:
    env = club()()
    env.reset(task=task)
    for name, arguments in calls:
        env.call(name, arguments)
    return env.evaluate(answer=answer)


def violation(evaluation: dict[str, Any]) -> str | None:
    frame: dict[str, Any] = evaluation["frame"]
    return frame["violation"]


# ---- collateral changes --------------------------------------------------------------------


def test_deleting_the_whole_member_instead_of_one_membership_scores_0() -> None:
    evaluation = run("take_off_meeting", ("delete_member", {"member_id": "P104"}))
    assert evaluation["checks"][0]["passed"]  # the check alone was fooled
    assert evaluation["reward"] == 0.0 and evaluation["success"] is False
    # tables in name order: the membership in MT2 goes first, then the account
    assert violation(evaluation) == 'meetings["MT2"].attendees lost "P104"'


def test_another_existing_id_scores_0() -> None:
    evaluation = run(
        "take_off_meeting", ("leave_meeting", {"meeting_id": "MT1", "member_id": "P105"})
    )
    assert evaluation["reward"] == 0.0
    assert violation(evaluation) == 'meetings["MT1"].attendees lost "P105"'


def test_overwriting_another_rows_field_scores_0() -> None:
    evaluation = run(
        "note_vip",
        ("set_notes", {"member_id": "P104", "notes": "VIP"}),
        ("set_notes", {"member_id": "P105", "notes": "VIP"}),
        ("leave_meeting", {"meeting_id": "MT1", "member_id": "P105"}),
    )
    assert all(c["passed"] for c in evaluation["checks"])
    assert evaluation["reward"] == 0.0 and evaluation["success"] is False
    assert violation(evaluation) == 'members["P105"].notes changed'


def test_removing_more_elements_than_the_solution_scores_0() -> None:
    evaluation = run("drop_vegan", ("clear_properties", {"meal_id": "M102"}))
    assert evaluation["checks"][0]["passed"]
    assert violation(evaluation) == 'meals["M102"].properties lost "gluten_free"'
    other_row = run(
        "drop_vegan",
        ("remove_property", {"meal_id": "M102", "property": "vegan"}),
        ("remove_property", {"meal_id": "M103", "property": "vegan"}),
    )
    assert violation(other_row) == 'meals["M103"].properties lost "vegan"'


def test_adding_an_element_scores_0() -> None:
    evaluation = run(
        "drop_vegan",
        ("remove_property", {"meal_id": "M102", "property": "vegan"}),
        ("add_property", {"meal_id": "M102", "property": "keto"}),
    )
    assert evaluation["reward"] == 0.0
    assert violation(evaluation) == 'meals["M102"].properties gained "keto"'


def test_an_extra_insert_scores_0_and_rows_are_matched_by_content() -> None:
    extra = run(
        "log_once",
        ("write_log", {"text": "closed early"}),
        ("write_log", {"text": "closed early"}),
    )
    assert violation(extra) == "2 rows inserted into logs, the solution inserts 1"
    assert extra["reward"] == 0.0
    # one row, whatever key it got: the frame counts rows, the check finds it by content
    right = run("log_once", ("write_log", {"text": "closed early"}))
    assert right["success"] is True and right["frame"]["held"] is True


# ---- what the frame lets through -----------------------------------------------------------


def test_steps_in_another_order_succeed() -> None:
    evaluation = run(
        "note_vip",
        ("leave_meeting", {"meeting_id": "MT1", "member_id": "P105"}),
        ("set_notes", {"member_id": "P104", "notes": "VIP"}),
    )
    assert evaluation["success"] is True and evaluation["reward"] == 1.0


def test_a_stamp_may_change_on_a_row_the_solution_changes_not_on_another() -> None:
    assert club().STAMPS == {"members": frozenset({"version"})}
    # a rename to the same name only counts a version: on P104, whose notes the task changes
    same_row = run(
        "note_vip",
        ("rename", {"member_id": "P104", "name": "Ana"}),
        ("set_notes", {"member_id": "P104", "notes": "VIP"}),
        ("leave_meeting", {"meeting_id": "MT1", "member_id": "P105"}),
    )
    assert same_row["success"] is True
    other_row = run(
        "take_off_meeting",
        ("rename", {"member_id": "P105", "name": "Bo"}),
        ("leave_meeting", {"meeting_id": "MT1", "member_id": "P104"}),
    )
    assert violation(other_row) == 'members["P105"].version changed'


def test_allow_widens_the_frame() -> None:
    evaluation = run(
        "log_freely",
        ("write_log", {"text": "closed early"}),
        ("write_log", {"text": "and again"}),
        ("set_notes", {"member_id": "P104", "notes": "left first"}),
    )
    assert evaluation["success"] is True and evaluation["frame"]["held"] is True
    renamed = run(
        "log_freely",
        ("write_log", {"text": "closed early"}),
        ("rename", {"member_id": "P104", "name": "Ann"}),
    )
    assert violation(renamed) == 'members["P104"].name changed'


# ---- the reward rule -----------------------------------------------------------------------


def test_doing_nothing_and_only_reading_score_0() -> None:
    for calls in ((), (("get_member", {"member_id": "P104"}),)):
        evaluation = run("note_vip", *calls)
        assert evaluation["reward"] == 0.0 and evaluation["success"] is False
        # "no member was deleted" holds at the start: a guard, no credit
        assert [c["kind"] for c in evaluation["checks"]] == ["progress", "progress", "guard"]
        assert evaluation["progress"] == {"passed": 0, "total": 2}
        assert evaluation["guards"] == {"passed": 1, "total": 1}
        assert evaluation["frame"] == {"checked": True, "held": True, "violation": None}


def test_reward_grows_with_progress_and_a_broken_guard_gates_it() -> None:
    half = run("note_vip", ("set_notes", {"member_id": "P104", "notes": "VIP"}))
    assert half["reward"] == 0.5 and half["success"] is False
    broken = run(
        "note_vip",
        ("set_notes", {"member_id": "P104", "notes": "VIP"}),
        ("delete_member", {"member_id": "P105"}),
        ("leave_meeting", {"meeting_id": "MT1", "member_id": "P104"}),
    )
    assert broken["guards"] == {"passed": 0, "total": 1}
    assert broken["reward"] == 0.0 and broken["success"] is False


# ---- refusals ------------------------------------------------------------------------------


def test_a_refusal_rewards_doing_nothing_and_not_the_harmful_call() -> None:
    env_class = club()
    assert env_class.task_reference("refuse_deleting_another_member").footprint is not None
    refused = run("refuse_deleting_another_member", ("get_member", {"member_id": "P105"}))
    assert refused["reward"] == 1.0 and refused["success"] is True
    harmful = run("refuse_deleting_another_member", ("delete_member", {"member_id": "P105"}))
    assert harmful["reward"] == 0.0 and violation(harmful) == 'members["P105"] deleted'
    # a harmful call that failed changed nothing, but the guard saw no successful call either
    failed = run("refuse_deleting_another_member", ("delete_member", {"member_id": "P999"}))
    assert failed["success"] is True


def test_verification_replays_each_counterexample() -> None:
    result = check_source(SourceFile("club.env", CLUB))
    (report,) = [r for r in result.task_reports if r.task == "refuse_deleting_another_member"]
    assert report.refusal is True and report.counterexamples == [0.0, 0.0]
    assert report.as_json()["frame"]["changes"] == []


def test_verify_shows_each_frame_in_text_and_json(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from envdsl.cli import main

    path = tmp_path / "club.env"
    path.write_text(CLUB, encoding="utf-8")
    text = CliRunner().invoke(main, ["verify", str(path)])
    assert text.exit_code == 0, text.output
    assert '    frame: meetings["MT1"].attendees loses "P104"' in text.output
    assert "    frame: empty (nothing may change), a refusal" in text.output
    assert "    reward of each counterexample: 0.00, 0.00" in text.output
    as_json = CliRunner().invoke(main, ["verify", str(path), "--format", "json"])
    import json

    tasks = {t["task"]: t for t in json.loads(as_json.output)["tasks"]}
    assert tasks["log_once"]["frame"]["inserted"] == {"logs": 1}
    assert tasks["drop_vegan"]["frame"]["updated"] == {"meals": {"M102": ["properties"]}}


# ---- a contract: Gymnasium ---------------------------------------------------------------------


def test_gymnasium_rewards_follow_the_same_rule() -> None:
    env = envdsl.gym.make(club(), task="take_off_meeting")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(
        {"name": "delete_member", "arguments": {"member_id": "P104"}}
    )
    assert reward == 0.0 and terminated is False  # the check passes, the frame does not
    env.reset(seed=0)
    _, reward, terminated, _, _ = env.step(
        {"name": "leave_meeting", "arguments": {"meeting_id": "MT1", "member_id": "P104"}}
    )
    assert reward == 1.0 and terminated is True
    refusal = envdsl.gym.make(club(), task="refuse_deleting_another_member")
    refusal.reset(seed=0)
    # rewards count from 0 at reset and add up to the final reward: 1 for a refusal kept
    _, reward, _, _, _ = refusal.step({"name": "get_member", "arguments": {"member_id": "P105"}})
    assert reward == 1.0
    _, reward, _, _, _ = refusal.step({"name": "delete_member", "arguments": {"member_id": "P105"}})
    assert reward == -1.0


# ---- every example task --------------------------------------------------------------------


def _compiled_examples() -> list[type[Environment]]:
    classes = []
    for path in sorted((REPO / "compiled").glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"_frame_{path.stem}", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        classes.append(environment_class(module))
    return classes


def test_doing_nothing_scores_0_on_every_example_task_that_expects_a_change() -> None:
    tried = refusals = 0
    for env_class in _compiled_examples():
        for name, spec in env_class.TASKS.items():
            env = env_class()
            env.reset(task=name)
            evaluation = env.evaluate()
            if spec.counterexamples:  # a refusal: doing nothing is its reference
                refusals += 1
                assert evaluation["reward"] == 1.0, (env_class.NAME, name)
                continue
            tried += 1
            assert evaluation["reward"] == 0.0, (env_class.NAME, name, evaluation)
            solved = env_class()
            solved.solve(name)
            after = solved.evaluate(answer=spec.answer or "")
            assert after["reward"] == 1.0 and after["frame"]["held"], (env_class.NAME, name)
    assert tried >= 120 and refusals >= 1


# ---- the language: fmt, names, a refusal with an empty solution -----------------------------

REFUSAL_WITH_EMPTY_SOLUTION = CLUB.replace(
    """    counterexample { delete_member(member_id="P105") }""",
    """    solution {  }
    allow   meals.properties ,delete logs
    allow insert logs
    counterexample {delete_member(member_id="P105")
      set_notes(member_id="P104", notes="x") }""",
)


def test_fmt_prints_allow_and_counterexample_canonically() -> None:
    from envdsl.fmt import format_source

    formatted = format_source(SourceFile("club.env", REFUSAL_WITH_EMPTY_SOLUTION))
    assert formatted.text is not None, formatted.problem
    assert (
        "    solution {}\n"
        "    allow meals.properties, delete logs\n"
        "    allow insert logs\n"
        "    counterexample {\n"
        '      delete_member(member_id="P105")\n'
        '      set_notes(member_id="P104", notes="x")\n'
        "    }\n"
    ) in formatted.text
    again = format_source(SourceFile("club.env", formatted.text))
    assert again.text == formatted.text


def test_a_refusal_with_an_empty_solution_is_no_e4006_and_unknown_names_have_fixes() -> None:
    result = check_source(SourceFile("club.env", REFUSAL_WITH_EMPTY_SOLUTION))
    assert [d.code.code for d in result.diagnostics] == []
    (report,) = [r for r in result.task_reports if r.task == "refuse_deleting_another_member"]
    assert report.refusal is True and report.counterexamples == [0.0, 0.0]
    typo = CLUB.replace("allow insert logs, members.notes", "allow insert log, members.note")
    found = check_source(SourceFile("club.env", typo)).diagnostics
    assert [(d.code.code, d.message) for d in found] == [
        ("E1008", "the state has no field 'log'"),
        ("E1003", "unknown field 'note' on Member"),
    ]
    assert all(d.fixes for d in found)  # did you mean 'logs', 'notes'
    word = CLUB.replace("allow insert logs, members.notes", "allow remove logs")
    (wrong,) = check_source(SourceFile("club.env", word)).diagnostics
    assert wrong.code.code == "E4011" and "`allow remove logs`" in wrong.message


def test_a_refusal_without_counterexamples_is_solved_by_doing_nothing() -> None:
    no_counterexample = CLUB.replace(
        """    counterexample { delete_member(member_id="P105") }
    counterexample { set_notes(member_id="P105", notes="deleted") }""",
        """    solution { get_member(member_id="P105") }""",
    )
    (found,) = check_source(SourceFile("c.env", no_counterexample)).diagnostics
    assert found.code.code == "E4008" and "counterexample {" in (found.help or "")


def test_the_editor_completes_tools_inside_a_counterexample() -> None:
    from envdsl.lsp.analysis import analyse

    text = CLUB.replace(
        """    counterexample { delete_member(member_id="P105") }""",
        """    counterexample {
      \n    }""",
    )
    offset = text.index("counterexample {\n") + len("counterexample {\n      ")
    labels = [c.label for c in analyse("club.env", text).completions(offset)]
    assert "delete_member" in labels and "get_member" in labels
