"""The newline post-lexer: which newlines end a statement and which `{` opens a map literal.

Most tests parse a small spec through the real LALR parser and look at the AST, so they assert
what an author sees; a few look at the token stream where the AST cannot tell the difference.
"""

from __future__ import annotations

import pytest

from envdsl.diagnostics import DiagnosticSink
from envdsl.syntax import ast
from envdsl.syntax.build import build_ast
from envdsl.syntax.parse import _parser, parse_file
from envdsl.util.source import SourceFile

PARAMS = "a: int, b: int, c: bool, d: bool, xs: list[int], s: str"


def parse_spec(text: str) -> ast.SpecFile:
    source = SourceFile("t.env", text)
    sink = DiagnosticSink()
    tree = parse_file(source, sink)
    assert tree is not None, [d.message for d in sink.diagnostics]
    spec = build_ast(tree, source, sink)
    assert sink.diagnostics == [], [d.message for d in sink.diagnostics]
    assert spec.env is not None
    return spec


def syntax_errors(text: str) -> list[str]:
    sink = DiagnosticSink()
    parse_file(SourceFile("t.env", text), sink)
    return [d.code.code for d in sink.diagnostics]


def body(stmts: str) -> tuple[ast.Stmt, ...]:
    """The statements of one action whose body is `stmts`."""
    spec = parse_spec(f"env E {{\n  action t({PARAMS}) -> int {{\n{stmts}\n  }}\n}}\n")
    assert spec.env is not None
    (tool,) = spec.env.of_type(ast.ToolDecl)
    return tool.body.stmts


def token_types(text: str) -> list[str]:
    return [token.type for token in _parser().lex(text)]


def value_of_single_let(stmts: str) -> ast.Expr:
    (stmt,) = body(stmts)
    assert isinstance(stmt, ast.Let)
    return stmt.value


# ---- a newline ends a statement --------------------------------------------------------------


def test_newline_ends_a_statement() -> None:
    stmts = body("let x = 1\nlet y = 2\nreturn x + y")
    assert [type(s) for s in stmts] == [ast.Let, ast.Let, ast.Return]
    assert [s.name.text for s in stmts[:2]] == ["x", "y"]


def test_blank_lines_and_comments_are_one_separator() -> None:
    stmts = body("let x = 1   # one\n\n   # only a comment\n\nreturn x")
    assert [type(s) for s in stmts] == [ast.Let, ast.Return]


def test_two_statements_on_one_line_are_an_error() -> None:
    assert syntax_errors("env E {\n action t() -> int { let x = 1 return x }\n}\n") == ["E0001"]


def test_one_line_block() -> None:
    (stmt,) = body("if c { return 1 }")
    assert isinstance(stmt, ast.If)
    assert isinstance(stmt.branches[0].body.stmts[0], ast.Return)


# ---- no newline inside brackets and map braces -----------------------------------------------


def test_no_newline_inside_parentheses() -> None:
    value = value_of_single_let("let x = max(\n  a,\n  b\n)")
    assert isinstance(value, ast.Call)
    assert len(value.args) == 2


def test_no_newline_inside_square_brackets() -> None:
    value = value_of_single_let("let x = [\n  1,\n  2\n\n  , 3\n]")
    assert isinstance(value, ast.ListLit)
    assert [item.value for item in value.items] == [1, 2, 3]


def test_no_newline_inside_map_braces() -> None:
    value = value_of_single_let('let m = {\n  "a":\n    1,\n  "b": 2\n}')
    assert isinstance(value, ast.MapLit)
    assert [e.key.value for e in value.entries] == ["a", "b"]


def test_newlines_separate_statements_in_a_nested_block() -> None:
    # A block inside a block: its newlines separate statements.
    (stmt,) = body("for x in xs {\n  let y = x\n  let z = y\n}")
    assert isinstance(stmt, ast.For)
    assert len(stmt.body.stmts) == 2


def test_tokens_inside_brackets_carry_no_newline() -> None:
    assert "_NL" not in token_types("f(\n1,\n2\n)")
    assert "_NL" not in token_types("[\n1,\n2\n]")
    assert "_NL" not in token_types('x = {\n"a": 1,\n"b": 2\n}')


# ---- continuation after a token that cannot end an expression --------------------------------


@pytest.mark.parametrize("op", ["+", "-", "*", "//", "%"])
def test_continuation_after_binary_operator(op: str) -> None:
    value = value_of_single_let(f"let x = a {op}\n  b")
    assert isinstance(value, ast.Binary)
    assert value.op == op


def test_continuation_after_comparison_and_boolean_operators() -> None:
    value = value_of_single_let("let x = a ==\n b and\n c or\n d")
    assert isinstance(value, ast.BoolOp) and value.op == "or"
    assert isinstance(value.left, ast.BoolOp) and value.left.op == "and"


def test_continuation_after_equals() -> None:
    value = value_of_single_let("let x =\n  42")
    assert isinstance(value, ast.IntLit) and value.value == 42


def test_continuation_after_comma_in_for_targets() -> None:
    (stmt,) = body("for i,\n x in enumerate(xs) { }")
    assert isinstance(stmt, ast.For)
    assert [t.text for t in stmt.targets] == ["i", "x"]


def test_continuation_after_comma_between_record_fields() -> None:
    spec = parse_spec("env E {\n  record W { start: int,\n    end: int }\n}\n")
    assert spec.env is not None
    (record,) = spec.env.of_type(ast.RecordDecl)
    assert [f.name.text for f in record.fields] == ["start", "end"]


def test_continuation_after_colon_of_invariant() -> None:
    spec = parse_spec('env E {\n  state { n: int }\n  invariant "positive":\n    n > 0\n}\n')
    assert spec.env is not None
    (inv,) = spec.env.of_type(ast.InvariantDecl)
    assert isinstance(inv.cond, ast.Compare) and inv.cond.ops == (">",)


def test_continuation_after_arrow() -> None:
    spec = parse_spec("env E {\n  fn f(a: int) ->\n    int = a\n}\n")
    assert spec.env is not None
    (fn,) = spec.env.of_type(ast.FnDecl)
    assert isinstance(fn.result, ast.NamedType) and fn.result.name.text == "int"
    assert isinstance(fn.body, ast.NameRef)


# ---- continuation before a line that starts with a continuing word ---------------------------


def test_require_else_on_next_line() -> None:
    (stmt,) = body('require a > 0\n  else "a must be positive"')
    assert isinstance(stmt, ast.Require)
    assert isinstance(stmt.message, ast.StrLit) and stmt.message.value == "a must be positive"


def test_let_else_on_next_line() -> None:
    (stmt,) = body('let y = xs.get(0)\n  else "empty"')
    assert isinstance(stmt, ast.Let)
    assert stmt.else_message is not None


def test_else_and_elif_on_their_own_lines() -> None:
    (stmt,) = body("if c {\n  return 1\n}\nelif d {\n  return 2\n}\nelse {\n  return 3\n}")
    assert isinstance(stmt, ast.If)
    assert len(stmt.branches) == 2
    assert stmt.orelse is not None


@pytest.mark.parametrize("word", ["and", "or"])
def test_line_starting_with_boolean_operator_continues(word: str) -> None:
    value = value_of_single_let(f"let x = c\n  {word} d")
    assert isinstance(value, ast.BoolOp) and value.op == word


def test_line_starting_with_dot_continues() -> None:
    value = value_of_single_let("let x = s\n  .lower()\n  .strip()")
    assert isinstance(value, ast.Call)
    assert isinstance(value.func, ast.Attribute) and value.func.name.text == "strip"


@pytest.mark.parametrize("op", ["+", "*", "==", "<="])
def test_line_starting_with_binary_operator_continues(op: str) -> None:
    value = value_of_single_let(f"let x = a\n  {op} b")
    assert isinstance(value, (ast.Binary, ast.Compare))
    if isinstance(value, ast.Binary):
        assert value.op == op
    else:
        assert value.ops == (op,)


def test_line_starting_with_arrow_continues() -> None:
    spec = parse_spec("env E {\n  fn f(a: int)\n    -> int = a\n}\n")
    assert spec.env is not None
    (fn,) = spec.env.of_type(ast.FnDecl)
    assert [p.name.text for p in fn.params] == ["a"]


def test_line_starting_with_brace_continues() -> None:
    (stmt,) = body("if c\n{\n  return 1\n}")
    assert isinstance(stmt, ast.If)
    assert len(stmt.branches[0].body.stmts) == 1


def test_tool_body_brace_on_next_line() -> None:
    spec = parse_spec("env E {\n  query q() -> int\n  {\n    return 1\n  }\n}\n")
    assert spec.env is not None
    (tool,) = spec.env.of_type(ast.ToolDecl)
    assert tool.name.text == "q"


def test_line_starting_with_if_does_not_join_previous_let() -> None:
    # Without the rule this would parse as the conditional expression `a if c else ...`.
    stmts = body("let x = a\nif c {\n  return x\n} else {\n  return b\n}")
    assert [type(s) for s in stmts] == [ast.Let, ast.If]
    first = stmts[0]
    assert isinstance(first, ast.Let) and isinstance(first.value, ast.NameRef)


def test_conditional_expression_on_one_line_still_parses() -> None:
    value = value_of_single_let("let x = a if c else b")
    assert isinstance(value, ast.Conditional)


def test_line_starting_with_a_name_does_not_continue() -> None:
    stmts = body("let x = a\nx += 1\nreturn x")
    assert [type(s) for s in stmts] == [ast.Let, ast.Assign, ast.Return]


# ---- map-literal braces vs block braces ------------------------------------------------------


def brace_types(text: str) -> list[str]:
    return [t for t in token_types(text) if t in ("LBRACE", "MAP_LBRACE")]


@pytest.mark.parametrize(
    "text",
    ['x = {"a": 1}', "f({1})", 'return {"a": 1}', "[{1}]", 'x = a + {"k": 1}["k"]'],
)
def test_brace_after_operator_paren_or_return_opens_a_map(text: str) -> None:
    assert brace_types(text) == ["MAP_LBRACE"]


@pytest.mark.parametrize(
    "text", ["if f(x) {\n}", "for x in xs {\n}", "if c {\n} else {\n}", "env E {\n}"]
)
def test_brace_after_paren_name_or_else_opens_a_block(text: str) -> None:
    assert set(brace_types(text)) == {"LBRACE"}


def test_map_and_block_in_the_ast() -> None:
    stmts = body('let m = {"a": 1}\nif c {\n  return m["a"]\n} else {\n  return {"b": 2}["b"]\n}')
    let, cond = stmts
    assert isinstance(let, ast.Let) and isinstance(let.value, ast.MapLit)
    assert isinstance(cond, ast.If) and cond.orelse is not None
    (ret,) = cond.orelse.stmts
    assert isinstance(ret, ast.Return) and isinstance(ret.value, ast.Index)
    assert isinstance(ret.value.obj, ast.MapLit)


def test_set_literal_and_empty_map() -> None:
    set_value = value_of_single_let("let s = {1, 2}")
    assert isinstance(set_value, ast.SetLit) and len(set_value.items) == 2
    map_value = value_of_single_let("let m = {}")
    assert isinstance(map_value, ast.MapLit) and map_value.entries == ()


def test_brackets_of_every_kind_nest() -> None:
    # A map inside a call inside a list: every bracket kind nests.
    value = value_of_single_let('let x = [f({\n "a": [\n 1,\n 2]\n})]')
    assert isinstance(value, ast.ListLit)
    (call,) = value.items
    assert isinstance(call, ast.Call)
    assert isinstance(call.args[0], ast.MapLit)
