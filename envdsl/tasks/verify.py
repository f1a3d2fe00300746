"""Stage 7: task verification, by running the tasks on the environment codegen produced.

A task's checks are the reward of training and the score of an evaluation, so verification
asks whether they grade the agent's run the way the instruction means:

- the initial state must satisfy the schema and every integrity rule; the solution must
  replay without a failed call, change the state (unless the task is a question) and pass
  every check, with the values of a failing check's operands shown;
- negative controls: doing nothing, and making only the solution's read-only calls, must not
  reach `success` (a question task, one with checks on `answer`, is exempt from the second);
- under-specification: the solution replayed with each state-changing step left out must
  fail, and each table field the solution changes must be read by some check;
- discrimination: a check true in every state seen here (init, each leave-one-out end state,
  the controls) cannot tell a good run from a bad one.

The stage takes the generated module as input and imports nothing of the pipeline.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.generated.modules import environment_class
from envdsl.runtime import Environment, Fail, InvalidState
from envdsl.semantics import types as t
from envdsl.semantics.builtin_table import called_builtin
from envdsl.semantics.model import CheckedSpec, Effects
from envdsl.syntax import ast
from envdsl.tasks.unchecked_fields import FieldsWatched, solution_states, unchecked_fields
from envdsl.util import construct
from envdsl.util.source import Span

if TYPE_CHECKING:
    from envdsl.tasks.check_values import CheckExplainer
    from envdsl.tasks.mutation import MutationReport


@dataclass
class TaskReport:
    """What verifying one task found (for `envdsl verify`)."""

    task: str
    init_ok: bool = True
    steps: int = 0  # solution calls that succeeded
    solution_ok: bool | None = None  # None: the task has no solution
    checks: int = 0
    passing_before: int = 0
    passing_after: int | None = None
    # reward of each negative control: "nothing" (the empty trajectory), "only_reading"
    # (the solution's read-only calls); None where it was not run
    controls: dict[str, float | None] = field(
        default_factory=lambda: {"nothing": None, "only_reading": None}
    )
    # reward with each state-changing step left out: (1-based step, tool, reward)
    left_out: list[tuple[int, str, float]] = field(default_factory=list)
    # the frame: one line per change of the reference's footprint; None without a frame (no
    # solution, or one that fails); [] for an empty frame (a question, a refusal)
    frame: list[str] | None = None
    frame_json: dict[str, Any] | None = None
    refusal: bool = False  # the right outcome is no change (the task has counterexamples)
    # reward of each `counterexample` run, in task order (each must be 0)
    counterexamples: list[float] = field(default_factory=list)
    mutation: MutationReport | None = None  # None: not run (the solution fails, ...)
    problems: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "init_ok": self.init_ok,
            "solution_steps_ok": self.steps,
            "solution_ok": self.solution_ok,
            "checks": self.checks,
            "passing_before": self.passing_before,
            "passing_after": self.passing_after,
            "controls": dict(self.controls),
            "left_out": [
                {"step": step, "tool": tool, "reward": reward}
                for step, tool, reward in self.left_out
            ],
            "frame": (
                None if self.frame is None else {"changes": self.frame, **(self.frame_json or {})}
            ),
            "refusal": self.refusal,
            "counterexamples": list(self.counterexamples),
            "mutation": self.mutation.as_json() if self.mutation is not None else None,
            "problems": self.problems,
        }


def verify_tasks(
    checked: CheckedSpec,
    module: types.ModuleType,
    sink: DiagnosticSink,
    *,
    spec_tasks: bool = True,
) -> list[TaskReport]:
    """Verify every task on the generated `module` (the output of codegen for `checked`);
    without `spec_tasks`, only the tasks of task files (the spec's own are taken as verified)."""
    from envdsl.tasks.check_values import CheckExplainer

    env_class = environment_class(module)
    explainer = CheckExplainer(checked, module)
    reports = []
    for task in checked.env.of_type(ast.TaskDecl):
        if not spec_tasks and task.span.file == checked.spec.path:
            continue
        verifier = TaskVerifier(checked, sink, env_class, task, explainer)
        verifier.run()
        reports.append(verifier.report)
    return reports


class TaskVerifier:
    def __init__(
        self,
        checked: CheckedSpec,
        sink: DiagnosticSink,
        env_class: type[Environment],
        task: ast.TaskDecl,
        explainer: CheckExplainer,
    ) -> None:
        self.checked = checked
        self.sink = sink
        self.env_class = env_class
        self.task = task
        self.name = task.name.text
        self.explainer = explainer
        self.report = TaskReport(self.name, checks=len(task.checks))
        self.reference = task.answer.value if task.answer is not None else ""
        self.answer_checks = [c for c in task.checks if _reads_answer(c.cond, checked)]
        # each check's condition walked once (the reports below ask about each check often)
        self.trace_checks: set[int] = set()  # ids of the checks on the call trace
        self.relative_checks: set[int] = set()  # ... on the trace or on `initial.`
        # of a check true at the start, the first top-level conjunct that is not relative: it
        # holds before the agent acts by its value, not by being written as a guard (W5006 and
        # W5013 judge the check by it; a check with none is a guard as written)
        self.absolute_part: dict[int, ast.Expr] = {}
        for check in task.checks:
            uses_trace, reads_initial = _trace_and_initial(check.cond, checked)
            if uses_trace:
                self.trace_checks.add(id(check))
            if uses_trace or reads_initial:
                self.relative_checks.add(id(check))
            part = next(
                (c for c in _conjuncts(check.cond) if not any(_trace_and_initial(c, checked))), None
            )
            if part is not None:
                self.absolute_part[id(check)] = part
        steps = task.solution or ()
        self.actions = [i for i, step in enumerate(steps) if self.checked_kind(step) == "action"]
        # what warn_fields reads: the initial state and the states between the solution's
        # steps, recorded by run()'s own reset and replay when some check can miss a field
        self.watched = FieldsWatched(checked, task)
        self.initial_json: dict[str, Any] = {}
        self.states: list[tuple[int, dict[str, Any], list[Any]]] = []
        # one environment for every run that starts over from the task's start (the
        # counterexamples, the controls, the leave-one-out replays, the mutants): each run's
        # reset(task=...) on it restores the start the first reset loaded (undoing what the
        # last run wrote), where a new environment per run ran the task's init and checked
        # the whole state again; an init is deterministic, so both start alike
        self.from_start: Environment | None = None

    def start_over(self) -> Environment:
        """The environment of the runs that start from the task's start (`from_start`): each
        of them resets it to the task first."""
        if self.from_start is None:
            self.from_start = self.env_class()
        return self.from_start

    def checked_kind(self, step: ast.SolutionStep) -> str:
        assert isinstance(step.call.func, ast.NameRef)
        return self.checked.callables[step.call.func.name].kind

    def problem(
        self,
        code: codes.Code,
        message: str,
        span: Span,
        help: str,
        notes: list[str] | None = None,
    ) -> None:
        self.sink.report(code, message, span, help=help, notes=notes or [])
        self.report.problems.append(f"{code.code} {message}")

    # ---- the run -----------------------------------------------------------------------------
    def run(self) -> None:
        construct.note(self.task.span)  # for an internal error: the task being replayed
        env = self.env_class()
        try:
            env.reset(task=self.name)
        except (InvalidState, Fail) as error:  # Fail: an init value fails or runs out of budget
            self.invalid_init(str(error))
            return
        if self.watched.needed:
            self.initial_json = env.state_json()
        before = env.evaluate()  # the empty trajectory: no call, no answer
        self.report.passing_before = _passing(before)
        self.report.controls["nothing"] = before["reward"]
        hash_before = env.state_hash()
        self.from_start = env  # the runs below start over on it (see from_start)
        self.show_frame()
        self.replay_counterexamples()
        if self.task.solution is None:
            if self.task.counterexamples:  # a refusal: doing nothing is the reference
                self.report.refusal = True
            elif not self.solved_by_doing_nothing(before):
                self.warn_checks(before, None, [])
            return
        if self.answer_checks and self.task.answer is None:
            self.problem(
                codes.MISSING_REFERENCE_ANSWER,
                f'check "{self.answer_checks[0].text.value}" reads `answer`, but the solution '
                f"of task '{self.name}' states no answer",
                self.answer_checks[0].span,
                help='end the solution with `answer "..."`: what a correct agent tells the '
                "user, so that verification can run the checks on it",
            )
            return
        solved = self.env_class()
        states, after_step = solution_states(solved, self.actions)
        results = solved.solve(self.name, after_step=after_step if self.watched.needed else None)
        self.states = states
        self.report.steps = sum(1 for r in results if r["success"])
        if results and not results[-1]["success"]:
            self.step_failed(results)
            return
        self.report.solution_ok = True
        if solved.state_hash() == hash_before and self.task.counterexamples:
            self.report.refusal = True  # its checks hold at init by design: guards
            after = solved.evaluate(self.reference)
            self.report.passing_after = _passing(after)
            if not after["success"]:
                self.warn_checks(before, after, [], solved)
            return
        if solved.state_hash() == hash_before and not self.is_question():
            first = self.task.solution[0] if self.task.solution else None
            self.problem(
                codes.SOLUTION_CHANGES_NOTHING,
                f"the solution of task '{self.name}' leaves the state exactly as it was",
                first.span if first is not None else self.task.name.span,
                help="a task should ask the agent to change something; for a question, check "
                'what the agent tells the user (`check "...": "42" in answer`) and end the '
                'solution with `answer "..."`; for a refusal (the right outcome is no change), '
                "give the harmful run it must not make: `counterexample { tool(...) }`",
            )
            return  # its checks then hold at init by necessity: no further reports
        after = solved.evaluate(self.reference)
        self.report.passing_after = _passing(after)
        if not after["success"]:
            self.warn_checks(before, after, [], solved)
            return
        if self.solved_by_doing_nothing(before):
            return
        # evaluations of the partial runs, for discrimination: (state hash, evaluation)
        partial: list[tuple[str, dict[str, Any]]] = []
        reading = self.only_reading_control()
        if reading is not None:
            partial.append(reading)
            if reading[1]["success"]:
                self.problem(
                    codes.SOLVED_BY_ONLY_READING,
                    f"task '{self.name}' is solved by only reading: its checks all pass after "
                    "the solution's read-only calls alone",
                    self.task.name.span,
                    help="the checks must notice what the task asks to change: check the "
                    "state the solution's actions write; for a question, check what the agent "
                    'tells the user (`check "...": "42" in answer`, with `answer "..."` in the '
                    "solution)",
                )
                self.warn_checks(before, after, [])
                return
        unnoticed = self.leave_one_out(partial)
        self.warn_fields(unnoticed)
        # only states that are neither the initial one nor the solution's end say more
        ends = {hash_before, solved.state_hash()}
        self.warn_checks(before, after, [e for h, e in partial if h not in ends])
        self.test_by_mutants(solved)

    def is_question(self) -> bool:
        """A question is answered, not done: checks on `answer`, or (the older form) only
        queries checked with `called(...)`."""
        if self.answer_checks:
            return True
        return not self.actions and bool(self.trace_checks)

    # ---- the frame and counterexamples --------------------------------------------------------
    def show_frame(self) -> None:
        """What verify shows of the task's frame: its reference footprint."""
        prints = self.env_class.task_reference(self.name).footprint
        if prints is not None:
            self.report.frame = prints.describe()
            self.report.frame_json = prints.as_json()

    def replay_counterexamples(self) -> None:
        """Each `counterexample` run the author gives must score 0: a harmful run the grading
        rewards at all is a hole."""
        for index, counterexample in enumerate(self.task.counterexamples):
            env = self.start_over()
            env.run_counterexample(self.name, index)
            evaluation = env.evaluate()
            self.report.counterexamples.append(evaluation["reward"])
            if evaluation["reward"] == 0:
                continue
            passed = [c["check"] for c in evaluation["checks"] if c["passed"]]
            self.problem(
                codes.COUNTEREXAMPLE_REWARDED,
                f"counterexample {index + 1} of task '{self.name}' scores "
                f"{evaluation['reward']:.2f}, not 0",
                counterexample.span,
                help="the frame and the checks let this harmful run through: check what it "
                "changes (a refusal's frame is empty unless `allow` widens it), or forbid the "
                'call (`check "...": not called("tool")`)',
                notes=[f'check "{text}" passes' for text in passed][:3],
            )

    # ---- negative controls -------------------------------------------------------------------
    def solved_by_doing_nothing(self, before: dict[str, Any]) -> bool:
        if not before["success"] or not self.task.checks:
            return False
        self.problem(
            codes.SOLVED_BY_DOING_NOTHING,
            f"task '{self.name}' is solved by doing nothing: every check passes at init",
            self.task.name.span,
            help="an agent that makes no call would get the full reward; check what the task "
            "asks to change, or what the agent must answer; if the right outcome is no change "
            "(a refusal), give the harmful run: `counterexample { tool(...) }`",
        )
        return True

    def only_reading_control(self) -> tuple[str, dict[str, Any]] | None:
        """The solution's read-only calls alone, without an answer; None when the task is a
        question (it checks `answer`) or the solution has no query (that run is the empty
        one). A solution of only queries checked with `called(...)` is its own read-only
        run: such a task rewards looking the answer up, not telling it."""
        steps = self.task.solution or ()
        if self.answer_checks or len(self.actions) == len(steps):
            return None
        env = self.start_over()
        env.solve(self.name, leave_out=self.actions)
        evaluation = env.evaluate()
        self.report.controls["only_reading"] = evaluation["reward"]
        return env.state_hash(), evaluation

    # ---- under-specification -----------------------------------------------------------------
    def leave_one_out(self, partial: list[tuple[str, dict[str, Any]]]) -> set[int]:
        """Replay the solution without each state-changing step; a task that still succeeds
        has checks that do not notice the step. Returns the steps reported."""
        assert self.task.solution is not None
        unnoticed: set[int] = set()
        for index in self.actions:
            env = self.start_over()
            env.solve(self.name, leave_out=[index])
            evaluation = env.evaluate(self.reference)
            partial.append((env.state_hash(), evaluation))
            step = self.task.solution[index]
            self.report.left_out.append((index + 1, _tool(step), evaluation["reward"]))
            if evaluation["success"]:
                unnoticed.add(index)
                self.problem(
                    codes.SOLUTION_STEP_UNNOTICED,
                    f"task '{self.name}' succeeds without step {index + 1} "
                    f"({_call_text(step, self.checked.spec.text_of(step.span))}): no check notices what it does",
                    step.span,
                    help="add a check on what this step changes, or drop the step if the task "
                    "does not need it",
                )
        return unnoticed

    def warn_fields(self, unnoticed: set[int]) -> None:
        """A field the solution sets to a value it chose that no check reads: an agent may
        set it to anything."""
        assert self.task.solution is not None
        found = unchecked_fields(self.env_class, self.watched, self.initial_json, self.states)
        by_step: dict[int, list[tuple[str, str]]] = {}
        for index, table, name in found:
            if index not in unnoticed:  # else already reported: the whole step goes unnoticed
                by_step.setdefault(index, []).append((table, name))
        for index, fields in by_step.items():
            table, name = fields[0]
            var = table[0]
            listed = ", ".join(f"{t}.{n}" for t, n in fields)
            self.problem(
                codes.FIELD_UNCHECKED,
                f"step {index + 1} of task '{self.name}' sets {listed}, which no check reads",
                self.task.solution[index].span,
                help=f"an agent that sets another value passes too: check it (`any({var}.{name} "
                f"== ... for {var} in {table})`), or compare the row with `initial.` where only "
                "some fields may change",
            )

    # ---- mutation testing (envdsl/tasks/mutation.py) ----------------------------------------
    def test_by_mutants(self, solved: Environment) -> None:
        from envdsl.tasks.mutation import report_findings, run_mutants

        mutation = run_mutants(
            self.env_class,
            self.name,
            solved,
            answer=self.reference,
            question=self.is_question(),
            action_steps=self.actions,
            left_out=self.report.left_out,
            at_start=self.start_over(),
        )
        self.report.mutation = mutation
        if mutation is not None:
            flagged = {
                id(check)
                for check in self.task.checks
                for d in self.sink.diagnostics
                if d.code is codes.LIST_COMPARED_IN_ORDER
                and d.span.file == check.span.file
                and check.span.start <= d.span.start < check.span.end
            }
            report_findings(mutation, self.task, self.problem, flagged)

    # ---- per-check reports -------------------------------------------------------------------
    def warn_checks(
        self,
        before: dict[str, Any],
        after: dict[str, Any] | None,
        others: list[dict[str, Any]],
        solved: Environment | None = None,
    ) -> None:
        """At most one report per check: false after the solution (error), else carrying no
        signal because it reads nothing the task can change, else true in every state seen,
        else already true at init."""
        after_results = after["checks"] if after is not None else [None] * len(before["checks"])
        for index, (check, was, now) in enumerate(
            zip(self.task.checks, before["checks"], after_results)
        ):
            guard = id(check) in self.relative_checks
            # judged by value: only a check that is a guard in every conjunct is exempt
            part = self.absolute_part.get(id(check))
            if now is not None and not now["passed"]:
                self.check_failed(check, now, solved)
            elif after is not None and self.ignores_what_can_change(check):
                self.problem(
                    codes.CHECK_IGNORES_SOLUTION,
                    f'check "{check.text.value}" reads nothing the '
                    f"{'agent' if guard else 'solution'} can change",
                    check.span,
                    help="its result cannot depend on what the agent does; check the state "
                    "the task is about",
                )
            elif (
                was["passed"]
                and part is not None
                and others
                and all(o["checks"][index]["passed"] for o in others)
            ):
                self.problem(
                    codes.CHECK_NEVER_FALSE,
                    f'check "{check.text.value}" is true before the agent acts, after the '
                    f"solution and after {_partial_runs(others)}{self.part_text(check, part)}"
                    ": it cannot tell a good run from a bad one",
                    check.span,
                    help="if it must measure the task's progress, check the new value the "
                    "task asks for; if it states what must stay as it was, it is a guard (it "
                    "gates the reward and gives no credit): write that part against `initial.` "
                    "(`x == initial.x`)",
                )
            elif was["passed"] and part is not None:
                self.problem(
                    codes.CHECK_TRUE_AT_INIT,
                    f'check "{check.text.value}" already passes before the agent acts'
                    f"{self.part_text(check, part)}",
                    check.span,
                    help="a check true at the start is a guard: it gates the reward and gives "
                    "no credit; if it must measure the task's progress, check the new value "
                    "the task asks for; if it states what must stay as it was, write that "
                    "part against `initial.` (`x == initial.x`) or the trace "
                    '(`not called("...")`)',
                )

    def part_text(self, check: ast.Check, part: ast.Expr) -> str:
        """`` (its part `a == 1` holds there)``, when the check has other conjuncts."""
        if part is check.cond:
            return ""
        text = " ".join(
            self.checked.spec.text_of(part.span)[part.span.start : part.span.end].split()
        )
        return f" (by its part `{text}`)" if 0 < len(text) <= 80 else ""

    def check_failed(
        self, check: ast.Check, result: dict[str, Any], solved: Environment | None
    ) -> None:
        reason = f": {result['reason']}" if "reason" in result else ""
        notes: list[str] = []
        if solved is not None and not reason:
            shown = self.explainer.explain(check.cond, solved, self.reference)
            if shown is not None:
                reason = f": {shown}"
                notes = [f"where {part}" for part in shown.split(", where ", 1)[1:]]
        self.problem(
            codes.CHECK_FAILS_AFTER_SOLUTION,
            f'check "{check.text.value}" is false after the solution{reason}',
            check.span,
            help="fix the check or the solution: the reference solution must pass every check",
            notes=notes,
        )

    def ignores_what_can_change(self, check: ast.Check) -> bool:
        """A goal check must read something the solution writes; a guard (relative to
        `initial.`) something some tool can write. Trace and answer checks always depend on
        the agent."""
        if id(check) in self.trace_checks or check in self.answer_checks:
            return False
        if id(check) in self.relative_checks:
            tools = [c.name for c in self.checked.tools]
        else:
            assert self.task.solution is not None
            tools = [_tool(s) for s in self.task.solution]
        writes: set[str] = set()
        for tool in tools:
            writes |= self.checked.effects.get(tool, Effects()).writes
        reads = self.checked.effects.get(f"check:{self.name}:{check.text.value}", Effects()).reads
        tables_written = {w.split(".", 1)[0] for w in writes}
        return not any(
            r in writes or r in tables_written or any(w.startswith(r + ".") for w in writes)
            for r in reads
        )

    # ---- failures of the task itself ---------------------------------------------------------
    def invalid_init(self, message: str) -> None:
        init = self.task.init
        span: Span = self.task.name.span
        if isinstance(init, ast.InitBlock):
            span = init.span
            for assign in init.assigns:
                # messages name the table first: `users: ...`, `users[0].email: ...`
                if message.startswith((f"{assign.name.text}:", f"{assign.name.text}[")):
                    span = assign.span
                    break
        elif isinstance(init, ast.InitFrom):
            span = init.path.span
        self.report.init_ok = False
        self.problem(
            codes.INVALID_INIT,
            f"the initial state of task '{self.name}' is invalid: {message}",
            span,
            help="an initial state must satisfy every key, unique, ref and invariant rule",
        )

    def step_failed(self, results: list[dict[str, Any]]) -> None:
        assert self.task.solution is not None
        index = len(results) - 1
        step = self.task.solution[index] if 0 <= index < len(self.task.solution) else None
        error = results[-1].get("error") if results else "unknown error"
        self.report.solution_ok = False
        self.problem(
            codes.SOLUTION_STEP_FAILS,
            f"solution step {index + 1} of task '{self.name}' fails: "
            f"{_tool(step) if step is not None else '?'}(...) -> {error}",
            step.span if step is not None else self.task.name.span,
            help="the reference solution must replay without a failed call; fix the call, an "
            "earlier step, or the task's init",
        )


def _passing(evaluation: dict[str, Any]) -> int:
    return sum(1 for c in evaluation["checks"] if c["passed"])


def _tool(step: ast.SolutionStep) -> str:
    return step.call.func.name if isinstance(step.call.func, ast.NameRef) else "?"


def _call_text(step: ast.SolutionStep, text: str) -> str:
    written = " ".join(text[step.call.span.start : step.call.span.end].split())
    if not written or len(written) > 80:
        return f"{_tool(step)}(...)"
    return written


def _partial_runs(others: list[dict[str, Any]]) -> str:
    if len(others) == 1:
        return "the partial run verification tried"
    return f"each of the {len(others)} partial runs verification tried"


def _trace_and_initial(cond: ast.Expr, checked: CheckedSpec) -> tuple[bool, bool]:
    """Does the check read the call trace (`called`, `calls`), and does it read `initial.`?
    Either makes it relative: it holds at init by construction and says what must stay as it
    was (a guard), not what the agent must achieve."""
    uses_trace = reads_initial = False
    for n in ast.walk(cond):
        if isinstance(n, ast.Call):
            builtin = called_builtin(n, checked)
            uses_trace = uses_trace or (builtin is not None and builtin.reads_trace)
        elif isinstance(n, ast.NameRef) and n.name == "initial" and not n.qualified:
            reads_initial = True
    return uses_trace, reads_initial


def _conjuncts(cond: ast.Expr) -> list[ast.Expr]:
    """`a and b and c` as [a, b, c] (parentheses are not nodes); any other check as [cond]."""
    if isinstance(cond, ast.BoolOp) and cond.op == "and":
        return [*_conjuncts(cond.left), *_conjuncts(cond.right)]
    return [cond]


def _reads_answer(cond: ast.Expr, checked: CheckedSpec) -> bool:
    """Does the check read the agent's `answer`? (A state field or constant of that name
    takes precedence, as in name resolution.)"""
    if "answer" in checked.state or "answer" in checked.consts:
        return False
    return any(
        isinstance(n, ast.NameRef) and n.name == "answer" and checked.expr_types.get(id(n)) == t.STR
        for n in ast.walk(cond)
    )
