"""Mutation testing of a task's grader: run the mutants of envdsl/tasks/mutants.py and judge
the checks by them.

A wrong run that still gets reward 1.0 *survives*: the checks cannot tell it from the task
done. A right run below 1.0 means a check demands more than the task does (an order, most
often). How the runs that are neither count:
- *refused*: a call of the mutant fails (the environment itself rejects the wrong run, and an
  agent sees the error), so the grader is not what stops it: counted apart, not tried;
- *equivalent*: it ends in the reference's end state and still gets 1.0 (another tool with the
  same effect, an argument that changes nothing): not wrong, so not tried either;
- a reordered right run that ends in another state is not the same work (the steps were not
  independent): it is dropped.
The score is killed / tried over the wrong runs that ran, plus the solution's leave-one-out
runs (verify.py's W5011), which are the fourth kind of mutant. A wrong run kills when its
reward is below 1.0 (the frame's verdict included); a step that W5011 already reports is not
mutated again. A refusal has no solution to derive runs from: its author's counterexamples
are its wrong runs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from envdsl.diagnostics import codes
from envdsl.runtime import Environment
from envdsl.runtime.snapshots import Snapshot
from envdsl.syntax import ast
from envdsl.tasks.mutants import Call, Mutant, StartFacts, right_runs, wrong_runs
from envdsl.tasks.state_diff import state_changes
from envdsl.util.source import Span


@dataclass
class Survivor:
    mutant: Mutant
    changes: list[str]  # how its end state differs from the reference's


@dataclass
class RightFailure:
    mutant: Mutant
    reward: float
    failed: list[str]  # the texts of the checks it fails


@dataclass
class MutationReport:
    tried: int = 0
    killed: int = 0
    refused: int = 0
    equivalent: int = 0
    right_tried: int = 0
    right_ok: int = 0
    survivors: list[Survivor] = field(default_factory=list)
    right_failures: list[RightFailure] = field(default_factory=list)
    kinds: dict[str, list[int]] = field(default_factory=dict)  # kind -> [killed, tried]

    def count(self, kind: str, killed: bool) -> None:
        tally = self.kinds.setdefault(kind, [0, 0])
        tally[1] += 1
        self.tried += 1
        if killed:
            tally[0] += 1
            self.killed += 1

    def as_json(self) -> dict[str, Any]:
        return {
            "killed": self.killed,
            "tried": self.tried,
            "refused": self.refused,
            "equivalent": self.equivalent,
            "by_kind": {k: {"killed": v[0], "tried": v[1]} for k, v in self.kinds.items()},
            "right": {"ok": self.right_ok, "tried": self.right_tried},
            "survivors": [
                {
                    "kind": s.mutant.kind,
                    "description": s.mutant.description,
                    "calls": [{"name": n, "arguments": a} for n, a in s.mutant.calls],
                    "answer": s.mutant.answer,
                    "state_changes": s.changes,
                }
                for s in self.survivors
            ],
            "right_failures": [
                {
                    "kind": f.mutant.kind,
                    "description": f.mutant.description,
                    "calls": [{"name": n, "arguments": a} for n, a in f.mutant.calls],
                    "reward": f.reward,
                    "failed_checks": f.failed,
                }
                for f in self.right_failures
            ],
        }


def mutation_score_text(report: dict[str, Any]) -> str:
    """`12/12 wrong runs killed (3 refused, 1 equivalent), 2/2 right runs at 1.0`, from a
    report's JSON form (what `envdsl verify` prints)."""
    text = f"{report['killed']}/{report['tried']} wrong runs killed"
    if report["refused"] or report["equivalent"]:
        text += f" ({report['refused']} refused, {report['equivalent']} equivalent)"
    right = report["right"]
    if right["tried"]:
        text += f", {right['ok']}/{right['tried']} right runs at 1.0"
    return text


def run_mutants(
    env_class: type[Environment],
    task: str,
    solved: Environment,
    *,
    answer: str,
    question: bool,
    action_steps: list[int],
    left_out: list[tuple[int, str, float]],
    at_start: Environment | None = None,
) -> MutationReport | None:
    """Run the task's mutants, derived from the calls of `solved` (an environment that has
    just replayed the task's solution); None when those calls, replayed as the trace records
    them, do not reach the same end (then no mutant derived from them would mean anything).
    `at_start`: an environment to run them on (reset to the task here), else a new one."""
    reference: list[Call] = [(e.name, dict(e.arguments)) for e in solved.trace]
    end_hash = solved.state_hash()
    env = env_class() if at_start is None else at_start
    env.reset(task=task)
    facts = StartFacts.of(env)
    start = env.snapshot()
    # a second environment held at the reference's end: a run that starts with the whole
    # reference (an extra write, another answer) replays only what it adds; each keeps one
    # snapshot, so restoring never has to copy a state
    at_end = env_class()
    at_end.reset(task=task)
    if not _replay(at_end, reference) or at_end.state_hash() != end_hash:
        return None
    end_json: dict[str, Any] | None = None  # the end's JSON, made for the first survivor
    end = at_end.snapshot()
    runner = _Runner(env, start, at_end, end, reference)
    report = MutationReport()
    for _step, _tool, reward in left_out:
        report.count("omit", reward < 1.0)
    tables = set(env.TABLES)
    # a step the checks do not notice at all (W5011) survives every change: not said again
    unnoticed = {step - 1 for step, _tool, reward in left_out if reward >= 1.0}
    outcomes: set[tuple[str, str]] = set()
    for mutant in wrong_runs(facts, reference, action_steps, answer, question):
        if mutant.step in unnoticed:
            continue
        ran = runner.run(mutant.calls)
        if ran is None:
            report.refused += 1
            continue
        evaluation = ran.evaluate(mutant.answer)
        reached = ran.state_hash()
        same_end = reached == end_hash and mutant.answer == answer
        survives = evaluation["reward"] >= 1.0
        if same_end and survives:
            report.equivalent += 1
            continue
        report.count(mutant.kind, not survives)
        # one survivor per wrong outcome: `delete` instead of `remove` and `remove` then
        # `delete` end alike, and one check fixes both
        outcome = (reached, mutant.answer)
        if survives and outcome not in outcomes:
            outcomes.add(outcome)
            if end_json is None:  # `solved` is at the end too (the same hash), and stays
                end_json = solved.state_json()
            changes = state_changes(end_json, ran.state_json(), tables)
            report.survivors.append(Survivor(mutant, changes))
    for mutant in right_runs(facts, reference, action_steps, answer):
        ran = runner.run(mutant.calls)
        if ran is None:
            continue  # not a run that does the task: a step needed an earlier one
        if mutant.kind == "reorder" and ran.state_hash() != end_hash:
            continue  # the steps were not independent
        evaluation = ran.evaluate(mutant.answer)
        report.right_tried += 1
        if evaluation["reward"] >= 1.0:
            report.right_ok += 1
        else:
            failed = [c["check"] for c in evaluation["checks"] if not c["passed"]]
            report.right_failures.append(RightFailure(mutant, evaluation["reward"], failed))
    return report


class _Runner:
    """Runs a mutant's calls from the start, or from the reference's end when they begin with
    the whole reference; returns the environment they ran on, or None if a call failed."""

    def __init__(
        self,
        at_start: Environment,
        start: Snapshot,
        at_end: Environment,
        end: Snapshot,
        reference: list[Call],
    ) -> None:
        self.at_start, self.start = at_start, start
        self.at_end, self.end = at_end, end
        self.reference = reference

    def run(self, calls: tuple[Call, ...]) -> Environment | None:
        size = len(self.reference)
        if list(calls[:size]) == self.reference:
            env, rest = self.at_end, calls[size:]
            env.restore(self.end)
        else:
            env, rest = self.at_start, calls
            env.restore(self.start)
        return env if _replay(env, rest) else None


def _replay(env: Environment, calls: tuple[Call, ...] | list[Call]) -> bool:
    """Make the calls; False at the first that fails."""
    for name, arguments in calls:
        if not env.call(name, arguments)["success"]:
            return False
    return True


# ---- diagnostics -----------------------------------------------------------------------------
MAX_REPORTED = 5  # survivors reported per task; the JSON report and --trace-dir have them all

_SURVIVOR_HELP = {
    "swap": "the checks cannot tell this tool from the one the task asks for: check what the "
    "other tool does differently (the rows and fields the task must leave as they were)",
    "argument": "the checks accept another row or value than the one the task names: check the "
    "row or value the instruction asks for",
    "extra": "the checks miss a change the task does not ask for: state what must stay as it "
    "was (compare the row with `initial.`)",
    "answer": "the check on `answer` accepts an answer that does not give the answer: require "
    "the right value and reject what a wrong answer says (the other candidates, a negation)",
}
_RIGHT_HELP = {
    "reorder": "the steps are independent (the same end state either way), so a check should "
    "not depend on their order",
    "list-order": "the check compares a list the agent gives with its order; compare it "
    "order-free (`same_items(xs, [...])`) unless the task asks for "
    "an order",
}

Problem = Callable[[codes.Code, str, Span, str, list[str]], None]


def report_findings(
    report: MutationReport,
    task: ast.TaskDecl,
    problem: Problem,
    ordered_lists_flagged: Collection[int] = (),
) -> None:
    """One warning per surviving wrong run (at most MAX_REPORTED) and per right run below 1.0,
    through the verifier's `problem`; not for a list-order run failing a check whose in-order
    comparison W5021 already points at (`ordered_lists_flagged`: ids of such checks)."""
    name = task.name.text
    # one warning per place (a sink keeps one diagnostic per code and span): the first
    # survivor there in full, the others named in a note
    by_span: dict[tuple[int, int], list[Survivor]] = {}
    for survivor in report.survivors[:MAX_REPORTED]:
        span = _span_of(task, survivor.mutant)
        by_span.setdefault((span.start, span.end), []).append(survivor)
    for group in by_span.values():
        mutant = group[0].mutant
        notes = [f"its calls: {'; '.join(mutant.calls_text()) or 'none'}"]
        if mutant.kind == "answer":
            notes.append(f"its answer: {json.dumps(mutant.answer, ensure_ascii=False)}")
        if group[0].changes:
            notes.append("its end state against the reference's: " + "; ".join(group[0].changes))
        for other in group[1:]:
            answer = f" (answer {json.dumps(other.mutant.answer, ensure_ascii=False)})"
            shown = answer if other.mutant.kind == "answer" else ""
            notes.append(f"this one too: {other.mutant.description}{shown}")
        problem(
            codes.MUTANT_SURVIVES,
            f"a wrong run gets the full reward on task '{name}': {mutant.description}",
            _span_of(task, mutant),
            _SURVIVOR_HELP[mutant.kind],
            notes,
        )
    if len(report.survivors) > MAX_REPORTED:
        problem(
            codes.MUTANT_SURVIVES,
            f"{len(report.survivors) - MAX_REPORTED} more wrong runs get the full reward on "
            f"task '{name}'",
            task.name.span,
            "see `envdsl verify --format json` (or `--trace-dir`) for all of them",
            [],
        )
    for failure in report.right_failures:
        mutant = failure.mutant
        check = next((c for c in task.checks if c.text.value in failure.failed), None)
        if mutant.kind == "list-order" and check is not None and id(check) in ordered_lists_flagged:
            continue  # one mistake, one diagnostic: W5021 has the fix
        problem(
            codes.RIGHT_RUN_FAILS,
            f"a right run gets {failure.reward:.2f} on task '{name}': {mutant.description} "
            f'fails check "{failure.failed[0] if failure.failed else "?"}"',
            check.span if check is not None else _span_of(task, mutant),
            _RIGHT_HELP[mutant.kind],
            [f"its calls: {'; '.join(mutant.calls_text())}"],
        )


def _span_of(task: ast.TaskDecl, mutant: Mutant) -> Span:
    """The solution step a mutant changes, the answer for an answer, else the task's name."""
    if mutant.kind == "answer" and task.answer is not None:
        return task.answer.span
    steps = task.solution or ()
    if mutant.step is not None and mutant.step < len(steps):
        return steps[mutant.step].span
    return task.name.span
