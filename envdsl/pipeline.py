"""Runs the compiler stages in order and returns everything they produced.

Each stage is a pure function that reads the previous stage's output and adds diagnostics to
one sink; a stage runs as long as its input exists, so one run reports as much as it can.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.diagnostics.model import Diagnostic
from envdsl.semantics.model import CheckedSpec
from envdsl.source import SourceFile, SourceMap, Span
from envdsl.syntax import ast


@dataclass(slots=True)
class CompileResult:
    path: str
    sources: SourceMap
    sink: DiagnosticSink
    spec: ast.SpecFile | None = None
    stage_reached: str = "start"
    checked: object | None = None  # the semantic model (envdsl.semantics.model.CheckedSpec)
    artifacts: dict[str, str] = field(default_factory=dict)
    task_reports: list[Any] = field(default_factory=list)  # envdsl.verify.TaskReport

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return self.sink.sorted()

    @property
    def ok(self) -> bool:
        return not self.sink.has_errors


def check_source(source: SourceFile, *, verify: bool = True) -> CompileResult:
    """Parse, build, resolve, type-check and analyse one spec held in memory; with verify,
    also run its tasks (init, solution, checks) on the generated environment."""
    sources = SourceMap()
    sources.add(source)
    result = CompileResult(source.path, sources, DiagnosticSink())
    try:
        _run_front_end(result, source, verify)
    except Exception as error:  # a bug in envdsl must still come out as a diagnostic
        _report_internal_error(result, error)
    return result


def _report_internal_error(result: CompileResult, error: Exception) -> None:
    result.sink.report(
        codes.INTERNAL_ERROR,
        f"internal compiler error in stage '{result.stage_reached}': "
        f"{type(error).__name__}: {error}",
        Span(result.path, 0, 0),
        notes=["".join(traceback.format_exception(error)).rstrip()],
        help="please report this with the spec that triggers it",
    )


def check_file(path: str | os.PathLike[str], *, verify: bool = True) -> CompileResult:
    """Read a spec from disk (UTF-8) and check it. Raises OSError/UnicodeDecodeError on I/O."""
    text = Path(path).read_text(encoding="utf-8")
    return check_source(SourceFile(str(path), text), verify=verify)


def compile_source(source: SourceFile, *, formatted: bool = True) -> CompileResult:
    """Check a spec and, when it has no errors, generate its Python module.

    On success `artifacts` holds `name` (the module's file stem) and `module` (its source).
    `formatted=False` skips black: for code that is only executed in memory (`envdsl.load`,
    `run`, `explore`), where formatting was most of the cost and changes nothing it does.
    """
    result = check_source(source)
    if not result.ok or result.checked is None:
        return result
    try:
        from envdsl.codegen.emit import generate, output_name
        from envdsl.semantics.model import CheckedSpec

        assert isinstance(result.checked, CheckedSpec)
        result.stage_reached = "codegen"
        result.artifacts["name"] = output_name(result.checked)
        result.artifacts["module"] = generate(result.checked, formatted=formatted)
    except Exception as error:  # a code generator bug is reported, never raised
        result.artifacts.clear()
        _report_internal_error(result, error)
    return result


def compile_file(path: str | os.PathLike[str], *, formatted: bool = True) -> CompileResult:
    text = Path(path).read_text(encoding="utf-8")
    return compile_source(SourceFile(str(path), text), formatted=formatted)


def _run_front_end(result: CompileResult, source: SourceFile, verify: bool) -> None:
    from envdsl.syntax.build import build_ast
    from envdsl.syntax.parse import parse_file

    result.stage_reached = "parse"
    tree = parse_file(source, result.sink)
    if tree is None:
        return
    result.stage_reached = "build"
    result.spec = build_ast(tree, source, result.sink)
    if result.spec.env is None:
        return
    from envdsl.semantics.analyze import analyze

    result.stage_reached = "semantics"
    result.checked = analyze(result.spec, result.sources, result.sink)
    if result.checked is not None and not result.sink.has_errors and verify:
        _verify(result, result.checked)
    result.stage_reached = "done"


def _verify(result: CompileResult, checked: CheckedSpec) -> None:
    """Generate the environment (unformatted: it is only run) and verify the tasks on it."""
    if not checked.env.of_type(ast.TaskDecl):
        return
    from envdsl.codegen.emit import generate, output_name
    from envdsl.generated import load_module
    from envdsl.verify import verify_tasks

    result.stage_reached = "codegen"
    source = generate(checked, formatted=False)
    module = load_module(source, f"{output_name(checked)}_verify", register=False)
    result.stage_reached = "tasks"
    result.task_reports = verify_tasks(checked, module, result.sink)
