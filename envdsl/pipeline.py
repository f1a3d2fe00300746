"""Runs the compiler stages in order and returns everything they produced.

Each stage is a pure function that reads the previous stage's output and adds diagnostics to
one sink; a stage runs as long as its input exists, so one run reports as much as it can.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, Union

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast
from envdsl.util import construct
from envdsl.util.source import SourceFile, SourceMap, Span


@dataclass(slots=True)
class CompileResult:
    path: str
    sources: SourceMap
    sink: DiagnosticSink
    spec: ast.SpecFile | None = None
    stage_reached: str = "start"
    checked: object | None = None  # the semantic model (envdsl.semantics.model.CheckedSpec)
    artifacts: dict[str, str] = field(default_factory=dict)
    task_reports: list[Any] = field(default_factory=list)  # envdsl.tasks.verify.TaskReport
    # tasks left out of the module for errors of their own (name -> the first error, one
    # line); set by compile_source when all of a spec's errors lie inside tasks
    invalid_tasks: dict[str, str] = field(default_factory=dict)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.sink.sorted()

    @property
    def ok(self) -> bool:
        return not self.sink.has_errors


def check_source(
    source: SourceFile,
    *,
    verify: bool = True,
    task_files: Sequence[SourceFile] = (),
    verify_spec_tasks: bool = True,
) -> CompileResult:
    """Parse, build, resolve, type-check and analyse one spec held in memory; with verify,
    also run its tasks (init, solution, checks) on the generated environment.

    `task_files` add their tasks to the spec's (envdsl.tasks.task_files). `source` may itself be
    a task file: then its env is read from the file it names. `verify_spec_tasks=False` runs
    only the task files' tasks (a generator checking candidates against a verified spec)."""
    sources = SourceMap()
    sources.add(source)
    for task_file in task_files:
        sources.add(task_file)
    result = CompileResult(source.path, sources, DiagnosticSink())
    construct.clear()
    try:
        _run_front_end(result, [source, *task_files], verify, verify_spec_tasks)
    except Exception as error:  # a bug in envdsl must still come out as a diagnostic
        _report_internal_error(result, error)
    return result


def _report_internal_error(result: CompileResult, error: Exception) -> None:
    result.sink.report(
        codes.INTERNAL_ERROR,
        f"internal compiler error in stage '{result.stage_reached}': "
        f"{type(error).__name__}: {error}",
        _where(result),
        notes=["".join(traceback.format_exception(error)).rstrip()],
        help="please report this with the spec that triggers it",
    )


def _where(result: CompileResult) -> Span:
    """The construct being processed when the compiler failed (envdsl.util.construct), if it lies in
    the spec; else the start of the file."""
    span = construct.current()
    if span is not None and span.file == result.path:
        return span
    return Span(result.path, 0, 0)


PathArg = Union[str, "os.PathLike[str]"]


def read_sources(path: PathArg, task_files: Sequence[PathArg] = ()) -> list[SourceFile]:
    """The spec (or task file) and the task files, read from disk (UTF-8).
    Raises OSError/UnicodeDecodeError on I/O."""
    return [
        SourceFile(str(name), Path(name).read_text(encoding="utf-8"))
        for name in (path, *task_files)
    ]


def check_file(
    path: PathArg, *, verify: bool = True, task_files: Sequence[PathArg] = ()
) -> CompileResult:
    """Read a spec (and task files) from disk and check it. Raises OSError/UnicodeDecodeError
    on I/O."""
    spec, *tasks = read_sources(path, task_files)
    return check_source(spec, verify=verify, task_files=tasks)


def compile_source(
    source: SourceFile, *, formatted: bool = True, task_files: Sequence[SourceFile] = ()
) -> CompileResult:
    """Check a spec and, when it has no errors, generate its Python module.

    On success `artifacts` holds `name` (the module's file stem) and `module` (its source).
    `formatted=False` skips black: for code that is only executed in memory (`envdsl.load`,
    `run`, `explore`), where formatting was most of the cost and changes nothing it does.
    """
    result = check_source(source, task_files=task_files)
    checked = result.checked
    if not result.ok:
        try:
            checked = _without_invalid_tasks(result)
        except Exception:  # the spec's own errors stand; no module
            checked = None
    if checked is None:
        return result
    try:
        from envdsl.codegen.emit import generate, output_name
        from envdsl.semantics.model import CheckedSpec

        assert isinstance(checked, CheckedSpec)
        result.stage_reached = "codegen"
        result.artifacts["name"] = output_name(checked)
        result.artifacts["module"] = generate(checked, formatted=formatted)
    except Exception as error:  # a code generator bug is reported, never raised
        result.artifacts.clear()
        _report_internal_error(result, error)
    return result


_EXCLUSION_ROUNDS = 3  # leaving a task out may show errors in another (rare): try again


def _without_invalid_tasks(result: CompileResult) -> CheckedSpec | None:
    """The checked spec less its invalid tasks, verified again, when every error of `result`
    lies inside some task (then `result.invalid_tasks` names them); else None. The result's
    own diagnostics stay as they are: they are what is reported."""
    from envdsl.tasks import task_validity

    spec = result.spec
    if spec is None or spec.env is None or result.checked is None:
        return None
    dropped, outside = task_validity.split_errors(spec, result.diagnostics)
    tasks = task_validity.tasks_of(spec)
    for _ in range(_EXCLUSION_ROUNDS):
        if outside or not dropped:
            return None
        trial = CompileResult(result.path, result.sources, DiagnosticSink())
        trial.spec = task_validity.without_tasks(spec, set(dropped))
        construct.clear()
        _analyze_and_verify(trial, trial.spec, verify=True, spec_tasks=True)
        if trial.checked is not None and not trial.sink.has_errors:
            result.invalid_tasks = {
                tasks[i].name.text: task_validity.reason(errors)
                for i, errors in sorted(dropped.items())
            }
            assert isinstance(trial.checked, CheckedSpec)
            return trial.checked
        kept = [i for i in range(len(tasks)) if i not in dropped]
        more, outside = task_validity.split_errors(trial.spec, trial.diagnostics)
        if not more:
            return None
        dropped.update({kept[j]: errors for j, errors in more.items()})
    return None


def compile_file(
    path: PathArg, *, formatted: bool = True, task_files: Sequence[PathArg] = ()
) -> CompileResult:
    spec, *tasks = read_sources(path, task_files)
    return compile_source(spec, formatted=formatted, task_files=tasks)


def _build(source: SourceFile, result: CompileResult) -> ast.SpecFile | None:
    from envdsl.syntax.build import build_ast
    from envdsl.syntax.parse import parse_file

    tree = parse_file(source, result.sink)
    return None if tree is None else build_ast(tree, source, result.sink)


def _run_front_end(
    result: CompileResult, files: list[SourceFile], verify: bool, spec_tasks: bool = True
) -> None:
    from envdsl.tasks import task_files

    result.stage_reached = "parse"
    built = [_build(source, result) for source in files]
    spec, tasks = built[0], built[1:]
    result.stage_reached = "build"
    if spec is not None and spec.tasks_for is not None:  # a task file: its env is the spec
        tasks.insert(0, spec)
        spec = task_files.load_env(spec, result.sources, result.sink)
    for source, task_file in zip(files[1:], built[1:]):
        if task_file is not None and task_file.tasks_for is None:
            result.sink.report(
                codes.ONE_TASKS_BLOCK,
                "this file was given as a task file but holds no `tasks for` block",
                Span(source.path, 0, 0),
                help='a task file holds `tasks for "env.env" { task ... }`',
            )
    if spec is None or spec.env is None:
        result.spec = spec or built[0]
        return
    given = [task_file for task_file in tasks if task_file is not None and task_file.tasks_for]
    result.spec = task_files.merge_tasks(spec, given, result.sink) if given else spec
    _analyze_and_verify(result, result.spec, verify, spec_tasks)
    result.stage_reached = "done"


def _analyze_and_verify(
    result: CompileResult, spec: ast.SpecFile, verify: bool, spec_tasks: bool
) -> None:
    from envdsl.semantics.analyze import analyze

    result.stage_reached = "semantics"
    result.checked = analyze(spec, result.sources, result.sink)
    if result.checked is not None and not result.sink.has_errors:
        from envdsl.tasks.parameter_defaults import check_default_values

        check_default_values(result.checked, result.sink)
    if result.checked is not None and not result.sink.has_errors and verify:
        _verify(result, result.checked, spec_tasks)


def _verify(result: CompileResult, checked: CheckedSpec, spec_tasks: bool) -> None:
    """Generate the environment (unformatted: it is only run) and verify the tasks on it."""
    tasks = checked.env.of_type(ast.TaskDecl)
    if not tasks:
        return
    from envdsl.codegen.emit import generate, output_name
    from envdsl.generated.modules import load_module
    from envdsl.tasks.verify import verify_tasks

    result.stage_reached = "codegen"
    # verification loads no JSON state but an `init from` file's: without one, the module
    # needs no bulk loaders; and it calls each tool a few times: the reference path costs
    # less than compiling the whole calls (see generate)
    loads_state = any(isinstance(task.init, ast.InitFrom) for task in tasks)
    source = generate(checked, formatted=False, loaders=loads_state, calls=False)
    module = load_module(source, f"{output_name(checked)}_verify", register=False)
    result.stage_reached = "tasks"
    result.task_reports = verify_tasks(checked, module, result.sink, spec_tasks=spec_tasks)
