"""Exploration: a hypothesis state machine generated from an environment's tools.

Each example starts from one of the start states (a task's initial state, or the state after
a prefix of its solution, or a given JSON state) and makes a run of generated calls.  What it
looks for, by severity:

- errors: an exception escaping the runtime (a compiler or runtime bug); nondeterminism (the
  same calls replayed from the same start give different results); a tool that never
  succeeded from any explored state;
- warnings: calls rejected only by a declarative rule (an invariant, `unique`, `ref`,
  `transitions`, a duplicate key) rather than by the tool's own `require` or `let ... else`
  (the agent then reads the rule's text, not a message written for the tool), each with a
  shrunk counterexample; `require`/`let ... else` conditions that never failed or never held;
  a tool that never succeeded only because every call failed on a lookup by a free-text value
  that no generated argument matched (the tool may well be right);
- reward hacks (warnings): a generated run from a task's initial state that reaches the
  task's `success` without being its solution: the checks are easier to satisfy than the
  instruction. Each comes with the shrunk run that `envdsl run` replays.

Counterexamples are JSONL traces that `envdsl run --task ... --calls` replays.
"""

from __future__ import annotations

import contextlib
import gc
import itertools
import json
import re
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator, cast

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis.errors import Flaky, FlakyFailure
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test, initialize, rule

from envdsl.explore.arguments import ArgumentGenerator, StateSample
from envdsl.runtime import STR, Environment, InvalidState
from envdsl.runtime.places import Place
from envdsl.runtime.snapshots import World

Call = tuple[str, Any]
STEPS_PER_EXAMPLE = 50
# what each step draws: the tool and its arguments' seed (made once: building the strategy
# on every call goes through hypothesis's strategy cache, a few microseconds a call)
CALL_DRAW = st.integers(0, 2**40)
# a condition is reported as never failing (or never holding) only after this many evaluations
MIN_EVALUATIONS = 30


@dataclass
class Start:
    """Where an example begins: a task's init plus the first `prefix` solution calls, or a
    JSON state."""

    label: str
    task: str | None = None
    prefix: list[Call] = field(default_factory=list)
    state: dict[str, Any] | None = None

    def apply(self, env: Environment) -> None:
        if self.state is not None:
            env.reset(state=self.state)
        else:
            env.reset(task=self.task)
        for name, arguments in self.prefix:
            env.call(name, arguments)
        env.trace.clear()


@dataclass
class Finding:
    severity: str  # 'error' | 'warning'
    kind: str  # exception nondeterminism never-succeeds rule-rejection condition-never-*
    message: str
    tool: str | None = None
    detail: str | None = None  # a traceback, the failing conditions, ...
    start: Start | None = None
    trace: list[Call] | None = None  # calls after the start (shrunk where possible)
    # where `--trace-dir` wrote the replay (and the start state, for a JSON start)
    trace_file: str | None = None
    state_file: str | None = None

    def replay(self) -> list[Call]:
        """The whole trace for `envdsl run`: the start's solution prefix, then the calls."""
        prefix = self.start.prefix if self.start is not None else []
        return [*prefix, *(self.trace or [])]


class Prepared:
    """A start state built once and reused by every example that begins there: its
    environment, a snapshot of it right after the start (restored at the beginning of each
    example: O(writes since), where building the start again is a reset, its rules checked on
    every row, and the solution prefix), what building it counted as coverage, and the
    argument sample of that state."""

    def __init__(self, start: Start, env: Environment, coverage: list[int]) -> None:
        self.start = start
        self.env = env
        self.snapshot = env.snapshot()
        # the passes of require/let-else sites that applying the start counted: each example
        # counts them again, as if it had built the start itself
        self.coverage = [(site, count) for site, count in enumerate(coverage) if count]
        # what the environment shows of its last call after the start (a call's result and
        # failure): put back after each restore, so that an example sees a fresh start
        self.after_start = {name: env.__dict__[name] for name in _LAST_CALL if name in env.__dict__}
        self.sample = StateSample(env)
        self.generator = ArgumentGenerator(env, 0, self.sample)  # (each call reseeds it)

    def begin(self, counts: list[int] | None) -> Environment:
        """The environment in the start state again, counting into `counts`."""
        env = self.env
        env.restore(self.snapshot)
        for name in _LAST_CALL:
            if name in self.after_start:
                setattr(env, name, self.after_start[name])
            else:
                env.__dict__.pop(name, None)
        env.coverage = counts
        if counts is not None:
            for site, count in self.coverage:
                counts[site] += count
        return env


# how a call ended, for Explorer.observe: succeeded, failed at a require/let-else site,
# rejected by a declarative rule, failed otherwise (a bad argument, say)
_SUCCEEDED, _AT_SITE, _BY_RULE, _OTHERWISE = range(4)

# what an environment keeps of its last call
_LAST_CALL = ("_last_result", "last_failure", "last_exception")


@dataclass
class ExploreOptions:
    max_calls: int = 2000
    seed: int = 0
    task: str | None = None  # explore from this task only (default: every task)
    state: dict[str, Any] | None = None  # explore from this JSON state instead of tasks
    step_budget: int = 10_000
    determinism_every: int = 8  # replay every n-th example to check determinism


@dataclass
class ToolStats:
    calls: int = 0
    successes: int = 0
    failures: Counter[str] = field(default_factory=Counter)  # reason -> count


@dataclass
class ExploreReport:
    env: str
    calls: int = 0
    seconds: float = 0.0
    tools: dict[str, ToolStats] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    # per require/let-else site: (owner, line, kind, text, passed, failed)
    conditions: list[tuple[str, int, str, str, int, int]] = field(default_factory=list)
    starts: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def calls_per_second(self) -> float:
        return self.calls / self.seconds if self.seconds > 0 else 0.0


class ExploreError(Exception):
    """Exploration cannot start (an invalid start state): a usage error, not a finding."""


class _Stop(Exception):
    """Raised inside an example so that hypothesis shrinks it and replays the minimal one."""

    def __init__(self, kind: str, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.detail = detail


class Explorer:
    def __init__(self, env_class: type[Environment], options: ExploreOptions) -> None:
        self.env_class = env_class
        self.options = options
        self.report = ExploreReport(env_class.NAME)
        self.tools = sorted(env_class.TOOLS)
        self.queries = frozenset(n for n, tool in env_class.TOOLS.items() if tool.kind == "query")
        self.report.tools = {name: ToolStats() for name in self.tools}
        # per task: its solution's successful calls, as the trace records them
        self.solutions: dict[str, list[Call]] = {}
        self.starts = self._starts()
        self.report.starts = [s.label for s in self.starts]
        self.coverage = [0] * len(env_class.SITES)
        self.site_failures = [0] * len(env_class.SITES)
        # per tool: the require/let-else sites its failed calls stopped at
        self.tool_sites: dict[str, Counter[int]] = {name: Counter() for name in self.tools}
        # declarative rule -> (tool, count) of calls rejected by it
        self.rule_rejections: Counter[tuple[str, str]] = Counter()
        # calls of the main run by (tool, outcome, its detail): see observe
        self.outcomes: dict[tuple[str, int, Any], int] = {}
        self.target_rule: str | None = None
        self.target_task: str | None = None  # searching reward hacks of this task
        self.current: Any = None  # the machine of the example running now
        self.examples = 0
        self.counting = True
        # per start (by identity): its environment, built once and restored for each example
        self.prepared: dict[int, Prepared] = {}
        self.empty_start = Start("an empty state", state={})  # where an invalid start falls back

    # ---- start states ----------------------------------------------------------------------
    def _starts(self) -> list[Start]:
        if self.options.state is not None:
            given = Start("the given state", state=self.options.state)
            try:
                given.apply(self.env_class())
            except InvalidState as error:
                raise ExploreError(f"invalid initial state: {error}") from None
            return [given]
        tasks = [self.options.task] if self.options.task else list(self.env_class.TASKS)
        starts: list[Start] = []
        for task in tasks:
            env = self.env_class()
            try:
                env.solve(task)
            except InvalidState:
                continue
            calls = [(e.name, e.arguments) for e in env.trace if e.success]
            self.solutions[task] = calls
            for name, _ in calls:  # the solutions are explored paths too, and deep ones
                self.report.tools[name].calls += 1
                self.report.tools[name].successes += 1
                self.report.calls += 1
            starts.append(Start(f"task {task}", task))
            for step in range(1, len(calls) + 1):
                starts.append(
                    Start(f"task {task} after {step} solution call(s)", task, calls[:step])
                )
        if not starts:
            empty = Start("an empty state", state={})
            try:
                empty.apply(self.env_class())
            except InvalidState as error:
                raise ExploreError(
                    f"the spec has no task to start from and an empty state is not valid "
                    f"({error}): give one with --state state.json"
                ) from None
            starts.append(empty)
        return starts

    def prepare(self, start: Start) -> Prepared:
        """The start's environment, built on first use (`Start.apply` raises InvalidState for
        a start that is not valid)."""
        prepared = self.prepared.get(id(start))
        if prepared is None:
            env = self.env_class(step_budget=self.options.step_budget)
            env.coverage = [0] * len(self.env_class.SITES)
            start.apply(env)
            prepared = self.prepared[id(start)] = Prepared(start, env, env.coverage)
        return prepared

    # ---- the state machine -------------------------------------------------------------------
    def machine(self) -> type[RuleBasedStateMachine]:
        explorer = self

        class ExploreMachine(RuleBasedStateMachine):
            # (set by begin, the first thing an example runs)
            env: Environment
            sample: StateSample  # what the arguments are made from: the state now
            generator: ArgumentGenerator

            def __init__(self) -> None:
                super().__init__()
                self.start: Start | None = None
                self.calls: list[Call] = []
                # the calls' results, kept only by the examples whose teardown checks
                # determinism (see teardown): each result kept alive until the example ends
                # is more for the garbage collector's young collections to walk
                self.results: list[dict[str, Any]] | None = (
                    []
                    if (explorer.examples + 1) % explorer.options.determinism_every == 0
                    else None
                )
                explorer.current = self

            @initialize(data=st.data())
            def begin(self, data: st.DataObject) -> None:
                starts = explorer.starts
                if explorer.target_task is not None:  # a reward hack starts from the init
                    starts = [s for s in starts if s.task == explorer.target_task and not s.prefix]
                start = data.draw(st.sampled_from(starts), label="start")
                try:
                    prepared = explorer.prepare(start)
                except InvalidState:
                    start = explorer.empty_start
                    prepared = explorer.prepare(start)
                self.start = start
                self.env = prepared.begin(explorer.coverage if explorer.counting else None)
                self.sample = prepared.sample
                self.generator = prepared.generator

            @rule(data=st.data())
            def call_tool(self, data: st.DataObject) -> None:
                # one draw per call (the tool and its arguments' seed): draws are what costs
                # time in hypothesis; shrinking it towards 0 gives the first tool, plainest args
                drawn = data.draw(CALL_DRAW, label="call")
                tools = explorer.tools
                name = tools[drawn % len(tools)]
                arguments = self.generator.arguments(name, drawn // len(tools), self.sample)
                self.calls.append((name, arguments))
                world = self.env._world
                written_before = len(world.history)
                try:
                    result = self.env.call(name, arguments)
                except Exception as error:  # call() itself must never raise
                    raise _Stop(
                        "exception",
                        f"call of '{name}' raised {type(error).__name__}: {error}",
                        "".join(traceback.format_exception(error)),
                    ) from None
                if self.results is not None:
                    self.results.append(result)
                if result["success"] and name not in explorer.queries:
                    # the state may have changed: what the call wrote
                    self.sample = self.sample.after_write(*written(self.env, world, written_before))
                explorer.observe(name, result, self.env)
                explorer.check_call(name, result, self.env)

            def teardown(self) -> None:
                explorer.examples += 1
                if self.results is not None:  # (every determinism_every-th example)
                    explorer.check_determinism(self)

        return ExploreMachine

    def is_hack(self, task: str, env: Environment) -> bool:
        """Does the run reach the task's success without being its solution (all of the
        solution's calls, in any order, among others or not)?"""
        if not env.evaluate()["success"]:
            return False
        made = Counter(_key(e.name, e.arguments) for e in env.trace if e.success)
        needed = Counter(_key(name, arguments) for name, arguments in self.solutions[task])
        return bool(needed - made)

    def check_call(self, name: str, result: dict[str, Any], env: Environment) -> None:
        """Stop the example at a runtime bug, or at what the run searches for (a call rejected
        by the target rule, a reward hack).

        (A method, not part of the rule: a failed call's exception holds its traceback, whose
        frames link back to the rule's frame, so a local of the rule that held the exception
        would make a cycle that only the garbage collector frees, on every failed call.)"""
        bug = env.last_exception
        if bug is not None:
            raise _Stop(
                "exception",
                f"'{name}' hit a bug: {type(bug).__name__}: {bug}",
                "".join(traceback.format_exception(bug)),
            )
        failure = env.last_failure
        if (
            self.target_rule is not None
            and not result["success"]
            and failure is not None
            and failure.rule == self.target_rule
        ):
            raise _Stop("rule-rejection", result["error"])
        if self.target_task is not None and result["success"]:
            if self.is_hack(self.target_task, env):
                raise _Stop("reward-hack", "the task's checks all pass")

    def observe(self, name: str, result: dict[str, Any], env: Environment) -> None:
        """Count a call of the main run by its outcome (the report's tables are made from
        the counts when it ends: a call touches one dict, not five counters)."""
        if not self.counting:
            return
        if result["success"]:
            key: tuple[str, int, Any] = (name, _SUCCEEDED, None)
        else:
            failure = env.last_failure
            if failure is not None and failure.site is not None:
                key = (name, _AT_SITE, failure.site)
            elif failure is not None and failure.rule is not None:
                key = (name, _BY_RULE, failure.rule)
            else:
                key = (name, _OTHERWISE, str(result["error"]).split(":")[0][:60])
        outcomes = self.outcomes
        outcomes[key] = outcomes.get(key, 0) + 1

    def finish_counting(self) -> None:
        """The main run's outcomes into the report's tool statistics and the per-site and
        per-rule failure counts, in the order they first happened."""
        self.counting = False
        for (name, outcome, detail), count in self.outcomes.items():
            stats = self.report.tools[name]
            stats.calls += count
            self.report.calls += count
            if outcome == _SUCCEEDED:
                stats.successes += count
            elif outcome == _AT_SITE:
                self.site_failures[detail] += count
                self.tool_sites[name][detail] += count
                owner, line, kind, text = self.env_class.SITES[detail]
                stats.failures[f"line {line}: {kind} {text}"] += count
            elif outcome == _BY_RULE:
                self.rule_rejections[(detail, name)] += count
                stats.failures[detail] += count
            else:
                stats.failures[detail] += count
        self.outcomes.clear()

    def check_determinism(self, machine: Any) -> None:
        if machine.start is None or machine.results is None:
            return
        twin = self.env_class(step_budget=self.options.step_budget)
        machine.start.apply(twin)
        for (name, arguments), expected in zip(machine.calls, machine.results):
            if twin.call(name, arguments) != expected:
                raise _Stop(
                    "nondeterminism", f"replaying the calls gave a different result of '{name}'"
                )
        if twin.state_hash() != machine.env.state_hash():
            raise _Stop("nondeterminism", "replaying the calls gave a different state")

    # ---- running -----------------------------------------------------------------------------
    def run_machine(self, examples: int, phases: tuple[Phase, ...]) -> _Stop | None:
        machine_class = self.machine()

        def new_machine() -> RuleBasedStateMachine:
            # hypothesis digests the source of what it is given (for its example database,
            # which explore does not use): given the class, inspect finds a class's source by
            # parsing its whole module (this one, a few milliseconds a run); given this
            # function, it reads these lines
            return machine_class()

        # typed in some hypothesis releases and not in others: call it through Any
        test = cast(Any, get_state_machine_test)(
            new_machine,
            # built on hypothesis's own default profile, so that a profile a host program
            # loaded (a test suite's, say) cannot change what a seed explores
            settings=settings(
                settings.get_profile("default"),
                derandomize=False,
                max_examples=max(1, examples),
                stateful_step_count=STEPS_PER_EXAMPLE,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
                phases=phases,
                print_blob=False,
                report_multiple_bugs=False,
            ),
        )
        try:
            with machine_conditions():
                seed(self.options.seed)(test)()
        except _Stop as stop:
            return stop
        except (Flaky, FlakyFailure):
            # hypothesis could not make a failing example fail again: the environment
            # depends on something outside its state, which is nondeterminism by definition
            return _Stop(
                "nondeterminism",
                "replaying the calls gave a different outcome: a failure of this run could not "
                "be reproduced, so the environment depends on something outside its state",
            )
        return None

    def run(self) -> ExploreReport:
        started = time.perf_counter()
        examples = max(1, self.options.max_calls // STEPS_PER_EXAMPLE)
        stop = self.run_machine(examples, (Phase.generate, Phase.shrink))
        if stop is not None:
            self.record_stop(stop, "error")
        self.report.seconds = time.perf_counter() - started
        self.finish_counting()
        self.never_succeeded()
        self.conditions()
        self.rule_counterexamples()
        self.reward_hacks()
        return self.report

    def record_stop(self, stop: _Stop, severity: str, tool: str | None = None) -> Finding:
        machine = self.current
        trace = list(machine.calls) if machine is not None else None
        start = machine.start if machine is not None else None
        if (
            trace
            and start is not None
            and stop.kind in ("rule-rejection", "exception", "reward-hack")
        ):
            trace = self.minimize(start, trace, stop.kind)
        finding = Finding(
            severity,
            stop.kind,
            stop.message,
            tool=tool or (trace[-1][0] if trace else None),
            detail=stop.detail,
            start=start,
            trace=trace,
        )
        self.report.findings.append(finding)
        return finding

    def minimize(self, start: Start, trace: list[Call], kind: str) -> list[Call]:
        """Drop every call the failure does not need (hypothesis shrinks the drawn numbers,
        which does not always remove calls): the result is minimal, no call can go."""
        rule = self.target_rule

        def still_fails(calls: list[Call]) -> bool:
            env = self.env_class(step_budget=self.options.step_budget)
            start.apply(env)
            for name, arguments in calls:
                result = env.call(name, arguments)
            if kind == "exception":
                return env.last_exception is not None
            if kind == "reward-hack":
                return start.task is not None and self.is_hack(start.task, env)
            failure = env.last_failure
            return not result["success"] and failure is not None and failure.rule == rule

        # the failing call itself may go too when it is a reward hack: any call can be last
        index = len(trace) - (1 if kind == "reward-hack" else 2)
        while index >= 0:
            candidate = trace[:index] + trace[index + 1 :]
            if still_fails(candidate):
                trace = candidate
            index -= 1
        return trace

    def never_succeeded(self) -> None:
        for name, stats in self.report.tools.items():
            if stats.calls == 0 or stats.successes > 0:
                continue
            reasons = ", ".join(
                f"{reason} ({count}x)" for reason, count in stats.failures.most_common(3)
            )
            failed = stats.calls - stats.successes
            sites = self.tool_sites[name]
            if sum(sites.values()) == failed and all(
                self.free_text_lookup(name, site) for site in sites
            ):
                # no condition is shown impossible: the generated text never named a row
                self.report.findings.append(
                    Finding(
                        "warning",
                        "never-succeeds",
                        f"tool '{name}' never succeeded in {stats.calls} calls, but every call "
                        "failed on a lookup by a free-text value that no generated argument "
                        "matched: the tool may be right; try it with a value from the state",
                        tool=name,
                        detail=f"it always failed on: {reasons}",
                    )
                )
                continue
            self.report.findings.append(
                Finding(
                    "error",
                    "never-succeeds",
                    f"tool '{name}' never succeeded in {stats.calls} calls",
                    tool=name,
                    detail=f"it always failed on: {reasons}",
                )
            )

    def free_text_lookup(self, tool: str, site: int) -> bool:
        """Is the condition at `site` a lookup keyed by one of the tool's `str` parameters
        (`t.get(p)`, `p in t`, `first(x for x in t if x.f == p)`)? Such a condition holds for
        the right text, which random generation rarely produces."""
        owner, _, kind, text = self.env_class.SITES[site]
        if owner != tool:
            return False
        for param in self.env_class.TOOLS[tool].params:
            if param.spec is not STR:
                continue
            p = re.escape(param.name)
            if re.search(rf"\.get\(\s*{p}\s*\)", text) or re.search(rf"\b{p} in \w", text):
                return True
            if re.match(r"(first|any)\(", text) and re.search(rf"\b{p}\b", text):
                return True
        return False

    def conditions(self) -> None:
        for index, (owner, line, kind, text) in enumerate(self.env_class.SITES):
            passed, failed = self.coverage[index], self.site_failures[index]
            self.report.conditions.append((owner, line, kind, text, passed, failed))
            if passed + failed < MIN_EVALUATIONS or owner not in self.report.tools:
                continue  # too rarely reached to say anything (or inside a fn)
            if failed == 0:
                self.report.findings.append(
                    Finding(
                        "warning",
                        "condition-never-fails",
                        f"line {line}: `{kind} {text}` in '{owner}' never failed "
                        f"({passed} calls passed it)",
                        tool=owner,
                    )
                )
            elif passed == 0:
                self.report.findings.append(
                    Finding(
                        "warning",
                        "condition-never-holds",
                        f"line {line}: `{kind} {text}` in '{owner}' never held "
                        f"({failed} calls failed on it)",
                        tool=owner,
                    )
                )

    def rule_counterexamples(self) -> None:
        """For each declarative rule that rejected calls: a shrunk trace that reproduces it."""
        seen: set[str] = set()
        for (rule_name, tool), count in self.rule_rejections.most_common():
            if rule_name in seen:
                continue
            seen.add(rule_name)
            self.target_rule = rule_name
            stop = self.run_machine(
                max(10, self.options.max_calls // STEPS_PER_EXAMPLE // 2),
                (Phase.generate, Phase.shrink),
            )
            message = (
                f"{count} call(s) of '{tool}' were rejected only by the rule {rule_name!r}, "
                "not by the tool's own require or let-else: the agent sees the rule's text"
            )
            if stop is None:
                self.report.findings.append(
                    Finding("warning", "rule-rejection", message, tool=tool)
                )
            else:
                finding = self.record_stop(stop, "warning", tool)
                finding.message = message
                finding.detail = f"last call failed with: {stop.message}"
            self.target_rule = None

    def reward_hacks(self) -> None:
        """For each task with a solution that doing nothing does not solve: search a run
        from its initial state that succeeds without being the solution."""
        for task, solution in self.solutions.items():
            if not solution or not any(s.task == task and not s.prefix for s in self.starts):
                continue
            idle = self.env_class(step_budget=self.options.step_budget)
            idle.reset(task=task)
            if idle.evaluate()["success"]:
                continue  # solved by doing nothing: `envdsl check` reports it (E4008)
            self.target_task = task
            stop = self.run_machine(
                max(5, self.options.max_calls // STEPS_PER_EXAMPLE // 4),
                (Phase.generate, Phase.shrink),
            )
            self.target_task = None
            if stop is None or stop.kind != "reward-hack":
                continue
            finding = self.record_stop(stop, "warning")
            calls = len(finding.trace or [])
            finding.tool = None
            finding.message = (
                f"{calls} call(s) from the initial state of task '{task}' reach its success "
                "without being its solution: the checks are easier to satisfy than the "
                "instruction"
            )
            finding.detail = "check what the instruction asks that this run does not do"


def written(
    env: Environment, world: World, since: int
) -> tuple[dict[str, set[str] | None] | None, bool]:
    """The tables (None: not known which) and whether any scalar the calls since position
    `since` of `world`'s history wrote, from their journal entries (see
    envdsl/runtime/snapshots.py): per table the attributes of the fields it wrote, or None
    where it inserted or deleted rows. The history is kept while a snapshot of the world
    lives, as the prepared start's does; without one, or for an entry of an unknown kind,
    every table and scalar counts as written."""
    if env._world is not world or not (world.watched and world.live):
        return None, True
    tables: dict[str, set[str] | None] = {}
    scalars = False
    for entry in itertools.islice(world.history, since, None):
        kind = entry[0]
        if kind == "field":  # (kind, table, key, row, attribute, old)
            fields = tables.setdefault(entry[1], set())
            if fields is not None:
                fields.add(entry[4])
        elif kind in _ROW_ENTRIES:
            tables[entry[1]] = None
        elif kind == "scalar":
            scalars = True
        elif kind in _PLACE_ENTRIES and isinstance(entry[1], Place):
            place = entry[1]  # (a value nested anywhere in a row field lives at the field)
            if place.table is None:
                scalars = True
            else:
                fields = tables.setdefault(place.table, set())
                if fields is not None:
                    fields.add(place.attr)
        else:
            return None, True
    if not tables.keys() <= env.TABLES.keys():
        return None, True
    return tables, scalars


# journal entries that change a table's rows (a "field" entry names the field it wrote), and
# those that name the place (a field of a row, or a scalar) whose list, set or map they
# changed in place
_ROW_ENTRIES = frozenset(("insert", "delete", "counter"))
_PLACE_ENTRIES = frozenset(("grow", "discard", "unput", "reput"))


def _key(name: str, arguments: Any) -> str:
    return json.dumps([name, arguments], sort_keys=True, default=str)


@contextlib.contextmanager
def without_local_constants() -> Iterator[None]:
    """Hypothesis mixes constants found in the source of every loaded module into what it
    draws, so the same seed explored differently depending on what else the process had
    imported. Exploration switches that off, so that a seed means the same calls everywhere.
    (This reaches into hypothesis internals; when they change, the guard degrades to the
    default behaviour rather than failing.)"""
    try:
        from hypothesis.internal.conjecture import providers

        original = providers._get_local_constants
        empty = type(providers._local_constants)()
    except (ImportError, AttributeError):
        yield
        return
    providers.CONSTANTS_CACHE.cache.clear()
    providers._get_local_constants = lambda: empty
    try:
        yield
    finally:
        providers._get_local_constants = original
        providers.CONSTANTS_CACHE.cache.clear()


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Leave the objects alive before a run (modules, the compiled environment, hypothesis's
    own tables) out of the garbage collector's full collections during it. Exploring
    allocates several times what a bare state machine does, and each full collection that
    triggers walks that whole heap (about 100 ms here, several per run). The run's own
    objects are still collected; a host that froze its heap itself is left as it is."""
    if not gc.isenabled() or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def machine_conditions() -> Iterator[None]:
    """What every state-machine run of explore runs under (benchmarks/bench_explore.py runs
    its bare baseline under it too)."""
    with without_local_constants(), frozen_heap():
        yield


def explore(env_class: type[Environment], options: ExploreOptions) -> ExploreReport:
    if not env_class.TOOLS:  # nothing to call: every draw would pick from no tools
        raise ExploreError(f"{env_class.NAME} has no tools to explore")
    return Explorer(env_class, options).run()
