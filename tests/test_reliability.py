"""Reliability of generated environments on hostile input (issue 14, runtime half).

Tool arguments come from agents and states from files: no exception may escape `env.call`
or surface as "internal error", `state_hash()` never raises, a bad state is an
`InvalidState`, the same calls give the same state in any process (whatever PYTHONHASHSEED),
and a value that grows without bound (a power tower, a string doubled in a loop) fails the
call within the size budget instead of running for minutes or taking gigabytes.
"""

from __future__ import annotations

import functools
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envdsl
from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import check_source, compile_source
from envdsl.runtime import Environment, InvalidState
from envdsl.tasks.task_files import is_task_file
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

import fuzz_runtime  # noqa: E402


@functools.lru_cache(maxsize=None)
def build(text: str) -> type[Environment]:
    result = compile_source(SourceFile("spec.env", text))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)


@functools.lru_cache(maxsize=None)
def example(path: Path) -> type[Environment]:
    return envdsl.load(path)


def assert_clean_failure(env: Environment, result: dict[str, Any], *words: str) -> None:
    assert result["success"] is False, result
    assert "internal error" not in result["error"], result
    assert env.last_exception is None, env.last_exception
    for word in words:
        assert word in result["error"], result["error"]
    env.state_hash()
    json.dumps(result)


# ---- hostile arguments ---------------------------------------------------------------------

ARGS = '''
env Args {
  """Purpose-made spec: one parameter of each kind."""
  entity Item {
    key item_id: str
    n: int = 0
    name: str = ""
    price: float = 0.0
    at: datetime?
    flags: map[bool, int] = {}
    counts: map[int, str] = {}
    data: json?
  }
  state {
    items: table Item
    now: datetime = datetime("2024-01-01T00:00:00Z")
  }
  action set_n(item_id: str, n: int) -> Item {
    """Set n."""
    let it = items.get(item_id) else "no item"
    it.n = n
    return it
  }
  action rename(item_id: str, name: str) -> Item {
    """Rename."""
    let it = items.get(item_id) else "no item"
    it.name = name
    return it
  }
  action price(item_id: str, price: float) -> Item {
    """Set the price."""
    let it = items.get(item_id) else "no item"
    it.price = price
    return it
  }
  action stamp(item_id: str, at: datetime) -> Item {
    """Set the time, one day later."""
    let it = items.get(item_id) else "no item"
    it.at = at + days(1)
    return it
  }
  action later(by: int) -> datetime {
    """Move the clock by some days."""
    now = now + days(by)
    return now
  }
  query repeat(n: int) -> list[int] {
    """A list of n numbers."""
    return [i for i in range(n)]
  }
  query flags(f: map[bool, int]) -> int {
    """Sum of a bool-keyed map."""
    return sum(f.values())
  }
  query counts(c: map[int, str]) -> int {
    """Size of an int-keyed map."""
    return len(c)
  }
  action keep(item_id: str, data: json) -> Item {
    """Keep any JSON."""
    let it = items.get(item_id) else "no item"
    it.data = data
    return it
  }
  task t {
    """Nothing to do."""
    init {
      items = [Item(item_id="I1")]
    }
    solution {
      set_n(item_id="I1", n=1)
    }
    check "n is set": items["I1"].n == 1
  }
}
'''


@pytest.fixture()
def args_env() -> Environment:
    env = build(ARGS)()
    env.reset(task="t")
    return env


@pytest.mark.parametrize(
    "name, text, words",
    [
        ("set_n", '{"item_id": "I1", "n": 1' + "0" * 5000 + "}", ["not valid JSON"]),
        ("keep", '{"item_id": "I1", "data": ' + "[" * 100_000 + "]" * 100_000 + "}", ["deep"]),
        ("stamp", '{"item_id": "I1", "at": "9999-12-31T23:59:59-23:59"}', ["at"]),
        ("stamp", '{"item_id": "I1", "at": "9999-12-31T12:00:00Z"}', ["out of range"]),
        ("price", '{"item_id": "I1", "price": 1e400}', ["price"]),
        ("price", '{"item_id": "I1", "price": 1' + "0" * 400 + "}", ["price", "finite"]),
        ("price", '{"item_id": "I1", "price": NaN}', ["NaN"]),
        ("price", '{"item_id": "I1", "price": -Infinity}', ["Infinity"]),
        ("rename", '{"item_id": "I1", "name": "a\\ud800b"}', ["name", "surrogate"]),
        ("keep", '{"item_id": "I1", "data": {"k": ["\\udfff"]}}', ["surrogate"]),
        ("repeat", '{"n": 10000000000000000000000000000000000000000}', ["n", "64-bit"]),
        ("repeat", '{"n": 9223372036854775807}', ["step budget"]),
        ("later", '{"by": 9223372036854775807}', ["out of range"]),
        ("later", '{"by": 3000000}', ["out of range"]),
        ("keep", '{"item_id": "I1", "data": {"a": 1' + "0" * 40 + "}}", ["64-bit"]),
    ],
    ids=lambda value: value[:40] if isinstance(value, str) else None,
)
def test_hostile_arguments_fail_cleanly(
    args_env: Environment, name: str, text: str, words: list[str]
) -> None:
    before = args_env.state_hash()
    assert_clean_failure(args_env, args_env.call(name, text), *words)
    assert args_env.state_hash() == before


@pytest.mark.parametrize(
    "name, arguments, words",
    [
        ("set_n", {"item_id": "I1", "n": 10**4000}, ["n", "64-bit"]),
        ("set_n", {"item_id": "I1", "n": 10**5000}, ["n"]),  # too long even to print
        ("price", {"item_id": "I1", "price": 10**400}, ["price", "finite"]),
        ("price", {"item_id": "I1", "price": float("nan")}, ["price"]),
        ("rename", {"item_id": "I1", "name": "\ud800"}, ["surrogate"]),
        ("rename", {"item_id": "I1", "name": "x" * 2_000_000}, ["name", "longer"]),
        ("keep", {"item_id": "I1", "data": functools.reduce(lambda a, _: [a], range(5000), [])},
         ["nested"]),  # fmt: skip
        ("keep", {"item_id": "I1", "data": {1: 2}}, ["key"]),
        ("keep", {"item_id": "I1", "data": {"a": float("inf")}}, ["finite"]),
        ("keep", {"item_id": "I1", "data": object()}, ["JSON"]),
    ],
    ids=lambda value: value[:40] if isinstance(value, str) else None,
)
def test_hostile_python_values_fail_cleanly(
    args_env: Environment, name: str, arguments: dict[str, Any], words: list[str]
) -> None:
    before = args_env.state_hash()
    assert_clean_failure(args_env, args_env.call(name, arguments), *words)
    assert args_env.state_hash() == before


def test_unknown_names_are_cut_in_errors(args_env: Environment) -> None:
    result = args_env.call("x" * 10_000_000, {})
    assert_clean_failure(args_env, result, "unknown tool")
    assert len(result["error"]) < 300
    result = args_env.call("set_n", {"item_id": "I1", "n": 1, "y" * 1_000_000: 1})
    assert_clean_failure(args_env, result, "unexpected argument")
    assert len(result["error"]) < 300
    result = args_env.call("keep", {"item_id": "I1", "data": 1} | {"\ud800": 1})
    assert_clean_failure(args_env, result)


def test_bool_and_int_keyed_maps(args_env: Environment) -> None:
    assert args_env.call("flags", {"f": {"true": 2, "false": 3}}) == {"success": True, "data": 5}
    assert_clean_failure(args_env, args_env.call("flags", {"f": {"True": 1}}), "true or false")
    assert args_env.call("counts", {"c": {"1": "a", "-2": "b"}}) == {"success": True, "data": 2}
    for spelling in ("01", " 1", "1 ", "+1", "1_0", "1.0", "-0"):
        result = args_env.call("counts", {"c": {"1": "a", spelling: "b"}})
        assert_clean_failure(args_env, result, "integer key")


def test_map_keys_round_trip_through_json_states(args_env: Environment) -> None:
    state = args_env.state_json()
    state["items"]["I1"]["flags"] = {"true": 1, "false": 0}
    state["items"]["I1"]["counts"] = {"7": "x"}
    args_env.reset(state=state)
    assert args_env.state_json() == state
    state["items"]["I1"]["counts"] = {"7": "x", "07": "y"}
    with pytest.raises(InvalidState, match="integer key"):
        args_env.reset(state=state)


def test_datetimes_at_the_edge_of_the_range_round_trip(args_env: Environment) -> None:
    for text in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z"):
        assert args_env.call("stamp", {"item_id": "I1", "at": text})["success"] is (
            text.startswith("0001")
        )
    args_env.reset(state=args_env.state_json())  # year 2 is written 0002, not 2
    assert args_env.state_json()["items"]["I1"]["at"] == "0001-01-02T00:00:00Z"


# ---- nondeterminism ------------------------------------------------------------------------

TIES = '''
env Ties {
  """Purpose-made spec: ties and float sums over sets."""
  state {
    words: set[str] = set()
    picked: list[str] = []
    total: float = 0.0
  }
  action pick(ws: list[str], xs: set[float]) -> list[str] {
    """Pick words by length: ties everywhere."""
    let s = set(ws)
    let first = min(s, key=lambda w: len(w))
    let last = max(s, key=lambda w: len(w))
    let order = sorted(s, key=lambda w: len(w))
    let back = sorted(s, key=lambda w: len(w), reverse=true)
    picked = [first, last] + order + back
    total = sum(xs)
    return picked
  }
  action root(v: float) -> float {
    """A square root into state."""
    total = v ** 0.5
    return total
  }
  task t {
    """Nothing to do."""
    init { }
    solution {
      pick(ws=["a"], xs={1.0})
    }
    check "picked": total == 1.0
  }
}
'''

TIES_SCRIPT = """
import json, sys
from tests.test_reliability import TIES, build
env = build(TIES)()
env.reset(task="t")
words = ["kiwi", "pear", "plum", "fig", "yam", "apple", "melon", "lemon", "grape", "a", "b"]
xs = [0.1, 0.2, 0.3, 1e16, -1e16, 1.5, 2.25, 3.125, 7.7, 0.01, 1e-9]
out = [env.call("pick", {"ws": words, "xs": xs}), env.state_hash(), env.state_json()["total"]]
print(json.dumps(out))
"""


def test_same_calls_same_state_under_any_hash_seed() -> None:
    outputs = set()
    for seed in ("0", "1", "2", "3"):
        completed = subprocess.run(
            [sys.executable, "-c", TIES_SCRIPT],
            capture_output=True,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)},
            timeout=120,
        )
        assert completed.returncode == 0, completed.stderr
        outputs.add(completed.stdout)
    assert len(outputs) == 1, outputs
    outputs_text = outputs.pop()
    result = json.loads(outputs_text)[0]
    assert result["success"] is True
    # ties resolve by the canonical (sorted) order of the set
    assert result["data"][:2] == ["a", "apple"]
    assert result["data"][2:6] == ["a", "b", "fig", "yam"]
    # a float sum over a set is exact (math.fsum), so no order can change it
    assert json.loads(outputs_text)[2] == 15.185000001


def test_no_nan_no_complex_in_state() -> None:
    env = build(TIES)()
    env.reset(task="t")
    before = env.state_hash()
    assert_clean_failure(env, env.call("root", {"v": -4.0}), "not a real number")
    assert_clean_failure(env, env.call("pick", {"ws": ["a"], "xs": [1e308, 1.7e308]}), "finite")
    assert env.state_hash() == before
    assert env.call("root", {"v": 2.25}) == {"success": True, "data": 1.5}


# ---- resource bombs ------------------------------------------------------------------------

BOMBS = """
env Bombs {
  \"\"\"Purpose-made spec: values that grow faster than the step budget counts.\"\"\"
  record Pack { words: list[str] }
  entity Box {
    key box_id: str
    items: list[int] = []
    words: list[str] = []
    tags: set[str] = set()
  }
  state {
    boxes: table Box
    log: list[str] = []
    counter: int = 0
  }
  query square(n: int) -> int {
    \"\"\"Square 27 times.\"\"\"
    let x = n
    for i in range(27) { x = x * x }
    return x
  }
  query tower(n: int) -> int {
    \"\"\"A power tower.\"\"\"
    return n ** n ** n ** n
  }
  query double_text(n: int) -> int {
    \"\"\"Double a string n times.\"\"\"
    let s = "ab"
    for i in range(n) { s = s + s }
    return len(s)
  }
  query double_list(n: int) -> int {
    \"\"\"Double a list n times.\"\"\"
    let xs = [1, 2]
    for i in range(n) { xs += xs }
    return len(xs)
  }
  query wide(n: int) -> str {
    \"\"\"A wide f-string.\"\"\"
    return f"{n:>999999999}"
  }
  query joined(n: int) -> int {
    \"\"\"Join many copies of a long string.\"\"\"
    let s = "x"
    for i in range(19) { s = s + s }
    return len(",".join([s for i in range(n)]))
  }
  query replaced(n: int) -> int {
    \"\"\"Replace to grow.\"\"\"
    let s = "aaaa"
    for i in range(n) { s = s.replace("a", "aaaa") }
    return len(s)
  }
  query many(n: int) -> int {
    \"\"\"Build many big strings.\"\"\"
    let s = "x"
    for j in range(19) { s = s + s }
    let xs: list[str] = []
    for i in range(n) { xs.append(s + str(i)) }
    return len(xs)
  }
  action spam(box_id: str, n: int) -> int {
    \"\"\"Store one big string many times.\"\"\"
    let b = boxes.get(box_id) else "no box"
    let s = "y"
    for j in range(19) { s = s + s }
    for i in range(n) { b.words.append(s) }
    return len(b.words)
  }
  query added(n: int) -> int {
    \"\"\"Double a number by addition (returned, never stored).\"\"\"
    let x = 1
    for i in range(n) { x = x + x }
    return x
  }
  query packed(n: int) -> Pack {
    \"\"\"One record holding one long string n times.\"\"\"
    let s = "z"
    for j in range(19) { s = s + s }
    return Pack(words=[s for i in range(n)])
  }
  query refs(n: int) -> list[str] {
    \"\"\"One long string, n times: small in memory, large as JSON.\"\"\"
    let s = "z"
    for j in range(19) { s = s + s }
    return [s for i in range(n)]
  }
  action bump(n: int) -> int {
    \"\"\"Add to the counter.\"\"\"
    counter += n
    return counter
  }
  action push(box_id: str, n: int) -> int {
    \"\"\"Append one item.\"\"\"
    let b = boxes.get(box_id) else "no box"
    b.items.append(n)
    return len(b.items)
  }
  action push_fail(box_id: str, n: int) -> int {
    \"\"\"Append, add, extend, then fail.\"\"\"
    let b = boxes.get(box_id) else "no box"
    b.items.append(n)
    b.tags.add(str(n))
    log.append(str(n))
    b.items.extend([n, n])
    let alias = b.items
    alias.remove(n)
    b.items = [n]
    alias.append(n)
    fail "on purpose"
  }
  task t {
    \"\"\"Push one item.\"\"\"
    init {
      boxes = [Box(box_id="B1", items=[1, 2], tags={"a"})]
      log = ["start"]
    }
    solution {
      push(box_id="B1", n=3)
    }
    check "three items": len(boxes["B1"].items) == 3
  }
}
"""


@pytest.fixture()
def bombs() -> Environment:
    env = build(BOMBS)()
    env.reset(task="t")
    return env


@pytest.mark.parametrize(
    "name, arguments, words",
    [
        ("square", {"n": 3}, ["64-bit"]),
        ("tower", {"n": 9}, ["64-bit"]),
        ("double_text", {"n": 28}, ["longer than the limit"]),
        ("double_list", {"n": 28}, ["larger than the limit"]),
        ("wide", {"n": 1}, ["wider than the string limit"]),
        ("joined", {"n": 5000}, ["longer than the limit"]),
        ("replaced", {"n": 28}, ["longer than the limit"]),
        ("many", {"n": 100_000}, ["size budget"]),
        ("spam", {"box_id": "B1", "n": 100_000}, ["size budget"]),
        ("refs", {"n": 50_000}, ["result is too large"]),
        ("added", {"n": 20_000}, ["64-bit"]),  # json.dumps of the result would raise
        ("packed", {"n": 50_000}, ["result is too large"]),
    ],
)
def test_bombs_fail_within_the_budget(
    bombs: Environment, name: str, arguments: dict[str, Any], words: list[str]
) -> None:
    before = bombs.state_hash()
    started = time.perf_counter()
    result = bombs.call(name, arguments)
    assert time.perf_counter() - started < 2.0
    assert_clean_failure(bombs, result, *words)
    assert bombs.state_hash() == before


def test_integer_state_stays_in_range(bombs: Environment) -> None:
    assert bombs.call("bump", {"n": 2**62})["success"] is True
    assert_clean_failure(bombs, bombs.call("bump", {"n": 2**62}), "64-bit")
    assert bombs.state_json()["counter"] == 2**62


def test_appends_are_journaled_in_constant_space(bombs: Environment) -> None:
    """An append journals the list's old length, not a copy, and still rolls back exactly,
    also after the list was extended, aliased, replaced and appended to again."""
    for i in range(500):
        assert bombs.call("push", {"box_id": "B1", "n": i})["success"]
    journals: list[list[tuple[Any, ...]]] = []
    rollback = bombs._rollback

    def spy() -> None:
        journals.append(list(bombs._journal or []))
        rollback()

    bombs._rollback = spy  # type: ignore[method-assign]
    before = json.dumps(bombs.state_json())
    assert_clean_failure(bombs, bombs.call("push_fail", {"box_id": "B1", "n": 7}), "on purpose")
    assert json.dumps(bombs.state_json()) == before
    first = journals[0][0]
    assert first[0] == "grow" and first[2] == 502  # the old length, not a copy of 502 items


def test_a_bomb_in_a_solution_fails_envdsl_check_quickly() -> None:
    spec = BOMBS.replace('push(box_id="B1", n=3)', 'square(n=3)\n      push(box_id="B1", n=3)')
    started = time.perf_counter()
    result = check_source(SourceFile("bombs.env", spec))
    assert time.perf_counter() - started < 20
    codes = {d.code.code for d in result.diagnostics}
    assert "E4004" in codes and "E9001" not in codes, codes


# ---- state loading -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate",
    [
        lambda s: s.update(items={"I1": {"n": 1, "item_id": 5}}),
        lambda s: s.update(items={"I1": 5}),
        lambda s: s.update(items={"I1": {"n": 10**30}}),
        lambda s: s.update(items={"I1": {"name": "\ud800"}}),
        lambda s: s.update(items={"I1": {"price": float("nan")}}),
        lambda s: s.update(items=[{"item_id": "I1"}, {"item_id": "I1"}]),
        lambda s: s.update(now="9999-12-31T23:59:59-23:59"),
        lambda s: s.update(now=None),
        lambda s: s.update({"x" * 100_000: 1}),
        lambda s: s.update(
            items={"I1": {"data": functools.reduce(lambda a, _: [a], range(5000), [])}}
        ),
        lambda s: s.update(items={"I1": {"flags": {"True": 1}}}),
    ],
)
def test_bad_states_raise_invalid_state(args_env: Environment, mutate: Any) -> None:
    state = args_env.state_json()
    mutate(state)
    with pytest.raises(InvalidState) as error:
        args_env.reset(state=state)
    assert len(str(error.value)) < 400
    args_env.state_hash()


@pytest.mark.parametrize(
    "text",
    ['{"items": 1' + "0" * 5000 + "}", "[" * 50_000, '{"now": NaN}', '{"items": {"I1": {', ""],
)
def test_bad_state_texts_raise_invalid_state(args_env: Environment, text: str) -> None:
    with pytest.raises(InvalidState):
        args_env.reset(state=text)


# ---- fuzzing every example -----------------------------------------------------------------

fuzz = settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.env") if not is_task_file(p))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
@fuzz
@given(seed=st.integers(0, 2**32))
def test_random_calls_never_escape(path: Path, seed: int) -> None:
    totals = fuzz_runtime.Counts()
    cls = example(path)
    env = cls()
    task = next(iter(cls.TASKS), None)
    env.reset(task=task)
    fuzz_runtime.run_calls(env, random.Random(seed), 25, totals, path.stem)
    fuzz_runtime.run_states(cls, random.Random(seed), 8, totals, path.stem)
    assert totals.problems() == 0, "\n".join(totals.examples)


EDGE = '''
env Edge {
  """Purpose-made spec: a rule that computes past the end of time."""
  entity Slot {
    key slot_id: str
    at: datetime
    invariant "a day fits after the slot": at + days(1) > at
  }
  state {
    slots: table Slot
  }
  action add(slot_id: str, at: datetime) -> Slot {
    """Add a slot."""
    return slots.insert(Slot(slot_id=slot_id, at=at))
  }
  task t {
    """Add a slot."""
    init { }
    solution {
      add(slot_id="S1", at=datetime("2024-01-01T00:00:00Z"))
    }
    check "added": "S1" in slots
  }
}
'''


def test_rules_past_the_end_of_time() -> None:
    env = build(EDGE)()
    env.reset(task="t")
    result = env.call("add", {"slot_id": "S9", "at": "9999-12-31T12:00:00Z"})
    assert_clean_failure(env, result, "out of range")
    with pytest.raises(InvalidState, match="out of range"):
        env.reset(state={"slots": {"S1": {"at": "9999-12-31T12:00:00Z"}}})
    env.state_hash()
