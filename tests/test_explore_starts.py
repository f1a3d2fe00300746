"""What explore reuses between calls and examples is what it would build afresh.

Each start state is built once and restored for every example (envdsl/explore/explorer.py,
Prepared); the argument sample of a state is carried over a write to the tables the write did
not touch (StateSample.after_write); one argument generator serves every call. On random
calls of every example: a restored start is a fresh `Start.apply` (state, hash, trace, last
call, coverage), the carried-over sample is a fresh sample, and the arguments are those a
fresh generator derives from the same state and number.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest

import envdsl
import example_specs
from envdsl.explore.arguments import ArgumentGenerator, StateSample
from envdsl.explore.explorer import ExploreOptions, Explorer, Prepared, written
from envdsl.runtime import Environment

EXAMPLES = example_specs.EXAMPLES
CALLS = 60  # per example, from a few of its starts


def same_sample(carried: StateSample, fresh: StateSample, env: Environment) -> None:
    for kind in (str, int, float, dt.date, dt.datetime):
        assert carried.values(kind) == fresh.values(kind), kind
    for spec in env.TABLES.values():
        for field in spec.row.fields:
            assert carried.strings(field.name) == fresh.strings(field.name), field.name
    for table in env.TABLES:
        assert carried.keys(table) == fresh.keys(table), table
    assert carried.clock == fresh.clock


def fresh_start(explorer: Explorer, prepared: Prepared) -> tuple[Environment, list[int]]:
    env = explorer.env_class(step_budget=explorer.options.step_budget)
    env.coverage = [0] * len(explorer.env_class.SITES)
    prepared.start.apply(env)
    return env, env.coverage


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_reused_starts_samples_and_generator_are_what_fresh_ones_give(path: Path) -> None:
    env_class = envdsl.load(path)
    explorer = Explorer(env_class, ExploreOptions())
    rng = random.Random(path.stem)
    tools = sorted(env_class.TOOLS)
    starts = rng.sample(explorer.starts, min(3, len(explorer.starts)))
    writes = 0
    for start in starts * 2:  # each start twice: the second example begins from a restore
        prepared = explorer.prepare(start)
        counts = [0] * len(env_class.SITES)
        env = prepared.begin(counts)
        reference, reference_counts = fresh_start(explorer, prepared)
        assert env.state_hash() == reference.state_hash() == reference.reference_state_hash()
        assert env.state_json() == reference.state_json()
        assert env.trace == reference.trace == []
        assert env.task == reference.task
        for name in ("_last_result", "last_failure", "last_exception"):
            assert getattr(env, name, None) == getattr(reference, name, None), name
        assert counts == reference_counts  # building the start counts, as building it did
        sample = prepared.sample
        for _ in range(CALLS // len(starts) // 2):
            name = rng.choice(tools)
            choice = rng.randrange(2**40) // len(tools)
            arguments = prepared.generator.arguments(name, choice, sample)
            assert arguments == ArgumentGenerator(env, choice, StateSample(env)).for_tool(name)
            world = env._world
            before = len(world.history)
            result = env.call(name, arguments)
            if result["success"] and env.TOOLS[name].kind != "query":
                sample = sample.after_write(*written(env, world, before))
                same_sample(sample, StateSample(env), env)
                writes += 1
    assert writes > 0 or not any(t.kind == "action" for t in env_class.TOOLS.values())


def test_written_names_the_tables_and_scalars_a_call_wrote() -> None:
    env_class = envdsl.load(example_specs.REPO / "examples" / "online_shop.env")
    explorer = Explorer(env_class, ExploreOptions())
    start = next(s for s in explorer.starts if s.task is not None and not s.prefix)
    env = explorer.prepare(start).begin(None)
    world = env._world
    before = len(world.history)
    customer = env._table("customers").keys()[0]
    sku = env._table("products").keys()[0]
    result = env.call("add_to_cart", {"customer_id": customer, "sku": sku, "qty": 1})
    assert result["success"], result
    assert written(env, world, before) == ({"customers": {"cart"}}, False)
    # without a living snapshot the history is not kept: nothing can be told
    bare = env_class()
    bare.reset(task=start.task)
    bare.reset(state=bare.state_json())  # (a task's start is a living snapshot: not this one)
    assert written(bare, bare._world, 0) == (None, True)
