"""Defaults (of parameters, fields and state fields) and constants are computed without an
environment.

A default runs when the tool schemas are built, a record is made or a state is reset, and a
constant when the module is imported: outside any tool call, with no step budget and no
environment to call a `fn` on.  So neither may iterate (a comprehension, `range`): each is
a constant expression over literals, constants, enum members and builtins.  (Reading the state
is E1001, calling a `fn` or tool E3010.)
"""

from __future__ import annotations

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics.builtin_table import FUNCTIONS
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast


def check_defaults(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    for const in checked.consts.values():
        _check(const.decl.value, checked, sink, f"const '{const.name}'", "value")
    for record in checked.records.values():
        for field in record.fields.values():
            _check(field.decl.default, checked, sink, f"field '{field.name}'")
    for name, info in checked.state.items():
        _check(info.decl.default, checked, sink, f"state field '{name}'")
    for callable_info in checked.callables.values():
        for param in callable_info.params:
            _check(param.decl.default, checked, sink, f"parameter '{param.name}'")


def _check(
    default: ast.Expr | None,
    checked: CheckedSpec,
    sink: DiagnosticSink,
    what: str,
    kind: str = "default",
) -> None:
    if default is None:
        return
    for node in ast.walk(default):
        problem = None
        if isinstance(node, ast.Comprehension):
            problem = "a comprehension"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.NameRef):
            name = node.func.name  # a call of a fn or tool is E3010 already
            builtin = FUNCTIONS.get(name)
            iterates = builtin is not None and builtin.iterates
            if iterates and name not in checked.records | checked.callables.keys():
                problem = f"`{name}(...)`"
        if problem is not None:
            span = node.span  # type: ignore[attr-defined]
            sink.report(
                codes.DEFAULT_NOT_CONSTANT,
                f"the {kind} of {what} uses {problem}: it must be a constant expression",
                span,
                help="compute the value in the tool instead, or make it a `const`",
            )
            return  # one diagnostic per default
