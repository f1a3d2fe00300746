"""Random and malformed tool calls and JSON states against every example environment.

Run from the repository root:

    python3 benchmarks/fuzz_runtime.py                  # 5,000 calls and 1,000 states per example
    python3 benchmarks/fuzz_runtime.py --calls 20000 --states 5000 --seeds 4
    python3 benchmarks/fuzz_runtime.py --quick          # a few hundred, to keep the script working

For each `examples/*.env` (compiled in memory with `envdsl.load`, so the current compiler and
runtime are measured) and each of its tasks, calls are built from the tools' parameter types:
mostly well-typed values drawn from the state (existing keys, enum members), then damaged: a
value swapped for a hostile one (a 5,000-digit number, JSON nested 100,000 deep, a datetime at
the edge of the range, 1e400, 10**400, a lone surrogate, NaN, a 2 MB string), an argument
dropped or added, the tool name changed, the JSON text cut or spliced. Every call must return
an envelope without raising, never "internal error" and never take over 2 s; a failed call
must leave `state_hash()` as it was, and `state_hash()` must never raise.

States: each task's initial `state_json()` is damaged the same way and given to
`reset(state=...)`, which must load it or raise `InvalidState`, nothing else.

Determinism: the same call sequence is replayed in subprocesses under `--seeds` different
PYTHONHASHSEED values; the digest of every result and state hash must be the same in all.

The report counts, per example: calls, failures by kind, escaped exceptions, internal errors,
slow calls, rollback breaks, hash errors, state loads that raised something else, and
nondeterministic digests. The exit status is 1 when any of those is not zero.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import envdsl  # noqa: E402
from envdsl.runtime import Environment, InvalidState  # noqa: E402
from envdsl.runtime import values as v  # noqa: E402
from envdsl.tasks.task_files import is_task_file  # noqa: E402

EXAMPLES = sorted(p for p in (REPO / "examples").glob("*.env") if not is_task_file(p))
SLOW_S = 2.0

# hostile JSON texts, spliced into argument text where a value goes
HOSTILE_TEXT = [
    "1" + "0" * 5000,  # over CPython's 4,300-digit int limit
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 20_000 + "1" + "}" * 20_000,
    "1e400",
    "-1e400",
    "NaN",
    "Infinity",
    "1" + "0" * 400,  # 10**400: an int, too large for a float
    "10000000000000000000000000000000000000000",  # 10**40
    "-9223372036854775809",
    "9223372036854775807",
    '"\\ud800"',
    '"a\\udfffb"',
    '"9999-12-31T23:59:59-23:59"',
    '"0001-01-01T00:00:00+23:59"',
    '"9999-12-31"',
    '"0001-01-01"',
    '"0001-01-01T00:00:00Z"',
    '"9999-12-31T23:59:59.999999Z"',
    "1e308",
    "-0.0",
    "5e-324",
    "true",
    "null",
    "[]",
    "{}",
    '""',
    '"' + "x" * 2_000_000 + '"',
    "[" + ",".join(["1"] * 200_000) + "]",
]

# hostile Python values, for callers that pass dicts
HOSTILE_VALUES: list[Any] = [
    10**40,
    -(10**40),
    10**400,
    2**63,
    -(2**63) - 1,
    float("nan"),
    float("inf"),
    1e308,
    "\ud800",
    "x" * 2_000_000,
    [[[[[]]]]],
    {"": None},
    {1: 2},
    (1, 2),
    object(),
    b"bytes",
    True,
    None,
    -1,
    0,
    2**31,
]


@dataclass
class Counts:
    calls: int = 0
    succeeded: int = 0
    failed: int = 0
    escaped: int = 0
    internal: int = 0
    slow: int = 0
    rollback: int = 0
    hash_errors: int = 0
    states: int = 0
    states_loaded: int = 0
    states_bad: int = 0  # raised something other than InvalidState
    nondeterministic: int = 0
    examples: list[str] = field(default_factory=list)

    def problems(self) -> int:
        return (
            self.escaped
            + self.internal
            + self.slow
            + self.rollback
            + self.hash_errors
            + self.states_bad
            + self.nondeterministic
        )

    def note(self, text: str) -> None:
        if len(self.examples) < 20:
            self.examples.append(text[:300])


def keys_of(env: Environment) -> dict[str, list[Any]]:
    """Existing keys per table: calls that name real rows reach deeper into tool bodies."""
    state = env.state_json()
    return {name: list(state[name])[:50] for name in env.TABLES}


def value_for(
    spec: v.TypeSpec, rng: random.Random, keys: dict[str, list[Any]], depth: int = 0
) -> Any:
    """A well-typed JSON value for a spec (often a real key), or now and then a wrong one."""
    if rng.random() < 0.03:
        return rng.choice(HOSTILE_VALUES[15:])
    if isinstance(spec, v.OptionalSpec):
        return None if rng.random() < 0.2 else value_for(spec.inner, rng, keys, depth)
    if isinstance(spec, v.RefSpec):
        options = keys.get(spec.table) or []
        if options and rng.random() < 0.8:
            return rng.choice(options)
        return value_for(spec.key, rng, keys, depth)
    if isinstance(spec, v.EnumSpec):
        return rng.choice(list(spec.by_value))
    if isinstance(spec, v.BoolSpec):
        return rng.random() < 0.5
    if isinstance(spec, v.IntSpec):
        return rng.choice([0, 1, 2, 3, 5, 10, 100, -1, 9999, 2**31, 2**62])
    if isinstance(spec, (v.FloatSpec, v.DurationSpec)):
        return rng.choice([0, 0.5, 1.0, 2.5, 100.0, -3.25, 86400, 1e15])
    if isinstance(spec, v.StrSpec):
        pool = [k for ks in keys.values() for k in ks if isinstance(k, str)]
        if pool and rng.random() < 0.5:
            return rng.choice(pool)
        return rng.choice(["", "a", "x y", "Dune", "ü", "é" * 50, "😀", "a\nb", "A" * 300])
    if isinstance(spec, v.DateSpec):
        return rng.choice(["2024-05-01", "2024-02-29", "2025-12-31", "0001-01-01", "9999-12-31"])
    if isinstance(spec, v.DateTimeSpec):
        return rng.choice(
            ["2024-05-01T09:00:00Z", "2024-05-22T08:00:00+02:00", "2030-01-01T00:00:00Z"]
        )
    if isinstance(spec, v.SetSpec | v.ListSpec):
        if depth > 3:
            return []
        return [value_for(spec.inner, rng, keys, depth + 1) for _ in range(rng.randrange(4))]
    if isinstance(spec, v.MapSpec):
        if depth > 3:
            return {}
        result = {}
        for _ in range(rng.randrange(3)):
            key = value_for(spec.key, rng, keys, depth + 1)
            result[str(key)] = value_for(spec.value, rng, keys, depth + 1)
        return result
    if isinstance(spec, v.RecordSpec):
        if depth > 3:
            return {}
        return {
            f.name: value_for(f.spec, rng, keys, depth + 1)
            for f in spec.fields
            if f.required or rng.random() < 0.5
        }
    return rng.choice([None, 1, "x", [1, {"a": [2]}], {"k": "v"}])


def damaged_call(
    env: Environment, rng: random.Random, keys: dict[str, list[Any]]
) -> tuple[Any, Any]:
    """(tool name, arguments as a dict or JSON text) of one random, usually damaged, call."""
    tools = list(env.TOOLS.values())
    tool = rng.choice(tools)
    args: dict[str, Any] = {p.name: value_for(p.spec, rng, keys) for p in tool.params}
    name: Any = tool.name
    roll = rng.random()
    if roll < 0.25:
        return name, args  # well-typed
    if roll < 0.45 and tool.params:  # one value swapped for a hostile JSON text
        target = rng.choice(tool.params).name
        args[target] = "@@HOSTILE@@"
        text = json.dumps(args, default=repr).replace('"@@HOSTILE@@"', rng.choice(HOSTILE_TEXT))
        return name, text
    if roll < 0.6 and tool.params:  # a hostile Python value
        args[rng.choice(tool.params).name] = rng.choice(HOSTILE_VALUES)
        return name, args
    if roll < 0.67 and args:
        args.pop(rng.choice(list(args)))
        return name, args
    if roll < 0.72:
        args[rng.choice(["extra", "", "x" * 5000, "\ud800"])] = 1
        return name, args
    if roll < 0.78:
        name = rng.choice([name + "_", name.upper(), "", "x" * 1_000_000, None, 5, "\ud800"])
        return name, args
    text = json.dumps(args, default=repr)
    cut = rng.randrange(len(text) + 1)
    if roll < 0.85:
        return name, text[:cut]
    if roll < 0.92:
        return (
            name,
            text[:cut] + rng.choice(['"', "{", "]", ",", "\\", "\x00", "1e999", ":"]) + text[cut:],
        )
    return name, rng.choice(["[]", "null", "1", '"x"', "", "   ", "{", '{"a":1', "\ufeff{}"])


def run_calls(env: Environment, rng: random.Random, count: int, totals: Counts, label: str) -> str:
    """Make `count` calls; returns a digest of every result and state hash (for determinism)."""
    digest = hashlib.sha256()
    keys = keys_of(env)
    for index in range(count):
        if index % 50 == 0:
            keys = keys_of(env)
        name, arguments = damaged_call(env, rng, keys)
        before = env.state_hash()
        totals.calls += 1
        started = time.perf_counter()
        try:
            result = env.call(name, arguments)
        except BaseException as error:  # noqa: BLE001 - counting is the point
            totals.escaped += 1
            totals.note(f"{label}: {str(name)[:40]} raised {type(error).__name__}: {error}")
            continue
        elapsed = time.perf_counter() - started
        if elapsed > SLOW_S:
            totals.slow += 1
            totals.note(f"{label}: {str(name)[:40]} took {elapsed:.1f} s")
        if result.get("success"):
            totals.succeeded += 1
        else:
            totals.failed += 1
            error_text = str(result.get("error"))
            if "internal error" in error_text or env.last_exception is not None:
                totals.internal += 1
                totals.note(f"{label}: {str(name)[:40]}: {error_text[:200]}")
        try:
            after = env.state_hash()
            json.dumps(result)
        except BaseException as error:  # noqa: BLE001
            totals.hash_errors += 1
            totals.note(
                f"{label}: state_hash/result after {str(name)[:40]}: {type(error).__name__}"
            )
            env.reset(task=env.task)
            continue
        if not result.get("success") and after != before:
            totals.rollback += 1
            totals.note(f"{label}: failed {str(name)[:40]} changed the state")
        digest.update(json.dumps(result, sort_keys=True).encode())
        digest.update(after.encode())
    return digest.hexdigest()


def damaged_state(state: Any, rng: random.Random) -> Any:
    """A JSON state damaged at one random spot, as an object or as JSON text."""
    text = json.dumps(state)
    roll = rng.random()
    if roll < 0.3:
        cut = rng.randrange(len(text) + 1)
        if rng.random() < 0.5:
            return text[:cut]
        return (
            text[:cut]
            + rng.choice(HOSTILE_TEXT[:20] + ['"', "}", "[", "0", "-", "\\u"])
            + text[cut:]
        )
    data = json.loads(text)
    # walk to a random container and damage one entry
    node: Any = data
    for _ in range(rng.randrange(6)):
        if isinstance(node, dict) and node:
            child = node[rng.choice(list(node))]
            if isinstance(child, (dict, list)) and child:
                node = child
        elif isinstance(node, list) and node:
            child = rng.choice(node)
            if isinstance(child, (dict, list)) and child:
                node = child
    replacement = rng.choice(
        HOSTILE_VALUES[:12]
        + [None, 1, -1, "", "x", [], {}, [1], {"x": 1}, True, 1.5, "01", " 1", "true"]
    )
    if isinstance(node, dict) and node:
        key = rng.choice(list(node))
        action = rng.random()
        if action < 0.5:
            node[key] = replacement
        elif action < 0.7:
            del node[key]
        elif action < 0.85:
            node[rng.choice(["extra", "", "01", " 1", "true", "1.0", key + "x"])] = node[key]
        else:
            node[str(replacement)[:50]] = node.pop(key)
    elif isinstance(node, list) and node:
        index = rng.randrange(len(node))
        if rng.random() < 0.6:
            node[index] = replacement
        else:
            node.append(node[index])  # a duplicate row
    else:
        data = replacement
    if rng.random() < 0.5:
        try:
            return json.dumps(data)
        except (ValueError, TypeError):
            return data
    return data


def run_states(
    cls: type[Environment], rng: random.Random, count: int, totals: Counts, label: str
) -> None:
    env = cls()
    originals = []
    for task in cls.TASKS:
        env.reset(task=task)
        originals.append(env.state_json())
    if not originals:
        originals.append(cls().state_json())
    for _ in range(count):
        state = damaged_state(rng.choice(originals), rng)
        totals.states += 1
        try:
            env.reset(state=state)
            env.state_hash()
            totals.states_loaded += 1
        except InvalidState:
            pass
        except BaseException as error:  # noqa: BLE001
            totals.states_bad += 1
            totals.note(
                f"{label}: reset(state=...) raised {type(error).__name__}: {str(error)[:150]}"
            )


def fuzz_example(path: Path, calls: int, states: int, seed: int, totals: Counts) -> str:
    cls = envdsl.load(path)
    rng = random.Random(f"{seed}:{path.name}")
    digests = []
    tasks = list(cls.TASKS) or [None]
    per_task = max(1, calls // len(tasks))
    for task in tasks:
        env = cls()
        env.reset(task=task)
        digests.append(run_calls(env, rng, per_task, totals, f"{path.stem}/{task}"))
    run_states(cls, rng, states, totals, path.stem)
    return hashlib.sha256("".join(digests).encode()).hexdigest()


def digests_in_subprocess(hash_seed: int, calls: int, seed: int) -> dict[str, str]:
    """Each example's call digest in a fresh process under one PYTHONHASHSEED."""
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "PYTHONPATH": str(REPO)}
    completed = subprocess.run(
        [sys.executable, __file__, "--digests", "--calls", str(calls), "--seed", str(seed)],
        capture_output=True,
        text=True,
        env=env,
        timeout=1800,
    )
    if completed.returncode != 0:
        raise RuntimeError(completed.stderr[-2000:])
    result: dict[str, str] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000, help="calls per example")
    parser.add_argument("--states", type=int, default=1000, help="damaged states per example")
    parser.add_argument("--seeds", type=int, default=4, help="PYTHONHASHSEED values compared")
    parser.add_argument("--seed", type=int, default=0, help="the random seed of the inputs")
    parser.add_argument("--quick", action="store_true", help="a few hundred calls only")
    parser.add_argument("--digests", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    if args.digests:  # the child of the determinism comparison: digests only
        totals = Counts()
        digests = {p.stem: fuzz_example(p, args.calls, 0, args.seed, totals) for p in EXAMPLES}
        print(json.dumps(digests))
        return 0
    if args.quick:
        args.calls, args.states, args.seeds = 60, 60, 2
    started = time.perf_counter()
    print(
        f"fuzz_runtime.py: {args.calls} calls and {args.states} states per example, seed {args.seed}"
    )
    print()
    print(
        "| example | calls | ok | failed | escaped | internal | slow | rollback | hash | states | loaded | bad state |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    grand = Counts()
    for path in EXAMPLES:
        totals = Counts()
        fuzz_example(path, args.calls, args.states, args.seed, totals)
        print(
            f"| {path.stem} | {totals.calls} | {totals.succeeded} | {totals.failed} | {totals.escaped} "
            f"| {totals.internal} | {totals.slow} | {totals.rollback} | {totals.hash_errors} "
            f"| {totals.states} | {totals.states_loaded} | {totals.states_bad} |"
        )
        for name in ("calls", "succeeded", "failed", "escaped", "internal", "slow", "rollback",
                     "hash_errors", "states", "states_loaded", "states_bad"):  # fmt: skip
            setattr(grand, name, getattr(grand, name) + getattr(totals, name))
        grand.examples += totals.examples
    print()
    seeds = [0, 1, 2, 3, 4, 5, 6, 7][: max(args.seeds, 0)]
    calls_per = min(args.calls, 1000)
    if len(seeds) > 1:
        runs = {seed: digests_in_subprocess(seed, calls_per, args.seed) for seed in seeds}
        for example in runs[seeds[0]]:
            values = {runs[seed][example] for seed in seeds}
            if len(values) > 1:
                grand.nondeterministic += 1
                grand.note(
                    f"{example}: {len(values)} different digests over PYTHONHASHSEED {seeds}"
                )
        print(
            f"determinism: {calls_per} calls per example replayed under PYTHONHASHSEED "
            f"{', '.join(map(str, seeds))}: {grand.nondeterministic} examples differ"
        )
    print(
        f"total: {grand.calls} calls, {grand.escaped} escaped, {grand.internal} internal errors, "
        f"{grand.slow} over {SLOW_S:.0f} s, {grand.rollback} rollback breaks, {grand.hash_errors} hash "
        f"errors; {grand.states} states, {grand.states_bad} raised other than InvalidState; "
        f"{time.perf_counter() - started:.0f} s"
    )
    for line in grand.examples:
        print("  " + line)
    return 1 if grand.problems() else 0


if __name__ == "__main__":
    sys.exit(main())
