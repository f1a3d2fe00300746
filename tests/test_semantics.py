"""Semantic stages: name resolution, type checking with flow narrowing, effects, recursion.

Each test checks a small spec with the whole front end (`check_source`) and looks at the
diagnostics and at the semantic model (`CheckedSpec`) it leaves behind.
"""

from __future__ import annotations

import pytest

from envdsl.diagnostics.diagnostic import Diagnostic, Fix
from envdsl.pipeline import CompileResult, check_source
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast
from envdsl.util.source import SourceFile

PRELUDE = """env T {
  enum Status { active, suspended, closed }

  entity User {
    key user_id: str
    name: str
    email: str unique
    status: Status = Status.active
    nickname: str?
    score: float = 0.0
    visits: int = 0
  }

  entity Log {
    key log_id: str = auto("L")
    user: ref User
    minutes: int
  }

  state {
    users: table User
    logs: table Log
    motto: str?
    now: datetime
  }
"""


def spec(members: str) -> str:
    """A spec: the prelude's declarations followed by `members`."""
    return PRELUDE + members + "\n}\n"


def check(text: str) -> CompileResult:
    result = check_source(SourceFile("t.env", text))
    assert not any(d.code.code == "E9001" for d in result.diagnostics), result.diagnostics
    return result


def errors(text: str) -> list[Diagnostic]:
    return [d for d in check(text).diagnostics if d.is_error]


def error_codes(text: str) -> list[str]:
    return [d.code.code for d in errors(text)]


def only_error(text: str, code: str) -> tuple[Diagnostic, str]:
    """The one error of `text`, which must have `code`, and the source text under its span."""
    found = errors(text)
    assert [d.code.code for d in found] == [code], [(d.code.code, d.message) for d in found]
    return found[0], text[found[0].span.start : found[0].span.end]


def checked(text: str) -> CheckedSpec:
    result = check(text)
    assert [d for d in result.diagnostics if d.is_error] == []
    assert isinstance(result.checked, CheckedSpec)
    return result.checked


def apply_fix(text: str, fix: Fix) -> str:
    for edit in sorted(fix.edits, key=lambda e: e.span.start, reverse=True):
        text = text[: edit.span.start] + edit.replacement + text[edit.span.end :]
    return text


def tool_body(model: CheckedSpec, name: str) -> ast.Block:
    decl = model.callables[name].decl
    assert isinstance(decl, ast.ToolDecl)
    return decl.body


# ---- resolve: declarations -------------------------------------------------------------------


def test_the_prelude_is_clean() -> None:
    model = checked(spec(""))
    assert set(model.records) >= {"User", "Log"}
    user = model.entity("User")
    assert user is not None and user.table == "users"
    assert user.key is not None and user.key.name == "user_id"
    assert str(model.state["motto"].type) == "str?"


def test_duplicate_record_is_reported_at_the_second_declaration() -> None:
    text = spec("  record R { x: int }\n  record R { y: int }\n")
    error, at = only_error(text, "E1010")
    assert at == "R"
    assert error.span.start == text.rindex("record R") + len("record ")
    assert "'R' is already declared" in error.message


@pytest.mark.parametrize(
    "members, what",
    [
        ("  enum E { a, b, a }\n", "enum member 'a'"),
        ("  record R { x: int, x: str }\n", "field 'x'"),
        ('  query q(a: int, a: str) -> int {\n    """d"""\n    return 1\n  }\n', "parameter 'a'"),
    ],
)
def test_duplicates_inside_a_declaration(members: str, what: str) -> None:
    error, _ = only_error(spec(members), "E1010")
    assert what in error.message


def test_duplicate_tool_name() -> None:
    tool = '  query q() -> int {\n    """d"""\n    return 1\n  }\n'
    error, at = only_error(spec(tool + tool), "E1010")
    assert at == "q"


def test_unknown_type_has_a_did_you_mean_fix_replacing_its_span() -> None:
    text = spec("  record Card { owner: ref Usr, state: Statu }\n")
    found = errors(text)
    assert [d.code.code for d in found] == ["E1002", "E1002"]
    # the second fix first, so the first fix's offsets stay valid
    for error, wanted in reversed(list(zip(found, ["User", "Status"]))):
        assert error.help is not None and f"'{wanted}'" in error.help
        (fix,) = error.fixes
        (edit,) = fix.edits
        assert (edit.span.start, edit.span.end) == (error.span.start, error.span.end)
        assert edit.replacement == wanted
        text = apply_fix(text, fix)
    assert "owner: ref User, state: Status }" in text
    assert error_codes(text) == []


def test_unknown_field_has_a_did_you_mean_fix() -> None:
    text = spec('  query q(id: str) -> str {\n    """d"""\n    return users[id].nmae\n  }\n')
    error, at = only_error(text, "E1003")
    assert at == "nmae"
    assert "unknown field 'nmae' on User" in error.message
    (fix,) = error.fixes
    assert fix.edits[0].replacement == "name"
    assert error_codes(apply_fix(text, fix)) == []


def test_unknown_name_has_a_did_you_mean_fix() -> None:
    text = spec('  query q(user_name: str) -> str {\n    """d"""\n    return user_nam\n  }\n')
    error, at = only_error(text, "E1001")
    assert at == "user_nam"
    (fix,) = error.fixes
    assert apply_fix(text, fix).count("return user_name\n") == 1
    assert error_codes(apply_fix(text, fix)) == []


def test_unknown_type_far_from_any_name_has_no_fix() -> None:
    error, _ = only_error(spec("  record Card { owner: Zebra }\n"), "E1002")
    assert error.fixes == ()


def test_entity_without_key() -> None:
    text = "env T {\n  entity Tag {\n    label: str\n  }\n  state {\n    tags: table Tag\n  }\n}\n"
    error, at = only_error(text, "E2009")
    assert at == "Tag"
    assert "no `key` field" in error.message


def test_entity_with_two_keys_is_one_error() -> None:
    text = (
        "env T {\n  entity Tag {\n    key a: str\n    key b: str\n  }\n"
        "  state {\n    tags: table Tag\n  }\n}\n"
    )
    error, at = only_error(text, "E2009")
    assert at == "key b: str"


def test_ref_to_a_record() -> None:
    text = spec("  record Point { x: int }\n  record Pin { at: ref Point }\n")
    error, at = only_error(text, "E2007")
    assert at == "Point"
    assert "not an entity" in error.message


def test_table_of_a_record() -> None:
    text = "env T {\n  record P { x: int }\n  state {\n    ps: table P\n  }\n}\n"
    error, at = only_error(text, "E2008")
    assert at.endswith("P")


# ---- resolve: imports ------------------------------------------------------------------------

OVERLAP_TOOL = """
  query clash(a: datetime, b: datetime) -> bool {
    \"\"\"Do two one-hour slots clash?\"\"\"
    return overlaps(a, a + hours(1), b, b + hours(1))
  }
"""


def test_import_std_time_brings_overlaps_into_scope() -> None:
    model = checked("import std.time\n" + spec(OVERLAP_TOOL))
    overlaps = model.callables["overlaps"]
    assert overlaps.kind == "fn" and overlaps.module == "time"
    assert [p.name for p in overlaps.params] == ["a_start", "a_end", "b_start", "b_end"]
    assert "overlaps" in model.effects["clash"].calls


def test_overlaps_without_the_import_is_unknown() -> None:
    error, at = only_error(spec(OVERLAP_TOOL), "E1005")
    assert at == "overlaps"


def test_unknown_module() -> None:
    text = "import std.nope\n" + spec("")
    error, _ = only_error(text, "E1007")
    assert "unknown module 'std.nope'" in error.message
    assert error.help is not None and "std.time" in error.help


def test_unknown_module_fix_keeps_the_import_statement() -> None:
    text = "import std.tme\n" + spec("")
    error, _ = only_error(text, "E1007")
    (fix,) = error.fixes
    fixed = apply_fix(text, fix)
    assert fixed.startswith("import std.time\n")
    assert error_codes(fixed) == []


# ---- type checking: narrowing ----------------------------------------------------------------


def returned_type(text: str, tool: str, index: int = -1) -> str:
    """The type the checker gave to the value of the `index`-th return statement of `tool`."""
    model = checked(text)
    returns: list[ast.Return] = []

    def collect(block: ast.Block) -> None:
        for stmt in block.stmts:
            if isinstance(stmt, ast.Return):
                returns.append(stmt)
            elif isinstance(stmt, ast.If):
                for branch in stmt.branches:
                    collect(branch.body)
                if stmt.orelse is not None:
                    collect(stmt.orelse)
            elif isinstance(stmt, ast.For):
                collect(stmt.body)

    collect(tool_body(model, tool))
    value = returns[index].value
    assert value is not None
    return str(model.expr_types[id(value)])


def query(signature: str, body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return f'  query q({signature}) -> str {{\n    """d"""\n{lines}  }}\n'


def test_narrowing_in_if() -> None:
    text = spec(query("n: str?", 'if n != none {\n  return n\n}\nreturn "d"'))
    assert returned_type(text, "q", 0) == "str"


def test_narrowing_with_is_not_none() -> None:
    text = spec(query("n: str?", 'if n is not none {\n  return n\n}\nreturn "d"'))
    assert returned_type(text, "q", 0) == "str"


def test_narrowing_in_and() -> None:
    text = spec(query("n: str?", 'if n != none and len(n) > 2 {\n  return n\n}\nreturn "d"'))
    assert error_codes(text) == []


def test_narrowing_after_require() -> None:
    text = spec(query("n: str?", 'require n != none else "n is required"\nreturn n'))
    assert returned_type(text, "q") == "str"


def test_narrowing_after_if_none_fail() -> None:
    text = spec(query("n: str?", 'if n == none { fail "missing" }\nreturn n'))
    assert returned_type(text, "q") == "str"


def test_narrowing_in_conditional_expression() -> None:
    text = spec(query("n: str?", 'return n if n != none else "d"'))
    assert returned_type(text, "q") == "str"


def test_narrowing_of_a_field_path() -> None:
    body = 'let u = users.get(id) else "no user"\nif u.nickname != none {\n  return u.nickname\n}\nreturn u.name'
    text = spec(query("id: str", body))
    assert returned_type(text, "q", 0) == "str"


def test_narrowing_of_scalar_state() -> None:
    text = spec(query("", 'if motto != none {\n  return motto\n}\nreturn ""'))
    assert returned_type(text, "q", 0) == "str"


def action(signature: str, body: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().splitlines())
    return f'  action a({signature}) -> bool {{\n    """d"""\n{lines}    return true\n  }}\n'


@pytest.mark.parametrize(
    "body",
    [
        'let u = users.get(id) else "no user"\nif u.nickname != none {\n  u.nickname = none\n}',
        'let u = users.get(id) else "no user"\nif u.nickname is not none {\n  u.nickname = n\n}',
        "if motto != none {\n  motto = none\n}",
        "if state.motto != none {\n  state.motto = n\n}",
    ],
    ids=["field-to-none", "field-to-optional", "scalar-to-none", "state-scalar-to-optional"],
)
def test_a_narrowed_place_takes_any_value_of_its_declared_type(body: str) -> None:
    # the test narrows what the place holds, not what it may be given
    assert error_codes(spec(action("id: str, n: str?", body))) == []


def test_a_field_narrowed_to_a_case_takes_another_case() -> None:
    text = """env Pay {
  variant Method by source {
    card { id: str, last_four: str }
    cash { id: str }
  }
  entity User {
    key user_id: str
    method: Method
  }
  state { users: table User }
  action to_cash(user_id: str) -> User {
    \"\"\"Switch a card user to cash.\"\"\"
    let u = users.get(user_id) else "no such user"
    if u.method is Method.card {
      u.method = Method.cash(id=u.method.id)
    }
    return u
  }
}
"""
    assert error_codes(text) == []


@pytest.mark.parametrize(
    "enum, attribute, fixed",
    [
        ("enum Status { active, closed }", "value", "str(u.status)"),
        ("enum Status { active, closed }", "name", "str(u.status)"),
        ('enum Status { active = "Active", closed }', "value", "str(u.status)"),
        ('enum Status { active = "Active", closed }', "name", None),  # str() is not .name
    ],
)
def test_python_enum_value_and_name(enum: str, attribute: str, fixed: str | None) -> None:
    text = spec(query("id: str", f"let u = users[id]\nreturn u.status.{attribute}"))
    text = text.replace("enum Status { active, suspended, closed }", enum)
    error, at = only_error(text, "E1003")
    assert at == attribute and error.message == f"an enum member has no field '{attribute}'"
    assert "str(x)" in (error.help or "")
    if fixed is None:
        assert error.fixes == ()
    else:
        assert f"return {fixed}\n" in apply_fix(text, error.fixes[0])


@pytest.mark.parametrize(
    "written, fixed",
    [
        ("now + timedelta(days=2)", "now + days(2)"),
        ("now - timedelta(days=1, minutes=n)", "now - (days(1) + minutes(n))"),
        ("str(now.date())", "str(date_of(now))"),
        ("now.isoformat()", "str(now)"),
        ("str(now.weekday())", "str(weekday(now))"),
        ("str(d.total_seconds())", "str(total_seconds(d))"),
    ],
)
def test_python_time_habits_get_the_fix_that_checks(written: str, fixed: str) -> None:
    text = spec(query("n: int", f"let d = now - now\nreturn str({written})"))
    (error,) = errors(text)
    assert error.code.code in ("E1005", "E1011") and len(error.fixes) == 1
    repaired = apply_fix(text, error.fixes[0])
    assert f"return str({fixed})\n" in repaired
    assert error_codes(repaired) == []


def test_no_fix_for_a_receiver_in_parentheses() -> None:
    # its closing parenthesis is outside the receiver's span: `str((now - now)` would be left
    text = spec(query("", "return str((now - now).total_seconds())"))
    error, at = only_error(text, "E1011")
    assert at == "total_seconds" and error.fixes == ()


def test_no_timedelta_fix_where_a_unit_is_a_variable() -> None:
    # `days(days)` would call the parameter
    text = spec(query("days: int", "return str(now + timedelta(days=days))"))
    error, at = only_error(text, "E1005")
    assert at == "timedelta" and error.fixes == () and "days(n)" in (error.help or "")


def test_python_or_as_a_fallback_is_one_error() -> None:
    # not three: the left operand, the right one, and the bool where a str is returned
    error, at = only_error(spec(query("n: str?", 'return n or "anonymous"')), "E2003")
    assert at == "n" and "`x if x != none else y`" in (error.help or "")


@pytest.mark.parametrize(
    "call, code, helped",
    [
        ("xs.insert(0, 1)", "E1011", "xs[:i] + [x] + xs[i:]"),
        ("xs.pop()", "E1011", "xs = xs[:-1]"),
        ("xs.sort()", "E1011", "xs = sorted(xs)"),
        ('m.pop("a")', "E1011", "m.remove(k)"),
        ("sorted(m.items())", "E2002", "sorted(m.keys())"),
    ],
)
def test_python_collection_habits_say_what_to_write(call: str, code: str, helped: str) -> None:
    body = f'let xs = [3, 1]\nlet m = {{"a": 1}}\nlet r = {call}\nreturn ""'
    diagnostics = [d for d in errors(spec(query("", body))) if d.code.code == code]
    assert len(diagnostics) == 1 and helped in (diagnostics[0].help or "")


_XS = "let xs = [3, 1]\nlet r = "


@pytest.mark.parametrize(
    "body, code, at, helped",
    [
        (_XS + "(now - now).days", "E1003", "days", "total_minutes(d)"),
        (_XS + '"%s!" % s', "E2002", '"%s!" % s', 'f"... {x}"'),
        (_XS + '"{}!".format(s)', "E1011", "format", 'f"Hello {name}"'),
        (_XS + "s.title()", "E1011", "title", "upper(s[:1]) + s[1:]"),
        (_XS + "now.strftime(s)", "E1011", "strftime", "`str(d)` is its ISO 8601 text"),
        (_XS + "bool(xs)", "E1005", "bool", "len(xs) > 0"),
        (_XS + "reversed(xs)", "E1005", "reversed", "reverse=true"),
        (_XS + "map(lambda x: x + 1, xs)", "E1005", "map", "[f(x) for x in xs]"),
        (_XS + "filter(lambda x: x > 1, xs)", "E1005", "filter", "[x for x in xs if cond]"),
        (_XS + "math.floor(2.5)", "E1001", "math", "there are no modules"),
        (_XS + "xs.sort(key=lambda x: -x)", "E1011", "sort", "xs = sorted(xs)"),
        ("let t = 0\nt += 1.5", "E2001", "t += 1.5", "`let t = 0.0`"),
        ("users.remove(id)", "E1011", "remove", "`t.delete(key)`"),
        ('users.update(id, name="x")', "E1011", "update", "`t[key].field = value`"),
        ('users[id].status = Status("active")', "E1005", "Status", "`Status.active`"),
        ('users[id].status = Status["active"]', "E2013", 'Status["active"]', "`Status.active`"),
        ("logs.insert(Log(id, 5))", "E2004", "id", "Log(log_id=..., user=..., minutes=...)"),
    ],
)
def test_python_habits_say_what_to_write(body: str, code: str, at: str, helped: str) -> None:
    # one error each: a lambda given to an unknown function or method, and a record built
    # positionally, are part of that one mistake; and no look-alike (`map` is no `max`)
    error, found = only_error(spec(action("id: str, s: str", body)), code)
    assert found == at and helped in (error.help or "")
    assert "did you mean" not in (error.help or "")


def test_an_unqualified_enum_member_gets_its_enum_as_a_fix() -> None:
    text = spec(action("id: str", "users[id].status = suspended"))
    error, at = only_error(text, "E1001")
    assert at == "suspended" and "`Status.suspended`" in (error.help or "")
    assert "users[id].status = Status.suspended\n" in apply_fix(text, error.fixes[0])


def test_none_where_no_optional_is_declared_says_to_declare_one() -> None:
    error, at = only_error(spec(query("", "return none")), "E2001")
    assert at == "none" and "declare the type `str?`" in (error.help or "")


_PAYING = """env P {
  variant Pay by kind {
    card { id: str, last4: str }
    cash { id: str }
  }
  record Point { x: int, y: int }
  entity U { key id: str, pay: Pay, at: Point }
  state { users: table U }
  action a(k: str) -> bool {
    \"\"\"d\"\"\"
    let u = users[k]
    BODY
    return true
  }
}
"""


@pytest.mark.parametrize(
    "body, code, at, helped",
    [
        ('u.pay = {"kind": "cash", "id": "x"}', "E2001", "{", "`Pay.<case>(field=...)`"),
        ('u.at = {"x": 1, "y": 2}', "E2001", "{", "`Point(field=...)`"),
        ("let c = u.pay == Pay.card", "E2002", "u.pay == Pay.card", "`x is Pay.card`"),
    ],
)
def test_python_habits_with_records_and_variants(
    body: str, code: str, at: str, helped: str
) -> None:
    error, found = only_error(_PAYING.replace("BODY", body), code)
    assert found.startswith(at) and helped in (error.help or "")


def test_a_narrowed_place_is_optional_again_after_a_write() -> None:
    body = 'let u = users.get(id) else "no user"\nif u.nickname != none {\n  u.nickname = n\n  let k = len(u.nickname)\n}'
    error, at = only_error(spec(action("id: str, n: str?", body)), "E2017")
    assert at == "u.nickname"


@pytest.mark.parametrize("op, outcome", [("is", "false"), ("is not", "true")])
def test_is_none_of_a_value_that_is_never_none(op: str, outcome: str) -> None:
    body = f'let u = users.get(id) else "no user"\nif u.name {op} none {{\n  return false\n}}'
    error, at = only_error(spec(action("id: str", body)), "E2002")
    assert at == f"u.name {op} none"
    assert error.message == f"a str is never none, so '{op} none' is always {outcome}"


def test_no_narrowing_after_an_if_that_does_not_leave() -> None:
    text = spec(query("n: str?", "if n == none {\n  let x = 1\n}\nreturn n"))
    error, at = only_error(text, "E2017")
    assert at == "n"


def test_no_narrowing_in_the_else_branch() -> None:
    text = spec(query("n: str?", "if n != none {\n  return n\n} else {\n  return n\n}"))
    error, at = only_error(text, "E2017")
    assert error.span.start == text.rindex("return n") + len("return ")


def test_let_else_unwraps() -> None:
    text = spec(query("id: str", 'let u = users.get(id) else "no user"\nreturn u.name'))
    assert error_codes(text) == []


def test_let_else_on_a_non_optional() -> None:
    text = spec(query("id: str", 'let u = users[id] else "no user"\nreturn u.name'))
    only_error(text, "E2006")


# ---- type checking: optionals not unwrapped --------------------------------------------------


@pytest.mark.parametrize(
    "signature, body, at",
    [
        ("n: str?", "return n", "n"),
        ("n: str?", "let m: str = n\nreturn m", "n"),
        ("n: str?", "return n.lower()", "n"),
        ("id: str", "let u = users.get(id)\nreturn u.name", "u"),
        ("n: int?", 'require n > 3 else "small"\nreturn ""', "n > 3"),
    ],
)
def test_optional_not_unwrapped(signature: str, body: str, at: str) -> None:
    error, found = only_error(spec(query(signature, body)), "E2017")
    assert found == at
    assert error.help is not None and ("unwrap" in error.help or "!= none" in error.help)


def test_len_of_an_optional_is_possibly_none() -> None:
    only_error(spec(query("n: str?", 'require len(n) > 0 else "empty"\nreturn ""')), "E2017")


def test_concatenating_an_optional_is_possibly_none() -> None:
    only_error(spec(query("n: str?", 'return n + "x"')), "E2017")


# ---- type checking: assignability ------------------------------------------------------------


def test_int_widens_to_float() -> None:
    body = 'let f: float = n\nlet u = users[id]\nu.score = n\nu.score += 1\nreturn "ok"'
    text = spec(f'  action a(id: str, n: int) -> str {{\n    """d"""\n{_indent(body)}  }}\n')
    assert error_codes(text) == []


def test_float_does_not_narrow_to_int() -> None:
    text = spec(query("x: float", "let i: int = x\nreturn str(i)"))
    error, at = only_error(text, "E2001")
    assert at == "x"
    assert "float" in error.message and "int" in error.message


def _indent(body: str) -> str:
    return "".join(f"    {line}\n" for line in body.strip().splitlines())


def test_ref_accepts_the_key_type_and_a_row() -> None:
    body = (
        "let u = users[id]\n"
        "logs.insert(Log(user=id, minutes=1))\n"
        "logs.insert(Log(user=u, minutes=2))\n"
        'return "ok"'
    )
    text = spec(f'  action a(id: str) -> str {{\n    """d"""\n{_indent(body)}  }}\n')
    assert error_codes(text) == []


def test_ref_rejects_another_type() -> None:
    body = 'logs.insert(Log(user=7, minutes=1))\nreturn "ok"'
    text = spec(f'  action a() -> str {{\n    """d"""\n{_indent(body)}  }}\n')
    error, at = only_error(text, "E2001")
    assert at == "7"
    assert "ref User" in error.message


def test_ref_compares_with_the_key() -> None:
    text = spec(query("id: str", "return str(count(l for l in logs if l.user == id))"))
    assert error_codes(text) == []


def test_comparing_str_with_enum() -> None:
    text = spec(query("s: str", 'require s == Status.active else "no"\nreturn s'))
    error, at = only_error(text, "E2002")
    assert at == "s == Status.active"
    assert "str" in error.message and "Status" in error.message


def test_condition_must_be_bool() -> None:
    text = spec(query("n: int", 'if n {\n  return "yes"\n}\nreturn "no"'))
    error, at = only_error(text, "E2003")
    assert at == "n"


def test_missing_and_unknown_constructor_arguments() -> None:
    body = 'logs.insert(Log(user=id))\nreturn "ok"'
    text = spec(f'  action a(id: str) -> str {{\n    """d"""\n{_indent(body)}  }}\n')
    error, _ = only_error(text, "E2005")
    assert "minutes" in error.message
    body = 'logs.insert(Log(user=id, minutes=1, mins=2))\nreturn "ok"'
    text = spec(f'  action a(id: str) -> str {{\n    """d"""\n{_indent(body)}  }}\n')
    error, at = only_error(text, "E1006")
    assert at == "mins"


def test_error_type_absorbs_follow_on_errors() -> None:
    # one unknown name, used three times in one expression: one diagnostic per use site at most,
    # and nothing about the arithmetic on it
    text = spec(query("", "return str(nope + 1) + lower(nope)"))
    assert set(error_codes(text)) == {"E1001"}


# ---- effects ---------------------------------------------------------------------------------

EFFECTS = """
  internal action close(id: str) -> bool {
    let u = users[id]
    u.status = Status.closed
    return true
  }

  fn is_open(id: str) -> bool = users[id].status == Status.active

  action visit(id: str) -> int {
    \"\"\"Count a visit and close the account.\"\"\"
    let u = users[id]
    require is_open(id) else "closed"
    u.visits += 1
    close(id=id)
    return u.visits
  }

  query peek(id: str) -> Status {
    \"\"\"Read one status.\"\"\"
    return users[id].status
  }
"""


def test_effect_summary_of_tools() -> None:
    model = checked(spec(EFFECTS))
    close = model.effects["close"]
    assert close.writes == {"users.status"}
    visit = model.effects["visit"]
    assert {"users.visits", "users.status"} <= visit.writes  # own write + the callee's
    assert "users" in visit.reads
    assert {"close", "is_open"} <= visit.calls
    peek = model.effects["peek"]
    assert peek.writes == set()
    assert {"users", "users.status"} <= peek.reads


def test_effect_summary_of_table_and_scalar_writes() -> None:
    body = (
        "logs.insert(Log(user=id, minutes=1))\nnow = now + days(1)\n"
        'users.delete(id)\nreturn "ok"'
    )
    text = spec(f'  action a(id: str) -> str {{\n    """d"""\n{_indent(body)}  }}\n')
    writes = checked(text).effects["a"].writes
    assert {"logs", "now", "users"} <= writes
    assert not any(w.startswith("users.") for w in writes)


@pytest.mark.parametrize(
    "statement, at",
    [
        ("users[id].status = Status.closed", "users[id].status = Status.closed"),
        ("now = now + days(1)", "now = now + days(1)"),
        ("logs.insert(Log(user=id, minutes=1))", None),
        ("users.delete(id)", None),
    ],
)
def test_query_that_writes(statement: str, at: str | None) -> None:
    text = spec(query("id: str", f'{statement}\nreturn "x"'))
    error, found = only_error(text, "E3001")
    assert "query 'q'" in error.message
    assert error.help is not None and "`action`" in error.help
    if at is not None:
        assert found == at


def test_query_calling_a_writing_internal_action() -> None:
    text = spec(EFFECTS + query("id: str", 'let done = close(id=id)\nreturn "x"'))
    assert "E3001" in error_codes(text) or "E3002" in error_codes(text)


def test_fn_calling_an_action() -> None:
    text = spec(EFFECTS + "  fn shut(id: str) -> bool = close(id=id)\n")
    error, at = only_error(text, "E3002")
    assert at == "close"
    assert "fn 'shut'" in error.message and "action 'close'" in error.message


def test_tool_calling_a_public_tool() -> None:
    text = spec(EFFECTS + query("id: str", "return str(peek(id=id))"))
    error, at = only_error(text, "E3007")
    assert at == "peek"


def test_self_recursion() -> None:
    text = spec("  fn down(n: int) -> int = down(n - 1)\n" + query("", "return str(down(3))"))
    error, at = only_error(text, "E3008")
    assert at == "down"
    assert "'down' calls itself" in error.message


def test_mutual_recursion_is_reported() -> None:
    fns = "  fn ping(n: int) -> int = pong(n)\n  fn pong(n: int) -> int = ping(n)\n"
    found = errors(spec(fns + query("", "return str(ping(1))")))
    assert found and {d.code.code for d in found} == {"E3008"}
    assert "ping -> pong -> ping" in found[0].message


def test_mutual_recursion_is_one_diagnostic() -> None:
    fns = "  fn ping(n: int) -> int = pong(n)\n  fn pong(n: int) -> int = ping(n)\n"
    only_error(spec(fns + query("", "return str(ping(1))")), "E3008")


def test_recursion_through_an_internal_action() -> None:
    tools = (
        "  internal action again(id: str) -> int {\n    return again(id=id)\n  }\n"
        '  action go(id: str) -> int {\n    """d"""\n    return again(id=id)\n  }\n'
    )
    error, at = only_error(spec(tools), "E3008")
    assert at == "again"


def test_every_example_checks_cleanly() -> None:
    from example_specs import EXAMPLES

    for path in EXAMPLES:  # the task files are checked with their env in test_examples_e2e
        result = check(path.read_text(encoding="utf-8"))
        assert result.ok, (path.name, [(d.code.code, d.message) for d in result.diagnostics])
        assert result.stage_reached == "done"


# ---- issue 9: strictness that buys nothing, Python habits ------------------------------------


def diagnostics_of(text: str) -> list[tuple[str, str]]:
    return [(d.code.code, d.message) for d in check(text).diagnostics]


def test_a_table_is_accepted_where_a_list_of_its_rows_is_expected() -> None:
    text = spec(
        "  fn names(us: list[User]) -> list[str] = [u.name for u in us]\n"
        '  query everyone() -> list[User] {\n    """d"""\n    return users\n  }\n'
        '  query all_names() -> list[str] {\n    """d"""\n'
        "    let xs: list[User] = users\n    return names(users) + names(xs)\n  }\n"
    )
    assert diagnostics_of(text) == []


def test_a_table_can_be_sliced_like_the_list_of_its_rows() -> None:
    text = spec('  query two() -> list[User] {\n    """d"""\n    return users[:2]\n  }\n')
    assert diagnostics_of(text) == []


def test_a_local_bound_to_a_table_is_the_list_of_its_rows() -> None:
    body = "let xs = users\nif len(xs) > 2 {\n  xs = []\n}\nreturn str(len(xs))"
    model = checked(spec(query("", body)))
    let = tool_body(model, "q").stmts[0]
    assert isinstance(let, ast.Let)
    assert str(model.locals[id(let.name)].type) == "list[User]"


def test_a_conditional_of_a_table_and_a_list_is_a_list_of_rows() -> None:
    text = spec(query("", "let few = users if len(users) > 2 else []\nreturn str(len(few))"))
    model = checked(text)
    lets = [s for s in tool_body(model, "q").stmts if isinstance(s, ast.Let)]
    assert str(model.expr_types[id(lets[0].value)]) == "list[User]"
    error, _ = only_error(
        spec(query("", "let x = users if true else logs\nreturn str(x)")), "E2001"
    )
    assert "differ" in error.message


def test_a_table_is_not_a_list_of_refs_or_of_another_entity() -> None:
    text = spec('  query keys() -> list[ref User] {\n    """d"""\n    return users\n  }\n')
    only_error(text, "E2001")
    text = spec('  query wrong() -> list[Log] {\n    """d"""\n    return users\n  }\n')
    only_error(text, "E2001")


def test_date_of_a_datetime_is_accepted_like_date_of() -> None:
    text = spec(
        '  query day() -> date {\n    """d"""\n    return date(now)\n  }\n'
        '  query midnight() -> datetime {\n    """d"""\n    return datetime(date(now))\n  }\n'
    )
    assert diagnostics_of(text) == []
    error, at = only_error(spec(query("", "return str(date(3))")), "E2001")
    assert at == "3"


def test_let_else_on_a_tested_optional_is_a_warning_with_a_fix_dropping_the_else() -> None:
    body = 'if n != none {\n  let m = n else "missing"\n  return m\n}\nreturn "d"'
    text = spec(query("n: str?", body))
    result = check(text)
    assert [d.code.code for d in result.diagnostics] == ["W5009"]
    warning = result.diagnostics[0]
    assert warning.help == "drop the `else` part: `let m = n`"
    fixed = apply_fix(text, warning.fixes[0])
    assert "  let m = n\n" in fixed
    assert diagnostics_of(fixed) == []


def test_let_else_after_require_is_a_warning_too() -> None:
    body = 'require n != none else "n is required"\nlet m = n else "missing"\nreturn m'
    assert [c for c, _ in diagnostics_of(spec(query("n: str?", body)))] == ["W5009"]


def test_assignment_without_let_is_one_error_with_a_let_fix() -> None:
    body = "total = 0\nfor u in users {\n  total += u.visits\n}\nreturn str(total + total)"
    text = spec(query("", body))
    error, at = only_error(text, "E1001")
    assert at == "total"
    assert error.help == "declare a new variable with `let`: `let total = ...`"
    fixed = apply_fix(text, error.fixes[0])
    assert "    let total = 0\n" in fixed
    assert diagnostics_of(fixed) == []


def test_assignment_to_a_misspelled_variable_offers_the_rename_first() -> None:
    body = "let total = 0\nfor u in users {\n  totl = total + u.visits\n}\nreturn str(total)"
    text = spec(query("", body))
    error, _ = only_error(text, "E1001")
    assert (
        error.help == "did you mean 'total'? Or declare a new variable with `let`: `let totl = ...`"
    )
    assert [f.message for f in error.fixes] == [
        "replace 'totl' with 'total'",
        "declare it: `let totl = ...`",
    ]
    assert diagnostics_of(apply_fix(text, error.fixes[0])) == []


def test_assignment_without_let_in_a_branch_is_reported_once() -> None:
    body = 'if len(users) > 0 {\n  label = "some"\n} else {\n  label = "none"\n}\nreturn label'
    error, _ = only_error(spec(query("", body)), "E1001")
    assert error.fixes


@pytest.mark.parametrize(
    "call, replacement",
    [("datetime.now()", "now"), ("date.today()", "date_of(now)"), ("datetime.utcnow()", "now")],
)
def test_wall_clock_calls_are_fixed_to_the_clock_state_field(call: str, replacement: str) -> None:
    text = spec(query("", f"return str({call})"))
    error, at = only_error(text, "E1005")
    assert at == call
    assert error.help is not None and "no wall clock" in error.help
    assert error.help.endswith(f"write `{replacement}`")
    assert diagnostics_of(apply_fix(text, error.fixes[0])) == []


def test_time_time_has_a_help_but_no_fix() -> None:
    error, _ = only_error(spec(query("", "return str(time.time())")), "E1005")
    assert error.help is not None and "`now`" in error.help and "t2 - t1" in error.help
    assert error.fixes == ()


def test_calling_the_clock_field_is_fixed_to_reading_it() -> None:
    text = spec(query("", "return str(now())"))
    error, _ = only_error(text, "E1005")
    assert error.help == "'now' is a state field, not a function: write `now`"
    assert diagnostics_of(apply_fix(text, error.fixes[0])) == []


def test_float_into_int_suggests_round() -> None:
    text = spec(query("price: float", "let cents: int = price * 100\nreturn str(cents)"))
    error, at = only_error(text, "E2001")
    assert at == "price * 100"
    assert error.help is not None and "round(x)" in error.help
    fixed = apply_fix(text, error.fixes[0])
    assert "let cents: int = round(price * 100)" in fixed
    assert diagnostics_of(fixed) == []


def test_empty_braces_for_a_set_say_that_the_empty_set_is_set_call() -> None:
    result = check_source(
        SourceFile("s.env", 'env A {\n  """d"""\n  state { tags: set[str] = {} }\n}\n')
    )
    [diagnostic] = result.diagnostics
    assert diagnostic.code.code == "E2001" and "found an empty map" in diagnostic.message
    assert diagnostic.help is not None and "`set()`" in diagnostic.help


def test_suggestions_are_typing_slips_not_lookalikes() -> None:
    from envdsl.semantics.suggest import closest

    assert closest("emial", ["email", "name"]) == "email"  # swapped neighbours: one slip
    assert closest("Email", ["email"]) == "email"  # a case slip
    assert closest("descripton", ["description"]) == "description"
    # a similarity ratio alone offers these, and `check --fix` would apply them
    assert closest("state", ["same", "users"]) is None
    assert closest("fly", ["fee", "flights"]) is None
    assert closest("usr", ["user"]) == "user"
