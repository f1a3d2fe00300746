"""Numbers that cannot be represented are found at check time, not at import or in a call.

Integers are signed 64-bit at run time (runtime/limits.py), but nothing held a literal to
that: a 400-digit integer as a float default made the generated class raise OverflowError
on import, as an `init` value it made a state that could not be loaded again, as a solution
argument an internal error (E9001).  So an integer literal out of the 64-bit range is an
invalid literal (E2014) wherever it is written.

Constants and defaults are computed outside any tool call (semantics/defaults.py keeps them
to constant expressions), on import of the generated module: `(2 ** 10000) ** 10000` there
made the import fail.  Their arithmetic is evaluated here with the runtime's own operators,
which refuse an out-of-range result before computing it, so the evaluation is bounded;
whatever is not plain arithmetic over literals and constants (calls, enum members, strings
built by methods) is left to the run, as before.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics.hidden_characters import spec_sources
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast
from envdsl.syntax.visitor import EXPRESSIONS, Visitor
from envdsl.util.source import SourceMap

# runtime/limits.py's MAX_INT (a test keeps them equal): the static check does not import
# the runtime, which only the few specs with arithmetic in a constant or default need here
MAX_INT = 2**63 - 1


# 19 digits or more (underscores allowed): the only literals that can be out of range
_LONG_NUMBER = re.compile(r"[0-9][0-9_]{18}")


def check_int_literals(checked: CheckedSpec, sources: SourceMap, sink: DiagnosticSink) -> None:
    """Every integer literal of the env (tools, defaults, tasks) within 64 bits."""
    if not any(_LONG_NUMBER.search(s.text) for s in spec_sources(checked, sources)):
        return  # the common case: a regex over the text instead of a walk over the tree
    negated = set()  # -9223372036854775808 is the literal 2**63 under a minus: in range
    literals: list[ast.IntLit] = []
    for node in ast.walk(checked.env):
        if isinstance(node, ast.Unary) and node.op == "-" and isinstance(node.operand, ast.IntLit):
            negated.add(id(node.operand))
        elif isinstance(node, ast.IntLit) and node.value > MAX_INT:
            literals.append(node)
    for literal in literals:
        if literal.value == MAX_INT + 1 and id(literal) in negated:
            continue
        digits = len(str(literal.value))
        sink.report(
            codes.INVALID_LITERAL,
            f"an integer of {digits} digits is outside the 64-bit range of `int` "
            f"(at most {MAX_INT:,})",
            literal.span,
            help="integers are signed 64-bit; for a large float write it with an exponent (1e30)",
        )


class _Unknown(Exception):
    """The expression is not plain arithmetic: its value is left to the run."""


def _operators() -> dict[str, Callable[[Any, Any], Any]]:
    from envdsl.runtime import helpers as h

    return {"*": h.mul, "/": h.div, "//": h.floordiv, "%": h.mod, "**": h.power}


def _number(value: Any) -> Any:
    from envdsl.runtime.limits import check_float, check_int

    if type(value) is int:
        return check_int(value)
    if type(value) is float:
        return check_float(value)
    raise _Unknown


def _evaluate(node: ast.Expr, constants: dict[str, Any]) -> Any:
    return _ArithmeticValue().visit(node, constants)


_NOT_ARITHMETIC = "not plain arithmetic on numbers and constants: its value is left to the run"


class _ArithmeticValue(Visitor):
    """The value of a constant's or a default's arithmetic, as the run would compute it:
    `visit_<Expr>(node, constants)`; `_Unknown` for anything else."""

    families = (EXPRESSIONS,)
    not_applicable = {
        kind: _NOT_ARITHMETIC
        for kind in EXPRESSIONS
        if kind not in (ast.IntLit, ast.FloatLit, ast.NameRef, ast.Unary, ast.Binary)
    }

    def not_applicable_node(self, node: object, *args: object) -> Any:
        raise _Unknown

    def visit_IntLit(self, node: ast.IntLit, constants: dict[str, Any]) -> Any:
        return node.value  # out of range: reported by check_int_literals

    def visit_FloatLit(self, node: ast.FloatLit, constants: dict[str, Any]) -> Any:
        return _number(node.value)

    def visit_NameRef(self, node: ast.NameRef, constants: dict[str, Any]) -> Any:
        if node.name not in constants or node.qualified:
            raise _Unknown
        return constants[node.name]

    def visit_Unary(self, node: ast.Unary, constants: dict[str, Any]) -> Any:
        if node.op == "-" and isinstance(node.operand, ast.IntLit):
            return _number(-node.operand.value)  # the one literal in range only negated: -2**63
        operand = _number(self.visit(node.operand, constants))
        return _number(-operand if node.op == "-" else operand)

    def visit_Binary(self, node: ast.Binary, constants: dict[str, Any]) -> Any:
        left = _number(self.visit(node.left, constants))
        right = _number(self.visit(node.right, constants))
        operator = _operators().get(node.op)
        if operator is not None:
            return _number(operator(left, right))
        return _number(left + right if node.op == "+" else left - right)


def check_constant_values(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    """Constants (in order: one may use those before it) and field and state defaults."""
    constants: dict[str, Any] = {}
    computed: list[tuple[str, ast.Expr | None]] = []
    for const in checked.consts.values():
        computed.append((f"constant '{const.name}'", const.decl.value))
    for record in checked.records.values():
        for field in record.fields.values():
            computed.append(
                (f"the default of field '{record.name}.{field.name}'", field.decl.default)
            )
    for name, info in checked.state.items():
        computed.append((f"the default of state field '{name}'", info.decl.default))
    const_names = list(checked.consts)
    for index, (what, value) in enumerate(computed):
        if not isinstance(value, (ast.Unary, ast.Binary, ast.NameRef)):
            if index < len(const_names) and isinstance(value, (ast.IntLit, ast.FloatLit)):
                constants[const_names[index]] = value.value
            continue  # nothing computed: a literal, or left to the run
        from envdsl.runtime.errors import Fail

        try:
            result = _evaluate(value, constants)
        except _Unknown:
            continue
        except (Fail, OverflowError) as error:
            sink.report(
                codes.VALUE_FAILS,
                f"{what} fails when it is computed: {error}",
                value.span,
                help="constants and defaults are computed on import: keep them in range",
            )
            continue
        if index < len(const_names):
            constants[const_names[index]] = result
