"""Parse + build: the typed AST of representative constructs, its spans, and syntax errors."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from envdsl.diagnostics import DiagnosticSink
from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.syntax import ast
from envdsl.syntax.build import build_ast
from envdsl.syntax.parse import parse_file
from envdsl.util.source import SourceFile, Span

SPEC = '''import std.time

env Shop {
  """A shop."""

  enum Status { pending, shipped = "in transit", delivered }

  record Line { sku: str, qty: int }

  entity Customer {
    key customer_id: str
    email: str unique "contact address"
    state: str
    type: str = "basic"
  }

  entity Order {
    key order_id: str = auto("O")
    customer: ref Customer on delete cascade
    status: Status = Status.pending transitions {
      pending -> shipped, shipped -> delivered
    }
    lines: list[Line] = []
    note: str?
    invariant "has lines": len(lines) > 0
    unique(customer, note)
  }

  state {
    customers: table Customer
    orders: table Order
    now: datetime
  }

  const LIMIT: int = 10

  fn total(o: Order) -> int = sum(l.qty for l in o.lines)

  query find_orders(customer_id: str "The customer's id" = "C1", limit: int = 10 "At most") -> list[Order] {
    """Orders of one customer."""
    let c = customers.get(customer_id) else "no such customer"
    require limit > 0 and limit <= LIMIT else f"limit must be in 1..{LIMIT}"
    let found = [o for o in orders if o.customer == customer_id]
    let ranked = sorted(found, key=lambda o: total(o), reverse=true)
    if 0 < limit <= 5 {
      return ranked[:limit]
    } elif limit == 6 {
      return ranked[1:]
    } else {
      return ranked[-2:-1]
    }
  }

  action ship(order_id: str) -> str {
    """Ship one order."""
    let o = orders[order_id]
    for i, l in enumerate(o.lines) {
      require l.qty > 0 else f"line {i} of {o.order_id:>8} has no quantity"
    }
    o.status = Status.shipped
    return "ok"
  }

  task ship_it {
    """Ship order O1."""
    init {
      now = datetime("2024-01-01T00:00:00Z")
      customers = [Customer(customer_id="C1", email="a@b", state="CA", type="gold")]
      orders = [Order(order_id="O1", customer="C1", lines=[Line(sku="A", qty=1)])]
    }
    solution {
      let r = ship(order_id="O1")
      find_orders(customer_id="C1")
    }
    check "shipped": orders["O1"].status == Status.shipped
    check "once": count(o for o in orders if o.status == Status.shipped) == 1
  }
}
'''


def build(text: str) -> tuple[ast.SpecFile | None, list[Diagnostic]]:
    source = SourceFile("t.env", text)
    sink = DiagnosticSink()
    tree = parse_file(source, sink)
    spec = build_ast(tree, source, sink) if tree is not None else None
    return spec, sink.sorted()


def src(span: Span, text: str = SPEC) -> str:
    return text[span.start : span.end]


@pytest.fixture(scope="module")
def env() -> ast.EnvDecl:
    spec, diagnostics = build(SPEC)
    assert diagnostics == []
    assert spec is not None and spec.env is not None
    assert [imp.dotted for imp in spec.imports] == ["std.time"]
    return spec.env


def record(env: ast.EnvDecl, name: str) -> ast.RecordDecl:
    return next(r for r in env.of_type(ast.RecordDecl) if r.name.text == name)


def tool(env: ast.EnvDecl, name: str) -> ast.ToolDecl:
    return next(t for t in env.of_type(ast.ToolDecl) if t.name.text == name)


def field(decl: ast.RecordDecl, name: str) -> ast.FieldDecl:
    return next(f for f in decl.fields if f.name.text == name)


# ---- declarations ----------------------------------------------------------------------------


def test_env_name_doc_and_member_order(env: ast.EnvDecl) -> None:
    assert env.name.text == "Shop" and not env.is_module
    assert env.doc is not None and env.doc.value == "A shop."
    kinds = [type(m).__name__ for m in env.members]
    assert kinds == [
        "EnumDecl", "RecordDecl", "RecordDecl", "RecordDecl", "StateDecl", "ConstDecl",
        "FnDecl", "ToolDecl", "ToolDecl", "TaskDecl",
    ]  # fmt: skip


def test_enum_members_with_json_values(env: ast.EnvDecl) -> None:
    (enum,) = env.of_type(ast.EnumDecl)
    assert [m.name.text for m in enum.members] == ["pending", "shipped", "delivered"]
    shipped = enum.members[1]
    assert shipped.json_value is not None and shipped.json_value.value == "in transit"
    assert enum.members[0].json_value is None
    assert src(shipped.span) == 'shipped = "in transit"'


def test_record_and_entity_flags(env: ast.EnvDecl) -> None:
    assert not record(env, "Line").is_entity
    assert [f.name.text for f in record(env, "Line").fields] == ["sku", "qty"]
    assert record(env, "Order").is_entity


def test_key_unique_field_doc_and_default(env: ast.EnvDecl) -> None:
    customer = record(env, "Customer")
    key = field(customer, "customer_id")
    assert key.is_key and not key.unique and key.default is None
    email = field(customer, "email")
    assert email.unique and not email.is_key
    assert email.doc is not None and email.doc.value == "contact address"
    kind = field(customer, "type")
    assert isinstance(kind.default, ast.StrLit) and kind.default.value == "basic"


def test_soft_keywords_as_field_names(env: ast.EnvDecl) -> None:
    customer = record(env, "Customer")
    assert [f.name.text for f in customer.fields] == ["customer_id", "email", "state", "type"]
    state = field(customer, "state")
    assert isinstance(state.type, ast.NamedType) and state.type.name.text == "str"
    assert src(state.span) == "state: str"


def test_auto_key_default_is_a_call(env: ast.EnvDecl) -> None:
    key = field(record(env, "Order"), "order_id")
    assert key.is_key
    assert isinstance(key.default, ast.Call)
    assert isinstance(key.default.func, ast.NameRef) and key.default.func.name == "auto"
    assert src(key.default.span) == 'auto("O")'


def test_ref_with_on_delete(env: ast.EnvDecl) -> None:
    customer = field(record(env, "Order"), "customer")
    assert isinstance(customer.type, ast.RefType) and customer.type.entity.text == "Customer"
    assert customer.on_delete is not None and customer.on_delete.text == "cascade"
    assert src(customer.type.span) == "ref Customer"


def test_transitions(env: ast.EnvDecl) -> None:
    status = field(record(env, "Order"), "status")
    assert isinstance(status.default, ast.Attribute)
    assert status.transitions is not None
    pairs = [(t.source.text, t.target.text) for t in status.transitions]
    assert pairs == [("pending", "shipped"), ("shipped", "delivered")]
    assert src(status.transitions[0].span) == "pending -> shipped"
    assert field(record(env, "Order"), "note").transitions is None


def test_generic_and_optional_types(env: ast.EnvDecl) -> None:
    order = record(env, "Order")
    lines = field(order, "lines")
    assert isinstance(lines.type, ast.GenericType) and lines.type.name.text == "list"
    (arg,) = lines.type.args
    assert isinstance(arg, ast.NamedType) and arg.name.text == "Line"
    assert isinstance(lines.default, ast.ListLit) and lines.default.items == ()
    note = field(order, "note")
    assert isinstance(note.type, ast.OptionalType)
    assert src(note.type.span) == "str?"


def test_row_invariant_and_composite_unique(env: ast.EnvDecl) -> None:
    order = record(env, "Order")
    (inv,) = order.invariants
    assert inv.text.value == "has lines"
    assert src(inv.cond.span) == "len(lines) > 0"
    (unique,) = order.uniques
    assert [n.text for n in unique.fields] == ["customer", "note"]


def test_state_block(env: ast.EnvDecl) -> None:
    (state,) = env.of_type(ast.StateDecl)
    names = [f.name.text for f in state.fields]
    assert names == ["customers", "orders", "now"]
    assert isinstance(state.fields[0].type, ast.TableType)
    assert state.fields[0].type.entity.text == "Customer"
    assert isinstance(state.fields[2].type, ast.NamedType)


def test_const_and_expression_fn(env: ast.EnvDecl) -> None:
    (const,) = env.of_type(ast.ConstDecl)
    assert const.name.text == "LIMIT" and isinstance(const.value, ast.IntLit)
    (fn,) = env.of_type(ast.FnDecl)
    assert [p.name.text for p in fn.params] == ["o"]
    assert isinstance(fn.body, ast.Call)
    (gen,) = fn.body.args
    assert isinstance(gen, ast.Comprehension) and gen.kind == "gen"
    assert src(gen.span) == "l.qty for l in o.lines"


def test_params_with_descriptions_and_defaults(env: ast.EnvDecl) -> None:
    query = tool(env, "find_orders")
    assert query.kind == "query" and not query.internal
    first, second = query.params
    assert first.doc is not None and first.doc.value == "The customer's id"
    assert isinstance(first.default, ast.StrLit) and first.default.value == "C1"
    # the description may also follow the default
    assert second.doc is not None and second.doc.value == "At most"
    assert isinstance(second.default, ast.IntLit) and second.default.value == 10
    assert isinstance(query.result, ast.GenericType)
    assert query.doc is not None and query.doc.value == "Orders of one customer."


def test_docstring_is_not_a_statement(env: ast.EnvDecl) -> None:
    stmts = tool(env, "find_orders").body.stmts
    assert not any(isinstance(s, ast.ExprStmt) for s in stmts)
    assert isinstance(stmts[0], ast.Let)


# ---- statements ------------------------------------------------------------------------------


def test_let_else(env: ast.EnvDecl) -> None:
    let = tool(env, "find_orders").body.stmts[0]
    assert isinstance(let, ast.Let) and let.name.text == "c"
    assert isinstance(let.value, ast.Call)
    assert isinstance(let.else_message, ast.StrLit)
    assert let.else_message.value == "no such customer"
    assert src(let.span) == 'let c = customers.get(customer_id) else "no such customer"'


def test_plain_let_has_no_else(env: ast.EnvDecl) -> None:
    let = tool(env, "ship").body.stmts[0]
    assert isinstance(let, ast.Let) and let.else_message is None
    assert isinstance(let.value, ast.Index)


def test_require_with_fstring_message(env: ast.EnvDecl) -> None:
    req = tool(env, "find_orders").body.stmts[1]
    assert isinstance(req, ast.Require)
    assert isinstance(req.cond, ast.BoolOp) and req.cond.op == "and"
    assert isinstance(req.message, ast.FString)
    assert src(req.message.span) == 'f"limit must be in 1..{LIMIT}"'


def test_list_comprehension_with_filter(env: ast.EnvDecl) -> None:
    let = tool(env, "find_orders").body.stmts[2]
    assert isinstance(let, ast.Let)
    comp = let.value
    assert isinstance(comp, ast.Comprehension) and comp.kind == "list"
    loop, cond = comp.clauses
    assert isinstance(loop, ast.CompFor) and [t.text for t in loop.targets] == ["o"]
    assert isinstance(cond, ast.CompIf) and src(cond.cond.span) == "o.customer == customer_id"


def test_lambda_as_sorted_key(env: ast.EnvDecl) -> None:
    let = tool(env, "find_orders").body.stmts[3]
    assert isinstance(let, ast.Let) and isinstance(let.value, ast.Call)
    call = let.value
    assert len(call.args) == 1
    key, reverse = call.kwargs
    assert key.name.text == "key" and isinstance(key.value, ast.Lambda)
    assert [p.text for p in key.value.params] == ["o"]
    assert src(key.value.span) == "lambda o: total(o)"
    assert isinstance(reverse.value, ast.BoolLit) and reverse.value.value is True


def test_if_elif_else_with_chained_comparison_and_slices(env: ast.EnvDecl) -> None:
    stmt = tool(env, "find_orders").body.stmts[4]
    assert isinstance(stmt, ast.If)
    first, second = stmt.branches
    chain = first.cond
    assert isinstance(chain, ast.Compare)
    assert chain.ops == ("<", "<=")
    assert [src(o.span) for o in chain.operands] == ["0", "limit", "5"]
    assert src(second.cond.span) == "limit == 6"
    assert stmt.orelse is not None

    def returned(block: ast.Block) -> ast.Slice:
        (ret,) = block.stmts
        assert isinstance(ret, ast.Return) and isinstance(ret.value, ast.Slice)
        return ret.value

    upto = returned(first.body)
    assert upto.lower is None and isinstance(upto.upper, ast.NameRef)
    after = returned(second.body)
    assert isinstance(after.lower, ast.IntLit) and after.upper is None
    negative = returned(stmt.orelse)
    assert isinstance(negative.lower, ast.Unary) and negative.lower.op == "-"
    assert src(negative.span) == "ranked[-2:-1]"


def test_for_with_tuple_targets(env: ast.EnvDecl) -> None:
    loop = tool(env, "ship").body.stmts[1]
    assert isinstance(loop, ast.For)
    assert [t.text for t in loop.targets] == ["i", "l"]
    assert src(loop.iterable.span) == "enumerate(o.lines)"
    assert len(loop.body.stmts) == 1


def test_fstring_holes_format_specs_and_spans(env: ast.EnvDecl) -> None:
    loop = tool(env, "ship").body.stmts[1]
    assert isinstance(loop, ast.For)
    (req,) = loop.body.stmts
    assert isinstance(req, ast.Require)
    message = req.message
    assert isinstance(message, ast.FString)
    texts = [p for p in message.parts if isinstance(p, str)]
    holes = [p for p in message.parts if isinstance(p, ast.FStringPart)]
    assert texts == ["line ", " of ", " has no quantity"]
    assert [h.format_spec for h in holes] == [None, ">8"]
    assert isinstance(holes[0].expr, ast.NameRef) and holes[0].expr.name == "i"
    assert isinstance(holes[1].expr, ast.Attribute)
    # spans of holes and of the expressions inside them point into the file
    assert src(holes[0].expr.span) == "i"
    assert src(holes[1].expr.span) == "o.order_id"
    assert src(holes[1].expr.name.span) == "order_id"


def test_assignment(env: ast.EnvDecl) -> None:
    assign = tool(env, "ship").body.stmts[2]
    assert isinstance(assign, ast.Assign) and assign.op == "="
    assert isinstance(assign.target, ast.Attribute) and assign.target.name.text == "status"
    assert src(assign.span) == "o.status = Status.shipped"


# ---- tasks -----------------------------------------------------------------------------------


def test_task_init_solution_and_checks(env: ast.EnvDecl) -> None:
    (task,) = env.of_type(ast.TaskDecl)
    assert task.name.text == "ship_it"
    assert task.doc is not None and task.doc.value == "Ship order O1."
    assert isinstance(task.init, ast.InitBlock)
    assert [a.name.text for a in task.init.assigns] == ["now", "customers", "orders"]
    customers = task.init.assigns[1].value
    assert isinstance(customers, ast.ListLit)
    (row,) = customers.items
    assert isinstance(row, ast.Call)
    assert [k.name.text for k in row.kwargs] == ["customer_id", "email", "state", "type"]

    assert task.solution is not None
    bound, plain = task.solution
    assert bound.bind is not None and bound.bind.text == "r"
    assert isinstance(bound.call.func, ast.NameRef) and bound.call.func.name == "ship"
    assert plain.bind is None and src(plain.call.span) == 'find_orders(customer_id="C1")'

    assert [c.text.value for c in task.checks] == ["shipped", "once"]
    count = task.checks[1].cond
    assert isinstance(count, ast.Compare)
    call = count.operands[0]
    assert isinstance(call, ast.Call) and isinstance(call.args[0], ast.Comprehension)
    assert call.args[0].kind == "gen"


def test_init_from_file() -> None:
    spec, diagnostics = build('env E {\n  task t {\n    init from "state.json"\n  }\n}\n')
    assert diagnostics == []
    assert spec is not None and spec.env is not None
    (task,) = spec.env.of_type(ast.TaskDecl)
    assert isinstance(task.init, ast.InitFrom) and task.init.path.value == "state.json"
    assert task.solution is None and task.checks == ()


# ---- expressions in isolation ----------------------------------------------------------------


def let_value(expr: str) -> tuple[ast.Expr, str]:
    text = f"env E {{\n  action t() -> int {{\n    let v = {expr}\n  }}\n}}\n"
    spec, diagnostics = build(text)
    assert diagnostics == [], [d.message for d in diagnostics]
    assert spec is not None and spec.env is not None
    (decl,) = spec.env.of_type(ast.ToolDecl)
    (let,) = decl.body.stmts
    assert isinstance(let, ast.Let)
    assert src(let.value.span, text) == expr
    return let.value, text


def test_operator_precedence() -> None:
    value, _ = let_value("1 + 2 * 3 ** 2")
    assert isinstance(value, ast.Binary) and value.op == "+"
    assert isinstance(value.right, ast.Binary) and value.right.op == "*"
    assert isinstance(value.right.right, ast.Binary) and value.right.right.op == "**"


def test_not_in_and_is_not() -> None:
    value, _ = let_value("a not in b and c is not none")
    assert isinstance(value, ast.BoolOp)
    assert isinstance(value.left, ast.Compare) and value.left.ops == ("not in",)
    assert isinstance(value.right, ast.Compare) and value.right.ops == ("is not",)
    assert isinstance(value.right.operands[1], ast.NoneLit)


def test_map_set_and_dict_comprehensions() -> None:
    value, _ = let_value("{k: v for k, v in zip(a, b) if v > 0}")
    assert isinstance(value, ast.Comprehension) and value.kind == "map"
    assert isinstance(value.value, ast.NameRef) and value.value.name == "v"
    loop = value.clauses[0]
    assert isinstance(loop, ast.CompFor) and [t.text for t in loop.targets] == ["k", "v"]
    value, _ = let_value("{x for x in a}")
    assert isinstance(value, ast.Comprehension) and value.kind == "set"


def test_comprehension_with_two_for_clauses() -> None:
    value, _ = let_value("[x + y for x in a for y in b if x < y]")
    assert isinstance(value, ast.Comprehension)
    assert [type(c) for c in value.clauses] == [ast.CompFor, ast.CompFor, ast.CompIf]


def test_conditional_expression() -> None:
    value, text = let_value("a if a != none else 0")
    assert isinstance(value, ast.Conditional)
    assert src(value.test.span, text) == "a != none"
    assert isinstance(value.orelse, ast.IntLit)


def test_literals() -> None:
    value, _ = let_value('[1_000, 2.5, "s", true, false, none]')
    assert isinstance(value, ast.ListLit)
    kinds = [type(item) for item in value.items]
    assert kinds == [ast.IntLit, ast.FloatLit, ast.StrLit, ast.BoolLit, ast.BoolLit, ast.NoneLit]
    first = value.items[0]
    assert isinstance(first, ast.IntLit) and first.value == 1000


def test_string_escapes_are_decoded() -> None:
    value, _ = let_value('"a\\"b\\nc"')
    assert isinstance(value, ast.StrLit) and value.value == 'a"b\nc'


def test_fstring_with_literal_braces_and_call_in_hole() -> None:
    value, text = let_value('f"{{x}} = {len(a)}!"')
    assert isinstance(value, ast.FString)
    assert value.parts[0] == "{x} = "
    hole = value.parts[1]
    assert isinstance(hole, ast.FStringPart) and isinstance(hole.expr, ast.Call)
    assert src(hole.span, text) == "len(a)"
    assert value.parts[2] == "!"


def test_method_call_chain_spans() -> None:
    value, text = let_value("s.strip().lower()")
    assert isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
    assert src(value.func.obj.span, text) == "s.strip()"
    assert src(value.func.name.span, text) == "lower"


def test_positional_and_keyword_arguments() -> None:
    value, text = let_value('f(1, x, name="n")')
    assert isinstance(value, ast.Call)
    assert len(value.args) == 2 and len(value.kwargs) == 1
    assert src(value.kwargs[0].span, text) == 'name="n"'


# ---- structural errors from the builder ------------------------------------------------------


def codes_of(text: str) -> list[str]:
    return [d.code.code for d in build(text)[1]]


def test_break_outside_loop() -> None:
    assert codes_of("env E {\n  action t() -> int {\n    break\n  }\n}\n") == ["E0007"]


def test_break_inside_loop_is_fine() -> None:
    text = "env E {\n  action t(xs: list[int]) -> int {\n    for x in xs { break }\n  }\n}\n"
    assert codes_of(text) == []


def test_assignment_to_a_call() -> None:
    assert codes_of("env E {\n  action t() -> int {\n    f() = 1\n  }\n}\n") == ["E0005"]


def test_solution_step_must_be_a_named_tool_call() -> None:
    text = "env E {\n  task t {\n    solution {\n      ship(1)\n    }\n  }\n}\n"
    assert codes_of(text) == ["E0006"]


def test_two_envs_in_one_file() -> None:
    assert codes_of("env A {\n}\nenv B {\n}\n") == ["E0004"]


def test_unbalanced_fstring() -> None:
    assert codes_of('env E {\n  const C: str = f"a {b"\n}\n') == ["E0008"]


# ---- syntax errors ---------------------------------------------------------------------------


def single_error(text: str) -> tuple[Diagnostic, str]:
    spec, diagnostics = build(text)
    assert spec is None
    assert len(diagnostics) == 1, [d.message for d in diagnostics]
    return diagnostics[0], src(diagnostics[0].span, text)


def test_python_style_colon_block_gets_a_help_about_braces() -> None:
    error, at = single_error(
        "env E {\n  action t(x: bool) -> int {\n    if x:\n      return 1\n  }\n}\n"
    )
    assert error.code.code == "E0001"
    assert at == ":"
    assert "expected '{'" in error.message
    assert error.help is not None and "braces" in error.help


def test_python_style_for_loop_gets_a_help_about_braces() -> None:
    text = "env E {\n  action t(xs: list[int]) -> int {\n    for x in xs:\n      return 1\n  }\n}\n"
    error, at = single_error(text)
    assert error.code.code == "E0001" and at == ":"
    assert error.help is not None and "braces" in error.help


def test_def_gets_a_help() -> None:
    error, at = single_error("env E {\n  def f(x: int) -> int:\n    return x\n}\n")
    assert error.code.code == "E0001"
    assert at == "def"
    assert "unexpected name 'def'" in error.message
    assert error.help is not None and "`fn`" in error.help


def test_class_and_while_get_helps() -> None:
    error, _ = single_error("env E {\n  class X { }\n}\n")
    assert error.help is not None and "record" in error.help
    error, _ = single_error("env E {\n  action t() -> int {\n    while true { }\n  }\n}\n")
    assert error.help is not None and "no `while`" in error.help


def test_del_gets_a_help() -> None:
    text = 'env E {\n  action t(m: map[str, int]) -> int {\n    del m["a"]\n    return 1\n  }\n}\n'
    error, at = single_error(text)
    assert error.code.code == "E0001" and at == "m"
    assert error.help is not None and "`m.remove(k)`" in error.help


def test_a_tuple_gets_a_help() -> None:
    text = "env E {\n  query t(a: int, b: int) -> bool {\n    return (a, b) == (b, a)\n  }\n}\n"
    error, at = single_error(text)
    assert error.code.code == "E0001" and at == ","
    assert error.help is not None and "no tuples" in error.help


def test_answer_beside_the_solution_gets_a_help() -> None:
    text = 'env E {\n  task t {\n    """Q?"""\n    solution { }\n    answer "2"\n  }\n}\n'
    error, at = single_error(text)
    assert error.code.code == "E0001" and at == "answer"
    assert error.help is not None and 'solution { ... answer "text" }' in error.help


def test_require_without_message() -> None:
    text = "env E {\n  action t(x: int) -> int {\n    require x > 0\n    return 1\n  }\n}\n"
    error, _ = single_error(text)
    assert error.code.code == "E0001"
    assert "expected 'else'" in error.message
    assert error.help is not None and "require cond else" in error.help


def test_single_equals_in_invariant_suggests_double() -> None:
    error, at = single_error('env E {\n  state { x: int }\n  invariant "x": x = 1\n}\n')
    assert at == "="
    assert error.help is not None and "==" in error.help


def test_single_equals_in_if_condition_suggests_double() -> None:
    error, at = single_error("env E {\n  action t(x: int) -> int {\n    if x = 1 { }\n  }\n}\n")
    assert at == "="
    assert error.help is not None and "==" in error.help


def test_unexpected_end_of_file() -> None:
    error, _ = single_error("env E {\n  enum S { a }\n")
    assert error.code.code == "E0001"
    assert error.message.startswith("unexpected end of")
    assert "expected '}'" in error.message
    assert error.span.start == error.span.end == len("env E {\n  enum S { a }\n")


def test_unterminated_string_is_an_invalid_token() -> None:
    text = 'env E {\n  action t() -> str {\n    return "abc\n  }\n}\n'
    error, at = single_error(text)
    assert error.code.code == "E0002"
    assert error.message == "unterminated string"
    assert at == '"'


def test_stray_character() -> None:
    error, at = single_error("env E {\n  const X: int = 1 $ 2\n}\n")
    assert error.code.code == "E0002" and at == "$"
    assert "'$'" in error.message


def test_syntax_error_message_names_found_and_expected_tokens() -> None:
    error, at = single_error("env E {\n  entity U {\n    key id str\n  }\n}\n")
    assert error.code.code == "E0001"
    assert at == "str"
    assert error.message.startswith("unexpected name 'str'; expected")
    assert "':'" in error.message


def apply_fix(text: str, error: Diagnostic) -> str:
    """The text with the diagnostic's first fix applied (edits from the end backwards)."""
    for edit in sorted(error.fixes[0].edits, key=lambda e: e.span.start, reverse=True):
        text = text[: edit.span.start] + edit.replacement + text[edit.span.end :]
    return text


def test_else_if_gets_a_help_and_an_elif_fix() -> None:
    text = (
        "env E {\n  query t(x: int) -> int {\n    if x > 1 {\n      return 1\n"
        "    } else if x < 0 {\n      return 2\n    }\n    return 0\n  }\n}\n"
    )
    error, at = single_error(text)
    assert error.code.code == "E0001" and at == "if"
    assert error.help is not None and "`elif" in error.help
    fixed = apply_fix(text, error)
    assert "    } elif x < 0 {\n" in fixed
    assert build(fixed)[1] == []


@pytest.mark.parametrize("word", ["none", "true", "false", "in"])
def test_reserved_word_as_enum_member_gets_a_renaming_fix(word: str) -> None:
    text = f"env E {{\n  enum Repeat {{ daily, {word}, weekly }}\n}}\n"
    error, at = single_error(text)
    assert at == word
    assert error.help is not None and f'`{word}_ = "{word}"`' in error.help
    fixed = apply_fix(text, error)
    assert f'{{ daily, {word}_ = "{word}", weekly }}' in fixed
    assert build(fixed)[1] == []
    assert error.notes == ()  # the enum's own `{` is closed on the same line


def test_reserved_enum_member_with_a_json_value_is_only_renamed() -> None:
    text = 'env E {\n  enum Repeat { none = "never", daily }\n}\n'
    error, _ = single_error(text)
    assert '{ none_ = "never", daily }' in apply_fix(text, error)


def test_unclosed_brace_is_named_in_a_note() -> None:
    text = (
        "env E {\n  state {\n    n: int = 0\n  }\n  action bump() -> int {\n    if n > 0 {\n"
        "      n += 1\n    return n\n  }\n  query get() -> int {\n    return n\n  }\n}\n"
    )
    error, at = single_error(text)
    assert at == "get"  # the parser trips later, where the block was meant to end
    assert error.notes == ("the `{` at line 6, column 14 (`if n > 0 {`) is never closed",)
    assert error.help == "add the missing `}`"


def test_unclosed_brace_at_end_of_file_names_the_innermost_open_brace() -> None:
    error, _ = single_error("env E {\n  enum S { a }\n  record R {\n    x: int\n")
    assert error.notes == ("the `{` at line 3, column 12 (`record R {`) is never closed",)


def test_no_unclosed_brace_note_when_every_brace_is_closed() -> None:
    error, _ = single_error("env E {\n  action t() -> int {\n    while true { }\n  }\n}\n")
    assert error.notes == ()
    # the parser trips over a `}` after a dangling operator; the braces are balanced
    error, at = single_error("env E {\n  query q(x: int) -> int {\n    return x +\n  }\n}\n")
    assert at == "}" and error.notes == ()


def test_a_missing_brace_found_after_the_error_is_still_named() -> None:
    # the action's `}` is missing; the mismatch shows only at the env's last `}`
    text = (
        "env E {\n  state {\n    n: int = 0\n  }\n  action bump() -> int {\n    return n\n"
        "\n  query get() -> int {\n    return n\n  }\n}\n"
    )
    error, at = single_error(text)
    assert at == "get"
    assert error.notes == (
        "the `{` at line 5, column 24 (`action bump() -> int {`) is never closed",
    )


def _walk_recursively(node: object) -> Iterator[object]:
    """ast.walk as first written (a generator per level): the order it must keep."""
    yield node
    if isinstance(node, (list, tuple)):
        for item in node:
            yield from _walk_recursively(item)
        return
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is not None:
        for name in fields:
            if name != "span":
                yield from _walk_recursively(getattr(node, name))


def test_walk_visits_every_node_in_depth_first_order() -> None:
    """The nodes, in that order; not the plain values nor the tuples and lists that hold nodes."""
    plain = (str, int, float, bool, type(None), list, tuple)
    for path in sorted(Path(__file__).resolve().parent.parent.glob("examples/*.env")):
        spec, _ = build(path.read_text(encoding="utf-8"))
        assert spec is not None
        nodes = [n for n in _walk_recursively(spec) if type(n) not in plain]
        assert [id(n) for n in ast.walk(spec)] == [id(n) for n in nodes]


def _in_query(expression: str) -> str:
    return (
        f"env E {{\n  query t(xs: list[int]) -> list[int] {{\n    return {expression}\n  }}\n}}\n"
    )


def _in_action(statements: str) -> str:
    body = statements.replace("\n", "\n    ")
    return (
        "env E {\n  entity U { key id: str }\n  entity R { key id: str, best: U? }\n"
        "  state { users: table U }\n"
        f"  action t(x: int, k: str) -> int {{\n    {body}\n    return x\n  }}\n}}\n"
    )


def _in_entity(member: str) -> str:
    return f"env E {{\n  entity U {{\n    key id: str\n    name: str\n    {member}\n  }}\n}}\n"


def _in_task(members: str) -> str:
    body = members.replace("\n", "\n    ")
    return (
        "env E {\n  entity U { key id: str }\n  state { users: table U }\n"
        '  action close(id: str) {\n    """d"""\n    users.delete(id)\n  }\n'
        f'  task t {{\n    """Close U1."""\n    {body}\n  }}\n}}\n'
    )


@pytest.mark.parametrize(
    "text, code, at, helped",
    [
        (_in_query("xs[::-1]"), "E0001", ":", "a slice takes no step"),
        (_in_query("first((x for x in xs), 0)"), "E0001", "for", "a generator stands alone"),
        (_in_query("sorted(xs, key=lambda x: (x, -x))"), "E0001", ",", "sort by the last"),
        (_in_query('[f"{x!r}" for x in xs]'), "E0002", "!", "no `!r`/`!s` conversion"),
        (_in_action('return users.get(k) else "no"'), "E0001", "else", "then `return x`"),
        (_in_action('let u = users[k]\nu = users.get(k) else "no"'), "E0001", "else", "assign"),
        (
            _in_action('let r = R(id=k)\nr.best = users.get(k) else "no"'),
            "E0001",
            "else",
            "a `let`",
        ),
        (_in_action('require x > 0, "positive"'), "E0001", ",", '`require cond else "why'),
        (_in_action('assert x > 0, "positive"'), "E0001", "x", "there is no `assert`"),
        (_in_action("let y = x > 0 ? 1 : 2"), "E0001", "?", "`a if cond else b`"),
        (_in_action("let a = 1\nlet b = 2\na, b = b, a"), "E0001", ",", "there are no tuples"),
        (_in_action("let y = 1; return y"), "E0002", ";", "no semicolons"),
        (_in_action("match x { }"), "E0001", "x", "there is no `match`"),
        (_in_entity("unique name"), "E0001", "name", "`name: T unique`"),
        (_in_entity("invariant len(name) > 0"), "E0001", "len", '`invariant "what holds"'),
        (
            _in_task('solution { close(id="U1") }\ncheck len(users) == 0'),
            "E0001",
            "len",
            "a check says",
        ),
        (
            _in_task('solution { close(id="U1") }\nchecks { len(users) == 0 }'),
            "E0001",
            "checks",
            "a check is",
        ),
        (
            _in_task('instruction "Close U1."\nsolution { close(id="U1") }'),
            "E0001",
            "instruction",
            "first string",
        ),
        (_in_task('init {\n  users.insert(U(id="U1"))\n}'), "E0001", ".", "`init` assigns state"),
    ],
)
def test_python_habits_get_helps(text: str, code: str, at: str, helped: str) -> None:
    _, diagnostics = build(text)  # (an f-string hole's error leaves the rest of the file built)
    (error,) = diagnostics
    assert error.code.code == code and src(error.span, text) == at
    assert error.help is not None and helped in error.help and "braces" not in error.help


def test_else_of_a_require_gets_no_unwrap_help() -> None:
    spec, diagnostics = build(_in_action("require x > 0 else"))
    assert diagnostics and all("only in a `let`" not in (d.help or "") for d in diagnostics)
