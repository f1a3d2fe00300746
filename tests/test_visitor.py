"""One visitor over the AST (issue 24, point 3a): every pass dispatches through
envdsl.syntax.visitor, and each handles every node kind of the families it walks, or says why
not: a node kind added to the AST without a handler fails here, not in a user's hands."""

from __future__ import annotations

import importlib
import re
from typing import ClassVar, Mapping

import pytest

from envdsl.syntax import ast
from envdsl.syntax.visitor import (
    DECLARATIONS,
    EXPRESSIONS,
    STATEMENTS,
    Family,
    TOP_LEVEL,
    TYPES,
    NoHandler,
    Visitor,
    missing_handlers,
    node_classes,
    walked_kinds,
)
from envdsl.util.frozen_node import node
from envdsl.util.source import Span

# the modules that hold AST passes; each pass class found in them is held to its families
PASS_MODULES = (
    "envdsl.semantics.check_expr",
    "envdsl.semantics.check",
    "envdsl.semantics.aliases",
    "envdsl.codegen.translate",
    "envdsl.codegen.statements",
    "envdsl.fmt.expressions",
    "envdsl.fmt.layout",
    "envdsl.semantics.resolve",
    "envdsl.lsp.analysis",
    "envdsl.semantics.constant_values",
)
# the passes that must exist (a pass turned back into an isinstance chain fails here)
EXPECTED = {
    "ExprChecker": {EXPRESSIONS},
    "BodyChecker": {EXPRESSIONS, STATEMENTS, DECLARATIONS},
    "AliasAnalysis": {EXPRESSIONS},
    "Translator": {EXPRESSIONS},
    "BodyTranslator": {EXPRESSIONS, STATEMENTS},
    "ExpressionPrinter": {EXPRESSIONS},
    "_StartsWithBrace": {EXPRESSIONS},
    "_TypeText": {TYPES, (ast.TableType,)},
    "Layout": {TOP_LEVEL, DECLARATIONS, STATEMENTS},
    "Resolver": {TYPES},
    "_Outline": {DECLARATIONS},
    "_ArithmeticValue": {EXPRESSIONS},
}

SPAN = Span("t.env", 0, 1)


def _passes() -> dict[str, type[Visitor]]:
    for module in PASS_MODULES:
        importlib.import_module(module)
    found: dict[str, type[Visitor]] = {}
    stack: list[type[Visitor]] = [Visitor]
    while stack:
        current = stack.pop()
        for sub in current.__subclasses__():
            if sub.__module__.startswith("envdsl."):
                found[sub.__name__] = sub
            stack.append(sub)
    return found


def test_the_families_come_from_the_ast_module() -> None:
    assert ast.Binary in EXPRESSIONS and ast.Comprehension in EXPRESSIONS
    assert ast.For in STATEMENTS and ast.ExprStmt in STATEMENTS
    assert ast.TaskDecl in DECLARATIONS and ast.OptionalType in TYPES
    assert set(TOP_LEVEL) == {ast.Import, ast.EnvDecl, ast.TasksFor}
    families = [EXPRESSIONS, STATEMENTS, DECLARATIONS, TYPES, TOP_LEVEL]
    every = [kind for family in families for kind in family]
    assert len(every) == len(set(every))  # no kind in two families
    assert set(every) <= set(node_classes())


def test_every_expected_pass_is_a_visitor_over_its_families() -> None:
    passes = _passes()
    for name, families in EXPECTED.items():
        assert name in passes, f"{name} no longer dispatches through the visitor"
        assert set(passes[name].families) == families, name


@pytest.mark.parametrize("name", sorted(_passes()))
def test_each_pass_handles_every_kind_it_walks(name: str) -> None:
    pass_class = _passes()[name]
    assert pass_class.families, f"{name} walks no family"
    assert missing_handlers(pass_class) == [], name


# the per-module prefixes the passes used before the visitor: a handler written the old way
# (on a branch made before it) would never be called
_OLD_PREFIXES = ("expr_", "stmt_", "x_", "_", "_decl_")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@pytest.mark.parametrize("name", sorted(_passes()))
def test_no_pass_keeps_a_handler_named_the_old_way(name: str) -> None:
    pass_class = _passes()[name]
    kinds = [kind.__name__ for kind in node_classes()]
    old = {prefix + kind for prefix in _OLD_PREFIXES for kind in kinds}
    old |= {"_decl_" + _snake(kind) for kind in kinds}
    stale = sorted(attribute for attribute in dir(pass_class) if attribute in old)
    assert stale == [], f"{name}: rename these to visit_<NodeClass>"


class _Pass(Visitor):
    families: ClassVar[tuple[Family, ...]] = (EXPRESSIONS,)
    not_applicable: ClassVar[Mapping[type, str]] = {
        kind: "not used by this test" for kind in EXPRESSIONS[1:]
    }

    def visit_IntLit(self, node: ast.IntLit, offset: int) -> int:
        return node.value + offset


def test_dispatch_is_by_class_with_the_extra_arguments() -> None:
    assert _Pass().visit(ast.IntLit(4, SPAN), 3) == 7


def test_a_kind_listed_as_not_applicable_raises_by_default_and_says_why() -> None:
    with pytest.raises(NoHandler, match="StrLit: not used by this test"):
        _Pass().visit(ast.StrLit("x", SPAN), 0)


def test_a_kind_with_no_handler_raises_no_handler() -> None:
    with pytest.raises(NoHandler, match="_Pass has no visit_Block"):
        _Pass().visit(ast.Block((), SPAN), 0)


def test_a_patched_handler_replaces_the_cached_one(monkeypatch: pytest.MonkeyPatch) -> None:
    class Sub(_Pass):
        pass

    node = ast.IntLit(1, SPAN)
    assert Sub().visit(node, 0) == 1  # cached in Sub's table
    monkeypatch.setattr(_Pass, "visit_IntLit", lambda self, n, offset: -1)
    assert Sub().visit(node, 0) == -1
    monkeypatch.undo()
    assert Sub().visit(node, 0) == 1


def test_a_new_node_kind_without_a_handler_is_reported() -> None:
    @node
    class Matches:  # as another helper might add to `ast.Expr`
        subject: ast.Expr
        span: Span

    class Grown(_Pass):
        families = (EXPRESSIONS + (Matches,),)

    assert missing_handlers(_Pass) == []
    assert missing_handlers(Grown) == ["no visit_Matches and no reason to skip it"]


def test_stray_and_doubly_covered_handlers_are_reported() -> None:
    class Stray(_Pass):
        not_applicable: ClassVar[Mapping[type, str]] = {
            **_Pass.not_applicable,
            ast.IntLit: "both",
            ast.Let: "a stmt",
        }

        def visit_Renamed(self, node: object) -> None:
            return None

    assert sorted(missing_handlers(Stray)) == [
        "IntLit has a handler and is listed as not applicable",
        "Let is listed as not applicable but not walked",
        "visit_Renamed handles no kind of the families walked",
    ]


def test_walked_kinds_are_each_kind_once() -> None:
    class Twice(_Pass):
        families = (EXPRESSIONS, EXPRESSIONS)

    assert walked_kinds(Twice) == EXPRESSIONS


def _brace_cases() -> list[tuple[ast.Expr, bool]]:
    braces: ast.Expr = ast.MapLit((), SPAN)
    word: ast.Expr = ast.NameRef("x", SPAN)
    one: ast.Expr = ast.IntLit(1, SPAN)
    method = ast.Attribute(braces, ast.Name("get", SPAN), SPAN)
    return [
        (ast.Compare((braces, one), ("==",), SPAN), True),
        (ast.Conditional(ast.SetLit((one,), SPAN), word, one, SPAN), True),
        (ast.Conditional(word, braces, braces, SPAN), False),  # the test and else come later
        (ast.BoolOp("or", ast.Call(method, (one,), (), SPAN), word, SPAN), True),
        (ast.Binary("+", word, braces, SPAN), False),
        (ast.Index(ast.Slice(braces, None, one, SPAN), one, SPAN), True),
        (ast.Comprehension("map", word, word, (), SPAN), True),
        (ast.Comprehension("list", braces, None, (), SPAN), False),
        (ast.Unary("-", braces, SPAN), False),
        (ast.Not(braces, SPAN), False),
        (ast.ListLit((braces,), SPAN), False),
    ]


@pytest.mark.parametrize("expr, expected", _brace_cases())
def test_starts_with_brace_follows_the_leftmost_operand(expr: ast.Expr, expected: bool) -> None:
    from envdsl.fmt.expressions import starts_with_brace

    assert starts_with_brace(expr) is expected
