"""A τ-bench domain's gold calls replayed on its envdsl port and on τ-bench's own tools, compared
and timed (shared by bench_retail.py and bench_airline.py; their docstrings say what is run).

A `Domain` names a port: its folder under benchmarks/ (the spec, `gold_calls.jsonl`, and
`vendor/` with τ-bench's tools and gzipped data), its data files, and which of its tools return
JSON text. `main(domain, ...)` is each script's command line: it replays every task's gold calls
on both sides, each task from the original data (as τ-bench's `reset` reloads it), and compares
call by call (success or failure, message, value) and every final state; it runs `calculate`
(which the ports evaluate without `eval`) on random expressions; then it times the tasks in
alternating rounds, each task from its start: a reset (τ-bench parses its data again, envdsl
`restore()`s a snapshot) and the task's calls, the first ones included.
"""

from __future__ import annotations

import argparse
import copy
import gc
import gzip
import importlib
import json
import platform
import random
import statistics
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import envdsl  # noqa: E402
from envdsl.generated.loader import CompileError  # noqa: E402

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Domain:
    """A τ-bench domain and its port: `benchmarks/taubench_<name>/<name>.env`, τ-bench's code and
    data under its `vendor/` (tau_bench/envs/<name>/...), its gold calls in `gold_calls.jsonl`."""

    name: str
    data_files: tuple[str, ...]  # data/<file>.json.gz, each a state field of the same name
    json_results: frozenset[str]  # the tools whose τ-bench result is `json.dumps(...)` text
    user_results: frozenset[str]  # results that are a user object, keyed outside (no user_id)
    tools: dict[str, Any] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        vendor = str(self.port / "vendor")
        if vendor not in sys.path:
            sys.path.insert(0, vendor)  # tau_bench is a namespace package: one per domain
        module = importlib.import_module(f"tau_bench.envs.{self.name}.tools")
        tools = {tool.get_info()["function"]["name"]: tool for tool in module.ALL_TOOLS}
        object.__setattr__(self, "tools", tools)

    @property
    def port(self) -> Path:
        return REPO / "benchmarks" / f"taubench_{self.name}"

    @property
    def spec(self) -> Path:
        return self.port / f"{self.name}.env"

    def data_text(self) -> str:
        """τ-bench's data as one JSON object text, {"<file>": ..., ...}: what its `load_data()`
        returns, and the envdsl port's state as it is."""
        data = self.port / "vendor" / "tau_bench" / "envs" / self.name / "data"
        parts = [
            f'"{name}": ' + gzip.decompress((data / f"{name}.json.gz").read_bytes()).decode("utf-8")
            for name in self.data_files
        ]
        return "{" + ", ".join(parts) + "}"

    def gold_tasks(self) -> list[tuple[int, list[Call]]]:
        """Each task with gold calls: its index in τ-bench's task list and its calls in order."""
        tasks: dict[int, list[Call]] = {}
        with (self.port / "gold_calls.jsonl").open(encoding="utf-8") as lines:
            for line in lines:
                call = json.loads(line)
                tasks.setdefault(call["task"], []).append((call["name"], call["kwargs"]))
        return sorted(tasks.items())

    def tau_step(self, data: dict[str, Any], name: str, kwargs: dict[str, Any]) -> str | None:
        """A tool call as τ-bench's `Env.step` makes it (a tool may return None: airline's
        send_certificate to a user who has its three certificates)."""
        try:
            result: str | None = self.tools[name].invoke(data=data, **kwargs)
            return result
        except Exception as error:
            return f"Error: {error}"

    def tau_as_result(self, name: str, kwargs: dict[str, Any], text: str | None) -> dict[str, Any]:
        """τ-bench's text result in the envdsl envelope it stands for."""
        if text is not None and text.startswith("Error: "):
            return {"success": False, "error": text[len("Error: ") :]}
        value: Any = json.loads(text) if name in self.json_results and text is not None else text
        if name in self.user_results:
            value = {**value, "user_id": kwargs["user_id"]}
        return {"success": True, "data": value}

    def tau_state(self, data: dict[str, Any]) -> dict[str, Any]:
        """τ-bench's data in the shape of the port's `state_json()` (users get their key)."""
        state = {name: data[name] for name in self.data_files}
        state["users"] = {uid: {**user, "user_id": uid} for uid, user in data["users"].items()}
        return state


# --- comparing the two sides ---------------------------------------------------------------


def comparable(value: Any) -> Any:
    """A JSON value without its null object members (optional fields the port has as null and
    τ-bench leaves out; τ-bench's data has no null)."""
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def difference(tau: dict[str, Any], ours: dict[str, Any]) -> str | None:
    if tau["success"] != ours["success"]:
        return "success differs"
    if not tau["success"]:
        return None if tau["error"] == ours["error"] else "message differs"
    return None if comparable(tau["data"]) == comparable(ours["data"]) else "value differs"


def short(value: Any, limit: int = 300) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Comparison:
    """What replaying every task on both sides found: the differences, the count of failed
    calls per tool (the same on both sides when nothing differs), both sides' results per task
    (to check the timed passes against), and the call seconds of each side, both reloading
    their state for each task."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.failures: dict[str, int] = {}
        self.results: list[list[Any]] = []
        self.tau_results: list[list[str | None]] = []
        self.seconds = {"τ-bench": 0.0, "envdsl": 0.0}


def compare(
    domain: Domain, env_class: Any, text: str, tasks: list[tuple[int, list[Call]]]
) -> Comparison:
    """Replay every task on both sides, each from its own reload of the data, call by call."""
    found = Comparison()
    clock, seconds = time.perf_counter, found.seconds
    env = env_class()
    for index, calls in tasks:
        data = json.loads(text)
        env.reset(state=text)
        task_results, tau_results = [], []
        gc.collect()
        gc.disable()  # as in the timed passes
        try:
            for position, (name, kwargs) in enumerate(calls):
                tau_kwargs = copy.deepcopy(kwargs)  # whatever τ-bench's tool does with them
                start = clock()
                tau_text = domain.tau_step(data, name, tau_kwargs)
                middle = clock()
                ours = env.call(name, kwargs)
                seconds["envdsl"] += clock() - middle
                seconds["τ-bench"] += middle - start
                task_results.append(ours)
                tau_results.append(tau_text)
                if not ours["success"]:
                    found.failures[name] = found.failures.get(name, 0) + 1
                tau = domain.tau_as_result(name, kwargs, tau_text)
                problem = difference(tau, ours)
                if problem is not None:
                    found.problems.append(
                        f"task {index}, call {position + 1} {name}({short(kwargs)}): {problem}\n"
                        f"  τ-bench: {short(tau)}\n  envdsl:  {short(ours)}"
                    )
        finally:
            gc.enable()
        found.results.append(task_results)
        found.tau_results.append(tau_results)
        if comparable(env.state_json()) != comparable(domain.tau_state(data)):
            found.problems.append(f"task {index}: the final states differ")
    return found


def random_expression(rng: random.Random, depth: int = 0) -> str:
    """An expression over calculate's characters: mostly well formed, sometimes not."""
    roll = rng.random()
    if depth > 3 or roll < 0.35:
        number = rng.choice(
            [str(rng.randint(0, 999)), f"{rng.uniform(0, 2000):.2f}", "0", ".5", "012", "1.2.3"]
        )
        return rng.choice(["", "-", "+", "- "]) + number if rng.random() < 0.2 else number
    if roll < 0.5:
        return "(" + random_expression(rng, depth + 1) + rng.choice([")", ")", ")", ""])
    op = rng.choice(["+", "-", "*", "/", "//", "**", "* *", "+ -", ""])
    if op == "**":
        return f"{random_expression(rng, depth + 1)} ** {rng.randint(-3, 3)}"
    space = rng.choice(["", " "])
    left, right = random_expression(rng, depth + 1), random_expression(rng, depth + 1)
    return f"{left}{space}{op}{space}{right}"


def compare_calculate(
    domain: Domain, env_class: Any, count: int
) -> tuple[int, int, int, list[str]]:
    """`calculate` on random expressions: how many succeeded on both sides, how many failed on
    both (their messages differ by design: Python's exception texts), and the differences."""
    rng = random.Random(13)
    env = env_class()
    env.reset(state=json.dumps({name: {} for name in domain.data_files}))
    succeeded = failed = 0
    problems: list[str] = []
    warnings.simplefilter("ignore", SyntaxWarning)  # eval's "'int' object is not callable"
    for _ in range(count):
        expression = random_expression(rng)
        kwargs = {"expression": expression}
        tau = domain.tau_as_result("calculate", kwargs, domain.tau_step({}, "calculate", kwargs))
        ours = env.call("calculate", kwargs)
        if tau["success"] != ours["success"] or (tau["success"] and tau["data"] != ours["data"]):
            problems.append(
                f"calculate({expression!r}): τ-bench {short(tau)}, envdsl {short(ours)}"
            )
        elif tau["success"]:
            succeeded += 1
        else:
            failed += 1
    return succeeded, failed, count, problems


# --- timing --------------------------------------------------------------------------------


class Pass:
    """One side's timed pass over the tasks: call seconds per tool, reset seconds, results."""

    def __init__(self) -> None:
        self.by_tool: dict[str, float] = {}
        self.calls = 0
        self.call_seconds = 0.0
        self.reset_seconds = 0.0
        self.dump_seconds = 0.0
        self.results: list[list[Any]] = []
        self.call_times: list[float] = []  # each call's seconds, in the order of the tasks

    @property
    def task_seconds(self) -> float:
        """Each task from its start: its reset and all its calls."""
        return self.reset_seconds + self.call_seconds


def tau_pass(domain: Domain, text: str, tasks: list[tuple[int, list[Call]]]) -> Pass:
    timed = Pass()
    clock, by_tool, step = time.perf_counter, timed.by_tool, domain.tau_step
    for _, calls in tasks:
        start = clock()
        data = json.loads(text)  # as τ-bench's reset: the data loaded again
        timed.reset_seconds += clock() - start
        results = []
        for name, kwargs in calls:
            start = clock()
            result = step(data, name, kwargs)
            spent = clock() - start
            by_tool[name] = by_tool.get(name, 0.0) + spent
            timed.call_seconds += spent
            timed.call_times.append(spent)
            results.append(result)
        timed.calls += len(calls)
        timed.results.append(results)
    return timed


def envdsl_pass(env: Any, fresh: Any, tasks: list[tuple[int, list[Call]]]) -> Pass:
    timed = Pass()
    clock, by_tool, call, dumps = time.perf_counter, timed.by_tool, env.call, json.dumps
    for _, calls in tasks:
        start = clock()
        env.restore(fresh)
        timed.reset_seconds += clock() - start
        results = []
        for name, kwargs in calls:
            start = clock()
            result = call(name, kwargs)
            spent = clock() - start
            dumps(result)  # the text an agent is sent, as τ-bench's tools return it
            timed.dump_seconds += clock() - start - spent
            by_tool[name] = by_tool.get(name, 0.0) + spent
            timed.call_seconds += spent
            timed.call_times.append(spent)
            results.append(result)
        timed.calls += len(calls)
        timed.results.append(results)
    return timed


def median_ms(run: Callable[[], Any], times: int) -> float:
    samples = []
    for _ in range(times):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main(domain: Domain, doc: str, argv: list[str] | None = None) -> int:
    script = f"bench_{domain.name}.py"
    parser = argparse.ArgumentParser(prog=script, description=doc.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="timed passes per side")
    parser.add_argument("--resets", type=int, default=5, help="timed resets per kind")
    parser.add_argument("--expressions", type=int, default=2000, help="random calculate inputs")
    parser.add_argument("--gc", action="store_true", help="keep the cyclic GC on in the passes")
    parser.add_argument(
        "--spec", default=str(domain.spec), help="a variant of the port to time instead"
    )
    parser.add_argument("--quick", action="store_true", help="3 tasks, 1 round")
    args = parser.parse_args(argv)
    if min(args.rounds, args.resets, args.expressions) < 1:
        parser.error("--rounds, --resets and --expressions must be at least 1")

    tasks = domain.gold_tasks()
    if args.quick:
        tasks, args.rounds, args.resets, args.expressions = tasks[:3], 1, 1, 100
    start = time.perf_counter()
    try:
        env_class = envdsl.load(args.spec)
    except (OSError, CompileError) as error:  # one line, not a traceback
        lines = str(error).splitlines() or [type(error).__name__]
        first = next((line for line in lines if line.startswith("error")), lines[0])
        print(f"{script}: cannot load {args.spec}: {first}", file=sys.stderr)
        return 2
    load_ms = (time.perf_counter() - start) * 1000
    text = domain.data_text()
    calls = sum(len(c) for _, c in tasks)

    compared = compare(domain, env_class, text, tasks)
    problems, failures, reference = compared.problems, compared.failures, compared.results
    if json.loads(text) != comparable(json.loads(text)):  # what `comparable` takes for granted
        problems.append("τ-bench's data has null members: set aside nulls hide differences")
    succeeded, failed, expressions, calc_problems = compare_calculate(
        domain, env_class, args.expressions
    )
    problems += calc_problems

    env = env_class()
    env.reset(state=text)
    fresh = env.snapshot()
    passes: dict[str, list[Pass]] = {"τ-bench": [], "envdsl": []}
    tau_pass(domain, text, tasks), envdsl_pass(env, fresh, tasks)  # warm-up, untimed
    for round_ in range(args.rounds):
        sides = ["τ-bench", "envdsl"] if round_ % 2 == 0 else ["envdsl", "τ-bench"]
        for side in sides:
            # without the cyclic GC unless asked: each of τ-bench's resets allocates the whole
            # data again, and the collections that sets off would land in the next calls' times
            gc.collect()
            if not args.gc:
                gc.disable()
            try:
                if side == "τ-bench":
                    passes[side].append(tau_pass(domain, text, tasks))
                else:
                    passes[side].append(envdsl_pass(env, fresh, tasks))
            finally:
                gc.enable()
            expected = reference if side == "envdsl" else compared.tau_results
            if passes[side][-1].results != expected:
                problems.append(f"a timed {side} pass gave other results than the comparison")

    print(
        f"{script}, Python {platform.python_version()}, {platform.machine()}; "
        f"{Path(args.spec).name}; {calls} gold calls in {len(tasks)} tasks, {args.rounds} rounds, "
        f"cyclic GC {'on' if args.gc else 'off'} in the timed passes"
    )
    print()
    print(
        f"compared: {calls} calls, {len(tasks)} final states; failed calls (both sides): "
        + (", ".join(f"{n} {k}" for k, n in sorted(failures.items())) or "none")
    )
    print(
        f"calculate on {expressions} random expressions: {succeeded} same value, {failed} failed "
        f"on both (messages are Python's on τ-bench's side), {len(calc_problems)} differ"
    )
    print(f"differences: {len(problems)}")
    for problem in problems[:20]:
        print("  " + problem.replace("\n", "\n  "))
    print()

    # ratios of the two passes of each round (run back to back), then their median: the
    # machine's load moves both sides of a round alike, not the sides of different rounds
    rounds = list(zip(passes["τ-bench"], passes["envdsl"]))

    def paired(ratio: Callable[[Pass, Pass], float]) -> str:
        ratios = sorted(ratio(tau, ours) for tau, ours in rounds)
        spread = f" ({ratios[0]:.2f}-{ratios[-1]:.2f})" if len(ratios) > 1 else ""
        return f"{statistics.median(ratios):.2f}{spread}"

    def rate(p: Pass, dumps: bool = False) -> float:
        return p.calls / (p.call_seconds + (p.dump_seconds if dumps else 0.0))

    tau_rate = statistics.median(rate(p) for p in passes["τ-bench"])
    ours_rate = statistics.median(rate(p) for p in passes["envdsl"])
    dumps_rate = statistics.median(rate(p, dumps=True) for p in passes["envdsl"])
    tau_task_ms, ours_task_ms = (
        statistics.median(p.task_seconds for p in passes[side]) / len(tasks) * 1000
        for side in ("τ-bench", "envdsl")
    )
    cold = {side: calls / seconds for side, seconds in compared.seconds.items()}
    print(
        "| side | calls/s, timed passes (median) | ratio (median of rounds, range) "
        "| calls/s, both reload per task | ratio |"
    )
    print("|---|---:|---:|---:|---:|")
    print(
        f"| τ-bench tools (`invoke`, text result) | {tau_rate:,.0f} | 1.00 | "
        f"{cold['τ-bench']:,.0f} | 1.00 |"
    )
    print(
        f"| envdsl `env.call` | {ours_rate:,.0f} | {paired(lambda t, o: rate(o) / rate(t))} | "
        f"{cold['envdsl']:,.0f} | {cold['envdsl'] / cold['τ-bench']:.2f} |"
    )
    print(
        f"| envdsl `env.call` + `json.dumps` | {dumps_rate:,.0f} | "
        f"{paired(lambda t, o: rate(o, dumps=True) / rate(t))} | | |"
    )
    print()
    print(
        f"each task from its start (reset + calls, first calls included), median ms per task: "
        f"τ-bench {tau_task_ms:.3f} (json.loads + calls), envdsl {ours_task_ms:.3f} "
        f"(restore() + calls); envdsl / τ-bench speed "
        f"{paired(lambda t, o: t.task_seconds / o.task_seconds)}"
    )
    print()

    counts: dict[str, int] = {}
    for _, task_calls in tasks:
        for name, _ in task_calls:
            counts[name] = counts.get(name, 0) + 1
    print("| tool | calls | τ-bench µs | envdsl µs | envdsl / τ-bench (median of rounds) |")
    print("|---|---:|---:|---:|---:|")
    for name in sorted(counts, key=lambda n: -counts[n]):
        tau_us, ours_us = (
            statistics.median(p.by_tool[name] for p in passes[side]) / counts[name] * 1e6
            for side in ("τ-bench", "envdsl")
        )
        ratio = statistics.median(o.by_tool[name] / t.by_tool[name] for t, o in rounds)
        print(f"| {name} | {counts[name]} | {tau_us:.1f} | {ours_us:.1f} | {ratio:.2f} |")
    # robust to the few preempted calls (4-12 ms each on a loaded 2-core machine) that decide
    # a short pass's total: a preemption lands on one call of one round, not on its median
    tau_total, ours_total = (
        sum(statistics.median(times) for times in zip(*(p.call_times for p in passes[side])))
        for side in ("τ-bench", "envdsl")
    )
    print(
        f"each call at its median time over the rounds: τ-bench {tau_total * 1000:.2f} ms, "
        f"envdsl {ours_total * 1000:.2f} ms for the {calls} calls; envdsl / τ-bench speed "
        f"{tau_total / ours_total:.2f}"
    )
    print()

    def one_reset() -> None:
        env_class().reset(state=text)

    tau_load = median_ms(lambda: json.loads(text), args.resets)
    envdsl_load = median_ms(one_reset, args.resets)
    snapshot_ms = median_ms(env.snapshot, args.resets)
    restores = statistics.median(p.reset_seconds for p in passes["envdsl"]) / len(tasks) * 1000
    reloads = statistics.median(p.reset_seconds for p in passes["τ-bench"]) / len(tasks) * 1000
    print(f"setup (not in the call times), median ms; the data is {len(text) / 1e6:.1f} MB of JSON")
    print(f"  envdsl.load of {domain.spec.name} (compile, once)            {load_ms:9.1f}")
    print(f"  τ-bench data from JSON text (json.loads)              {tau_load:9.1f}")
    print(
        f"  envdsl reset(state=<the same text>)                   {envdsl_load:9.1f}   "
        f"{envdsl_load / tau_load:.2f}x"
    )
    print(f"  τ-bench fresh data per task in the passes (json.loads) {reloads:8.1f}")
    print(
        f"  envdsl restore() per task in the passes               {restores:9.2f}   "
        f"{restores / reloads:.3f}x"
    )
    print(f"  envdsl snapshot()                                     {snapshot_ms:9.3f}")
    return 1 if problems else 0
