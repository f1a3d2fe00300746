"""The one table of builtins: every function and method a spec may call, with all it needs.

Each entry gives a builtin's type rule (semantics/builtin_rules.py, read by the checker), its
generated form (semantics/builtin_forms.py, read by codegen/translate.py), what the later
stages need to know of it (whether it loops under the step budget, reads the call trace, ...)
and its row in docs/language.md.  A new builtin is one entry here (plus its rule, and its
runtime helper if its form calls one); tests/test_builtin_table.py checks that every entry is
documented and that a spec calling it checks, compiles and runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from envdsl.semantics import builtin_forms as form
from envdsl.semantics import builtin_rules as rule
from envdsl.semantics import types as t
from envdsl.semantics.builtin_rules import DATE_LIKE, elem_of, key_of, value_of
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast

# What a call's value shares with its arguments (semantics/aliases.py): "elements": it is one
# of the argument's elements (`first(xs)`); "holds_elements": a new collection of them
# (`sorted(xs)`); "fresh": nothing of the arguments that can be changed in place.
Aliasing = Literal["fresh", "elements", "holds_elements"]

# What a text builtin does with prose (semantics/check_wording.py, W5022): "test" says whether
# a text holds a phrase (`contains(s, p)`), "fold" gives the text again with its case or its
# outer spaces changed (`lower(s)`), which a phrase test sees through; "none": neither.
TextRole = Literal["none", "test", "fold"]


@dataclass(frozen=True)
class Function:
    name: str
    rule: rule.BuiltinRule
    form: form.FunctionForm
    doc: str  # how docs/language.md writes it, in its row there
    # it loops under the step budget or over the call trace, so it needs an environment: a
    # constant or default (computed without one) may not call it (E4022, semantics/defaults.py)
    iterates: bool = False
    # its value is a list made for the loop (`range`, `zip`): a `for` needs no snapshot of it
    fresh_sequence: bool = False
    reads_trace: bool = False  # it reads the agent's calls (a check's guard, tasks/verify.py)
    string_method: bool = False  # also callable as a method of a string: `s.lower()`
    aliasing: Aliasing = "fresh"
    # it reads its one iterable argument once, front to back, so a generator argument
    # `f(x for x in xs)` is generated as a Python generator (`all` stops at the first false);
    # any other callee gets the list its type says (`len(gen)`, a spec's own fn)
    lazy_argument: bool = False
    # `all(P(x) for x in t)` holds when P holds of each row: an invariant of that form is
    # checked on the rows a call touched, not the whole table (codegen/lower.py)
    holds_per_row: bool = False
    text_role: TextRole = "none"


# The journal entry a writing method needs before it changes its receiver
# (codegen/translate.py): "mut" a copy of the place, "grow" the list's old length (O(1) for an
# append), "self" the form journals (`self._set_add`, `self._insert`); "none": it writes nothing.
Journal = Literal["none", "mut", "grow", "self"]


@dataclass(frozen=True)
class Method:
    name: str
    rule: rule.MethodRule
    form: form.MethodForm
    doc: str
    journal: Journal = "none"
    stores: bool = False  # its arguments end up inside the receiver (copied when in state)


_ROUND = "`abs(n)`, `round(x)`, `round(x, k)`"
_MIN_MAX = "`min(a, b, ...)`, `min(xs)`, `min(gen)`, `max(...)`"
_ALL_ANY = "`all(gen)`, `any(gen)`"
_CONVERSIONS = "`set(xs)`, `set()`, `list(xs)`, `int(x)`, `float(x)`"
_LOOPS = "`range(n)`, `range(a, b)`, `zip(xs, ys)`, `enumerate(xs)`"
_CASES = "`lower(s)`, `upper(s)`, `strip(s)`"
_TEXT_TESTS = "`startswith(s, p)`, `endswith(s, p)`, `contains(s, p)`"
_SPLIT_REPLACE = "`split(s)`, `split(s, sep)`, `replace(s, old, new)`"
_DATES = '`date("2024-05-01")`, `datetime("2024-05-01T09:00:00Z")`'
_CONVERT_TIME = "`date_of(t)`, `datetime_of(d)`"
_DURATIONS = "`days(n)`, `hours(n)`, `minutes(n)`, `seconds(n)`"
_TOTALS = "`total_minutes(d)`, `total_seconds(d)`"
_BETWEEN = "`days_between(a, b)`, `minutes_between(a, b)`"
_TRACE = '`called("tool",'  # the check's trace, with `calls("tool")` in the same sentence


def _string(
    name: str,
    args: tuple[t.Type, ...],
    result: t.Type,
    form_: form.FunctionForm,
    doc: str,
    tail: int = 0,
    text_role: TextRole = "none",
) -> Function:
    return Function(
        name,
        rule.string_rule(name, args, result, tail),
        form_,
        doc,
        string_method=True,
        text_role=text_role,
    )


def _text_test(name: str, form_: form.FunctionForm) -> Function:
    """`startswith(s, p)` and its kin: does the text hold the phrase."""
    return _string(name, (t.STR, t.STR), t.BOOL, form_, _TEXT_TESTS, text_role="test")


def _time(
    name: str, args: tuple[tuple[t.Type, ...], ...], result: t.Type | None, doc: str
) -> Function:
    return Function(name, rule.time_rule(name, args, result), form.helper(name), doc)


# In this order: an unknown name's did-you-mean candidates come in it.
FUNCTIONS: dict[str, Function] = {
    entry.name: entry
    for entry in (
        Function("len", rule.len_rule, form.python("len"), "`len(x)`"),
        Function("abs", rule.abs_rule, form.python("abs"), _ROUND),
        Function("round", rule.round_rule, form.python("round"), _ROUND),
        Function(
            "min",
            rule.min_max_rule,
            form.min_max("min"),
            _MIN_MAX,
            aliasing="elements",
            lazy_argument=True,
        ),
        Function(
            "max",
            rule.min_max_rule,
            form.min_max("max"),
            _MIN_MAX,
            aliasing="elements",
            lazy_argument=True,
        ),
        Function("sum", rule.sum_rule, form.sum_form, "`sum(xs)`, `sum(gen)`", lazy_argument=True),
        Function(
            "count", rule.count_rule, form.helper("count"), "`count(gen)`", lazy_argument=True
        ),
        Function(
            "all",
            rule.all_any_rule,
            form.python("all"),
            _ALL_ANY,
            lazy_argument=True,
            holds_per_row=True,
        ),
        Function("any", rule.all_any_rule, form.python("any"), _ALL_ANY, lazy_argument=True),
        Function(
            "sorted",
            rule.sorted_rule,
            form.sorted_form,
            "`sorted(xs, key=lambda x: x.f, reverse=true)`",
            aliasing="holds_elements",
            lazy_argument=True,
        ),
        Function(
            "first",
            rule.first_rule,
            form.helper("first"),
            "`first(gen)`, `first(xs)`",
            aliasing="elements",
            lazy_argument=True,
        ),
        Function(
            "set",
            rule.collection_rule,
            form.python("set"),
            _CONVERSIONS,
            aliasing="holds_elements",
            lazy_argument=True,
        ),
        Function(
            "list",
            rule.collection_rule,
            form.list_form,
            _CONVERSIONS,
            aliasing="holds_elements",
            lazy_argument=True,
        ),
        Function(
            "range", rule.range_rule, form.range_form, _LOOPS, iterates=True, fresh_sequence=True
        ),
        Function(
            "zip",
            rule.zip_rule,
            form.in_order("zip"),
            _LOOPS,
            fresh_sequence=True,
            aliasing="holds_elements",
        ),
        Function(
            "enumerate",
            rule.enumerate_rule,
            form.in_order("enumerate"),
            _LOOPS,
            fresh_sequence=True,
            aliasing="holds_elements",
        ),
        Function("str", rule.str_rule, form.str_form, "`str(x)`"),
        Function("int", rule.number_rule, form.number("int"), _CONVERSIONS),
        Function("float", rule.number_rule, form.number("float"), _CONVERSIONS),
        _string("lower", (t.STR,), t.STR, form.string_method("lower"), _CASES, text_role="fold"),
        _string("upper", (t.STR,), t.STR, form.string_method("upper"), _CASES, text_role="fold"),
        _string("strip", (t.STR,), t.STR, form.string_method("strip"), _CASES, text_role="fold"),
        _text_test("startswith", form.string_method("startswith")),
        _text_test("endswith", form.string_method("endswith")),
        _text_test("contains", form.contains_form),
        _string(
            "split", (t.STR, t.STR), t.ListType(t.STR), form.helper("split"), _SPLIT_REPLACE, tail=1
        ),
        _string("replace", (t.STR, t.STR, t.STR), t.STR, form.helper("replace"), _SPLIT_REPLACE),
        _time("days", (t.NUMERIC,), t.DURATION, _DURATIONS),
        _time("hours", (t.NUMERIC,), t.DURATION, _DURATIONS),
        _time("minutes", (t.NUMERIC,), t.DURATION, _DURATIONS),
        _time("seconds", (t.NUMERIC,), t.DURATION, _DURATIONS),
        _time("date_of", ((t.DATETIME,),), t.DATE, _CONVERT_TIME),
        _time("datetime_of", ((t.DATE,),), t.DATETIME, _CONVERT_TIME),
        _time("days_between", (DATE_LIKE, DATE_LIKE), t.INT, _BETWEEN),
        _time("minutes_between", ((t.DATETIME,), (t.DATETIME,)), t.INT, _BETWEEN),
        _time("add_months", (DATE_LIKE, (t.INT,)), None, "`add_months(d, n)`"),
        _time("weekday", (DATE_LIKE,), t.INT, "`weekday(d)`"),
        _time("total_minutes", ((t.DURATION,),), t.INT, _TOTALS),
        _time("total_seconds", ((t.DURATION,),), t.INT, _TOTALS),
        Function("date", rule.date_literal_rule, form.time_literal("date"), _DATES),
        Function("datetime", rule.date_literal_rule, form.time_literal("datetime"), _DATES),
        Function("same_items", rule.same_items_rule, form.helper("same_items"), "`same_items(xs, "),
        Function(
            "mentions",
            rule.mentions_rule,
            form.mentions_form,
            "`mentions(answer, ",
            text_role="test",
        ),
        Function("auto", rule.auto_rule, form.auto_form, '`auto("P")`'),
        Function(
            "called",
            rule.called_rule,
            form.trace("called"),
            _TRACE,
            iterates=True,
            reads_trace=True,
        ),
        Function(
            "calls",
            rule.called_rule,
            form.trace("calls"),
            '`calls("tool")`',
            iterates=True,
            reads_trace=True,
        ),
    )
}


def called_builtin(call: ast.Call, checked: CheckedSpec) -> Function | None:
    """The builtin function a call by name reaches, as the checker resolves it: a record, fn
    or tool the spec declares under a builtin's name comes first (a spec's own `fn all(...)`
    is no quantifier), and a method call reaches no function."""
    func = call.func
    if not isinstance(func, ast.NameRef):
        return None
    return builtin_named(func.name, checked)


def builtin_named(name: str, checked: CheckedSpec) -> Function | None:
    """The builtin function a call of `name` reaches, where no local takes the name: none
    where the spec declares a record, fn or tool of that name (they come first)."""
    if name in checked.callables or name in checked.records:
        return None
    return FUNCTIONS.get(name)


def _typed(
    name: str,
    args: rule.TypesOf,
    result: rule.TypeOf,
    form_: form.MethodForm,
    doc: str,
    journal: Journal = "none",
    stores: bool = False,
) -> Method:
    """A method whose argument and result types follow from the receiver's."""
    writes = journal != "none"
    return Method(
        name,
        rule.method_rule(args, result, writes=writes, stores=stores),
        form_,
        doc,
        journal,
        stores,
    )


def _no_args(name: str, result: rule.TypeOf, form_: form.MethodForm, doc: str) -> Method:
    return Method(name, rule.no_args_rule(result), form_, doc)


def _void(receiver: t.Type) -> t.Type:
    return t.VOID


def _elem(receiver: t.Type) -> tuple[t.Type, ...]:
    return (elem_of(receiver),)


def _key(receiver: t.Type) -> tuple[t.Type, ...]:
    return (key_of(receiver),)


def _bool(receiver: t.Type) -> t.Type:
    return t.BOOL


def _int(receiver: t.Type) -> t.Type:
    return t.INT


_CONTAINS = "`c.contains(x)`"

# Methods per receiver kind (see `receiver_kind`); an enum's `E.values()` is ENUM_VALUES.
METHODS: dict[str, dict[str, Method]] = {
    kind: {entry.name: entry for entry in entries}
    for kind, entries in (
        (
            "str",
            (
                _typed(
                    "join",
                    lambda r: (t.ListType(t.STR),),
                    lambda r: t.STR,
                    form.method("h.join({r}, {a})"),
                    "`sep.join(xs)`",
                ),
                _typed(
                    "count", lambda r: (t.STR,), _int, form.method("{r}.count({a})"), "`s.count(p)`"
                ),
                _typed(
                    "find", lambda r: (t.STR,), _int, form.method("{r}.find({a})"), "`s.find(p)`"
                ),
            ),
        ),
        (
            "list",
            (
                _typed(
                    "append",
                    _elem,
                    _void,
                    form.method("{r}.append({a})"),
                    "`xs.append(x)`",
                    journal="grow",
                    stores=True,
                ),
                _typed(
                    "remove",
                    _elem,
                    _void,
                    form.method("h.list_remove({r}, {a})"),
                    "`xs.remove(x)`",
                    journal="mut",
                ),
                _typed(
                    "extend",
                    lambda r: (r,),
                    _void,
                    form.method("h.extend({r}, {a})"),
                    "`xs.extend(ys)`",
                    journal="grow",
                    stores=True,
                ),
                _typed("count", _elem, _int, form.method("{r}.count({a})"), "`xs.count(x)`"),
                _typed(
                    "index", _elem, _int, form.method("h.list_index({r}, {a})"), "`xs.index(x)`"
                ),
                _typed("contains", _elem, _bool, form.method("({a} in {r})"), _CONTAINS),
            ),
        ),
        (
            "set",
            (
                _typed(
                    "add", _elem, _void, form.set_add, "`s.add(x)`", journal="self", stores=True
                ),
                _typed(
                    "remove",
                    _elem,
                    _void,
                    form.method("h.set_remove({r}, {a})"),
                    "`s.remove(x)`",
                    journal="mut",
                ),
                _typed(
                    "discard",
                    _elem,
                    _void,
                    form.method("{r}.discard({a})"),
                    "`s.discard(x)`",
                    journal="mut",
                ),
                _typed("contains", _elem, _bool, form.method("({a} in {r})"), _CONTAINS),
            ),
        ),
        (
            "map",
            (
                Method("get", rule.map_get_rule, form.method("{r}.get({a})"), "`m.get(k)`"),
                _no_args(
                    "keys",
                    lambda r: t.ListType(key_of(r)),
                    form.method("list({r}.keys())"),
                    "`m.keys()`",
                ),
                _no_args(
                    "values",
                    lambda r: t.ListType(value_of(r)),
                    form.method("list({r}.values())"),
                    "`m.values()`",
                ),
                _no_args(
                    "items",
                    lambda r: t.ListType(t.TupleType((key_of(r), value_of(r)))),
                    form.method("list({r}.items())"),
                    "`m.items()`",
                ),
                _typed(
                    "remove",
                    _key,
                    _void,
                    form.method("h.map_remove({r}, {a})"),
                    "`m.remove(k)`",
                    journal="mut",
                ),
                _typed("contains", _key, _bool, form.method("({a} in {r})"), _CONTAINS),
            ),
        ),
        (
            "table",
            (
                _typed(
                    "get",
                    _key,
                    lambda r: t.optional(value_of(r)),
                    form.table_key_method("get"),
                    "`t.get(k)`",
                ),
                Method(
                    "insert",
                    rule.insert_rule,
                    form.table_insert,
                    "`t.insert(E(...))`",
                    journal="self",
                ),
                _typed(
                    "delete",
                    _key,
                    _void,
                    form.table_key_method("delete"),
                    "`t.delete(k)`",
                    journal="self",
                ),
                _no_args(
                    "values",
                    lambda r: t.ListType(value_of(r)),
                    form.method("{r}.rows()"),
                    "`t.values()`",
                ),
                _no_args(
                    "keys", lambda r: t.ListType(key_of(r)), form.method("{r}.keys()"), "`t.keys()`"
                ),
                _typed("contains", _key, _bool, form.table_key_method("contains"), _CONTAINS),
            ),
        ),
    )
}

# `E.values()` of an enum `E`: the members in declaration order
ENUM_VALUES = Method(
    "values",
    rule.enum_values_rule,
    form.enum_values,
    "`E.values()`",
)


def receiver_kind(receiver: t.Type) -> str:
    """The key of METHODS for a receiver's type ("" if it has no methods)."""
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
