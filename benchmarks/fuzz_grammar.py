"""The grammar fuzzer: random programs from the grammar, with the compiler fuzzer's oracles and
a semantic one.

Run from the repository root:

    python3 benchmarks/fuzz_grammar.py --count 10000 --jobs 2   # the issue-27 run
    python3 benchmarks/fuzz_grammar.py --quick                  # a few dozen, as tests/ runs it

Programs (benchmarks/grammar_programs.py): a share `--derived` are random derivations of the
grammar itself (they parse, and almost never type-check); the rest are random well-typed envs
built type-directed from the same constructs (almost all clean).

Compiler oracles, on every program (tests/spec_mutations.run_one, as fuzz_compiler.py): no
exception escapes `check_source`, no internal error (E9001), no hang, and a clean program's
generated module imports and builds its tool schemas.

Semantic oracle, on every clean program: `--calls` random calls (arguments from the tool
schemas, keys from the state) from the initial state of each task, or the empty state: no
exception escapes `env.call`, every result is JSON and no "internal error"; a failed call
leaves `state_hash()` unchanged; after every call every declared rule still holds (the state
is dumped and loaded into a fresh environment, whose `reset(state=...)` checks every key,
`unique`, `ref`, row and env invariant and type; an InvalidState there is a broken rule).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from grammar_programs import arguments, derive, typed_spec  # noqa: E402
from spec_mutations import run_one  # noqa: E402


@dataclass
class Result:
    seed: str
    kind: str  # "derived" or "typed"
    seconds: float = 0.0
    clean: bool = False
    codes: list[str] = field(default_factory=list)
    calls: int = 0
    failed_calls: int = 0
    failures: list[str] = field(default_factory=list)  # "oracle: detail"


def program(seed: str, derived_share: float) -> tuple[str, str]:
    rng = random.Random(seed)
    if rng.random() < derived_share:
        return "derived", derive(rng)
    return "typed", typed_spec(rng)


def semantic(text: str, seed: str, calls: int, result: Result) -> None:
    from envdsl.generated.loader import environment_class, load_module
    from envdsl.pipeline import compile_source
    from envdsl.runtime import InvalidState
    from envdsl.util.source import SourceFile

    compiled = compile_source(SourceFile("generated.env", text), formatted=False)
    if not compiled.ok:
        result.failures.append("compile: check was clean, compile was not")
        return
    module = load_module(compiled.artifacts["module"], compiled.artifacts["name"], register=False)
    cls = environment_class(module)
    rng = random.Random(seed + ":calls")
    tools = [schema["function"] for schema in cls().tool_schemas()]
    if not tools:
        return  # a derived program may declare none: nothing to call
    starts: list[str | None] = list(cls.TASKS) or [None]
    for task in starts:
        env = cls()
        try:
            env.reset(task=task) if task is not None else env.reset()
        except InvalidState as error:
            result.failures.append(f"reset: task {task!r} does not load: {error}")
            continue
        for _ in range(calls):
            tool = rng.choice(tools)
            state = env.state_json()
            keys = [key for table in state.values() if isinstance(table, dict) for key in table]
            args = arguments(rng, tool, keys)
            before = env.state_hash()
            try:
                outcome = env.call(tool["name"], args)
                json.dumps(outcome)
            except Exception as error:  # the property: nothing escapes env.call
                result.failures.append(f"escape: {tool['name']}({args}): {type(error).__name__}")
                return
            result.calls += 1
            if getattr(env, "last_exception", None) is not None or (
                not outcome["success"] and "internal error" in outcome["error"]
            ):
                result.failures.append(f"internal: {tool['name']}({args}): {outcome}")
                return
            if not outcome["success"]:
                result.failed_calls += 1
                if env.state_hash() != before:
                    result.failures.append(f"rollback: {tool['name']}({args}) changed the state")
                    return
                continue
            fresh = cls()
            try:
                fresh.reset(state=env.state_json())
            except InvalidState as error:
                result.failures.append(f"rule: after {tool['name']}({args}): {error}")
                return
            if fresh.state_hash() != env.state_hash():
                result.failures.append(f"reload: after {tool['name']}({args}) the hash differs")
                return


def run_program(seed: str, derived_share: float, calls: int, limit: float) -> Result:
    kind, text = program(seed, derived_share)
    result = Result(seed, kind)
    started = time.perf_counter()
    outcome = run_one(text, limit=limit)
    result.codes = outcome.codes
    result.clean = not [code for code in outcome.codes if code.startswith("E")]
    if outcome.failure:
        kind_of = "hang" if outcome.timed_out else outcome.failure.split(":", 1)[0].split()[0]
        result.failures.append(f"{kind_of}: {outcome.failure[:300]}")
    elif result.clean:
        try:
            semantic(text, seed, calls, result)
        except Exception as error:  # the harness itself: counted, never hidden
            result.failures.append(f"harness: {type(error).__name__}: {error}")
    result.seconds = time.perf_counter() - started
    return result


def _batch(args: tuple[list[str], float, int, float]) -> list[Result]:
    seeds, share, calls, limit = args
    return [run_program(seed, share, calls, limit) for seed in seeds]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", default="grammar-run")
    parser.add_argument("--derived", type=float, default=0.3, help="share of grammar derivations")
    parser.add_argument("--calls", type=int, default=20, help="calls per start of a clean spec")
    parser.add_argument("--limit", type=float, default=30.0, help="seconds before a hang")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="30 programs, 10 calls each")
    args = parser.parse_args()
    count, calls = (30, 10) if args.quick else (args.count, args.calls)
    seeds = [f"{args.seed}:{index}" for index in range(count)]
    started = time.perf_counter()
    batches = [(seeds[i : i + 50], args.derived, calls, args.limit) for i in range(0, count, 50)]
    results: list[Result] = []
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            for done in pool.map(_batch, batches):
                results.extend(done)
    else:
        for batch in batches:
            results.extend(_batch(batch))
    total = time.perf_counter() - started
    report(results, total, args.seed)
    return 1 if any(r.failures for r in results) else 0


def report(results: list[Result], total: float, seed: str) -> None:
    kinds = Counter(r.kind for r in results)
    clean = Counter(r.kind for r in results if r.clean)
    oracles = Counter(f.split(":", 1)[0] for r in results for f in r.failures)
    codes = Counter(code for r in results for code in set(r.codes))
    times = [r.seconds for r in results]
    print(f"grammar fuzz: {len(results)} programs in {total:.0f} s, seed {seed!r}")
    print(
        f"  derived from the grammar: {kinds['derived']} ({clean['derived']} clean); "
        f"typed: {kinds['typed']} ({clean['typed']} clean)"
    )
    print(
        f"  semantic oracle: {sum(r.calls for r in results)} calls "
        f"({sum(r.failed_calls for r in results)} failed cleanly) on "
        f"{sum(1 for r in results if r.clean)} clean programs"
    )
    for oracle in ("E9001", "escaped", "hang", "generated", "compile", "reset", "escape"):
        print(f"  {oracle + ':':<12}{oracles[oracle]}")
    for oracle in ("internal", "rollback", "rule", "reload", "harness"):
        print(f"  {oracle + ':':<12}{oracles[oracle]}")
    print(
        f"  time per program: median {statistics.median(times) * 1000:.0f} ms, "
        f"max {max(times) * 1000:.0f} ms"
    )
    print("  codes seen: " + ", ".join(f"{c} {n}" for c, n in sorted(codes.items())))
    shown = 0
    for result in results:
        for failure in result.failures:
            if shown < 20:
                print(f"  FAIL seed {result.seed!r} ({result.kind}): {failure[:400]}")
                shown += 1


if __name__ == "__main__":
    sys.exit(main())
