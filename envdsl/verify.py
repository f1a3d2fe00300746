"""Stage 7: task verification, by running the tasks on the generated environment.

For every task: the initial state must satisfy the schema and every integrity rule; the
solution must replay without a failed call and change the state; every check must pass after
it.  Checks that already pass before the agent acts, or that read nothing the solution
changes, carry no signal and are reported as warnings.  Errors point at the exact `init`
assignment, solution step or check.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from envdsl import construct
from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics.model import CheckedSpec, Effects
from envdsl.source import Span
from envdsl.syntax import ast

if TYPE_CHECKING:
    from envdsl.runtime import Environment


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
            "problems": self.problems,
        }


def verify_tasks(checked: CheckedSpec, sink: DiagnosticSink) -> list[TaskReport]:
    tasks = checked.env.of_type(ast.TaskDecl)
    if not tasks:
        return []
    from envdsl.codegen.emit import generate, output_name
    from envdsl.loader import environment_class, load_module

    module = load_module(
        generate(checked, formatted=False), f"{output_name(checked)}_verify", register=False
    )
    env_class = environment_class(module)
    reports = []
    for task in tasks:
        verifier = TaskVerifier(checked, sink, env_class, task)
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
    ) -> None:
        self.checked = checked
        self.sink = sink
        self.env_class = env_class
        self.task = task
        self.name = task.name.text
        self.report = TaskReport(self.name, checks=len(task.checks))

    def problem(self, code: codes.Code, message: str, span: Span, help: str) -> None:
        self.sink.report(code, message, span, help=help)
        self.report.problems.append(f"{code.code} {message}")

    def run(self) -> None:
        from envdsl.runtime import Fail, InvalidState

        construct.note(self.task.span)  # for an internal error: the task being replayed
        env = self.env_class()
        try:
            env.reset(task=self.name)
        except (InvalidState, Fail) as error:  # Fail: an init value fails or runs out of budget
            self.invalid_init(str(error))
            return
        before = env.evaluate()
        self.report.passing_before = sum(1 for c in before["checks"] if c["passed"])
        hash_before = env.state_hash()
        if self.task.solution is None:
            self.warn_checks(before, None)
            return
        solved = self.env_class()
        results = solved.solve(self.name)
        self.report.steps = sum(1 for r in results if r["success"])
        if results and not results[-1]["success"]:
            self.step_failed(results)
            return
        self.report.solution_ok = True
        # a question task (only queries, checked with called(...)) changes no state by design
        only_queries = all(
            isinstance(step.call.func, ast.NameRef)
            and self.checked.callables[step.call.func.name].kind == "query"
            for step in self.task.solution
        )
        question = only_queries and any(_uses_trace(check.cond) for check in self.task.checks)
        if solved.state_hash() == hash_before and not question:
            first = self.task.solution[0] if self.task.solution else None
            self.problem(
                codes.SOLUTION_CHANGES_NOTHING,
                f"the solution of task '{self.name}' leaves the state exactly as it was",
                first.span if first is not None else self.task.name.span,
                help="a task should ask the agent to change something; a question the agent "
                'answers with a query can be checked with called("query", arg=...)',
            )
            return  # its checks then hold at init by necessity: no further reports
        after = solved.evaluate()
        self.report.passing_after = sum(1 for c in after["checks"] if c["passed"])
        self.warn_checks(before, after)

    def warn_checks(self, before: dict[str, Any], after: dict[str, Any] | None) -> None:
        """At most one report per check: false after the solution (error), else carrying no
        signal because it reads nothing the task can change, else already true at init."""
        after_results = after["checks"] if after is not None else [None] * len(before["checks"])
        for check, was, now in zip(self.task.checks, before["checks"], after_results):
            if now is not None and not now["passed"]:
                reason = f": {now['reason']}" if "reason" in now else ""
                self.problem(
                    codes.CHECK_FAILS_AFTER_SOLUTION,
                    f'check "{check.text.value}" is false after the solution{reason}',
                    check.span,
                    help="fix the check or the solution: the reference solution must pass "
                    "every check",
                )
            elif after is not None and self.ignores_what_can_change(check):
                self.problem(
                    codes.CHECK_IGNORES_SOLUTION,
                    f'check "{check.text.value}" reads nothing the '
                    f"{'agent' if _is_relative(check.cond) else 'solution'} can change",
                    check.span,
                    help="its result cannot depend on what the agent does; check the state "
                    "the task is about",
                )
            elif was["passed"] and not _is_relative(check.cond):
                self.problem(
                    codes.CHECK_TRUE_AT_INIT,
                    f'check "{check.text.value}" already passes before the agent acts',
                    check.span,
                    help="a check that holds at init rewards doing nothing; check what the "
                    "task changes, or compare with `initial.` to state that something must "
                    "stay as it was",
                )

    def ignores_what_can_change(self, check: ast.Check) -> bool:
        """A goal check must read something the solution writes; a guard (relative to
        `initial.`) something some tool can write. Trace checks always depend on the agent."""
        if _uses_trace(check.cond):
            return False
        if _is_relative(check.cond):
            tools = [c.name for c in self.checked.tools]
        else:
            assert self.task.solution is not None
            tools = [
                s.call.func.name for s in self.task.solution if isinstance(s.call.func, ast.NameRef)
            ]
        writes: set[str] = set()
        for tool in tools:
            writes |= self.checked.effects.get(tool, Effects()).writes
        reads = self.checked.effects.get(f"check:{self.name}:{check.text.value}", Effects()).reads
        tables_written = {w.split(".", 1)[0] for w in writes}
        return not any(
            r in writes or r in tables_written or any(w.startswith(r + ".") for w in writes)
            for r in reads
        )

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
        tool = (
            step.call.func.name
            if step is not None and isinstance(step.call.func, ast.NameRef)
            else "?"
        )
        self.report.solution_ok = False
        self.problem(
            codes.SOLUTION_STEP_FAILS,
            f"solution step {index + 1} of task '{self.name}' fails: {tool}(...) -> {error}",
            step.span if step is not None else self.task.name.span,
            help="the reference solution must replay without a failed call; fix the call, an "
            "earlier step, or the task's init",
        )


def _uses_trace(cond: ast.Expr) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.NameRef)
        and n.func.name in ("called", "calls")
        for n in ast.walk(cond)
    )


def _is_relative(cond: ast.Expr) -> bool:
    """Checks against `initial.` or the call trace hold at init by construction: they say
    what must stay as it was (a guard), not what the agent must achieve."""
    return _uses_trace(cond) or any(
        isinstance(n, ast.NameRef) and n.name == "initial" for n in ast.walk(cond)
    )
