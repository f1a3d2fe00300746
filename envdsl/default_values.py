"""Parameter defaults computed once at check time: a default that fails (`1 // 0`, `[1][5]`,
`int("x")`) would otherwise surface only when the tool schemas are built (a traceback from
`envdsl compile`) or when an agent leaves the argument out (an internal error)."""

from __future__ import annotations

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast

_LITERALS = (ast.IntLit, ast.FloatLit, ast.StrLit, ast.BoolLit, ast.NoneLit)


def check_default_values(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    computed = [
        (info.name, param)
        for info in checked.callables.values()
        if info.is_tool and not info.internal
        for param in info.params
        if param.decl.default is not None and not isinstance(param.decl.default, _LITERALS)
    ]
    if not computed:
        return  # nothing to compute: no code generation for the common case
    from envdsl.codegen.emit import generate, output_name
    from envdsl.loader import environment_class, load_module

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
