"""Mutation testing of task graders (issue 23, point 4) and W5006 judged by value (point 6).

Each kind of wrong run is shown surviving a weak check (W5030, with its calls and its state
difference) and killed once the check says what the task asks; right runs (independent steps
reordered, a list argument reordered) must keep the full reward (W5031 otherwise).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from envdsl.cli import main
from envdsl.pipeline import CompileResult, check_source
from envdsl.tasks.mutants import StartFacts, wrong_runs
from envdsl.util.source import SourceFile

DESK = '''
env Desk {
  """Support tickets."""
  enum Status { open, resolved, cancelled }
  entity Ticket {
    key ticket_id: str
    owner: str
    status: Status = Status.open
    tags: list[str] = []
  }
  state {
    tickets: table Ticket
  }
  action resolve(ticket_id: str) {
    """Mark a ticket solved."""
    let t = tickets.get(ticket_id) else "no such ticket"
    t.status = Status.resolved
  }
  action cancel(ticket_id: str) {
    """Cancel a ticket nobody needs any more."""
    let t = tickets.get(ticket_id) else "no such ticket"
    t.status = Status.cancelled
  }
  action set_tags(ticket_id: str, tags: list[str]) {
    """Replace a ticket's tags."""
    let t = tickets.get(ticket_id) else "no such ticket"
    t.tags = tags
  }
  action assign(ticket_id: str, owner: str) {
    """Give a ticket to someone."""
    let t = tickets.get(ticket_id) else "no such ticket"
    require t.status == Status.open else "only open tickets are assigned"
    t.owner = owner
  }
  query get_ticket(ticket_id: str) -> Ticket {
    """One ticket."""
    let t = tickets.get(ticket_id) else "no such ticket"
    return t
  }
  task the_task {
    """__DOC__"""
    init {
      tickets = [Ticket(ticket_id="T1", owner="ana"), Ticket(ticket_id="T2", owner="bo")]
    }
    solution {
__SOLUTION__
    }
__CHECKS__
  }
}
'''


def spec(solution: str, checks: str, doc: str = "Do what the tests say.") -> str:
    return (
        DESK.replace("__DOC__", doc).replace("__SOLUTION__", solution).replace("__CHECKS__", checks)
    )


def check(text: str) -> CompileResult:
    return check_source(SourceFile("desk.env", text))


def codes_of(result: CompileResult) -> list[str]:
    return [d.code.code for d in result.diagnostics]


def mutation(result: CompileResult) -> dict[str, object]:
    (report,) = result.task_reports
    assert report.mutation is not None
    data: dict[str, object] = report.mutation.as_json()
    return data


# ---- (a) a tool swapped for another taking the same key --------------------------------------
def test_swapped_tool_survives_a_check_that_only_says_not_open() -> None:
    result = check(
        spec(
            '      resolve(ticket_id="T1")',
            '    check "T1 is done": ' 'tickets["T1"].status != Status.open',
        )
    )
    assert codes_of(result) == ["W5030"]
    warning = result.diagnostics[0]
    assert "cancel instead of resolve" in warning.message
    assert any('cancel(ticket_id="T1")' in note for note in warning.notes)
    assert any('tickets["T1"].status: "resolved" -> "cancelled"' in n for n in warning.notes)


def test_swapped_tool_is_killed_by_a_check_on_the_asked_value() -> None:
    result = check(
        spec(
            '      resolve(ticket_id="T1")',
            '    check "T1 is resolved": ' 'tickets["T1"].status == Status.resolved',
        )
    )
    assert codes_of(result) == []
    report = mutation(result)
    assert report["killed"] == report["tried"]
    assert report["by_kind"]["swap"]["tried"] >= 1  # type: ignore[index]


# ---- (b) one argument changed to another existing value ---------------------------------------
def test_other_existing_key_is_tried_and_killed() -> None:
    result = check(
        spec(
            '      assign(ticket_id="T1", owner="carl")',
            '    check "T1 is carl\'s": ' 'tickets["T1"].owner == "carl"',
        )
    )
    assert codes_of(result) == []
    text = json.dumps(mutation(result))
    assert '"argument"' in text  # ticket_id="T2" was tried; the frame and the check kill it


def test_other_enum_member_survives_then_killed() -> None:
    weak = spec(
        '      resolve(ticket_id="T1")\n      set_tags(ticket_id="T1", tags=["done"])',
        '    check "T1 is closed and tagged": tickets["T1"].status != Status.open and '
        '"done" in tickets["T1"].tags',
    )
    facts_text = json.dumps(mutation(check(weak)))
    assert "argument" in facts_text
    strong = weak.replace("!= Status.open", "== Status.resolved")
    assert "W5030" not in codes_of(check(strong))


# ---- (c) one extra write on a row the task touches --------------------------------------------
def test_extra_write_on_a_touched_row_is_killed_by_the_frame() -> None:
    result = check(
        spec(
            '      assign(ticket_id="T1", owner="carl")',
            '    check "T1 is carl\'s": ' 'tickets["T1"].owner == "carl"',
        )
    )
    report = mutation(result)
    extra = report["by_kind"]["extra"]  # type: ignore[index]
    assert extra["tried"] >= 2 and extra["killed"] == extra["tried"]


def test_generation_is_bounded_and_deterministic() -> None:
    from envdsl.generated.modules import environment_class, load_module
    from envdsl.pipeline import compile_source

    text = spec(
        '      resolve(ticket_id="T1")',
        '    check "T1 is resolved": ' 'tickets["T1"].status == Status.resolved',
    )
    compiled = compile_source(SourceFile("desk.env", text))
    env_class = environment_class(
        load_module(compiled.artifacts["module"], compiled.artifacts["name"])
    )
    runs = []
    for _ in range(2):
        env = env_class()
        env.reset(task="the_task")
        facts = StartFacts.of(env)
        reference = [("resolve", {"ticket_id": "T1"})]
        runs.append(
            [(m.kind, m.calls, m.answer) for m in wrong_runs(facts, reference, [0], "", False)]
        )
    assert runs[0] == runs[1]
    kinds = {kind for kind, _, _ in runs[0]}
    assert {"swap", "argument", "extra"} <= kinds
    assert len(runs[0]) <= 40
    assert mutation(check(text)) == mutation(check(text))


# ---- (e) answers that game a text check -------------------------------------------------------
QUESTION = '''      get_ticket(ticket_id="T2")
      answer "T2 belongs to bo."'''


def test_substring_answer_check_is_gamed_by_every_candidate_and_by_negation() -> None:
    result = check(
        spec(
            QUESTION,
            '    check "names the owner": "bo" in answer\n'
            '    check "nothing changed": tickets == initial.tickets',
            doc="Whose is ticket T2?",
        )
    )
    messages = [d.message for d in result.diagnostics if d.code.code == "W5030"]
    assert any("every candidate" in m for m in messages), messages
    notes = [n for d in result.diagnostics for n in d.notes]
    assert any("negated answer" in n for n in notes), notes


def test_mentions_kills_the_gaming_answers() -> None:
    result = check(
        spec(
            QUESTION,
            '    check "names the owner": mentions(answer, "bo")\n'
            '    check "nothing changed": tickets == initial.tickets',
            doc="Whose is ticket T2?",
        )
    )
    assert "W5030" not in codes_of(result), [d.message for d in result.diagnostics]
    report = mutation(result)
    answers = report["by_kind"]["answer"]  # type: ignore[index]
    assert answers["tried"] == 3 and answers["killed"] == 3


COUNT = '''      get_ticket(ticket_id="T1")
      get_ticket(ticket_id="T2")
      answer "2 tickets are open."'''


def test_a_substring_check_of_a_count_is_gamed_by_a_hedge() -> None:
    result = check(
        spec(
            COUNT,
            '    check "gives the count": contains(answer, "2")\n'
            '    check "nothing changed": tickets == initial.tickets',
            doc="How many tickets are open?",
        )
    )
    notes = [n for d in result.diagnostics if d.code.code == "W5030" for n in d.notes]
    assert any("hedged answer '2 or 3'" in n for n in notes), notes


def test_mentions_kills_the_hedged_count() -> None:
    result = check(
        spec(
            COUNT,
            '    check "gives the count": mentions(answer, count(t for t in tickets))\n'
            '    check "nothing changed": tickets == initial.tickets',
            doc="How many tickets are open?",
        )
    )
    assert "W5030" not in codes_of(result), [d.message for d in result.diagnostics]
    answers = mutation(result)["by_kind"]["answer"]  # type: ignore[index]
    assert answers["tried"] == answers["killed"] == 3  # empty, negated, hedged


# ---- right runs -------------------------------------------------------------------------------
def test_independent_steps_reordered_keep_the_full_reward() -> None:
    result = check(
        spec(
            '      resolve(ticket_id="T1")\n      cancel(ticket_id="T2")',
            '    check "T1 resolved": tickets["T1"].status == Status.resolved\n'
            '    check "T2 cancelled": tickets["T2"].status == Status.cancelled',
        )
    )
    assert codes_of(result) == []
    right = mutation(result)["right"]
    assert right == {"ok": 1, "tried": 1}


def test_dependent_steps_are_not_a_right_run() -> None:
    # assign needs an open ticket: resolve first makes assign refuse, so the order is the task's
    result = check(
        spec(
            '      assign(ticket_id="T1", owner="carl")\n      resolve(ticket_id="T1")',
            '    check "T1 is carl\'s and resolved": tickets["T1"].owner == "carl" '
            'and tickets["T1"].status == Status.resolved',
        )
    )
    assert codes_of(result) == []
    assert mutation(result)["right"] == {"ok": 0, "tried": 0}


def test_list_argument_in_another_order_fails_a_check_on_its_first_item() -> None:
    weak = spec(
        '      set_tags(ticket_id="T1", tags=["billing", "urgent"])',
        '    check "T1 has both tags": tickets["T1"].tags[0] == "billing" and '
        'len(tickets["T1"].tags) == 2 and "urgent" in tickets["T1"].tags',
    )
    result = check(weak)
    assert codes_of(result) == ["W5031"]
    warning = result.diagnostics[0]
    assert 'fails check "T1 has both tags"' in warning.message
    assert any('tags=["urgent", "billing"]' in note for note in warning.notes)
    fixed = spec(
        '      set_tags(ticket_id="T1", tags=["billing", "urgent"])',
        '    check "T1 has both tags": same_items(tickets["T1"].tags, ["billing", "urgent"])',
    )
    assert codes_of(check(fixed)) == []


def test_an_in_order_comparison_with_a_literal_is_w5021s_alone() -> None:
    result = check(
        spec(
            '      set_tags(ticket_id="T1", tags=["billing", "urgent"])',
            '    check "T1 has both tags": tickets["T1"].tags == ["billing", "urgent"]',
        )
    )
    assert codes_of(result) == ["W5021"]


# ---- refused mutants --------------------------------------------------------------------------
def test_refused_calls_are_counted_apart() -> None:
    result = check(
        spec(
            '      assign(ticket_id="T1", owner="carl")',
            '    check "T1 is carl\'s": ' 'tickets["T1"].owner == "carl"',
        )
    )
    report = mutation(result)
    # assign after resolve/cancel is refused: the refused mutants are neither killed nor tried
    assert isinstance(report["refused"], int)
    kinds = report["by_kind"]
    assert sum(v["tried"] for v in kinds.values()) == report["tried"]  # type: ignore[union-attr]


# ---- verify: the score in text and JSON, --trace-dir replayed by envdsl run ------------------
def test_verify_prints_the_score_and_writes_survivors_that_run_replays(tmp_path: Path) -> None:
    path = tmp_path / "desk.env"
    path.write_text(
        spec(
            '      resolve(ticket_id="T1")',
            '    check "T1 is done": ' 'tickets["T1"].status != Status.open',
        ),
        encoding="utf-8",
    )
    runner = CliRunner()
    traces = tmp_path / "traces"
    text = runner.invoke(main, ["verify", str(path), "--trace-dir", str(traces)])
    assert "mutation score: " in text.output and "wrong runs killed" in text.output
    files = sorted(traces.glob("*.jsonl"))
    assert files, text.output
    assert "replay a survivor: envdsl run" in text.output
    replay = runner.invoke(
        main, ["run", str(path), "--task", "the_task", "--calls", str(files[0]), "--format", "json"]
    )
    document = json.loads(replay.output)
    assert document["evaluation"]["reward"] == 1.0
    assert [c["name"] for c in document["calls"]] == ["cancel"]
    as_json = json.loads(runner.invoke(main, ["verify", str(path), "--format", "json"]).output)
    score = as_json["tasks"][0]["mutation"]
    assert score["tried"] > score["killed"] and score["survivors"][0]["kind"] == "swap"


# ---- point 6: W5006 by the check's value at the start -----------------------------------------
def test_a_conjunct_true_at_the_start_is_reported_though_the_check_reads_initial() -> None:
    result = check(
        spec(
            '      resolve(ticket_id="T1")',
            '    check "T1 resolved": tickets["T1"].status == Status.resolved\n'
            '    check "T2 kept": tickets["T2"].owner == "bo" and '
            'tickets["T2"] == initial.tickets["T2"]',
        )
    )
    warning = next(d for d in result.diagnostics if d.code.code == "W5006")
    assert 'by its part `tickets["T2"].owner == "bo"`' in warning.message
    assert "guard" in warning.help and "initial." in warning.help


def test_a_guard_written_against_initial_is_not_reported() -> None:
    result = check(
        spec(
            '      resolve(ticket_id="T1")',
            '    check "T1 resolved": tickets["T1"].status == Status.resolved\n'
            '    check "T2 kept": tickets["T2"] == initial.tickets["T2"]',
        )
    )
    assert "W5006" not in codes_of(result)
