"""The fast paths of issue 13 agree with the reference behaviour on every example.

Random call sequences (arguments derived from the state, as `envdsl explore` does) run on two
copies of each example, with snapshots and restores interleaved: the fast side takes journal
snapshots and hashes incrementally; the reference side snapshots by pickling the whole
environment (a deep copy), restores by unpickling it, and recomputes the hash from nothing.
Every result, every state and every hash must be the same on both sides.
"""

from __future__ import annotations

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
