"""Runs the semantic stages in order: resolve, type-check, tasks, effects, lints."""

from __future__ import annotations

from envdsl.diagnostics import DiagnosticSink
from envdsl.semantics.check import BodyChecker
from envdsl.semantics.check_wording import lint_check_wording
from envdsl.semantics.constant_values import check_constant_values, check_int_literals
from envdsl.semantics.defaults import check_defaults
from envdsl.semantics.effects import close_effects
from envdsl.semantics.hidden_characters import check_hidden_characters
from envdsl.semantics.lints import lint
from envdsl.semantics.model import CheckedSpec
from envdsl.semantics.resolve import Resolver
from envdsl.semantics.task_checks import TaskChecker
from envdsl.syntax import ast
from envdsl.util.source import SourceMap


def analyze(spec: ast.SpecFile, sources: SourceMap, sink: DiagnosticSink) -> CheckedSpec | None:
    if spec.env is None:
        return None
    checked = CheckedSpec(spec, spec.env)
    resolver = Resolver(checked, sources, sink)
    resolver.run()
    body = BodyChecker(
        checked,
        sink,
        resolver.assignable,
        lambda node: resolver.resolve_type(node, allow_entity=True),
    )
    body.check_all()
    TaskChecker(body).check_all()
    body.flush_alias_writes()  # writes through locals outside tool and fn bodies (checks)
    check_defaults(checked, sink)
    check_int_literals(checked, sources, sink)
    check_constant_values(checked, sink)
    close_effects(checked, sink)
    lint(checked, sink)
    lint_check_wording(checked, sources, sink)
    check_hidden_characters(checked, sources, sink)
    return checked
