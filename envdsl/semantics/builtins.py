"""Typing of calls: builtin functions, methods, constructors, fns and tools.

The builtin table here is the single source of truth for what a spec may call; the runtime
implements the same names.  Method calls on strings and collections are accepted Python style
(`s.lower()`, `xs.count(x)`) because that is what an LLM writes first.
"""

from __future__ import annotations

import datetime as _dt
from typing import Callable

from envdsl.diagnostics import Edit, Fix, codes
from envdsl.semantics import types as t
from envdsl.semantics.expr_typing import ExprTyping
from envdsl.semantics.scope import Scope
from envdsl.semantics.suggest import did_you_mean
from envdsl.syntax import ast

BuiltinRule = Callable[[ExprTyping, ast.Call, Scope], t.Type]
_FUNCTIONS: dict[str, BuiltinRule] = {}


def _builtin(*names: str) -> Callable[[BuiltinRule], BuiltinRule]:
    def register(rule: BuiltinRule) -> BuiltinRule:
        for name in names:
            _FUNCTIONS[name] = rule
        return rule

    return register


def builtin_names() -> list[str]:
    return sorted(_FUNCTIONS)


# ---- dispatch ----------------------------------------------------------------------------------


def check_call(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    func = node.func
    if isinstance(func, ast.NameRef):
        return _call_name(checker, func.name, node, scope)
    if isinstance(func, ast.Attribute):
        return _call_method(checker, func, node, scope)
    callee = checker.expr(func, scope)
    _check_all_args(checker, node, scope)
    if t.is_error(callee):
        return t.ERROR
    return checker.error(codes.INVALID_OPERAND, f"{callee} cannot be called", func.span)


def _check_all_args(checker: ExprTyping, node: ast.Call, scope: Scope) -> list[t.Type]:
    types = [checker.expr(arg, scope) for arg in node.args]
    for kwarg in node.kwargs:
        checker.expr(kwarg.value, scope)
    return types


def _call_name(checker: ExprTyping, name: str, node: ast.Call, scope: Scope) -> t.Type:
    span = node.func.span
    checked = checker.checked
    local = scope.lookup(name)
    if local is not None:
        _check_all_args(checker, node, scope)
        local.used = True
        if t.is_error(local.type):
            return t.ERROR
        return checker.error(codes.INVALID_OPERAND, f"'{name}' is a variable, not a function", span)
    record = checked.records.get(name)
    if record is not None:
        checked.used.add(name)
        params = [
            (f.name, f.type, not f.has_default and not isinstance(f.type, t.OptionalType))
            for f in record.fields.values()
        ]
        checker.arguments(node, scope, params, name, allow_positional=False, noun="field")
        return t.RecordType(name, record.is_entity)
    info = checked.callables.get(name)
    if info is not None:
        ctx = checker.ctx
        if ctx.kind in ("const", "default"):
            # fns and tools run on an environment (they may read its state); a constant or a
            # default is computed once, before and without any environment
            _check_all_args(checker, node, scope)
            checked.used.add(name)  # it is used, wrongly: no second report that it is unused
            return checker.error(
                codes.CALL_WITHOUT_ENVIRONMENT,
                f"{ctx.describe} cannot call {info.kind} '{name}': it is computed without an "
                "environment",
                span,
                help="write the value itself, or compute it in the tool that needs it",
            )
        if info.is_tool and ctx.kind not in ("solution",):
            if not info.internal:
                _check_all_args(checker, node, scope)
                return checker.error(
                    codes.CALL_OF_PUBLIC_TOOL,
                    f"'{name}' is a public tool; tools can call only `internal` tools and fns",
                    span,
                    help=f"move the shared part into an `internal {info.kind}` or a `fn`",
                )
            if info.kind == "action" and not ctx.can_write:
                code = codes.WRITE_IN_QUERY if ctx.kind == "query" else codes.WRITE_IN_PURE_CONTEXT
                checker.error(
                    code,
                    f"{ctx.describe} calls action '{name}', which may write state",
                    span,
                    help="only actions may call actions; make this an `action`, or call a query",
                )
        return checker.call_declared(info, node, scope)
    rule = _FUNCTIONS.get(name)
    if rule is not None:
        return rule(checker, node, scope)
    _check_all_args(checker, node, scope)
    candidates = list(_FUNCTIONS) + list(checked.callables) + list(checked.records)
    help, fixes = did_you_mean(name, candidates, span)
    if name in checked.variants:
        cases = checked.variants[name].cases
        example = f"{name}.{next(iter(cases))}(...)" if cases else f"{name}.<case>(...)"
        help = f"'{name}' is a variant: build one of its cases, `{example}`"
    elif name in checked.state and not node.args and not node.kwargs:
        # `now()`: the clock (or any state field) is read, not called
        help = f"'{name}' is a state field, not a function: write `{name}`"
        fixes = (Fix(f"write `{name}`", (Edit(node.span, name),)),)
    elif help is None and name in _PYTHON_ONLY:
        help = _PYTHON_ONLY[name]
    return checker.error(codes.UNKNOWN_FUNCTION, f"unknown function '{name}'", span, help, fixes)


_PYTHON_ONLY = {
    "print": "tools return values; there is no output",
    "uuid4": 'ids come from `auto("PREFIX")` keys',
    "time": "the clock is the `now` state field",
    "now": 'there is no wall clock: declare `now: datetime "The current time"` in `state`',
    "today": 'there is no wall clock: declare `today: date "The current date"` in `state`',
    "isinstance": "values are statically typed; no runtime type tests are needed",
    "dict": "write a map literal `{k: v}`",
    "tuple": "there are no tuples; use a record",
}


# Python's wall-clock calls -> the type of the value they give
_WALL_CLOCK = {
    ("datetime", "now"): t.DATETIME,
    ("datetime", "utcnow"): t.DATETIME,
    ("datetime", "today"): t.DATETIME,
    ("date", "today"): t.DATE,
    ("time", "time"): t.FLOAT,
    ("time", "monotonic"): t.FLOAT,
}


def _wall_clock(checker: ExprTyping, func: ast.Attribute, node: ast.Call, scope: Scope) -> bool:
    """Report `datetime.now()`, `date.today()`, `time.time()` (True if it was one).

    Environments are deterministic: the clock is a state field that actions set, so the fix
    reads that field (or, for a date, the date of the datetime field)."""
    obj = func.obj
    if not isinstance(obj, ast.NameRef) or scope.lookup(obj.name) is not None:
        return False
    wanted = _WALL_CLOCK.get((obj.name, func.name.text))
    if wanted is None or obj.name in checker.checked.state:
        return False
    _check_all_args(checker, node, scope)
    written = f"{obj.name}.{func.name.text}()"
    clocks = [
        name for name, info in checker.checked.state.items() if info.type in (t.DATE, t.DATETIME)
    ]
    clocks.sort(key=lambda name: name not in ("now", "today"))
    replacement = clock = None
    for clock in clocks:
        kind = checker.checked.state[clock].type
        if kind == wanted:
            replacement = clock
        elif wanted == t.DATE and kind == t.DATETIME:
            replacement = f"date_of({clock})"
        if replacement is not None:
            break
    fixes: list[Fix] = []
    if replacement is not None:
        help = (
            f"there is no wall clock: the time is the state field `{clock}`, which actions "
            f"set; write `{replacement}`"
        )
        fixes.append(Fix(f"read the clock: `{replacement}`", (Edit(node.span, replacement),)))
    elif wanted == t.FLOAT:
        field = next((c for c in clocks if checker.checked.state[c].type == t.DATETIME), None)
        where = f"the state field `{field}`" if field else "a state field `now: datetime`"
        help = (
            f"there is no wall clock: the time is {where}, which actions set; measure "
            "time with `t2 - t1` (a duration) or `minutes_between(t1, t2)`"
        )
    else:
        help = (
            "there is no wall clock: declare the time as a state field, "
            '`now: datetime "The current time"`, and read `now`'
        )
    checker.error(
        codes.UNKNOWN_FUNCTION,
        f"`{written}` reads the wall clock, which environments do not have",
        node.span,
        help,
        fixes,
    )
    return True


def _call_method(checker: ExprTyping, func: ast.Attribute, node: ast.Call, scope: Scope) -> t.Type:
    if _wall_clock(checker, func, node, scope):
        return t.ERROR
    receiver = checker.expr(func.obj, scope)
    method = func.name.text
    if t.is_error(receiver):
        _check_all_args(checker, node, scope)
        return t.ERROR
    if isinstance(receiver, t.TypeRefType) and isinstance(receiver.target, t.EnumType):
        if method == "values" and not node.args and not node.kwargs:
            return t.ListType(receiver.target)
    if isinstance(receiver, t.TypeRefType) and isinstance(receiver.target, t.VariantType):
        return _build_case(checker, receiver.target.name, func, node, scope)
    if isinstance(receiver, t.OptionalType):
        _check_all_args(checker, node, scope)
        return checker.error(
            codes.POSSIBLY_NONE,
            f"'{method}' is called on a value that may be none",
            func.obj.span,
            help='unwrap it first: `let x = value else "message"`',
        )
    table = _METHODS.get(_receiver_kind(receiver), {})
    rule = table.get(method)
    if rule is not None:
        return rule(checker, receiver, func, node, scope)
    if method in _FUNCTIONS and receiver == t.STR and method in _STRING_FUNCTIONS:
        # `s.lower()` == `lower(s)`: reuse the function's rule with the receiver prepended
        rewritten = ast.Call(
            ast.NameRef(method, func.name.span), (func.obj, *node.args), node.kwargs, node.span
        )
        return _FUNCTIONS[method](checker, rewritten, scope)
    _check_all_args(checker, node, scope)
    known = sorted(set(table) | (_STRING_FUNCTIONS if receiver == t.STR else set()))
    help, fixes = did_you_mean(method, known, func.name.span)
    return checker.error(
        codes.UNKNOWN_METHOD,
        f"{receiver} has no method '{method}'",
        func.name.span,
        help or (f"its methods are: {', '.join(known)}" if known else None),
        fixes,
    )


def _build_case(
    checker: ExprTyping, variant: str, func: ast.Attribute, node: ast.Call, scope: Scope
) -> t.Type:
    """`PaymentMethod.gift_card(id=..., amount=...)`: a case is built as a record is."""
    case = checker.expr(func, scope)  # the case (or the unknown-case report)
    if not isinstance(case, t.TypeRefType) or not isinstance(case.target, t.RecordType):
        _check_all_args(checker, node, scope)
        return t.ERROR
    record = checker.checked.records[case.target.name]
    params = [
        (f.name, f.type, not f.has_default and not isinstance(f.type, t.OptionalType))
        for f in record.fields.values()
    ]
    checker.arguments(node, scope, params, record.name, allow_positional=False, noun="field")
    return case.target


def method_names(receiver: t.Type) -> list[str]:
    """The methods a value of this type has (for an editor's completion)."""
    return sorted(_METHODS.get(_receiver_kind(receiver), {}))


def _receiver_kind(receiver: t.Type) -> str:
    if isinstance(receiver, t.ListType):
        return "list"
    if isinstance(receiver, t.SetType):
        return "set"
    if isinstance(receiver, t.MapType):
        return "map"
    if isinstance(receiver, t.TableType):
        return "table"
    if receiver == t.STR:
        return "str"
    return ""


# ---- shared argument shapes --------------------------------------------------------------------


def _positional(
    checker: ExprTyping, node: ast.Call, scope: Scope, name: str, low: int, high: int | None = None
) -> list[t.Type] | None:
    """Check the positional arguments' count (no keywords allowed); return their types."""
    high = low if high is None else high
    types = _check_all_args(checker, node, scope)
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


@_builtin("len")
def _len(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
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


@_builtin("abs")
def _abs(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "abs", 1)
    if types is None:
        return t.ERROR
    _want(checker, types[0], (t.INT, t.FLOAT, t.DURATION), node.args[0], "abs() argument")
    return types[0]


@_builtin("round")
def _round(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "round", 1, 2)
    if types is None:
        return t.ERROR
    _want(checker, types[0], t.NUMERIC, node.args[0], "round() argument")
    if len(types) == 2:
        _want(checker, types[1], (t.INT,), node.args[1], "round() digits")
        return t.FLOAT
    return t.INT


@_builtin("min", "max")
def _min_max(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
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


@_builtin("sum")
def _sum(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
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


@_builtin("count")
def _count(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "count", 1)
    if types is not None:
        _elem(checker, types[0], node.args[0])
    return t.INT


@_builtin("all", "any")
def _all_any(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "all"
    types = _positional(checker, node, scope, name, 1)
    if types is not None:
        elem = _elem(checker, types[0], node.args[0])
        if not (t.is_error(elem) or elem == t.BOOL or isinstance(elem, t.NothingType)):
            checker.error(
                codes.CONDITION_NOT_BOOL, f"{name}() needs bools, found {elem}", node.args[0].span
            )
    return t.BOOL


@_builtin("sorted")
def _sorted(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    if len(node.args) != 1:
        _check_all_args(checker, node, scope)
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
            help="give a key: `sorted(xs, key=lambda x: x.field)`",
        )
    return t.ListType(elem)


@_builtin("first")
def _first(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "first", 1)
    return t.optional(_elem(checker, types[0], node.args[0])) if types else t.ERROR


@_builtin("set", "list")
def _collection(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "list"
    types = _positional(checker, node, scope, name, 0, 1)
    if types is None:
        return t.ERROR
    elem = _elem(checker, types[0], node.args[0]) if types else t.NOTHING
    return t.SetType(elem) if name == "set" else t.ListType(elem)


@_builtin("range")
def _range(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "range", 1, 3)
    for arg, arg_type in zip(node.args, types or []):
        _want(checker, arg_type, (t.INT,), arg, "range() argument")
    return t.ListType(t.INT)


@_builtin("zip")
def _zip(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "zip", 2, 3)
    if types is None:
        return t.ERROR
    return t.ListType(t.TupleType(tuple(_elem(checker, x, a) for x, a in zip(types, node.args))))


@_builtin("enumerate")
def _enumerate(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    types = _positional(checker, node, scope, "enumerate", 1)
    if types is None:
        return t.ERROR
    return t.ListType(t.TupleType((t.INT, _elem(checker, types[0], node.args[0]))))


@_builtin("str")
def _str(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    _positional(checker, node, scope, "str", 1)
    return t.STR


@_builtin("int", "float")
def _number(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "int"
    types = _positional(checker, node, scope, name, 1)
    if types:
        _want(checker, types[0], (t.INT, t.FLOAT, t.STR), node.args[0], f"{name}() argument")
    return t.INT if name == "int" else t.FLOAT


def _string_rule(
    name: str, arg_types: tuple[t.Type, ...], result: t.Type, optional_tail: int = 0
) -> None:
    def rule(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
        types = _positional(
            checker, node, scope, name, len(arg_types) - optional_tail, len(arg_types)
        )
        for arg, arg_type, wanted in zip(node.args, types or [], arg_types):
            _want(checker, arg_type, (wanted,), arg, f"{name}() argument")
        return result

    _FUNCTIONS[name] = rule


_STRING_FUNCTIONS = {
    "lower",
    "upper",
    "strip",
    "startswith",
    "endswith",
    "contains",
    "split",
    "replace",
}
for _name in ("lower", "upper", "strip"):
    _string_rule(_name, (t.STR,), t.STR)
for _name in ("startswith", "endswith", "contains"):
    _string_rule(_name, (t.STR, t.STR), t.BOOL)
_string_rule("split", (t.STR, t.STR), t.ListType(t.STR), optional_tail=1)
_string_rule("replace", (t.STR, t.STR, t.STR), t.STR)


def _time_rule(name: str, arg_types: tuple[tuple[t.Type, ...], ...], result: t.Type | None) -> None:
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

    _FUNCTIONS[name] = rule


_DATE_LIKE = (t.DATE, t.DATETIME)
for _name in ("days", "hours", "minutes", "seconds"):
    _time_rule(_name, (t.NUMERIC,), t.DURATION)
_time_rule("date_of", ((t.DATETIME,),), t.DATE)
_time_rule("datetime_of", ((t.DATE,),), t.DATETIME)
_time_rule("days_between", (_DATE_LIKE, _DATE_LIKE), t.INT)
_time_rule("minutes_between", ((t.DATETIME,), (t.DATETIME,)), t.INT)
_time_rule("add_months", (_DATE_LIKE, (t.INT,)), None)
_time_rule("weekday", (_DATE_LIKE,), t.INT)
_time_rule("total_minutes", ((t.DURATION,),), t.INT)
_time_rule("total_seconds", ((t.DURATION,),), t.INT)


@_builtin("date", "datetime")
def _date_literal(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
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


@_builtin("same_items")
def _same_items(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
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


@_builtin("mentions")
def _mentions(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    """`mentions(text, v)` / `mentions(text, [v, w])`: a check's forgiving text match."""
    if checker.ctx.kind != "check":
        _check_all_args(checker, node, scope)
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


@_builtin("auto")
def _auto(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
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


@_builtin("called", "calls")
def _called(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    name = node.func.name if isinstance(node.func, ast.NameRef) else "called"
    result = t.BOOL if name == "called" else t.INT
    if checker.ctx.kind != "check":
        _check_all_args(checker, node, scope)
        return checker.error(
            codes.UNKNOWN_FUNCTION,
            f"{name}() reads the call trace and is only available in task checks",
            node.func.span,
        )
    if len(node.args) != 1 or not isinstance(node.args[0], ast.StrLit):
        _check_all_args(checker, node, scope)
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

MethodRule = Callable[[ExprTyping, t.Type, ast.Attribute, ast.Call, Scope], t.Type]


def _method(
    arg_types: Callable[[t.Type], tuple[t.Type, ...]],
    result: Callable[[t.Type], t.Type],
    *,
    writes: bool = False,
    optional_tail: int = 0,
) -> MethodRule:
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
            stored = tuple(node.args) if name in ("append", "extend", "add") else ()
            checker.write_place(func.obj, node.span, scope, mutation=f".{name}()", values=stored)
        return result(receiver)

    return rule


def _refine_empty(obj: ast.Expr, receiver: t.Type, item: t.Type, scope: Scope) -> bool:
    """Give a local created empty (`[]`, `set()`) the element type of its first element."""
    if not isinstance(obj, ast.NameRef) or t.element_type(receiver) != t.NOTHING:
        return False
    local = scope.lookup(obj.name)
    if local is None or t.is_error(item):
        return False
    if isinstance(receiver, t.ListType):
        local.type = t.ListType(item)
    elif isinstance(receiver, t.SetType):
        local.type = t.SetType(item)
    else:
        return False
    return True


def _elem_of(receiver: t.Type) -> t.Type:
    return t.element_type(receiver) or t.ERROR


def _key_of(checker_receiver: t.Type) -> t.Type:
    if isinstance(checker_receiver, t.MapType):
        return checker_receiver.key
    if isinstance(checker_receiver, t.TableType):
        return t.RefType(checker_receiver.entity)
    return t.ERROR


def _value_of(receiver: t.Type) -> t.Type:
    if isinstance(receiver, t.MapType):
        return receiver.value
    if isinstance(receiver, t.TableType):
        return t.RecordType(receiver.entity, True)
    return t.ERROR


def _insert(
    checker: ExprTyping, receiver: t.Type, func: ast.Attribute, node: ast.Call, scope: Scope
) -> t.Type:
    assert isinstance(receiver, t.TableType)
    row = t.RecordType(receiver.entity, True)
    types = _positional(checker, node, scope, "insert", 1)
    if types:
        checker.require_assignable(types[0], row, node.args[0].span, "the inserted row")
    checker.write_place(func.obj, node.span, scope, mutation=".insert()")
    return row


def _map_get(
    checker: ExprTyping, receiver: t.Type, func: ast.Attribute, node: ast.Call, scope: Scope
) -> t.Type:
    """`m.get(k)` may be none; `m.get(k, default)` is not (Python's dict.get)."""
    types = _positional(checker, node, scope, "get", 1, 2)
    if types is None:
        return t.ERROR
    checker.require_assignable(types[0], _key_of(receiver), node.args[0].span, "map key")
    if len(types) == 1:
        return t.optional(_value_of(receiver))
    joined = t.join(_value_of(receiver), types[1])
    if joined is None:
        return checker.error(
            codes.TYPE_MISMATCH,
            f"the default of get() must be a {_value_of(receiver)}, found {types[1]}",
            node.args[1].span,
        )
    return joined


def _no_args(result: Callable[[t.Type], t.Type]) -> MethodRule:
    return _method(lambda r: (), result)


_METHODS: dict[str, dict[str, MethodRule]] = {
    "str": {
        "join": _method(lambda r: (t.ListType(t.STR),), lambda r: t.STR),
        "count": _method(lambda r: (t.STR,), lambda r: t.INT),
        "find": _method(lambda r: (t.STR,), lambda r: t.INT),
    },
    "list": {
        "append": _method(lambda r: (_elem_of(r),), lambda r: t.VOID, writes=True),
        "remove": _method(lambda r: (_elem_of(r),), lambda r: t.VOID, writes=True),
        "extend": _method(lambda r: (r,), lambda r: t.VOID, writes=True),
        "count": _method(lambda r: (_elem_of(r),), lambda r: t.INT),
        "index": _method(lambda r: (_elem_of(r),), lambda r: t.INT),
        "contains": _method(lambda r: (_elem_of(r),), lambda r: t.BOOL),
    },
    "set": {
        "add": _method(lambda r: (_elem_of(r),), lambda r: t.VOID, writes=True),
        "remove": _method(lambda r: (_elem_of(r),), lambda r: t.VOID, writes=True),
        "discard": _method(lambda r: (_elem_of(r),), lambda r: t.VOID, writes=True),
        "contains": _method(lambda r: (_elem_of(r),), lambda r: t.BOOL),
    },
    "map": {
        "get": _map_get,
        "keys": _no_args(lambda r: t.ListType(_key_of(r))),
        "values": _no_args(lambda r: t.ListType(_value_of(r))),
        "items": _no_args(lambda r: t.ListType(t.TupleType((_key_of(r), _value_of(r))))),
        "remove": _method(lambda r: (_key_of(r),), lambda r: t.VOID, writes=True),
        "contains": _method(lambda r: (_key_of(r),), lambda r: t.BOOL),
    },
    "table": {
        "get": _method(lambda r: (_key_of(r),), lambda r: t.optional(_value_of(r))),
        "insert": _insert,
        "delete": _method(lambda r: (_key_of(r),), lambda r: t.VOID, writes=True),
        "values": _no_args(lambda r: t.ListType(_value_of(r))),
        "keys": _no_args(lambda r: t.ListType(_key_of(r))),
        "contains": _method(lambda r: (_key_of(r),), lambda r: t.BOOL),
    },
}
