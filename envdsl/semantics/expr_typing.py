"""What the builtins' type rules need from the expression checker.

semantics/builtins.py types calls of builtins and methods; semantics/check_expr.py types every
other expression and hands calls to the builtins.  The rules are written against this protocol,
not the checker class, so the two modules do not import each other.
"""

from __future__ import annotations

from typing import Iterable, Protocol

from envdsl.diagnostics import codes
from envdsl.semantics import types as t
from envdsl.semantics.model import CallableInfo, CheckedSpec
from envdsl.semantics.scope import Context, Scope
from envdsl.syntax import ast
from envdsl.util.source import Span


class ExprTyping(Protocol):
    checked: CheckedSpec
    assignable: t.Assignability
    ctx: Context
    allow_auto: bool  # while checking the default of a key field, where `auto(...)` is allowed

    def error(
        self,
        code: codes.Code,
        message: str,
        span: Span,
        help: str | None = None,
        fixes: Iterable[object] = (),
        notes: Iterable[str] = (),
    ) -> t.Type:
        """Report a diagnostic and return the error type (which absorbs follow-on errors)."""

    def expr(self, node: ast.Expr, scope: Scope) -> t.Type:
        """The type of `node`, checked and recorded."""

    def expect(self, node: ast.Expr, scope: Scope, expected: t.Type, what: str) -> t.Type:
        """Check node and that its type fits `expected`; `what` names the slot in messages."""

    def require_assignable(self, actual: t.Type, expected: t.Type, span: Span, what: str) -> bool:
        """Whether `actual` fits `expected`, reporting why not."""

    def lambda_key(self, node: ast.Expr, elem: t.Type, scope: Scope) -> t.Type:
        """Check `key=lambda x: ...` against the element type; returns the key's type."""

    def arguments(
        self,
        call: ast.Call,
        scope: Scope,
        params: list[tuple[str, t.Type, bool]],
        callee: str,
        *,
        allow_positional: bool = True,
        noun: str = "parameter",
    ) -> dict[str, ast.Expr]:
        """Match and check arguments against (name, type, required) parameters."""

    def call_declared(self, info: CallableInfo, node: ast.Call, scope: Scope) -> t.Type:
        """A call of a declared fn or internal tool."""

    def write_place(
        self,
        target: ast.Expr,
        span: Span,
        scope: Scope,
        *,
        mutation: str | None,
        values: tuple[ast.Expr, ...] = (),
    ) -> bool:
        """Check that `target` may be written here and record the write."""
