"""The builtins' type rules: what each builtin function and method accepts and gives.

semantics/builtin_table.py lists every builtin with its rule from here; semantics/builtins.py
dispatches a call to it.  A rule reports bad arguments and returns the call's type.
"""

from __future__ import annotations

import datetime as _dt
from typing import Callable

from envdsl.diagnostics import codes
from envdsl.semantics import types as t
from envdsl.semantics.expr_typing import ExprTyping
from envdsl.semantics.scope import Scope, local_of
from envdsl.semantics.suggest import did_you_mean
from envdsl.syntax import ast

BuiltinRule = Callable[[ExprTyping, ast.Call, Scope], t.Type]
MethodRule = Callable[[ExprTyping, t.Type, ast.Attribute, ast.Call, Scope], t.Type]
TypeOf = Callable[[t.Type], t.Type]  # a method's result type from its receiver's
TypesOf = Callable[[t.Type], tuple[t.Type, ...]]  # its argument types from its receiver's


def check_all_args(checker: ExprTyping, node: ast.Call, scope: Scope) -> list[t.Type]:
    types = [checker.expr(arg, scope) for arg in node.args]
    for kwarg in node.kwargs:
        checker.expr(kwarg.value, scope)
    return types


# ---- shared argument shapes --------------------------------------------------------------------


def _positional(
    checker: ExprTyping, node: ast.Call, scope: Scope, name: str, low: int, high: int | None = None
) -> list[t.Type] | None:
    """Check the positional arguments' count (no keywords allowed); return their types."""
    high = low if high is None else high
    types = check_all_args(checker, node, scope)
    for kwarg in node.kwargs:
        checker.error(
            codes.UNKNOWN_ARGUMENT,
            f"{name}() takes no argument '{kwarg.name.text}'",
            kwarg.name.span,
        )
        return None
    if not low <= len(types) <= high:
        expected = f"{low}" if low == high else f"{low} to {high}"
        checker.error(
            codes.WRONG_ARITY,
            f"{name}() takes {expected} argument{'s' if high != 1 else ''}, found {len(types)}",
            node.span,
        )
        return None
    if any(t.is_error(x) for x in types):
        return None
    return types


def _elem(checker: ExprTyping, arg_type: t.Type, node: ast.Expr) -> t.Type:
    elem = t.element_type(arg_type)
    if elem is None:
        if isinstance(arg_type, t.OptionalType):
            return checker.error(
                codes.POSSIBLY_NONE, f"cannot iterate over {arg_type}: it may be none", node.span
            )
        return checker.error(
            codes.NOT_ITERABLE, f"expected a collection, found {arg_type}", node.span
        )
    return elem


def _want(
    checker: ExprTyping, actual: t.Type, allowed: tuple[t.Type, ...], node: ast.Expr, what: str
) -> bool:
    if (
        t.is_error(actual)
        or actual in allowed
        or any(checker.assignable(actual, a) for a in allowed)
    ):
        return True
    if len(allowed) == 1 or isinstance(actual, t.OptionalType):
        # one expected type, or an optional that would fit once unwrapped: the shared report
        # (E2017 possibly-none for the optional case)
        wanted = next(
            (a for a in allowed if checker.assignable(t.strip_optional(actual), a)), allowed[0]
        )
        checker.require_assignable(actual, wanted, node.span, what)
        return False
    names = " or ".join(str(a) for a in allowed)
    checker.error(codes.TYPE_MISMATCH, f"{what}: expected {names}, found {actual}", node.span)
    return False


# ---- builtin functions -------------------------------------------------------------------------


def len_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "len", 1)
    if types and isinstance(types[0], t.OptionalType):
        checker.error(
            codes.POSSIBLY_NONE,
            f"len() of a value that may be none ({types[0]})",
            node.args[0].span,
            help='unwrap it first: `let x = value else "message"`, or test `x != none`',
        )
    elif types and not (
        types[0] == t.STR or isinstance(types[0], (t.ListType, t.SetType, t.MapType, t.TableType))
    ):
        checker.error(
            codes.TYPE_MISMATCH,
            f"len() needs a string or collection, found {types[0]}",
            node.args[0].span,
        )
    return t.INT


def abs_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "abs", 1)
    if types is None:
        return t.ERROR
    _want(checker, types[0], (t.INT, t.FLOAT, t.DURATION), node.args[0], "abs() argument")
    return types[0]


def round_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "round", 1, 2)
    if types is None:
        return t.ERROR
    _want(checker, types[0], t.NUMERIC, node.args[0], "round() argument")
    if len(types) == 2:
        _want(checker, types[1], (t.INT,), node.args[1], "round() digits")
        return t.FLOAT
    return t.INT


def min_max_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "min"
    if not node.args:
        return checker.error(codes.WRONG_ARITY, f"{name}() needs at least one argument", node.span)
    types = [checker.expr(arg, scope) for arg in node.args]
    if len(types) == 1:
        elem = _elem(checker, types[0], node.args[0])
    else:
        elem = t.NOTHING
        for arg, arg_type in zip(node.args, types):
            joined = t.join(elem, arg_type)
            if joined is None:
                return checker.error(
                    codes.TYPE_MISMATCH,
                    f"{name}() arguments differ: {elem} and {arg_type}",
                    arg.span,
                )
            elem = joined
    key_given = False
    for kwarg in node.kwargs:
        if kwarg.name.text == "key":
            checker.lambda_key(kwarg.value, elem, scope)
            key_given = True
        elif kwarg.name.text == "default":
            default = checker.expr(kwarg.value, scope)
            joined = t.join(elem, default)
            elem = joined if joined is not None else elem
        else:
            checker.error(
                codes.UNKNOWN_ARGUMENT,
                f"{name}() takes no argument '{kwarg.name.text}'",
                kwarg.name.span,
            )
    if not key_given and not (
        t.is_error(elem) or t.orderable(elem) or isinstance(elem, t.NothingType)
    ):
        checker.error(
            codes.INVALID_OPERAND,
            f"{name}() cannot order {elem}",
            node.span,
            help=f"give a key: `{name}(xs, key=lambda x: x.field)`",
        )
    return elem


def sum_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "sum", 1)
    if types is None:
        return t.ERROR
    elem = _elem(checker, types[0], node.args[0])
    if isinstance(elem, t.NothingType):
        return t.INT
    if not (t.is_error(elem) or elem in (t.INT, t.FLOAT, t.DURATION)):
        return checker.error(
            codes.INVALID_OPERAND,
            f"sum() needs numbers or durations, found {elem}",
            node.args[0].span,
        )
    return elem


def count_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "count", 1)
    if types is not None:
        _elem(checker, types[0], node.args[0])
    return t.INT


def all_any_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "all"
    types = _positional(checker, node, scope, name, 1)
    if types is not None:
        elem = _elem(checker, types[0], node.args[0])
        if not (t.is_error(elem) or elem == t.BOOL or isinstance(elem, t.NothingType)):
            checker.error(
                codes.CONDITION_NOT_BOOL, f"{name}() needs bools, found {elem}", node.args[0].span
            )
    return t.BOOL


def sorted_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    if len(node.args) != 1:
        check_all_args(checker, node, scope)
        return checker.error(
            codes.WRONG_ARITY, f"sorted() takes 1 argument, found {len(node.args)}", node.span
        )
    elem = _elem(checker, checker.expr(node.args[0], scope), node.args[0])
    key_given = False
    for kwarg in node.kwargs:
        if kwarg.name.text == "key":
            checker.lambda_key(kwarg.value, elem, scope)
            key_given = True
        elif kwarg.name.text == "reverse":
            checker.expect(kwarg.value, scope, t.BOOL, "sorted() reverse")
        else:
            checker.error(
                codes.UNKNOWN_ARGUMENT,
                f"sorted() takes no argument '{kwarg.name.text}'",
                kwarg.name.span,
            )
    if not key_given and not (
        t.is_error(elem) or t.orderable(elem) or isinstance(elem, (t.EnumType, t.NothingType))
    ):
        checker.error(
            codes.INVALID_OPERAND,
            f"sorted() cannot order {elem}",
            node.span,
            help=(
                # Python's `sorted(m.items())`: pairs have no order (nor indexes) here
                "sort the keys and read each value: `for k in sorted(m.keys()) { ... m[k] ... }`"
                if isinstance(elem, t.TupleType)
                else "give a key: `sorted(xs, key=lambda x: x.field)`"
            ),
        )
    return t.ListType(elem)


def first_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "first", 1)
    return t.optional(_elem(checker, types[0], node.args[0])) if types else t.ERROR


def collection_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "list"
    types = _positional(checker, node, scope, name, 0, 1)
    if types is None:
        return t.ERROR
    elem = _elem(checker, types[0], node.args[0]) if types else t.NOTHING
    return t.SetType(elem) if name == "set" else t.ListType(elem)


def range_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "range", 1, 3)
    for arg, arg_type in zip(node.args, types or []):
        _want(checker, arg_type, (t.INT,), arg, "range() argument")
    return t.ListType(t.INT)


def zip_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "zip", 2, 3)
    if types is None:
        return t.ERROR
    return t.ListType(t.TupleType(tuple(_elem(checker, x, a) for x, a in zip(types, node.args))))


def enumerate_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "enumerate", 1)
    if types is None:
        return t.ERROR
    return t.ListType(t.TupleType((t.INT, _elem(checker, types[0], node.args[0]))))


def str_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    _positional(checker, node, scope, "str", 1)
    return t.STR


def number_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "int"
    types = _positional(checker, node, scope, name, 1)
    if types:
        _want(checker, types[0], (t.INT, t.FLOAT, t.STR), node.args[0], f"{name}() argument")
    return t.INT if name == "int" else t.FLOAT


def string_rule(
    name: str, arg_types: tuple[t.Type, ...], result: t.Type, optional_tail: int = 0
) -> BuiltinRule:
    """A string function's rule: fixed argument types (the last `optional_tail` optional)."""

    def rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
        types = _positional(
            checker, node, scope, name, len(arg_types) - optional_tail, len(arg_types)
        )
        for arg, arg_type, wanted in zip(node.args, types or [], arg_types):
            _want(checker, arg_type, (wanted,), arg, f"{name}() argument")
        return result

    return rule


def time_rule(
    name: str, arg_types: tuple[tuple[t.Type, ...], ...], result: t.Type | None
) -> BuiltinRule:
    """result None: the type of the first argument (add_months(date) is a date)."""

    def rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
        types = _positional(checker, node, scope, name, len(arg_types))
        if types is None:
            return result or t.ERROR
        for arg, arg_type, wanted in zip(node.args, types, arg_types):
            _want(checker, arg_type, wanted, arg, f"{name}() argument")
        if name in ("days_between", "minutes_between") and types[0] != types[1]:
            if not any(t.is_error(x) for x in types):
                checker.error(
                    codes.TYPE_MISMATCH,
                    f"{name}() compares like with like, found {types[0]} and {types[1]}",
                    node.span,
                )
        return result if result is not None else types[0]

    return rule


DATE_LIKE = (t.DATE, t.DATETIME)


def date_literal_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "date"
    result = t.DATE if name == "date" else t.DATETIME
    types = _positional(checker, node, scope, name, 1)
    if types is None:
        return result
    if types[0] == (t.DATETIME if name == "date" else t.DATE):
        return result  # Python's habit `date(t)`: the same as `date_of(t)` (`datetime_of(d)`)
    _want(checker, types[0], (t.STR,), node.args[0], f"{name}() argument")
    literal = node.args[0]
    if isinstance(literal, ast.StrLit) and parse_time_literal(name, literal.value) is None:
        example = "2024-05-01" if name == "date" else "2024-05-01T09:00:00Z"
        checker.error(
            codes.INVALID_LITERAL,
            f"{literal.value!r} is not a valid {name}",
            literal.span,
            help=f'write ISO 8601: {name}("{example}")',
        )
    return result


def parse_time_literal(kind: str, text: str) -> _dt.date | _dt.datetime | None:
    """The value of a date/datetime literal, or None if it is not ISO 8601."""
    try:
        if kind == "date":
            return _dt.date.fromisoformat(text) if len(text) == 10 else None
        if "T" not in text and " " not in text:
            return None
        return _dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def same_items_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    """`same_items(a, b)`: two collections with the same elements, in any order."""
    types = _positional(checker, node, scope, "same_items", 2)
    if types is None:
        return t.BOOL
    left, right = (_elem(checker, x, arg) for x, arg in zip(types, node.args))
    if (
        not t.is_error(left)
        and not t.is_error(right)
        and not checker.assignable.comparable(left, right)
    ):
        checker.error(
            codes.TYPE_MISMATCH,
            f"same_items() compares collections of one element type, found {left} and {right}",
            node.span,
        )
    return t.BOOL


_MENTIONABLE = (t.STR, t.INT, t.FLOAT)


def mentions_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    """`mentions(text, v)` / `mentions(text, [v, w])`: a check's forgiving text match."""
    if checker.ctx.kind != "check":
        check_all_args(checker, node, scope)
        return checker.error(
            codes.UNKNOWN_FUNCTION,
            "mentions() grades an agent's text against the state and is only available in "
            "task checks",
            node.func.span,
            help="in a tool, compare normalized text: `lower(p) in lower(s)`",
        )
    types = _positional(checker, node, scope, "mentions", 2)
    if types is None:
        return t.BOOL
    _want(checker, types[0], (t.STR,), node.args[0], "mentions() text")
    wanted = types[1]
    if isinstance(wanted, (t.ListType, t.SetType)):
        wanted = wanted.elem
    if wanted != t.NOTHING and not isinstance(wanted, (t.RefType, t.EnumType)):
        _want(checker, wanted, _MENTIONABLE, node.args[1], "mentions() value")
    return t.BOOL


def auto_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "auto", 1)
    if types:
        _want(checker, types[0], (t.STR,), node.args[0], "auto() prefix")
    if not checker.allow_auto:
        checker.error(
            codes.INVALID_AUTO,
            "`auto(...)` is only allowed as the default of a `str` key field",
            node.span,
            help='declare the key as `key id: str = auto("ID")` and leave it out of inserts',
        )
    return t.STR


def called_rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "called"
    result = t.BOOL if name == "called" else t.INT
    if checker.ctx.kind != "check":
        check_all_args(checker, node, scope)
        return checker.error(
            codes.UNKNOWN_FUNCTION,
            f"{name}() reads the call trace and is only available in task checks",
            node.func.span,
        )
    if len(node.args) != 1 or not isinstance(node.args[0], ast.StrLit):
        check_all_args(checker, node, scope)
        return checker.error(
            codes.TYPE_MISMATCH,
            f'{name}() takes a tool name as a string: {name}("tool_name")',
            node.span,
        )
    tool_name = node.args[0].value
    info = checker.checked.callables.get(tool_name)
    if info is None or not info.is_tool or info.internal:
        tools = [c.name for c in checker.checked.tools if not c.internal]
        help, fixes = did_you_mean(tool_name, tools, node.args[0].span)
        for kwarg in node.kwargs:
            checker.expr(kwarg.value, scope)
        return checker.error(
            codes.UNKNOWN_TOOL, f"unknown tool '{tool_name}'", node.args[0].span, help, fixes
        )
    params = {p.name: p for p in info.params}
    for kwarg in node.kwargs:
        param = params.get(kwarg.name.text)
        if param is None:
            help, fixes = did_you_mean(kwarg.name.text, params, kwarg.name.span)
            checker.error(
                codes.UNKNOWN_ARGUMENT,
                f"tool '{tool_name}' has no parameter '{kwarg.name.text}'",
                kwarg.name.span,
                help,
                fixes,
            )
            checker.expr(kwarg.value, scope)
        else:
            checker.expect(kwarg.value, scope, param.type, f"argument '{param.name}'")
    return result


# ---- methods -----------------------------------------------------------------------------------


def method_rule(
    arg_types: TypesOf,
    result: TypeOf,
    *,
    writes: bool = False,
    stores: bool = False,
    optional_tail: int = 0,
) -> MethodRule:
    """A method's rule: argument and result types from the receiver's; `writes`: it changes
    the receiver in place; `stores`: its arguments end up inside the receiver."""

    def rule(
        checker: ExprTyping, receiver: t.Type, func: ast.Attribute, node: ast.Call, scope: Scope
    ) -> t.Type:
        wanted = arg_types(receiver)
        name = f"{func.name.text}"
        types = _positional(checker, node, scope, name, len(wanted) - optional_tail, len(wanted))
        if writes and types and _refine_empty(func.obj, receiver, types[0], scope):
            types = []  # `let xs = []` then `xs.append(1)`: the first element fixes the type
        for arg, arg_type, expected in zip(node.args, types or [], wanted):
            checker.require_assignable(arg_type, expected, arg.span, f"argument of {name}()")
        if writes:
            stored = tuple(node.args) if stores else ()
            checker.write_place(func.obj, node.span, scope, mutation=f".{name}()", values=stored)
        return result(receiver)

    return rule


def _refine_empty(obj: ast.Expr, receiver: t.Type, item: t.Type, scope: Scope) -> bool:
    """Give a local created empty (`[]`, `set()`) the element type of its first element."""
    if not isinstance(obj, ast.NameRef) or t.element_type(receiver) != t.NOTHING:
        return False
    local = local_of(scope, obj)
    if local is None or t.is_error(item):
        return False
    if isinstance(receiver, t.ListType):
        local.type = t.ListType(item)
    elif isinstance(receiver, t.SetType):
        local.type = t.SetType(item)
    else:
        return False
    return True


def elem_of(receiver: t.Type) -> t.Type:
    return t.element_type(receiver) or t.ERROR


def key_of(checker_receiver: t.Type) -> t.Type:
    if isinstance(checker_receiver, t.MapType):
        return checker_receiver.key
    if isinstance(checker_receiver, t.TableType):
        return t.RefType(checker_receiver.entity)
    return t.ERROR


def value_of(receiver: t.Type) -> t.Type:
    if isinstance(receiver, t.MapType):
        return receiver.value
    if isinstance(receiver, t.TableType):
        return t.RecordType(receiver.entity, True)
    return t.ERROR


def insert_rule(
    checker: ExprTyping, receiver: t.Type, func: ast.Attribute, node: ast.Call, scope: Scope
) -> t.Type:
    assert isinstance(receiver, t.TableType)
    row = t.RecordType(receiver.entity, True)
    types = _positional(checker, node, scope, "insert", 1)
    if types:
        checker.require_assignable(types[0], row, node.args[0].span, "the inserted row")
    checker.write_place(func.obj, node.span, scope, mutation=".insert()")
    return row


def map_get_rule(
    checker: ExprTyping, receiver: t.Type, func: ast.Attribute, node: ast.Call, scope: Scope
) -> t.Type:
    """`m.get(k)` may be none; `m.get(k, default)` is not (Python's dict.get)."""
    types = _positional(checker, node, scope, "get", 1, 2)
    if types is None:
        return t.ERROR
    checker.require_assignable(types[0], key_of(receiver), node.args[0].span, "map key")
    if len(types) == 1:
        return t.optional(value_of(receiver))
    joined = t.join(value_of(receiver), types[1])
    if joined is None:
        return checker.error(
            codes.TYPE_MISMATCH,
            f"the default of get() must be a {value_of(receiver)}, found {types[1]}",
            node.args[1].span,
        )
    return joined


def no_args_rule(result: TypeOf) -> MethodRule:
    return method_rule(lambda r: (), result)


def enum_values_rule(
    checker: ExprTyping, receiver: t.Type, func: ast.Attribute, node: ast.Call, scope: Scope
) -> t.Type:
    """`E.values()` of an enum `E` (called without arguments: see builtins.py)."""
    assert isinstance(receiver, t.TypeRefType)
    return t.ListType(receiver.target)
