"""Why a check is false: the values of its compared sub-expressions, as pytest shows them.

"points_spent == 5000, where points_spent is 3000" tells an author at once whether the check or
the solution is wrong. The sub-expressions are translated with the same translator codegen uses
and evaluated on the environment the check ran on, in the generated module's namespace.
"""

from __future__ import annotations

import datetime
import enum
import json
import types
from typing import Any

from envdsl.codegen.names import Names
from envdsl.codegen.statements import BodyTranslator
from envdsl.codegen.translate import Context
from envdsl.runtime import Environment, Fail
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast

_LITERALS = (ast.IntLit, ast.FloatLit, ast.StrLit, ast.BoolLit, ast.NoneLit)


class CheckExplainer:
    def __init__(self, checked: CheckedSpec, module: types.ModuleType) -> None:
        self.checked = checked
        self.module = module
        self._translator: BodyTranslator | None = None

    @property
    def translator(self) -> BodyTranslator:
        """Made on the first check explained (most specs have none to explain): in the
        reference forms (a record's class, not its factory), what every module has,
        verification's included (generate's calls=False); checks write nothing."""
        if self._translator is None:
            self._translator = BodyTranslator(self.checked, Names(self.checked), written_out=False)
        return self._translator

    def explain(self, cond: ast.Expr, env: Environment, answer: str) -> str | None:
        """`<comparison>, where <operand> is <value>, ...` for the part of `cond` that is
        false, or None when there is nothing to show beyond the check itself."""
        node = self._false_part(cond, env, answer)
        if not isinstance(node, ast.Compare):
            return None
        shown = []
        for operand in node.operands:
            if isinstance(operand, _LITERALS):
                continue
            ok, value = self._value(operand, env, answer)
            source = self._source(operand)
            shown.append(f"{source} is {_display(value)}" if ok else f"{source} fails: {value}")
        if not shown:
            return None
        return f"{self._source(node)}, where {', '.join(shown)}"

    def _false_part(self, cond: ast.Expr, env: Environment, answer: str) -> ast.Expr:
        """Of `a and b`, the first false conjunct (recursively): the part worth showing."""
        if isinstance(cond, ast.BoolOp) and cond.op == "and":
            for part in (cond.left, cond.right):
                ok, value = self._value(part, env, answer)
                if not ok or not value:
                    return self._false_part(part, env, answer)
        return cond

    def _value(self, node: ast.Expr, env: Environment, answer: str) -> tuple[bool, Any]:
        """(True, value), or (False, why it could not be computed)."""
        translator = self.translator
        translator.ctx = Context("check")
        translator.pending = []
        try:
            code = translator.expr(node, translator.scope())
        except Exception as error:  # noqa: BLE001 - showing values is best effort
            return False, f"cannot be shown ({type(error).__name__})"
        if translator.pending:
            return False, "cannot be shown"
        namespace = dict(vars(self.module))
        # one namespace: generator expressions in the code must see `self` and `answer`
        namespace.update({"self": env, "answer": answer})
        env._steps = 0
        try:
            return True, eval(code, namespace)  # noqa: S307 - generated from the checked spec
        except Fail as failure:
            return False, failure.message
        except Exception as error:  # noqa: BLE001 - a check that crashes is reported as such
            return False, f"{type(error).__name__}: {error}"

    def _source(self, node: ast.Expr) -> str:
        span = node.span
        text = self.checked.spec.text_of(span)[span.start : span.end]
        return " ".join(text.split()) or "the check"


def _display(value: Any) -> str:
    """A value as the spec would write it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, datetime.datetime):
        return f'datetime("{value.isoformat().replace("+00:00", "Z")}")'
    if isinstance(value, datetime.date):
        return f'date("{value.isoformat()}")'
    if isinstance(value, (list, tuple)) and len(value) > 5:
        return f"[{', '.join(_display(v) for v in value[:5])}, ... ({len(value)} items)]"
    if isinstance(value, (list, tuple)):
        return f"[{', '.join(_display(v) for v in value)}]"
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."
