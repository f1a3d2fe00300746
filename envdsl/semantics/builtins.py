"""Typing of calls: builtin functions, methods, constructors, fns and tools.

What a spec may call of the builtins is semantics/builtin_table.py; this dispatches a call to
its entry's rule.  Method calls on strings and collections are accepted Python style
(`s.lower()`, `xs.count(x)`) because that is what an LLM writes first.
"""

from __future__ import annotations

from envdsl.diagnostics import Edit, Fix, codes
from envdsl.semantics import types as t
from envdsl.semantics.expr_typing import ExprTyping
from envdsl.semantics.builtin_rules import check_all_args as _check_all_args
from envdsl.semantics.builtin_table import (
    ENUM_VALUES,
    FUNCTIONS,
    METHODS,
    builtin_named,
    receiver_kind,
)
from envdsl.semantics.scope import Scope, local_of
from envdsl.semantics.suggest import as_function_call, did_you_mean
from envdsl.syntax import ast
from envdsl.util.source import Span


def builtin_names() -> list[str]:
    return sorted(FUNCTIONS)


# ---- dispatch ----------------------------------------------------------------------------------


def check_call(checker: ExprTyping, node: ast.Call, scope: Scope) -> t.Type:
    func = node.func
    if isinstance(func, ast.NameRef) and not func.qualified:
        return _call_name(checker, func.name, node, scope)
    if isinstance(func, ast.Attribute):
        return _call_method(checker, func, node, scope)
    callee = checker.expr(func, scope)
    _check_all_args(checker, node, scope)
    if t.is_error(callee):
        return t.ERROR
    return checker.error(codes.INVALID_OPERAND, f"{callee} cannot be called", func.span)


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
    builtin = FUNCTIONS.get(name)
    if builtin is not None:
        return builtin.rule(checker, node, scope)
    _check_args_of_unknown(checker, node, scope)
    candidates = list(FUNCTIONS) + list(checked.callables) + list(checked.records)
    help, fixes = did_you_mean(name, candidates, span)
    if name in checked.variants:
        cases = checked.variants[name].cases
        example = f"{name}.{next(iter(cases))}(...)" if cases else f"{name}.<case>(...)"
        help = f"'{name}' is a variant: build one of its cases, `{example}`"
    elif name in checked.enums:  # Python's `Status("active")`
        members = checked.enums[name].members
        help = f"'{name}' is an enum: write a member, `{name}.{next(iter(members), '<member>')}`"
        fixes = ()
    elif name in checked.state and not node.args and not node.kwargs:
        # `now()`: the clock (or any state field) is read, not called
        help = f"'{name}' is a state field, not a function: write `{name}`"
        fixes = (Fix(f"write `{name}`", (Edit(node.span, name),)),)
    elif name == "timedelta":
        help, fixes = _timedelta(checker, node, scope)
    elif name in _PYTHON_ONLY:  # before a look-alike: `map` is not a misspelt `max`
        help, fixes = _PYTHON_ONLY[name], ()
    return checker.error(codes.UNKNOWN_FUNCTION, f"unknown function '{name}'", span, help, fixes)


_NO_REVERSAL = "`xs = sorted(xs, reverse=true)` orders; there is no reversal"


def _check_args_of_unknown(checker: ExprTyping, node: ast.Call, scope: Scope) -> None:
    """The arguments of a call of no known function or method, but its lambdas: whether
    one is allowed there depends on the callee meant (`map(lambda ...)`, `xs.sort(key=lambda
    ...)`), so it is part of the one mistake and gets no E2015 of its own."""
    for arg in (*node.args, *(kwarg.value for kwarg in node.kwargs)):
        if not isinstance(arg, ast.Lambda):
            checker.expr(arg, scope)


_PYTHON_ONLY = {
    "print": "tools return values; there is no output",
    "uuid4": 'ids come from `auto("PREFIX")` keys',
    "time": "the clock is the `now` state field",
    "now": 'there is no wall clock: declare `now: datetime "The current time"` in `state`',
    "today": 'there is no wall clock: declare `today: date "The current date"` in `state`',
    "isinstance": "values are statically typed; no runtime type tests are needed",
    "dict": "write a map literal `{k: v}`",
    "tuple": "there are no tuples; use a record",
    "map": "there is no `map`: write a comprehension, `[f(x) for x in xs]`",
    "filter": "there is no `filter`: write a comprehension, `[x for x in xs if cond]`",
    "bool": "there is no `bool(x)`: compare explicitly, e.g. `len(xs) > 0` or `x != none`",
    "reversed": _NO_REVERSAL,
    "next": "`first(x for x in xs if cond)` is the first match, or none",
}


def _reaches_builtin(checker: ExprTyping, name: str, scope: Scope) -> bool:
    """Whether a call of `name` here calls the builtin (no local, record or declared fn or
    tool of that name comes first, as in _call_name): where a fix may write one."""
    return scope.lookup(name) is None and builtin_named(name, checker.checked) is not None


def _timedelta(checker: ExprTyping, node: ast.Call, scope: Scope) -> tuple[str, tuple[Fix, ...]]:
    """Python's `timedelta(days=2, hours=1)`: the help, and the fix `(days(2) + hours(1))`
    where every argument is one of those units by keyword (and the unit's name is the
    builtin's here: no fix writes `days(days)` for a parameter `days`)."""
    units = ("days", "hours", "minutes", "seconds")
    help = "a duration is `days(n)`, `hours(n)`, `minutes(n)` or `seconds(n)`, added up"
    kwargs = node.kwargs
    if (
        node.args
        or not kwargs
        or any(kw.name.text not in units for kw in kwargs)
        or not all(_reaches_builtin(checker, kw.name.text, scope) for kw in kwargs)
    ):
        return help, ()
    many = len(kwargs) > 1  # parenthesized: `t - (days(1) + hours(2))` as Python reads it
    file, at = node.span.file, node.span.start
    edits: list[Edit] = []
    for index, kw in enumerate(kwargs):
        joint = ") + " if index else "(" if many else ""
        edits.append(Edit(Span(file, at, kw.value.span.start), f"{joint}{kw.name.text}("))
        at = kw.value.span.end
    edits.append(Edit(Span(file, at, node.span.end), "))" if many else ")"))
    written = " + ".join(f"{kw.name.text}(...)" for kw in kwargs)
    return help, (Fix(f"write `{'(' + written + ')' if many else written}`", tuple(edits)),)


# Python's methods that change a collection in ways these do not -> how to write them
_PYTHON_COLLECTION_METHODS: dict[tuple[str, str], str] = {
    ("list", "insert"): "build the new list: `xs = xs[:i] + [x] + xs[i:]`",
    ("list", "pop"): "read `xs[-1]` (or `xs[i]`), then cut it: `xs = xs[:-1]`",
    ("list", "sort"): "sort into a new list: `xs = sorted(xs)` (`key=`, `reverse=true` work)",
    ("list", "reverse"): _NO_REVERSAL,
    ("list", "clear"): "assign an empty list: `xs = []`",
    ("list", "copy"): "`list(xs)` is a copy",
    ("map", "pop"): "read `m[k]`, then `m.remove(k)`",
    ("map", "update"): "assign each entry: `m[k] = v`",
    ("map", "clear"): "assign an empty map: `m = {}`",
    ("set", "update"): "add each element: `for x in xs { s.add(x) }`",
    ("set", "clear"): "assign an empty set: `s = set()`",
    ("table", "pop"): "read the row, then `t.delete(key)`",
    ("table", "remove"): "delete a row by its key: `t.delete(key)`",
    ("table", "update"): "write the row's fields: `t[key].field = value`",
    ("table", "append"): "add a row: `t.insert(Entity(field=value, ...))`",
    ("table", "add"): "add a row: `t.insert(Entity(field=value, ...))`",
}


# Python's methods of text and times that have no counterpart here -> how to write them
_FSTRING = 'write an f-string: f"Hello {name}"'
_STRFTIME = "`str(d)` is its ISO 8601 text; `d.year`, `d.month`, `d.day` are its parts"
_PYTHON_VALUE_METHODS: dict[tuple[t.Type, str], str] = {
    (t.STR, "format"): _FSTRING,
    (t.STR, "capitalize"): "`upper(s[:1]) + s[1:]` capitalizes the first letter",
    (t.STR, "title"): "`upper(s[:1]) + s[1:]` capitalizes the first letter",
    (t.DATE, "strftime"): _STRFTIME,
    (t.DATETIME, "strftime"): _STRFTIME,
}


# Python's methods of times and durations -> the function that gives the same value
_PYTHON_TIME_METHODS: dict[tuple[t.Type, str], str] = {
    (t.DATETIME, "date"): "date_of",
    (t.DATETIME, "isoformat"): "str",
    (t.DATE, "isoformat"): "str",
    (t.DATETIME, "weekday"): "weekday",
    (t.DATE, "weekday"): "weekday",
    (t.DURATION, "total_seconds"): "total_seconds",
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
    if not isinstance(obj, ast.NameRef) or obj.qualified or scope.lookup(obj.name) is not None:
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
        if method == ENUM_VALUES.name and not node.args and not node.kwargs:
            return ENUM_VALUES.rule(checker, receiver, func, node, scope)
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
    table = METHODS.get(receiver_kind(receiver), {})
    entry = table.get(method)
    if entry is not None:
        return entry.rule(checker, receiver, func, node, scope)
    as_function = FUNCTIONS.get(method)
    if as_function is not None and receiver == t.STR and as_function.string_method:
        # `s.lower()` == `lower(s)`: reuse the function's rule with the receiver prepended
        rewritten = ast.Call(
            ast.NameRef(method, func.name.span), (func.obj, *node.args), node.kwargs, node.span
        )
        return as_function.rule(checker, rewritten, scope)
    _check_args_of_unknown(checker, node, scope)
    shadowing = _shadowed_state(checker, func, scope)
    if shadowing is not None:
        return shadowing
    function = _PYTHON_TIME_METHODS.get((receiver, method))
    if function is not None and not node.args and not node.kwargs:
        return checker.error(
            codes.UNKNOWN_METHOD,
            f"{receiver} has no method '{method}'",
            func.name.span,
            f"write `{function}(x)`" + (": its ISO 8601 text" if function == "str" else ""),
            (
                as_function_call(function, func, node.span.end)
                if _reaches_builtin(checker, function, scope)
                else ()
            ),
        )
    string_methods = {f.name for f in FUNCTIONS.values() if f.string_method}
    known = sorted(set(table) | (string_methods if receiver == t.STR else set()))
    help: str | None
    fixes: tuple[Fix, ...]
    python = _PYTHON_VALUE_METHODS.get((receiver, method))
    if python is not None:  # before a look-alike: `format` is not a misspelt method
        help, fixes = python, ()
    else:
        help, fixes = did_you_mean(method, known, func.name.span)
    help = help or _PYTHON_COLLECTION_METHODS.get((receiver_kind(receiver), method))
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


def _shadowed_state(checker: ExprTyping, func: ast.Attribute, scope: Scope) -> t.Type | None:
    """`flights.get(id)` in a tool with a parameter `flights`: the parameter hides the state
    table of that name, which has the method. Say so, and name the way to the table."""
    obj, method = func.obj, func.name.text
    local = local_of(scope, obj) if isinstance(obj, ast.NameRef) else None
    info = checker.checked.state.get(obj.name) if isinstance(obj, ast.NameRef) else None
    if local is None or info is None or "state" in checker.checked.state:
        return None
    kind_of_state = receiver_kind(info.type)
    has_it = method in METHODS.get(kind_of_state, {})
    as_function = FUNCTIONS.get(method)
    if info.type == t.STR and as_function is not None and as_function.string_method:
        has_it = True  # `s.lower()`: a string function called as a method
    if not has_it or scope.lookup("state"):
        return None
    kind = {"param": "parameter", "loop": "loop variable"}.get(local.kind, "variable")
    what = "table" if isinstance(info.type, t.TableType) else "field"
    at = Span(obj.span.file, obj.span.start, obj.span.start)
    return checker.error(
        codes.UNKNOWN_METHOD,
        f"{local.type} has no method '{method}': the {kind} '{local.name}' shadows the state "
        f"{what} '{local.name}'",
        func.name.span,
        f"name the state {what} as `state.{local.name}` (`state.{local.name}.{method}(...)`), "
        f"or rename the {kind}",
        (Fix(f"read the state {what}: `state.{local.name}`", (Edit(at, "state."),)),),
    )


def method_names(receiver: t.Type) -> list[str]:
    """The methods a value of this type has (for an editor's completion)."""
    return sorted(METHODS.get(receiver_kind(receiver), {}))
