"""Parameter defaults computed once at check time: a default that fails (`1 // 0`, `[1][5]`,
`int("x")`) would otherwise surface only when the tool schemas are built (a traceback from
`envdsl compile`) or when an agent leaves the argument out (an internal error)."""

from __future__ import annotations

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast

_LITERALS = (ast.IntLit, ast.FloatLit, ast.StrLit, ast.BoolLit, ast.NoneLit)


def _cannot_fail(default: ast.Expr, checked: CheckedSpec) -> bool:
    """A literal, or a member of an enum (`SortKey.name`, as the type checker resolved it):
    nothing to run. Any other default is computed, which needs the generated module."""
    if isinstance(default, _LITERALS):
        return True
    if not isinstance(default, ast.Attribute):
        return False
    owner = checked.expr_types.get(id(default.obj))
    if not isinstance(owner, t.TypeRefType) or not isinstance(owner.target, t.EnumType):
        return False
    enum = checked.enums.get(owner.target.name)
    return enum is not None and default.name.text in enum.members


def check_default_values(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    computed = [
        (info.name, param)
        for info in checked.callables.values()
        if info.is_tool and not info.internal
        for param in info.params
        if param.decl.default is not None and not _cannot_fail(param.decl.default, checked)
    ]
    if not computed:
        return  # nothing to compute: no code generation for the common case
    from envdsl.codegen.emit import generate, output_name
    from envdsl.generated.modules import environment_class, load_module

    module = load_module(
        generate(checked, formatted=False), f"{output_name(checked)}_defaults", register=False
    )
    tools = environment_class(module).TOOLS
    for tool, param in computed:
        spec = next(p for p in tools[tool].params if p.name == param.name)
        assert spec.default is not None and param.decl.default is not None
        try:
            spec.default()
        except Exception as error:  # Fail, or a runtime error the checker cannot rule out
            sink.report(
                codes.DEFAULT_FAILS,
                f"the default of parameter '{param.name}' of '{tool}' fails: {error}",
                param.decl.default.span,
                help="a default is computed whenever the argument is left out: make it valid",
            )
