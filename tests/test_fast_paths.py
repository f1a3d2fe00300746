"""The fast paths of issue 13 agree with the reference behaviour on every example.

Random call sequences (arguments derived from the state, as `envdsl explore` does) run on two
copies of each example, with snapshots and restores interleaved: the fast side takes journal
snapshots and hashes incrementally; the reference side snapshots by pickling the whole
environment (a deep copy), restores by unpickling it, and recomputes the hash from nothing.
Every result, every state and every hash must be the same on both sides.
"""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import envdsl
import example_specs
from envdsl.explore.arguments import ArgumentGenerator
from envdsl.runtime import Environment, typed

EXAMPLES = example_specs.EXAMPLES  # the specs (a task file adds tasks, not tools)

OPERATIONS = 40  # per example: long enough for writes between snapshots and restores


def operations(seed: int) -> list[tuple[str, int]]:
    """A sequence of calls (a tool and its arguments drawn from the number), snapshots and
    restores (of the snapshot the number picks), mostly calls. Drawn from one seed rather
    than by hypothesis element by element: its lists stay short, and a restore only tests
    something when calls that wrote came before it."""
    rng = random.Random(seed)
    kinds = rng.choices(["call", "snapshot", "restore"], weights=[6, 2, 2], k=OPERATIONS)
    return [(kind, rng.randrange(2**32)) for kind in kinds]


class Reference:
    """The reference side: deep-copy snapshots, hashes recomputed from nothing."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.snapshots: list[bytes] = []

    def snapshot(self) -> None:
        self.snapshots.append(pickle.dumps(self.env))

    def restore(self, index: int) -> None:
        self.env = pickle.loads(self.snapshots[index])


def observe(env: Environment, *, reference: bool) -> tuple[Any, ...]:
    digest = env.reference_state_hash() if reference else env.state_hash()
    trace = [(e.name, e.arguments, e.success, e.error) for e in env.trace]
    return digest, env.state_json(), trace, env.task


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_fast_paths_match_the_reference(path: Path) -> None:
    env_class = envdsl.load(path)
    tasks = list(env_class.TASKS)
    tools = sorted(env_class.TOOLS)

    @settings(
        max_examples=10,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(task=st.sampled_from(tasks), seed=st.integers(0, 2**32))
    def run(task: str, seed: int) -> None:
        fast = env_class()
        fast.reset(task=task)
        reference = Reference(env_class())
        reference.env.reset(task=task)
        snapshots = []
        for kind, number in operations(seed):
            if kind == "call":
                name = tools[number % len(tools)]
                arguments = ArgumentGenerator(fast, number // len(tools)).for_tool(name)
                assert fast.call(name, arguments) == reference.env.call(name, arguments)
            elif kind == "snapshot":
                snapshots.append(fast.snapshot())
                reference.snapshot()
            elif snapshots:
                index = number % len(snapshots)
                fast.restore(snapshots[index])
                reference.restore(index)
            assert observe(fast, reference=False) == observe(reference.env, reference=True)
            assert fast.state_hash() == fast.reference_state_hash()
        assert fast.evaluate() == reference.env.evaluate()

    run()


def test_the_incremental_hash_follows_rows_loaded_outside_a_call() -> None:
    env = envdsl.load(EXAMPLES[0].parent / "sleep_tracking.env")()
    env.reset(task="reactivate_and_log")
    first = env.state_hash()
    row = env.TABLES["users"].row.from_json({"user_id": "U9", "name": "N", "email": "n@x.org"}, "")
    env.load_rows("users", [row])
    assert env.state_hash() == env.reference_state_hash() != first


# values that the plans' inline tests do not take, or that no spec accepts: every one must be
# read (or refused, with the same message) exactly as the generic parser does
ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    5.0,
    5.5,
    2**63,
    -(2**63),
    "",
    "x" * 65,
    "é",
    "\ud800",
    "2024-05-01T09:00:00+02:00",
    "2024-05-01",
    [],
    ["a", 1],
    {},
    {"a": 1},
]


def generic_read(env: Environment, name: str, given: dict[str, Any]) -> Any:
    """The reference: `_parse_arguments` and `_as_called`, the interpreting path."""
    from envdsl.runtime.environment import _as_called, _in_order
    from envdsl.runtime.errors import BadValue

    tool = env.TOOLS[name]
    try:
        values = env._parse_arguments(tool, given)
    except BadValue as error:
        return ("bad", error.path, error.message)
    return _in_order(tool, values), _as_called(tool, values)


def plan_read(env: Environment, name: str, given: dict[str, Any]) -> Any:
    from envdsl.runtime.errors import BadValue

    try:
        read = env._plan(name).read(given)
    except BadValue as error:
        return ("bad", error.path, error.message)
    return generic_read(env, name, given) if read is None else read


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_call_plans_read_arguments_as_the_generic_parser(path: Path) -> None:
    env_class = envdsl.load(path)
    env = env_class()
    env.reset(task=next(iter(env_class.TASKS)))
    rng = random.Random(path.stem)
    compared = 0
    for name in sorted(env_class.TOOLS):
        for choice in range(30):
            given = ArgumentGenerator(env, choice).for_tool(name)
            variants = [given]
            for param in given:  # each argument in turn: odd, or left out
                variants.append({**given, param: rng.choice(ODD_VALUES)})
                variants.append({k: v for k, v in given.items() if k != param})
            variants.append({**given, "unexpected": 1})
            for arguments in variants:
                assert plan_read(env, name, arguments) == generic_read(env, name, arguments)
                compared += 1
            read = generic_read(env, name, given)
            if read[0] != "bad":  # a typed method's Python values back to JSON, as typed.py does
                plan, tool = env._plan(name), env.TOOLS[name]
                for param, (_, _, convert), value in zip(tool.params, plan.typed_params, read[0]):
                    expected = typed.to_json(param.spec, value)
                    assert (value if convert is None else convert(value)) == expected
    assert compared > 100


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_call_plans_check_results_as_the_generic_walk(path: Path) -> None:
    """The written-out result checks give limits.result_problem's answer, small budgets too."""
    from envdsl.runtime.limits import result_problem

    env_class = envdsl.load(path)
    env = env_class()
    env.reset(task=next(iter(env_class.TASKS)))
    checked = 0
    for name in sorted(env_class.TOOLS):
        plan = env._plan(name)
        for choice in range(20):
            outcome = env.call(name, ArgumentGenerator(env, choice).for_tool(name))
            if not outcome["success"] or outcome["data"] is None:
                continue
            data = outcome["data"]
            for budget in (0, 5, 40, 10_000_000):
                assert plan.check_result(data, budget) == result_problem(data, budget)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_skipping_rows_no_rule_reads_agrees_with_checking_every_touched_row(path: Path) -> None:
    """The end-of-call check skips a changed row when no rule of its table reads a changed
    field; the reference checks every touched row. Random calls must agree on both."""
    env_class = envdsl.load(path)

    class EveryRow(env_class):  # type: ignore[misc, valid-type]
        @classmethod
        def _guarded_fields(cls) -> dict[str, frozenset[str] | None]:
            return {name: None for name in cls.TABLES}

    for task in list(env_class.TASKS)[:3]:
        fast, reference = env_class(), EveryRow()
        fast.reset(task=task)
        reference.reset(task=task)
        tools = sorted(env_class.TOOLS)
        for number in range(120):
            name = tools[number % len(tools)]
            arguments = ArgumentGenerator(fast, number).for_tool(name)
            assert fast.call(name, arguments) == reference.call(name, arguments)
        assert fast.state_hash() == reference.state_hash()


# ---- reset(state=...): the bulk loader against the reference path ----------------------------


class Key(str):
    """A str subclass: not a JSON string (the JSON walk refuses it as an object key)."""


# values no inline test of the loader takes as they are, or that nothing accepts
ODD_FIELD_VALUES: list[Any] = [
    *ODD_VALUES,
    Key("x"),
    float("nan"),
    2**70,
    -1.5e308 * 10,
    "2024-05-01T09:00:00",
    "2024-05-01 09:00:00Z",
    "2024-13-01T09:00:00Z",
    [[[[[[[[[[]]]]]]]]]] * 2,
    ("a",),
    ["x" * 70],
]


def loaded(env_class: type[Environment], state: Any, *, reference: bool) -> tuple[Any, ...]:
    """What reset(state=...) made: everything a later call or hash can see (rows by repr, so
    5 and 5.0 differ; indexes, counters, owners of the mutable values), or the message."""
    from envdsl.runtime import environment as environment_module
    from envdsl.runtime import InvalidState

    env = env_class()
    with pytest.MonkeyPatch.context() as patch:
        if reference:  # the reference path alone: the bulk loader never takes a state
            patch.setattr(environment_module, "load_plainly", lambda env, data: False)
        try:
            env.reset(state=state)
        except InvalidState as error:
            return ("invalid", str(error), env.state_json())
    tables = {}
    for name in env.TABLES:
        table = env._table(name)
        rows = table.rows()
        tables[name] = (
            [repr(row) for row in rows],
            [table.seq_of(key) for key in table.keys()],
            table.auto_counter,
            table.unique_index,
            table.ref_index,
            [owners(name, row) for row in rows],
        )
    scalars = {name: repr(env._scalars[name]) for name in env.SCALARS}
    return ("loaded", tables, scalars, env._steps, env.state_hash(), env)


def owners(table: str, row: Any) -> list[tuple[str, str, bool]]:
    """(attribute, type, owned at this row's field) of each mutable value in the row."""
    from envdsl.runtime.places import Place, is_immutable, record_fields

    found = []

    def walk(attribute: str, value: Any) -> None:
        if is_immutable(value):
            return
        owner = getattr(value, "_owner", None)
        place = Place(table, row, attribute)
        found.append((attribute, type(value).__name__, owner == place and owner.row is row))
        items = value.values() if isinstance(value, dict) else value
        if isinstance(value, (list, set, dict)):
            for item in items:
                walk(attribute, item)
        elif hasattr(value, "__slots__"):
            for name in record_fields(type(value)):
                walk(attribute, getattr(value, name))

    for name in record_fields(type(row)):
        walk(name, getattr(row, name))
    return found


def damaged(
    state: dict[str, Any], env_class: type[Environment], rng: random.Random, benign: bool = False
) -> Any:
    """The state with one to three random things wrong with it, or right but unusual (all
    of them, when benign)."""
    state = pickle.loads(pickle.dumps(state))
    for _ in range(rng.randint(1, 3)):
        tables = [
            n for n in env_class.TABLES if state.get(n) and isinstance(state[n], (list, dict))
        ]
        kind = rng.choice(["field", "field", "field", "missing", "extra", "copy", "as list",
                           "key", "top", "scalar", "row", "table", "benign", "benign",
                           "benign", "key subclass"])  # fmt: skip
        kind = "benign" if benign else kind
        if kind == "top":
            state[rng.choice(["unknown", Key("unknown"), 1])] = []
            continue
        if kind == "scalar" and env_class.SCALARS:
            name = rng.choice(sorted(env_class.SCALARS))
            if rng.random() < 0.5:
                state.pop(name, None)
            else:
                state[name] = rng.choice(ODD_FIELD_VALUES)
            continue
        if not tables:
            continue
        name = rng.choice(tables)
        table = state[name]
        if kind == "table":
            state[name] = rng.choice([None, "rows", 5, tuple(table)])
            continue
        if kind == "as list" and isinstance(table, dict):
            state[name] = list(table.values())
            continue
        keys = list(table) if isinstance(table, dict) else list(range(len(table)))
        where = rng.choice(keys)
        row = table[where]
        if not isinstance(row, dict):
            continue
        if kind == "key" and isinstance(table, dict):
            table[rng.choice([Key(where), where + "x", " " + where, "\ud800"])] = table.pop(where)
        elif kind == "row":
            table[where] = rng.choice([None, [], "row", {**row, Key("x"): 1}])
        elif kind == "copy":  # a duplicate key, or a duplicate in its unique fields
            other = table[rng.choice(keys)]
            other = dict(other) if isinstance(other, dict) else {}
            other.update({k: v for k, v in row.items() if rng.random() < 0.5})
            if isinstance(table, list):
                table.append(other)
            else:
                table[f"{where}-copy"] = other
        elif not row:
            continue
        elif kind == "benign":  # the same value in another form the reference accepts
            field = rng.choice(sorted(row))
            value = row[field]
            if type(value) is int:
                row[field] = float(value)
            elif isinstance(value, str) and value.endswith("Z") and "T" in value:
                row[field] = value[:-1] + rng.choice(["+00:00", "", "-00:00"])
            elif isinstance(value, str):
                row[field] = value + rng.choice(["é", "x" * 70, ""])
            elif isinstance(table, list):  # rows without their key: auto keys, where any
                row.pop(next(iter(row)))
        elif kind == "missing":
            row.pop(rng.choice(sorted(row)))
        elif kind == "extra":
            row[rng.choice(["unknown", "\ud800"])] = 1
        elif kind == "key subclass":  # a field's own name, as a str subclass
            renamed = rng.choice(sorted(row))
            table[where] = {Key(k) if k == renamed else k: v for k, v in row.items()}
        else:
            field = rng.choice(sorted(row))
            rows = table.values() if isinstance(table, dict) else table
            others = [r.get(field) for r in rows if isinstance(r, dict)]
            row[field] = rng.choice([*ODD_FIELD_VALUES, rng.choice(others), rng.choice(others)])
    return state


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_the_bulk_loader_loads_and_refuses_states_as_the_reference(path: Path) -> None:
    """Valid states of every task (as JSON objects and as text, tables keyed and as lists)
    and random damage to them: the same rows, indexes, owners and hash, or the same
    InvalidState message; then the same results of random calls on the loaded states."""
    from envdsl.runtime.loading import load_plainly

    env_class = envdsl.load(path)
    rng = random.Random(path.stem)
    outcomes: dict[str, int] = {"loaded": 0, "invalid": 0}
    for task in env_class.TASKS:
        env = env_class()
        env.reset(task=task)
        state = env.state_json()
        as_lists = {n: list(v.values()) if n in env_class.TABLES else v for n, v in state.items()}
        cases: list[Any] = [state, as_lists, json.dumps(state)]
        for valid in (state, as_lists):  # the bulk loader takes them (or measures nothing)
            assert load_plainly(env_class(), valid)
        cases += [damaged(rng.choice([state, as_lists]), env_class, rng) for _ in range(25)]
        cases += [damaged(as_lists, env_class, rng, benign=True) for _ in range(10)]
        for case in cases:
            if rng.random() < 0.3:
                try:
                    case = json.dumps(case)  # the text path (json.loads output only)
                except (TypeError, ValueError):
                    pass
            fast = loaded(env_class, case, reference=False)
            reference = loaded(env_class, case, reference=True)
            assert fast[:-1] == reference[:-1] if fast[0] == "loaded" else fast == reference
            outcomes[fast[0]] += 1
            if fast[0] == "loaded":
                check_calls_agree(fast[-1], reference[-1], rng.randrange(2**32))
    assert outcomes["loaded"] >= len(env_class.TASKS) * 3 and outcomes["invalid"] > 10


def check_calls_agree(fast: Environment, reference: Environment, seed: int) -> None:
    tools = sorted(fast.TOOLS)
    rng = random.Random(seed)
    for _ in range(8):
        number = rng.randrange(2**32)
        name = tools[number % len(tools)]
        arguments = ArgumentGenerator(fast, number // len(tools)).for_tool(name)
        assert fast.call(name, arguments) == reference.call(name, arguments)
    assert fast.state_json() == reference.state_json()
    assert fast.state_hash() == reference.state_hash() == old_style_hash(reference)


# ---- state_hash(): the written-out row digests against the reference form --------------------


def old_style_hash(env: Environment) -> str:
    """state_hash() as digests.py defines it, written out from nothing: every row digested
    from repr(to_json(row)), so the hex values cannot have moved."""
    import hashlib
    from hashlib import blake2b

    whole = hashlib.sha256()
    for name in sorted([*env.TABLES, *env.SCALARS]):
        whole.update(name.encode("utf-8", "surrogatepass") + b"\0")
        if name in env.TABLES:
            spec = env.TABLES[name].row
            rows = env._table(name).rows()
            joined = b"".join(
                blake2b(
                    repr(spec.to_json(r)).encode("utf-8", "surrogatepass"), digest_size=16
                ).digest()
                for r in rows
            )
            digest = blake2b(joined, digest_size=32).digest()
        else:
            value = env._scalars[name]
            data = None if value is None else env.SCALARS[name].spec.to_json(value)
            text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
            digest = text.encode("utf-8", "surrogatepass")
        whole.update(len(digest).to_bytes(8, "little") + digest)
    return whole.hexdigest()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_row_digests_are_those_of_the_rows_json(path: Path) -> None:
    """Each record's json_repr is repr(to_json(row)) and the digests are the reference ones,
    on every task's rows and on rows given odd values: datetimes in other zones or naive, a
    lone surrogate, an int too long for text, floats, empty and non-ASCII text."""
    import datetime as dt

    from envdsl.runtime.digests import _digest_row, _row_digest, _row_digests

    env_class = envdsl.load(path)
    rng = random.Random(path.stem)
    odd = [
        dt.datetime(2024, 5, 1, 9, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        dt.datetime(2024, 5, 1, 9, 0, 0, 5),
        dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc),
        dt.datetime(2024, 5, 1, 9, 0, 0, 5, tzinfo=dt.timezone.utc),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc),
        "\ud800",
        "é{}'\"",
        "",
        10**5000,
        -0.0,
        1e300,
        None,
    ]
    compared = 0
    for task in env_class.TASKS:
        env = env_class()
        env.reset(task=task)
        assert env.state_hash() == env.reference_state_hash() == old_style_hash(env)
        for name, spec in env_class.TABLES.items():
            rows = env._table(name).rows()
            for row in rows:
                attribute = rng.choice([f.attribute for f in spec.row.fields])
                changed = pickle.loads(pickle.dumps(row))
                setattr(changed, attribute, rng.choice(odd))
                for candidate in (row, changed):
                    try:
                        expected = _row_digest(spec.row.to_json(candidate))
                    except (AttributeError, TypeError, ValueError):
                        continue  # a value of the wrong type for this field's serializer
                    assert _digest_row(candidate, spec.row) == expected
                    assert _row_digests(["k"], [candidate], spec.row) == {"k": expected}
                    compared += 1
    assert compared > 0
