"""The coverage report of a task set: `envdsl tasks spec.env [task files] --report`.

What the tasks' reference solutions exercise: the public tools some solution calls (and
those none does), the distribution of solution lengths, the mix of queries and actions, the
tables and fields the called tools read and write (from the effect analysis) and the fields a
solution really changes (on the states), and the rules: each `require` / `let ... else` and
invariant, whether some solution passes it and whether some solution provokes its failure.
A solution's calls all succeed (verification insists), so a failure is provoked by the
solution less one of its actions: the step that the rule guards a later step against. That
is the failure-and-recovery path a task teaches.

`gaps` turns the report into the short list the task generator (envdsl.llm.synth_tasks) steers the
next round by.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Sequence

from envdsl.pipeline import CompileResult
from envdsl.runtime import Environment
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec, Effects
from envdsl.syntax import ast
from envdsl.tasks.unchecked_fields import changed_fields
from envdsl.util.source import SourceFile

LONG_WORKFLOW = 4  # steps: a solution at least this long is a longer workflow


@dataclass(slots=True)
class RuleUse:
    counted: bool = False  # a `require`/`let ... else`: its passes are counted, so `held` is known
    held: list[str] = field(default_factory=list)  # tasks whose solution passes it
    failed: list[str] = field(default_factory=list)  # tasks whose solution less a step fails it


@dataclass(slots=True)
class CoverageReport:
    env: str
    files: list[str]
    tasks: list[str]
    tools: dict[str, list[str]]  # public tool -> tasks whose solution calls it
    kinds: dict[str, str]  # public tool -> query | action
    lengths: Counter[int]  # solution length -> tasks
    query_calls: int = 0
    action_calls: int = 0
    questions: int = 0  # tasks whose solution only reads (and answers)
    tables: dict[str, dict[str, int]] = field(default_factory=dict)  # table -> read/written
    # table.field (or a scalar state field) -> tasks whose tools read it / whose solution
    # changes it
    fields_read: dict[str, int] = field(default_factory=dict)
    fields_changed: dict[str, int] = field(default_factory=dict)
    rules: dict[str, RuleUse] = field(default_factory=dict)

    @property
    def unused_tools(self) -> list[str]:
        return [name for name, users in self.tools.items() if not users]

    def as_json(self) -> dict[str, Any]:
        return {
            "env": self.env,
            "files": self.files,
            "tasks": len(self.tasks),
            "tools": {
                name: {"kind": self.kinds[name], "tasks": users}
                for name, users in self.tools.items()
            },
            "unused_tools": self.unused_tools,
            "solution_lengths": {str(k): v for k, v in sorted(self.lengths.items())},
            "calls": {"query": self.query_calls, "action": self.action_calls},
            "question_tasks": self.questions,
            "tables": self.tables,
            "fields": {
                name: {
                    "read": self.fields_read.get(name, 0),
                    "changed": self.fields_changed.get(name, 0),
                }
                for name in sorted({*self.fields_read, *self.fields_changed})
            },
            "rules": {
                name: {"held": use.held if use.counted else None, "failure_provoked": use.failed}
                for name, use in self.rules.items()
            },
            "gaps": gaps(self),
        }


def coverage_report(result: CompileResult) -> CoverageReport:
    """The report of a compiled spec with its tasks (`result` from compile_source/_file)."""
    from envdsl.generated.loader import environment_class, load_module

    assert isinstance(result.checked, CheckedSpec) and "module" in result.artifacts
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    spec = result.checked.spec
    return measure(result.checked, environment_class(module), [spec.path, *spec.task_texts])


def coverage_of_sources(spec: SourceFile, task_files: Sequence[SourceFile]) -> CoverageReport:
    """The report of a spec and task files taken as verified (their tasks are not run again:
    the generator measures after each round). Raises ValueError if they have errors."""
    from envdsl.codegen.emit import generate, output_name
    from envdsl.generated.modules import environment_class, load_module
    from envdsl.pipeline import check_source

    result = check_source(spec, verify=False, task_files=task_files)
    if not result.ok or not isinstance(result.checked, CheckedSpec):
        raise ValueError("the spec or its task files have errors")
    module = load_module(
        generate(result.checked, formatted=False),
        f"{output_name(result.checked)}_coverage",
        register=False,
    )
    files = [spec.path, *(source.path for source in task_files)]
    return measure(result.checked, environment_class(module), files)


def measure(checked: CheckedSpec, env_class: type[Environment], files: list[str]) -> CoverageReport:
    public = [c for c in checked.tools if not c.internal]
    tasks = checked.env.of_type(ast.TaskDecl)
    report = CoverageReport(
        env=checked.env.name.text,
        files=files,
        tasks=[task.name.text for task in tasks],
        tools={c.name: [] for c in public},
        kinds={c.name: c.kind for c in public},
        lengths=Counter(),
    )
    tables = {n for n, info in checked.state.items() if isinstance(info.type, t.TableType)}
    report.tables = {name: {"read": 0, "written": 0} for name in sorted(tables)}
    for _, text in env_class.ENV_INVARIANTS.items():
        report.rules.setdefault(f"invariant: {text}", RuleUse())
    for rows in env_class.ROW_INVARIANTS.values():
        for text, _ in rows:
            report.rules.setdefault(f"invariant: {text}", RuleUse())
    sites = [_site_name(site) for site in env_class.SITES]
    for name in sites:
        report.rules.setdefault(name, RuleUse(counted=True))
    for task in tasks:
        steps = task.solution or ()
        called = [_tool(step) for step in steps]
        report.lengths[len(called)] += 1
        for tool in dict.fromkeys(called):
            if tool in report.tools:
                report.tools[tool].append(task.name.text)
        kinds = [env_class.TOOLS[tool].kind for tool in called if tool in env_class.TOOLS]
        report.query_calls += kinds.count("query")
        report.action_calls += kinds.count("action")
        report.questions += bool(called) and "action" not in kinds
        _static_effects(report, checked, set(called), tables)
        if steps:
            _replay(report, env_class, task.name.text, sites)
    return report


def _site_name(site: tuple[str, int, str, str]) -> str:
    owner, line, kind, text = site
    return f"{owner}: {kind} {text} (line {line})"


def _tool(step: ast.SolutionStep) -> str:
    assert isinstance(step.call.func, ast.NameRef)
    return step.call.func.name


def _static_effects(
    report: CoverageReport, checked: CheckedSpec, called: set[str], tables: set[str]
) -> None:
    """Tables and fields the called tools may read and write (closed over calls)."""
    reads: set[str] = set()
    writes: set[str] = set()
    for tool in called:
        effects = checked.effects.get(tool, Effects())
        reads |= effects.reads
        writes |= effects.writes
    for kind, places in (("read", reads), ("written", writes)):
        for table in sorted({p.split(".", 1)[0] for p in places} & tables):
            report.tables[table][kind] += 1
    scalars = {n for n in checked.state if n not in tables}
    for place in sorted(
        p for p in reads if p.split(".", 1)[0] in tables and "." in p or p in scalars
    ):
        report.fields_read[place] = report.fields_read.get(place, 0) + 1


def _replay(
    report: CoverageReport, env_class: type[Environment], task: str, sites: list[str]
) -> None:
    """Run the solution (counting the rules it passes and the fields it changes), then the
    solution less each action (collecting the rules that fail)."""
    initial = env_class()
    initial.reset(task=task)
    env = env_class()
    env.coverage = [0] * len(sites)
    env.solve(task)
    coverage, env.coverage = env.coverage, None
    for index, passes in enumerate(coverage):
        if passes and task not in report.rules[sites[index]].held:
            report.rules[sites[index]].held.append(task)
    before, after = initial.state_json(), env.state_json()
    changed = [f"{table}.{name}" for table, name, _ in changed_fields(initial, env)]
    changed += [name for name in env_class.SCALARS if before.get(name) != after.get(name)]
    for place in changed:
        report.fields_changed[place] = report.fields_changed.get(place, 0) + 1
    calls = [(entry.name, entry.arguments) for entry in env.trace]
    for left_out, (name, _) in enumerate(calls):
        if env_class.TOOLS[name].kind != "action":
            continue
        partial = env_class()
        partial.reset(task=task)
        for index, (tool, arguments) in enumerate(calls):
            if index == left_out or partial.call(tool, arguments)["success"]:
                continue
            failure = partial.last_failure
            rule = None
            if failure is not None and failure.site is not None:
                rule = sites[failure.site]
            elif failure is not None and failure.rule is not None:
                rule = failure.rule
            if rule is not None:
                use = report.rules.setdefault(rule, RuleUse())
                if task not in use.failed:
                    use.failed.append(task)


def gaps(report: CoverageReport, limit: int = 12) -> list[str]:
    """What the task set does not cover yet, one line each, for the next round's prompt."""
    found: list[str] = []
    if report.unused_tools:
        found.append(f"tools no solution calls yet: {_few(report.unused_tools, limit)}")
    longest = max(report.lengths, default=0)
    if longest < LONG_WORKFLOW:
        found.append(f"no workflow of {LONG_WORKFLOW} or more steps yet (longest: {longest})")
    if not report.questions:
        found.append("no read-only question task (queries, then an `answer` check) yet")
    unprovoked = [name for name, use in report.rules.items() if not use.failed]
    if unprovoked:
        found.append(
            "rules no task's solution needs to get past yet (a failure-and-recovery task "
            f"would): {_few(unprovoked, limit)}"
        )
    unwritten = [name for name, counts in report.tables.items() if not counts["written"]]
    if unwritten:
        found.append(f"tables no solution writes yet: {_few(unwritten, limit)}")
    return found


def _few(names: list[str], limit: int) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def render_text(report: CoverageReport) -> str:
    from envdsl.util.terminal import printable  # rule texts come from the spec

    lines = [
        f"coverage of {len(report.tasks)} tasks of {report.env} ({', '.join(report.files)})",
        f"tools: {len(report.tools) - len(report.unused_tools)}/{len(report.tools)} public "
        "tools used by some solution",
    ]
    width = max((len(name) for name in report.tools), default=0)
    for name, users in report.tools.items():
        count = f"{len(users)} task{'s' if len(users) != 1 else ''}" if users else "never"
        lines.append(f"  {name:<{width}}  {report.kinds[name]:<6}  {count}")
    lengths = ", ".join(
        f"{steps} step{'s' if steps != 1 else ''}: {count}"
        for steps, count in sorted(report.lengths.items())
    )
    lines.append(f"solution lengths: {lengths or 'no tasks'}")
    lines.append(
        f"calls: {report.query_calls} queries, {report.action_calls} actions; "
        f"{report.questions} question task{'s' if report.questions != 1 else ''} (only queries)"
    )
    lines.append("tables (tasks whose tools read / write them):")
    for name, counts in report.tables.items():
        lines.append(f"  {name}: read {counts['read']}, written {counts['written']}")
    changed = sorted(report.fields_changed)
    lines.append(f"fields some solution changes: {', '.join(changed) or 'none'}")
    held = sum(1 for use in report.rules.values() if use.held)
    failed = sum(1 for use in report.rules.values() if use.failed)
    lines.append(
        f"rules: {len(report.rules)}; passed by some solution {held}; failure provoked by "
        f"some solution less a step {failed}"
    )
    for name, rule in report.rules.items():
        held_by = str(len(rule.held)) if rule.counted else "-"
        marks = f"held {held_by}, failed {len(rule.failed)}"
        lines.append(f"  {printable(name, keep_tabs=False)}: {marks}")
    for gap in gaps(report):
        lines.append(f"gap: {printable(gap, keep_tabs=False)}")
    return "\n".join(lines)
