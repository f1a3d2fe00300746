"""`state.<field>` (issue 26, point 2): the state field, even where a parameter or local of
that name shadows it, in every expression and as a write target; E1011 says a parameter
shadows a table and offers `state.<name>`; `state` itself cannot name a state field (E1098)."""

from __future__ import annotations

import functools

from envdsl.diagnostics.render_text import render_text
from envdsl.fmt import format_source
from envdsl.generated.loader import environment_class, load_module
from envdsl.lsp.rename import apply_edits, rename
from envdsl.pipeline import check_source, compile_source
from envdsl.runtime import Environment
from envdsl.util.source import SourceFile

AIRLINE = '''env Air {
  entity Flight {
    key flight_id: str
    seats: int
    price: float
  }
  state {
    flights: table Flight
    count: int = 0
    note: str? = none
  }
  action book(flights: str, count: int) -> int {
    """Book seats on one flight."""
    let f = state.flights.get(flights) else "no flight"
    require f.seats >= count else "not enough seats"
    f.seats -= count
    state.count += count
    for g in state.flights {
      if g.flight_id == flights { g.price = g.price + 1.0 }
    }
    state.flights.insert(Flight(flight_id=flights + "X", seats=count, price=1.0))
    return state.count
  }
  query seats(flights: str) -> int {
    """Seats left on one flight."""
    return state.flights[flights].seats
  }
  query note_length(note: str) -> int {
    """The length of the stored note, or of the given one."""
    if state.note != none { return len(state.note) }
    return len(note)
  }
  task book_two {
    """Book two seats on F1."""
    init { flights = [Flight(flight_id="F1", seats=5, price=100.0)] }
    solution { book(flights="F1", count=2) }
    check "two seats are gone": state.flights["F1"].seats == 3 and state.count == 2
    check "a flight for the two": state.flights.get("F1X") != none
  }
}
'''


@functools.lru_cache(maxsize=None)
def build(text: str) -> type[Environment]:
    result = compile_source(SourceFile("spec.env", text))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)


def diagnostics(text: str) -> list[tuple[str, str]]:
    result = check_source(SourceFile("spec.env", text), verify=False)
    return [(d.code.code, d.message) for d in result.diagnostics]


def test_a_tool_reads_and_writes_the_table_its_parameter_is_named_like() -> None:
    env = build(AIRLINE)()
    env.reset(task="book_two")
    result = env.call("book", {"flights": "F1", "count": 2})
    assert result["success"], result
    assert result["data"] == 2
    state = env.state_json()
    assert state["count"] == 2
    rows = state["flights"]
    assert rows["F1"]["seats"] == 3 and rows["F1"]["price"] == 101.0
    assert rows["F1X"]["seats"] == 2
    assert env.call("seats", {"flights": "F1"})["data"] == 3
    assert env.call("note_length", {"note": "abc"})["data"] == 3
    # the task's checks read `state.` and grade the solution's run
    assert env.evaluate()["reward"] == 1.0


def test_a_failed_call_through_state_dot_leaves_the_state_untouched() -> None:
    env = build(AIRLINE)()
    env.reset(task="book_two")
    before = env.state_json()
    result = env.call("book", {"flights": "F1", "count": 9})
    assert not result["success"] and "not enough seats" in result["error"]
    assert env.state_json() == before


def test_writes_through_state_dot_are_the_tools_effects() -> None:
    result = check_source(SourceFile("spec.env", AIRLINE), verify=False)
    assert result.checked is not None
    effects = result.checked.effects["book"]
    assert {"count", "flights.seats", "flights.price"} <= effects.writes
    assert "flights" in effects.reads
    # a query may not write, whichever way the field is named
    broken = AIRLINE.replace("return state.flights[flights].seats", "state.count = 1\n    return 0")
    assert diagnostics(broken) == [("E3001", "query 'seats' modifies 'count'")]


def test_state_dot_narrowing_is_not_the_shadowing_locals() -> None:
    """`note != none` tests the parameter: `state.note` may still be none."""
    text = AIRLINE.replace("note_length(note: str)", "note_length(note: str?)").replace(
        "if state.note != none { return len(state.note) }\n    return len(note)",
        "if note != none { return len(state.note) }\n    return 0",
    )
    assert diagnostics(text) == [("E2017", "len() of a value that may be none (str?)")]


def test_e1011_says_the_parameter_shadows_the_table_and_its_fix_checks_clean() -> None:
    text = AIRLINE.replace("let f = state.flights.get(flights)", "let f = flights.get(flights)")
    result = check_source(SourceFile("spec.env", text), verify=False)
    [diagnostic] = result.diagnostics
    assert diagnostic.code.code == "E1011"
    assert diagnostic.message == (
        "str has no method 'get': the parameter 'flights' shadows the state table 'flights'"
    )
    assert diagnostic.help is not None and "`state.flights`" in diagnostic.help
    [fix] = diagnostic.fixes
    (edit,) = fix.edits
    fixed = text[: edit.span.start] + edit.replacement + text[edit.span.end :]
    assert fixed == AIRLINE
    assert diagnostics(fixed) == []


def test_a_misspelled_method_of_an_unshadowed_name_keeps_its_did_you_mean() -> None:
    text = AIRLINE.replace(
        "let f = state.flights.get(flights)", "let f = state.flights.gett(flights)"
    )
    [(code, message)] = diagnostics(text)
    assert code == "E1011" and "shadows" not in message


def test_unknown_state_field_after_state_dot() -> None:
    text = AIRLINE.replace("state.count += count", "state.cuont += count")
    found = diagnostics(text)
    assert found == [("E1008", "the state has no field 'cuont'")]


def test_state_alone_is_no_value() -> None:
    text = AIRLINE.replace("return state.count\n", "return len(state)\n")
    [(code, message)] = diagnostics(text)
    assert (code, message) == ("E1001", "unknown name 'state'")


def test_a_state_field_or_a_parameter_named_state() -> None:
    named = AIRLINE.replace("    count: int = 0\n", "    count: int = 0\n    state: int = 0\n")
    assert ("E1098", "a state field cannot be named 'state'") in diagnostics(named)
    hidden = AIRLINE.replace("query seats(flights: str)", "query seats(flights: str, state: int)")
    assert diagnostics(hidden) == [
        (
            "E1098",
            "`state.flights` names a state field, but the parameter 'state' hides `state` here",
        )
    ]
    # a parameter named `state` that no `state.x` meets is an ordinary name
    plain = AIRLINE.replace(
        "query note_length(note: str) -> int {",
        "query note_length(note: str, state: str) -> int {",
    ).replace("return len(note)\n", "return len(note) + len(state)\n")
    assert [code for code, _ in diagnostics(plain)] == ["E1098", "E1098"]


def test_fmt_keeps_state_dot() -> None:
    done = format_source(SourceFile("spec.env", AIRLINE))
    assert done.text is not None, done.problem
    formatted = done.text
    assert "state.flights.get(flights)" in formatted and "state.count += count" in formatted
    assert format_source(SourceFile("spec.env", formatted)).text == formatted


def test_renaming_a_table_renames_its_state_dot_uses_and_not_the_parameter() -> None:
    source = SourceFile("spec.env", AIRLINE)
    edits = rename(source, [], "spec.env", AIRLINE.index("flights: table"), "legs")
    renamed = apply_edits(AIRLINE, edits["spec.env"])
    assert "state.legs.get(flights)" in renamed and "for g in state.legs" in renamed
    assert "book(flights: str" in renamed and 'state.legs["F1"]' in renamed
    assert "state.flights" not in renamed
    assert diagnostics(renamed) == []
