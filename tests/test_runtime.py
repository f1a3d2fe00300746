"""Runtime guarantees of generated environments (DESIGN.md section 2), one small spec each.

Every failing call must leave `state_json()` exactly as it was (compared as ordered JSON text,
so table order counts too), also when the call had already inserted, deleted, set fields and
appended to lists before it failed. Bad calls from the agent get a clear `success: false`
and never an exception. The same calls give the same state, byte for byte.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import compile_source
from envdsl.runtime import Environment, InvalidState
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=None)
def build(text: str) -> type[Environment]:
    """Compile a spec held in memory and return its environment class."""
    result = compile_source(SourceFile("spec.env", text))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)


def canonical(env: Environment) -> str:
    """The full state as ordered JSON text: equal texts mean equal states in equal order."""
    return json.dumps(env.state_json(), ensure_ascii=False)


def assert_rolled_back(env: Environment, before: str, result: dict[str, Any], error: str) -> None:
    assert result["success"] is False, result
    assert set(result) == {"success", "error"}
    assert error in result["error"], result["error"]
    assert env.last_exception is None, env.last_exception
    assert canonical(env) == before


# ---- transactions ----------------------------------------------------------------------------

# Owners are referenced by items (restrict), notes (cascade) and pins (optional, none).
GUARD = '''
env Guard {
  """Purpose-made spec for the transaction guarantees."""
  enum Stage { draft, live, archived }
  entity Owner {
    key owner_id: str
    name: str
    code: str unique
  }
  entity Item {
    key item_id: str = auto("IT")
    owner: ref Owner
    qty: int
    tags: list[str] = []
    stage: Stage = Stage.draft transitions { draft -> live, live -> archived }
    invariant "qty is never negative": qty >= 0
  }
  entity Note {
    key note_id: str
    owner: ref Owner on delete cascade
    text: str
  }
  entity Pin {
    key pin_id: str
    owner: ref Owner? on delete none
  }
  state {
    owners: table Owner
    items: table Item
    notes: table Note
    pins: table Pin
    total: int = 0
  }
  invariant "the total stays below 100": total < 100
  action act(item_id: str, n: int = 3) -> int {
    """The action under test."""
__BODY__
  }
  task start {
    """Two owners; O1 has an item and a note, O2 a note and a pin."""
    init {
      owners = [Owner(owner_id="O1", name="Ann", code="C1"),
                Owner(owner_id="O2", name="Bob", code="C2")]
      items = [Item(item_id="IT-0001", owner="O1", qty=1, tags=["a"])]
      notes = [Note(note_id="N1", owner="O1", text="first"),
               Note(note_id="N2", owner="O2", text="second"),
               Note(note_id="N3", owner="O1", text="third")]
      pins = [Pin(pin_id="P1", owner="O2")]
    }
    check "the total moved": total > 0
  }
}
'''


# Writes of every kind before the statement under test: an insert, a field set, a list append
# inside a row, a field set then a delete of the same row, a scalar write.
PRELUDE = """
items.insert(Item(owner="O2", qty=7, tags=["new"]))
let it = items[item_id]
it.qty += 5
it.tags.append("touched")
notes["N1"].text = "rewritten"
notes.delete("N1")
total += 10
"""


def guard_class(body: str) -> type[Environment]:
    """The Guard environment with `body` as the body of its `act(item_id, n)` action."""
    return build(GUARD.replace("__BODY__", textwrap.indent(textwrap.dedent(body).strip(), "    ")))


def guard_env(statements: str, step_budget: int | None = None) -> Environment:
    """An environment whose `act` makes several writes and then runs `statements`."""
    body = PRELUDE + textwrap.dedent(statements).strip() + "\nreturn it.qty"
    env_class = guard_class(body)
    env = env_class() if step_budget is None else env_class(step_budget=step_budget)
    env.reset(task="start")
    return env


def guard_plain(body: str) -> Environment:
    """An environment whose `act` is just `body` (no prelude), reset to the task."""
    env = guard_class(body)()
    env.reset(task="start")
    return env


def test_the_writes_before_the_failure_really_happen() -> None:
    """Control for the rollback tests: without a failure, `act` changes all of these."""
    env = guard_env("let unused_ok = 1")
    result = env.call("act", {"item_id": "IT-0001"})
    assert result == {"success": True, "data": 6}
    state = env.state_json()
    assert list(state["items"]) == ["IT-0001", "IT-0002"]
    assert state["items"]["IT-0001"]["tags"] == ["a", "touched"]
    assert list(state["notes"]) == ["N2", "N3"]
    assert state["total"] == 10


def test_failed_require_rolls_back() -> None:
    env = guard_env('require it.qty > 100 else "qty is too small"')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "qty is too small")
    assert result["error"] == "qty is too small"


def test_failed_let_else_rolls_back() -> None:
    env = guard_env('let missing = items.get("IT-9999") else "no such item"')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "no such item")
    assert result["error"] == "no such item"


def test_missing_key_rolls_back() -> None:
    env = guard_env('let gone = notes["N9"]\nit.qty += len(gone.text)')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "'N9'")
    assert "not found" in result["error"]


def test_violated_row_invariant_rolls_back() -> None:
    env = guard_env("it.qty = -1")
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "qty is never negative")


def test_violated_row_invariant_of_an_inserted_row_rolls_back() -> None:
    env = guard_env('items.insert(Item(owner="O1", qty=-3))')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "qty is never negative")


def test_violated_env_invariant_rolls_back() -> None:
    env = guard_env("total += 95")
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "the total stays below 100")


def test_illegal_transition_rolls_back_with_its_message() -> None:
    env = guard_env("it.stage = Stage.archived")
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "cannot change stage from draft to archived")


def test_transitions_compare_with_the_value_before_the_call() -> None:
    """draft -> live -> archived in one call is draft -> archived: not allowed."""
    env = guard_env("it.stage = Stage.live\nit.stage = Stage.archived")
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "cannot change stage from draft to archived")


def test_legal_transition_and_going_back_to_the_old_value_succeed() -> None:
    env = guard_env("it.stage = Stage.live")
    assert env.call("act", {"item_id": "IT-0001"})["success"] is True
    assert env.state_json()["items"]["IT-0001"]["stage"] == "live"
    # draft -> archived -> draft is no change at all
    env = guard_env("it.stage = Stage.archived\nit.stage = Stage.draft")
    assert env.call("act", {"item_id": "IT-0001"})["success"] is True
    # inserts may use any value of a transitions field
    env = guard_env('items.insert(Item(owner="O1", qty=1, stage=Stage.archived))')
    assert env.call("act", {"item_id": "IT-0001"})["success"] is True


def test_dangling_ref_on_insert_rolls_back() -> None:
    env = guard_env('items.insert(Item(owner="O404", qty=1))')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "'O404'")
    assert "does not exist" in result["error"]


def test_dangling_ref_by_assignment_rolls_back() -> None:
    env = guard_env('it.owner = "O404"')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "'O404'")


def test_deleting_a_restricted_parent_fails_and_rolls_back() -> None:
    env = guard_env('owners.delete("O1")')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "cannot delete Owner 'O1'")
    assert "IT-0001" in result["error"]


def test_on_delete_cascade_and_none() -> None:
    """Deleting O2: its note goes (cascade), its pin's optional ref is cleared (none)."""
    env = guard_plain("owners.delete(item_id)\nreturn 0")
    result = env.call("act", {"item_id": "O2"})
    assert result == {"success": True, "data": 0}, result
    state = env.state_json()
    assert list(state["owners"]) == ["O1"]
    assert list(state["notes"]) == ["N1", "N3"]
    assert state["pins"] == {"P1": {"owner": None, "pin_id": "P1"}}


def test_cascade_follows_every_child() -> None:
    """O1 has two cascading notes but also a restricting item: nothing may be deleted."""
    env = guard_plain('items.delete("IT-0001")\nowners.delete(item_id)\nreturn 0')
    assert env.call("act", {"item_id": "O1"}) == {"success": True, "data": 0}
    state = env.state_json()
    assert list(state["notes"]) == ["N2"] and list(state["items"]) == []


def test_failed_call_after_cascade_and_none_restores_children() -> None:
    env = guard_plain("""
        notes["N2"].text = "changed"
        total += 1
        owners.delete(item_id)
        require false else "stop after the delete"
        return 0
        """)
    before = canonical(env)
    result = env.call("act", {"item_id": "O2"})
    assert_rolled_back(env, before, result, "stop after the delete")
    state = env.state_json()
    assert list(state["owners"]) == ["O1", "O2"]
    assert list(state["notes"]) == ["N1", "N2", "N3"]
    assert state["notes"]["N2"]["text"] == "second"
    assert state["pins"]["P1"]["owner"] == "O2"


def test_unique_clash_names_field_and_value_and_rolls_back() -> None:
    env = guard_env('owners.insert(Owner(owner_id="O3", name="Cy", code="C1"))')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "code")
    assert "C1" in result["error"]


def test_unique_clash_by_assignment_rolls_back() -> None:
    env = guard_env('owners["O2"].code = "C1"')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "code")
    assert "C1" in result["error"]


def test_unique_values_can_be_swapped_within_one_call() -> None:
    env = guard_env('owners["O1"].code = "C2"\nowners["O2"].code = "C1"')
    assert env.call("act", {"item_id": "IT-0001"})["success"] is True
    state = env.state_json()
    assert (state["owners"]["O1"]["code"], state["owners"]["O2"]["code"]) == ("C2", "C1")


def test_duplicate_key_on_insert_rolls_back() -> None:
    env = guard_env('notes.insert(Note(note_id="N2", owner="O1", text="dup"))')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "'N2'")


def test_step_budget_on_a_huge_range_fails_cleanly() -> None:
    env = guard_env("for i in range(n) {\n  total += 0\n}", step_budget=50)
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001", "n": 1_000_000})
    assert_rolled_back(env, before, result, "step budget")


def test_step_budget_overrun_in_the_middle_of_loops_rolls_back() -> None:
    """Nested loops whose ranges are each within budget: the overrun happens after writes."""
    env = guard_env(
        """
        for i in range(n) {
          for j in range(n) {
            it.tags.append("loop")
          }
        }
        """,
        step_budget=50,
    )
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001", "n": 20})
    assert_rolled_back(env, before, result, "step budget")
    # within budget the same call succeeds
    ok = env.call("act", {"item_id": "IT-0001", "n": 3})
    assert ok["success"] is True, ok
    assert env.state_json()["items"]["IT-0001"]["tags"].count("loop") == 9


def test_default_step_budget_is_generous() -> None:
    env = guard_env("for i in range(n) {\n  total += 0\n}")
    assert env.call("act", {"item_id": "IT-0001", "n": 5000})["success"] is True


def test_deleted_rows_come_back_in_their_table_order() -> None:
    env = guard_env('notes.delete("N2")\nnotes.delete("N3")\nrequire total == 0 else "undo it all"')
    before = canonical(env)
    result = env.call("act", {"item_id": "IT-0001"})
    assert_rolled_back(env, before, result, "undo it all")
    assert list(env.state_json()["notes"]) == ["N1", "N2", "N3"]
    # a later insert on the same environment goes to the end, after the restored rows
    adder = guard_class('notes.insert(Note(note_id=item_id, owner="O1", text="x"))\nreturn 0')
    env.__class__ = adder  # same state layout; only the body of `act` differs
    assert env.call("act", {"item_id": "N0"})["success"] is True
    assert list(env.state_json()["notes"]) == ["N1", "N2", "N3", "N0"]


def test_middle_row_deleted_and_restored_keeps_its_place() -> None:
    env = guard_plain('notes.delete(item_id)\nfail "no"')
    before = canonical(env)
    assert_rolled_back(env, before, env.call("act", {"item_id": "N2"}), "no")
    assert list(env.state_json()["notes"]) == ["N1", "N2", "N3"]
    assert list(env.state_json()["notes"]) == [n for n in json.loads(before)["notes"]]


def test_insert_then_delete_of_the_same_row_rolls_back() -> None:
    env = guard_plain("""
        let fresh = items.insert(Item(owner="O1", qty=1))
        fresh.tags.append("x")
        items.delete(fresh.item_id)
        fail "nothing stays"
        """)
    before = canonical(env)
    assert_rolled_back(env, before, env.call("act", {"item_id": "x"}), "nothing stays")


def test_rows_read_after_a_rollback_are_the_restored_ones() -> None:
    """The rolled-back row objects are live again: later calls see the old values."""
    env = guard_env('require it.qty > 100 else "no"')
    env.call("act", {"item_id": "IT-0001"})
    env.__class__ = guard_class("return items[item_id].qty * 10 + len(items[item_id].tags)")
    assert env.call("act", {"item_id": "IT-0001"}) == {"success": True, "data": 11}


def test_failed_insert_does_not_consume_an_auto_key() -> None:
    env = guard_env('require total == 0 else "not now"')
    env.call("act", {"item_id": "IT-0001"})
    env2 = guard_env("let unused_ok = 1")
    env2.call("act", {"item_id": "IT-0001"})
    # the failed call inserted IT-0002 and rolled it back; the next success gets IT-0002 too
    env.__class__ = type(env2)
    assert env.call("act", {"item_id": "IT-0001"})["success"] is True
    assert list(env.state_json()["items"]) == ["IT-0001", "IT-0002"]
    assert env.state_hash() == env2.state_hash()


def test_snapshot_and_restore() -> None:
    env = guard_env("let unused_ok = 1")
    before = canonical(env)
    snap = env.snapshot()
    env.call("act", {"item_id": "IT-0001"})
    assert canonical(env) != before
    env.restore(snap)
    assert canonical(env) == before
    assert env.trace == []
    # restoring twice from one snapshot works: the snapshot is not aliased by the live state
    env.call("act", {"item_id": "IT-0001"})
    env.restore(snap)
    assert canonical(env) == before


# ---- argument validation ---------------------------------------------------------------------

ARGS = '''
env Args {
  """Purpose-made spec for argument validation."""
  enum Color { red, dark_blue = "dark blue" }
  record Pt { x: int, y: int }
  state {
    log: list[str] = []
    at: datetime? = none
  }
  action take(n: int, f: float, flag: bool, c: Color, s: str "a text", when: datetime,
              pts: list[Pt] = [], opt: int? = none, lim: int "at most this many" = 10) -> str {
    """Take one argument of every kind."""
    log.append(f"{n}|{f}|{flag}|{c}|{s}|{len(pts)}|{opt}|{lim}")
    at = when
    return f"{n}|{f}|{flag}|{c}|{s}|{len(pts)}|{opt}|{lim}"
  }
  query echo(s: str) -> str {
    """Echo a string."""
    return s
  }
}
'''
GOOD = {"n": 1, "f": 2.5, "flag": True, "c": "dark blue", "s": "x", "when": "2024-05-01T09:00:00Z"}


@pytest.fixture
def args_env() -> Environment:
    env = build(ARGS)()
    env.reset(state={})
    return env


def test_good_call_and_defaults_applied(args_env: Environment) -> None:
    result = args_env.call("take", GOOD)
    assert result == {"success": True, "data": "1|2.5|true|dark blue|x|0|none|10"}
    assert args_env.state_json() == {
        "at": "2024-05-01T09:00:00Z",
        "log": ["1|2.5|true|dark blue|x|0|none|10"],
    }


def test_defaults_applied_through_the_typed_method(args_env: Environment) -> None:
    module = sys.modules[type(args_env).__module__]
    import datetime as dt

    result = args_env.take(  # type: ignore[attr-defined]
        n=2,
        f=1.0,
        flag=False,
        c=module.Color.red,
        s="y",
        when=dt.datetime(2024, 5, 1, tzinfo=dt.timezone.utc),
    )
    assert result == {"success": True, "data": "2|1.0|false|red|y|0|none|10"}
    assert args_env.trace[-1].arguments["lim"] == 10


def test_explicit_values_override_defaults(args_env: Environment) -> None:
    result = args_env.call("take", {**GOOD, "pts": [{"x": 1, "y": 2}], "opt": 4, "lim": 3})
    assert result == {"success": True, "data": "1|2.5|true|dark blue|x|1|4|3"}


BAD_ARGUMENTS = [
    ("missing", {k: v for k, v in GOOD.items() if k != "n"}, ["missing", "'n'"]),
    ("extra", {**GOOD, "zz": 1}, ["unexpected", "'zz'"]),
    ("bool for int", {**GOOD, "n": True}, ["n", "integer", "boolean"]),
    ("string for int", {**GOOD, "n": "5"}, ["n", "integer", "'5'"]),
    ("fraction for int", {**GOOD, "n": 5.5}, ["n", "integer", "5.5"]),
    ("null for int", {**GOOD, "n": None}, ["n", "integer", "null"]),
    ("string for float", {**GOOD, "f": "2.5"}, ["f", "number"]),
    ("int for bool", {**GOOD, "flag": 1}, ["flag", "true or false"]),
    ("int for str", {**GOOD, "s": 3}, ["s", "string"]),
    ("bad enum value", {**GOOD, "c": "blue"}, ["c", "'blue'", "'dark blue'"]),
    ("enum member name instead of value", {**GOOD, "c": "dark_blue"}, ["c", "'dark_blue'"]),
    ("bad datetime", {**GOOD, "when": "yesterday"}, ["when", "datetime"]),
    ("record without a field", {**GOOD, "pts": [{"x": 1}]}, ["pts[0].y", "missing"]),
    ("record with an extra field", {**GOOD, "pts": [{"x": 1, "y": 2, "z": 3}]}, ["'z'"]),
    ("object for a list", {**GOOD, "pts": {"x": 1}}, ["pts", "array"]),
    ("malformed JSON text", '{"n": 1,', ["not valid JSON"]),
    ("JSON array text", "[1, 2]", ["must be a JSON object"]),
    ("JSON string text", '"n"', ["must be a JSON object"]),
    ("a list, not a dict", [1], ["must be a JSON object"]),
]


@pytest.mark.parametrize(
    "arguments, expected",
    [(a, e) for _, a, e in BAD_ARGUMENTS],
    ids=[i for i, _, _ in BAD_ARGUMENTS],
)
def test_bad_arguments_are_rejected_cleanly(
    args_env: Environment, arguments: Any, expected: list[str]
) -> None:
    args_env.call("take", GOOD)  # some state, so that "no change" means something
    before = canonical(args_env)
    result = args_env.call("take", arguments)
    assert result["success"] is False and set(result) == {"success", "error"}, result
    for part in expected:
        assert part in result["error"], (part, result["error"])
    assert canonical(args_env) == before
    assert args_env.last_exception is None
    assert args_env.trace[-1].success is False


def test_unknown_tool_gets_a_suggestion(args_env: Environment) -> None:
    before = canonical(args_env)
    result = args_env.call("tak", GOOD)
    assert result["success"] is False
    assert "unknown tool 'tak'" in result["error"]
    assert "did you mean 'take'" in result["error"]
    assert canonical(args_env) == before
    far = args_env.call("zzzzzz", {})
    assert far["success"] is False and "unknown tool 'zzzzzz'" in far["error"]
    assert "take" in far["error"] and "echo" in far["error"]  # the tools are listed


def test_int_is_accepted_for_float_and_integral_float_for_int(args_env: Environment) -> None:
    # a float keeps the number as written (issue 26): `5` is shown as 5, `5.0` as 5.0
    assert args_env.call("take", {**GOOD, "f": 5})["data"] == "1|5|true|dark blue|x|0|none|10"
    assert args_env.call("take", {**GOOD, "f": 5.0})["data"] == "1|5.0|true|dark blue|x|0|none|10"
    assert args_env.call("take", {**GOOD, "n": 5.0})["data"] == "5|2.5|true|dark blue|x|0|none|10"


def test_arguments_as_json_text(args_env: Environment) -> None:
    assert args_env.call("echo", '{"s": "hi"}') == {"success": True, "data": "hi"}
    assert args_env.call("echo", json.dumps({"s": '\u00e9\n"'})) == {
        "success": True,
        "data": '\u00e9\n"',
    }


def test_datetime_without_offset_is_utc(args_env: Environment) -> None:
    args_env.call("take", {**GOOD, "when": "2024-05-01T09:00:00"})
    naive = args_env.state_json()["at"]
    args_env.call("take", {**GOOD, "when": "2024-05-01T11:00:00+02:00"})
    shifted = args_env.state_json()["at"]
    assert naive == shifted == "2024-05-01T09:00:00Z"


def test_null_for_an_optional_parameter_is_none(args_env: Environment) -> None:
    result = args_env.call("take", {**GOOD, "opt": None})
    assert result == {"success": True, "data": "1|2.5|true|dark blue|x|0|none|10"}


# ---- determinism -----------------------------------------------------------------------------

DET = '''
env Det {
  """Purpose-made spec for determinism."""
  entity Box {
    key box_id: str = auto("BOX")
    label: str
    tags: set[str] = set()
    sizes: map[str, int] = {}
  }
  state {
    boxes: table Box
    now: datetime
  }
  action make(label: str, tags: list[str] = []) -> Box {
    """Make a box."""
    let b = boxes.insert(Box(label=label, tags=set(tags)))
    for t in tags {
      b.sizes[t] = len(t)
    }
    return b
  }
  action relabel(box_id: str, label: str) -> Box {
    """Relabel a box, failing for an empty label."""
    let b = boxes[box_id]
    b.label = label
    require label != "" else "empty label"
    return b
  }
  action put(box_id: str, label: str) -> Box {
    """Insert a box with a given key."""
    return boxes.insert(Box(box_id=box_id, label=label))
  }
  action bad_make(label: str) -> Box {
    """Insert a box, then fail."""
    boxes.insert(Box(label=label))
    fail "no boxes today"
  }
  action order_tags(box_id: str) -> list[str] {
    """The box's tags as a list, in iteration order."""
    let b = boxes[box_id]
    b.label = ",".join([t for t in b.tags])
    return [t for t in b.tags]
  }
}
'''


@pytest.fixture
def det_env() -> Environment:
    env = build(DET)()
    env.reset(state={"now": "2024-01-01T00:00:00Z", "boxes": []})
    return env


def test_auto_keys_are_sequential_and_skip_existing(det_env: Environment) -> None:
    assert det_env.call("make", {"label": "first"})["data"]["box_id"] == "BOX-0001"
    # keys given explicitly take the next numbers: auto keys skip them
    assert det_env.call("put", {"box_id": "BOX-0002", "label": "given"})["success"] is True
    assert det_env.call("put", {"box_id": "BOX-0003", "label": "given"})["success"] is True
    keys = [det_env.call("make", {"label": f"b{i}"})["data"]["box_id"] for i in range(2)]
    assert keys == ["BOX-0004", "BOX-0005"]
    assert list(det_env.state_json()["boxes"]) == [f"BOX-000{i}" for i in range(1, 6)]


def test_auto_keys_continue_after_loaded_keys(det_env: Environment) -> None:
    det_env.reset(
        state={
            "now": "2024-01-01T00:00:00Z",
            "boxes": [{"box_id": "BOX-0002", "label": "given"}, {"box_id": "X", "label": "x"}],
        }
    )
    keys = [det_env.call("make", {"label": f"b{i}"})["data"]["box_id"] for i in range(2)]
    assert keys == ["BOX-0003", "BOX-0004"]
    assert list(det_env.state_json()["boxes"]) == ["BOX-0002", "X", "BOX-0003", "BOX-0004"]
    # the same state loaded again gives the same keys
    again = build(DET)()
    again.reset(
        state={
            "now": "2024-01-01T00:00:00Z",
            "boxes": [{"box_id": "BOX-0002", "label": "given"}, {"box_id": "X", "label": "x"}],
        }
    )
    assert again.call("make", {"label": "b0"})["data"]["box_id"] == "BOX-0003"


def test_failed_insert_keeps_the_counter(det_env: Environment) -> None:
    assert det_env.call("make", {"label": "a"})["data"]["box_id"] == "BOX-0001"
    before = canonical(det_env)
    result = det_env.call("bad_make", {"label": "b"})
    assert_rolled_back(det_env, before, result, "no boxes today")
    assert det_env.call("make", {"label": "c"})["data"]["box_id"] == "BOX-0002"


def test_state_json_is_canonical(det_env: Environment) -> None:
    det_env.call("make", {"label": "zeta", "tags": ["b", "a", "c"]})
    det_env.call("make", {"label": "alpha", "tags": ["c", "a"]})
    state = det_env.state_json()
    assert list(state) == sorted(state)  # state fields sorted
    assert list(state["boxes"]) == ["BOX-0001", "BOX-0002"]  # insertion order, not sorted
    row = state["boxes"]["BOX-0001"]
    assert list(row) == sorted(row)  # row fields sorted
    assert row["tags"] == ["a", "b", "c"]  # sets sorted
    # map keys in insertion order, the order maps iterate in: equal JSON, equal behaviour
    assert list(row["sizes"]) == ["b", "a", "c"]
    # rows inserted in the other order of keys keep that order
    det_env.reset(
        state={"now": "2024-01-01T00:00:00Z", "boxes": {"B": {"label": "b"}, "A": {"label": "a"}}}
    )
    assert list(det_env.state_json()["boxes"]) == ["B", "A"]


def test_state_json_round_trips(det_env: Environment) -> None:
    det_env.call("make", {"label": "one", "tags": ["x", "y"]})
    det_env.call("make", {"label": "two"})
    det_env.call("relabel", {"box_id": "BOX-0001", "label": "uno"})
    state = det_env.state_json()
    digest = det_env.state_hash()
    other = build(DET)()
    other.reset(state=state)
    assert other.state_hash() == digest
    assert other.state_json() == state
    other.reset(state=json.dumps(state))  # JSON text works the same
    assert other.state_hash() == digest
    # counters continue past the loaded keys
    assert other.call("make", {"label": "three"})["data"]["box_id"] == "BOX-0003"


def test_a_table_as_list_or_keyed_object_loads_the_same() -> None:
    env_class = build(DET)
    as_list = env_class()
    as_list.reset(
        state={
            "now": "2024-01-01T00:00:00Z",
            "boxes": [
                {"box_id": "B1", "label": "one", "tags": ["t"]},
                {"box_id": "B2", "label": "two"},
            ],
        }
    )
    keyed = env_class()
    keyed.reset(
        state={
            "now": "2024-01-01T00:00:00Z",
            "boxes": {
                "B1": {"label": "one", "tags": ["t"]},
                "B2": {"box_id": "B2", "label": "two"},
            },
        }
    )
    assert keyed.state_json() == as_list.state_json()
    assert keyed.state_hash() == as_list.state_hash()


def test_invalid_states_are_rejected() -> None:
    env = build(DET)()
    with pytest.raises(InvalidState, match="unknown state field"):
        env.reset(state={"now": "2024-01-01T00:00:00Z", "bogus": 1})
    with pytest.raises(InvalidState, match="now"):
        env.reset(state={"boxes": []})
    with pytest.raises(InvalidState, match="B1"):
        env.reset(
            state={"now": "2024-01-01T00:00:00Z", "boxes": {"B1": {"box_id": "B2", "label": "x"}}}
        )


def test_same_calls_same_hash_in_one_process(det_env: Environment) -> None:
    calls = [
        ("make", {"label": "a", "tags": ["p", "q"]}),
        ("relabel", {"box_id": "BOX-0001", "label": ""}),
        ("make", {"label": "b"}),
        ("bad_make", {"label": "c"}),
        ("relabel", {"box_id": "BOX-0002", "label": "bee"}),
    ]
    other = build(DET)()
    other.reset(state=det_env.state_json())
    for name, arguments in calls:
        assert det_env.call(name, arguments) == other.call(name, arguments)
    assert det_env.state_hash() == other.state_hash()


SCRIPT = """
import json, sys
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import compile_source
from envdsl.util.source import SourceFile
spec, calls = json.loads(sys.stdin.read())
result = compile_source(SourceFile("spec.env", spec))
env = environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))()
env.reset(state={"now": "2024-01-01T00:00:00Z", "boxes": []})
for name, arguments in calls:
    env.call(name, arguments)
print(env.state_hash())
"""


def hash_in_subprocess(calls: list[tuple[str, dict[str, Any]]], seed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=json.dumps([DET, calls]),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_same_calls_same_hash_in_separate_processes() -> None:
    """Different hash seeds change the iteration order of Python sets: the hash must not move."""
    calls = [
        ("make", {"label": "a", "tags": ["pear", "apple", "fig", "kiwi", "lime"]}),
        ("make", {"label": "b", "tags": ["x"]}),
        ("relabel", {"box_id": "BOX-0002", "label": ""}),
        ("bad_make", {"label": "c"}),
        ("relabel", {"box_id": "BOX-0001", "label": "renamed"}),
    ]
    first = hash_in_subprocess(calls, "1")
    second = hash_in_subprocess(calls, "2")
    assert len(first) == 64 and first == second
    local = build(DET)()
    local.reset(state={"now": "2024-01-01T00:00:00Z", "boxes": []})
    for name, arguments in calls:
        local.call(name, arguments)
    assert local.state_hash() == first


def test_iterating_a_set_is_deterministic_across_processes() -> None:
    tags = ["pear", "apple", "fig", "kiwi", "lime", "plum", "date", "lemon"]
    calls = [("make", {"label": "a", "tags": tags}), ("order_tags", {"box_id": "BOX-0001"})]
    assert hash_in_subprocess(calls, "1") == hash_in_subprocess(calls, "2")


# ---- bounded work and envelopes ----------------------------------------------------------------


def test_results_are_json_values(det_env: Environment) -> None:
    result = det_env.call("make", {"label": "a", "tags": ["t"]})
    assert json.loads(json.dumps(result)) == result
    assert result["data"] == {
        "box_id": "BOX-0001",
        "label": "a",
        "sizes": {"t": 1},
        "tags": ["t"],
    }


def test_trace_records_every_call(det_env: Environment) -> None:
    det_env.call("make", {"label": "a"})
    det_env.call("relabel", {"box_id": "BOX-0001", "label": ""})
    det_env.call("nope", {})
    assert [(e.name, e.success) for e in det_env.trace] == [
        ("make", True),
        ("relabel", False),
        ("nope", False),
    ]
    assert det_env.trace[1].error == "empty label"
    assert det_env.trace[0].arguments == {"label": "a", "tags": []}  # as run: defaults too


def test_equal_state_hashes_mean_equal_futures_for_maps() -> None:
    """A map's canonical JSON sorts its keys; iteration must not depend on how it was built."""
    env_class = build(MAP_ORDER)
    built = env_class()
    built.reset(state={})
    loaded = env_class()
    loaded.reset(state=built.state_json())
    assert loaded.state_hash() == built.state_hash()
    assert built.call("record_keys", {}) == loaded.call("record_keys", {})
    assert loaded.state_hash() == built.state_hash()


MAP_ORDER = '''
env MapOrder {
  """A map whose default was written with its keys out of order."""
  state {
    m: map[str, int] = {"b": 2, "a": 1}
    keys: list[str] = []
  }
  action record_keys() -> list[str] {
    """Append the map's keys in iteration order."""
    for k in m.keys() {
      keys.append(k)
    }
    return keys
  }
}
'''


# ---- value semantics: lists and records are values, never shared between rows ------------------

ALIAS = '''
env Alias {
  """Lists and records copied between rows and state fields."""
  record Addr { city: str }
  entity C {
    key id: str
    tags: list[str] = []
    addr: Addr
  }
  state {
    cs: table C
    xs: list[str] = []
  }
  action share_field(fail_after: bool = false) -> int {
    """b.tags = a.tags, then append through b."""
    let a = cs["C1"]
    let b = cs["C2"]
    b.tags = a.tags
    b.tags.append("x")
    require not fail_after else "failed on purpose"
    return len(a.tags)
  }
  action share_insert(fail_after: bool = false) -> int {
    """Insert a row holding a's list, then append through the new row."""
    let a = cs["C1"]
    let n = cs.insert(C(id="C3", tags=a.tags, addr=Addr(city="N")))
    n.tags.append("y")
    require not fail_after else "failed on purpose"
    return len(a.tags)
  }
  action share_scalar(fail_after: bool = false) -> int {
    """xs = a.tags, then append to xs."""
    let a = cs["C1"]
    xs = a.tags
    xs.append("z")
    require not fail_after else "failed on purpose"
    return len(a.tags)
  }
  action share_record(fail_after: bool = false) -> str {
    """d.addr = c.addr, then change the city through d."""
    let c = cs["C1"]
    let d = cs["C2"]
    d.addr = c.addr
    d.addr.city = "shared"
    require not fail_after else "failed on purpose"
    return c.addr.city
  }
  task start {
    """Two rows."""
    init {
      cs = [C(id="C1", addr=Addr(city="A")), C(id="C2", addr=Addr(city="B"))]
    }
    check "three rows": len(cs) == 3
  }
}
'''


@pytest.mark.parametrize(
    "tool",
    [
        "share_field",
        "share_insert",
        "share_scalar",
        "share_record",
    ],
)
def test_values_copied_between_rows_are_not_shared(tool: str) -> None:
    env = build(ALIAS)()
    env.reset(task="start")
    result = env.call(tool, {})
    assert result["success"] is True, result
    assert result["data"] in (0, "A")  # the source row did not change
    c1 = env.state_json()["cs"]["C1"]
    assert c1 == {"addr": {"city": "A"}, "id": "C1", "tags": []}


@pytest.mark.parametrize(
    "tool",
    [
        "share_field",
        "share_insert",
        "share_scalar",
        "share_record",
    ],
)
def test_failed_call_through_shared_values_rolls_back(tool: str) -> None:
    env = build(ALIAS)()
    env.reset(task="start")
    before = canonical(env)
    assert_rolled_back(env, before, env.call(tool, {"fail_after": True}), "failed on purpose")


NESTED = '''
env Nested {
  """Writes inside records, maps and sets held by rows and by scalar state."""
  record Addr { city: str, lines: list[str] }
  entity C {
    key id: str
    addr: Addr
    tags: list[str] = []
    cart: map[str, int] = {}
    seen: set[str] = set()
  }
  state {
    cs: table C
    m: map[str, int] = {}
    xs: list[int] = []
    s: set[str] = set()
    a: Addr
  }
  action act(mode: str, fail_after: bool = true) -> int {
    """One kind of nested write, then (by default) a failure."""
    let c = cs["C1"]
    if mode == "record field in a row" { c.addr.city = "X" }
    if mode == "list in a record in a row" { c.addr.lines.append("L") }
    if mode == "whole record in a row" { c.addr = Addr(city="W", lines=[]) }
    if mode == "map entry in a row" { c.cart["k"] = 5 }
    if mode == "map remove in a row" { c.cart.remove("a") }
    if mode == "set add in a row" { c.seen.add("z") }
    if mode == "set discard in a row" { c.seen.discard("y") }
    if mode == "list remove in a row" { c.tags.remove("t1") }
    if mode == "list extend in a row" { c.tags.extend(["q", "r"]) }
    if mode == "local alias of a list" {
      let ts = c.tags
      ts.append("alias")
    }
    if mode == "local alias of a record" {
      let ad = c.addr
      ad.city = "alias"
    }
    if mode == "scalar map" { m["k"] = 1 }
    if mode == "scalar list" { xs.append(1) }
    if mode == "scalar set" { s.add("k") }
    if mode == "scalar record" { a.city = "Z" }
    if mode == "list in a scalar record" { a.lines.append("Z") }
    require not fail_after else "failed after: " + mode
    return 1
  }
  task start {
    """One row with every kind of collection."""
    init {
      a = Addr(city="A", lines=["1"])
      m = {"a": 1}
      xs = [0]
      s = {"y"}
      cs = [C(id="C1", addr=Addr(city="B", lines=["l1"]), tags=["t1"], cart={"a": 1},
              seen={"y"})]
    }
    check "one more number": len(xs) == 2
  }
}
'''
NESTED_MODES = [
    "record field in a row",
    "list in a record in a row",
    "whole record in a row",
    "map entry in a row",
    "map remove in a row",
    "set add in a row",
    "set discard in a row",
    "list remove in a row",
    "list extend in a row",
    "local alias of a list",
    "local alias of a record",
    "scalar map",
    "scalar list",
    "scalar set",
    "scalar record",
    "list in a scalar record",
]


@pytest.mark.parametrize("mode", NESTED_MODES)
def test_nested_writes_roll_back(mode: str) -> None:
    env = build(NESTED)()
    env.reset(task="start")
    before = canonical(env)
    result = env.call("act", {"mode": mode})
    assert_rolled_back(env, before, result, f"failed after: {mode}")


@pytest.mark.parametrize("mode", NESTED_MODES)
def test_nested_writes_take_effect(mode: str) -> None:
    """Control for the rollback test: the same writes, without the failure, change the state
    (a local bound to a value in state is that value, so writing through it lands too)."""
    env = build(NESTED)()
    env.reset(task="start")
    before = canonical(env)
    assert env.call("act", {"mode": mode, "fail_after": False}) == {"success": True, "data": 1}
    assert canonical(env) != before


ID_KEY = '''
env IdKey {
  """A key named id, as most real schemas have."""
  entity Row {
    key id: str
    n: int
  }
  state { rows: table Row }
}
'''


@pytest.mark.parametrize(
    "state",
    [{"rows": {"R1": {"id": "R1", "n": 1}}}, {"rows": {"R1": {"n": 1}}}],
    ids=["keyed-with-key", "keyed-without-key"],
)
def test_keyed_table_with_a_key_named_id_loads(state: dict[str, Any]) -> None:
    env = build(ID_KEY)()
    env.reset(state={"rows": [{"id": "R1", "n": 1}]})
    loaded = build(ID_KEY)()
    loaded.reset(state=state)
    assert loaded.state_hash() == env.state_hash()


BIG_STATE = '''
env Shelf {
  """Purpose-made spec: rules that loop over a whole table."""
  entity Item {
    key item_id: str
    group: str
  }
  state {
    items: table Item
  }
  fn in_group(g: str) -> int = count(j for j in items if j.group == g)
  invariant "every item is named": all(i.group != "" for i in items)
  QUADRATIC
  query size() -> int {
    """How many items there are."""
    return len(items)
  }
}
'''


def _items(n: int) -> dict[str, Any]:
    return {"items": [{"item_id": f"I{i}", "group": f"g{i % 7}"} for i in range(n)]}


def test_a_valid_state_with_more_rows_than_the_step_budget_loads() -> None:
    # the rule takes a step per row: 400 steps, against a call's budget of 50
    env = build(BIG_STATE.replace("QUADRATIC", ""))(step_budget=50)
    env.reset(state=_items(400))
    assert env.call("size", {}) == {"success": True, "data": 400}
    env.reset(state=json.dumps(_items(400)))  # the same through the JSON text
    assert len(env._table("items")) == 400


def test_a_rule_quadratic_in_the_state_is_refused_with_what_to_do() -> None:
    quadratic = 'invariant "groups stay small": all(in_group(i.group) <= 1000 for i in items)'
    env = build(BIG_STATE.replace("QUADRATIC", quadratic))(step_budget=50)
    env.reset(state=_items(40))  # 40 x 40 steps: within 50 + 100 per row
    with pytest.raises(InvalidState, match=r"more than 30,050 steps .* 300 rows\).*square"):
        env.reset(state=_items(300))  # 300 x 300 steps
    assert len(env._table("items")) == 0  # a refused state leaves an empty one
    roomy = build(BIG_STATE.replace("QUADRATIC", quadratic))(step_budget=100_000)
    roomy.reset(state=_items(300))
    assert len(roomy._table("items")) == 300


def test_failures_and_bad_values_pickle_whole() -> None:
    import pickle

    from envdsl.runtime.errors import BadValue, Fail

    fail = pickle.loads(pickle.dumps(Fail("no stock", site=3, rule="unique: User.email")))
    assert (fail.message, fail.site, fail.rule, fail.args) == (
        "no stock",
        3,
        "unique: User.email",
        ("no stock",),
    )
    bad = pickle.loads(pickle.dumps(BadValue("user_id", "expected a string")))
    assert (bad.path, bad.message, str(bad)) == (
        "user_id",
        "expected a string",
        "user_id: expected a string",
    )


NESTED_REFS = '''
env Shop {
  """Purpose-made spec: refs inside records, lists and maps, next to values without any."""
  entity Product {
    key product_id: str
  }
  record Item {
    product: ref Product
    name: str
    options: map[str, str] = {}
  }
  entity Order {
    key order_id: str
    items: list[Item]
    by_sku: map[str, Item] = {}
    extra: Item?
    notes: map[str, str] = {}
    tags: list[str] = []
  }
  state {
    products: table Product
    orders: table Order
  }
  action add_item(order_id: str, product_id: str, sku: str) -> Order {
    """Add an item of a product to an order."""
    let o = orders[order_id]
    o.items.append(Item(product=product_id, name=sku, options={"size": "m"}))
    o.by_sku[sku] = Item(product=product_id, name=sku)
    o.notes[sku] = product_id
    return o
  }
}
'''


def _walk_everything(spec: Any, value: Any, path: str, found: list[Any]) -> None:
    """values.nested_refs's walk before it skipped the values that cannot hold a ref."""
    from envdsl.runtime import values as v

    if value is None:
        return
    if isinstance(spec, v.OptionalSpec):
        _walk_everything(spec.inner, value, path, found)
    elif isinstance(spec, v.RefSpec):
        found.append((path, spec.table, value))
    elif isinstance(spec, v.ListSpec):
        for index, item in enumerate(value):
            _walk_everything(spec.inner, item, f"{path}[{index}]", found)
    elif isinstance(spec, v.MapSpec):
        for key, item in value.items():
            _walk_everything(spec.value, item, f"{path}.{key}", found)
    elif isinstance(spec, v.RecordSpec):
        for field in spec.fields:
            _walk_everything(
                field.spec, getattr(value, field.attribute), f"{path}.{field.name}", found
            )


def test_nested_refs_finds_every_ref_the_whole_walk_finds_and_dangling_ones_fail() -> None:
    from envdsl.runtime.values import RefSpec, holds_ref, nested_refs

    env = build(NESTED_REFS)()
    item = {"product": "P1", "name": "cup", "options": {"colour": "red"}}
    env.reset(
        state={
            "products": [{"product_id": "P1"}, {"product_id": "P2"}],
            "orders": [{"order_id": "O1", "items": [item], "extra": item, "tags": ["a"]}],
        }
    )
    assert env.call("add_item", {"order_id": "O1", "product_id": "P2", "sku": "S"})["success"]
    before = env.state_hash()
    failed = env.call("add_item", {"order_id": "O1", "product_id": "P9", "sku": "T"})
    assert not failed["success"] and "P9" in failed["error"]
    assert env.state_hash() == before
    spec = env.TABLES["orders"].row
    row = env._table("orders").get("O1")
    expected: list[Any] = []
    for field in spec.fields:
        if not isinstance(field.spec, RefSpec):
            _walk_everything(field.spec, getattr(row, field.attribute), field.name, expected)
    assert nested_refs(spec, row) == expected
    assert [key for _, _, key in expected] == ["P1", "P2", "P2", "P1"]
    kinds = {field.name: holds_ref(field.spec) for field in spec.fields}
    assert kinds == {
        "order_id": False,
        "items": True,
        "by_sku": True,
        "extra": True,
        "notes": False,
        "tags": False,
    }
