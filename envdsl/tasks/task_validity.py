"""Which tasks a spec's errors make invalid, and the spec without them.

One bad task must not block the others (issue 23, point 8): an error inside a task (its init,
solution or checks, a type error as much as a failed verification) makes that task invalid,
not the environment. When every error of a spec lies inside some task, the compiler builds the
module from the spec less those tasks (pipeline.compile_source) and reports them: a command or
adapter choosing a valid task grades it; choosing an invalid one is an error naming why.
"""

from __future__ import annotations

import dataclasses

from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.syntax import ast


def tasks_of(spec: ast.SpecFile) -> list[ast.TaskDecl]:
    return spec.env.of_type(ast.TaskDecl) if spec.env is not None else []


def split_errors(
    spec: ast.SpecFile, diagnostics: list[Diagnostic]
) -> tuple[dict[int, list[Diagnostic]], list[Diagnostic]]:
    """The errors inside each task (by the task's index in the env's tasks), and the others:
    errors of the environment itself, which no module can be built without."""
    tasks = tasks_of(spec)
    inside: dict[int, list[Diagnostic]] = {}
    outside: list[Diagnostic] = []
    for diagnostic in diagnostics:
        if not diagnostic.is_error:
            continue
        index = next((i for i, task in enumerate(tasks) if _within(diagnostic, task)), None)
        if index is None:
            outside.append(diagnostic)
        else:
            inside.setdefault(index, []).append(diagnostic)
    return inside, outside


def _within(diagnostic: Diagnostic, task: ast.TaskDecl) -> bool:
    span, area = diagnostic.span, task.span
    return span.file == area.file and area.start <= span.start and span.end <= area.end


def without_tasks(spec: ast.SpecFile, dropped: set[int]) -> ast.SpecFile:
    """The spec less the tasks at those indexes (among the env's tasks)."""
    assert spec.env is not None
    tasks = tasks_of(spec)
    gone = {id(tasks[i]) for i in dropped}
    members = tuple(m for m in spec.env.members if id(m) not in gone)
    return dataclasses.replace(spec, env=dataclasses.replace(spec.env, members=members))


def reason(errors: list[Diagnostic]) -> str:
    """One line saying why a task is invalid: its first error (and how many more)."""
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"error[{first.code.code}]: {first.message}{more}"
