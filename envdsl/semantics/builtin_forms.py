"""The builtins' generated forms: how code generation writes a call of each builtin.

semantics/builtin_table.py gives every builtin its form from here; codegen/translate.py
translates the arguments and hands the form a `CallSite` (or a `MethodSite`).  A form sees the
call only through the site, so it needs nothing of the generator but what the site offers.
`h.` is the runtime's helpers module (runtime/helpers.py), `self` the generated environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast


@dataclass
class CallSite:
    """A builtin call being generated: its node, its positional arguments already translated,
    and the generator's services for the rest (in the call's scope)."""

    node: ast.Call
    args: list[str]
    expr: Callable[[ast.Expr], str]  # translate a sub-expression
    type_of: Callable[[ast.Expr], t.Type]  # the type the checker recorded
    coerce: Callable[[str, t.Type, t.Type], str]  # adapt a value to where it goes
    checked: CheckedSpec
    _keywords: dict[str, ast.Expr] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._keywords = {k.name.text: k.value for k in self.node.kwargs}

    def keyword(self, name: str) -> str | None:
        """The keyword argument `name` translated (now: the order of translation is the
        order of the generated temporaries), or None if the call has none."""
        value = self._keywords.get(name)
        return None if value is None else self.expr(value)

    def arg_type(self, index: int) -> t.Type:
        return self.type_of(self.node.args[index])

    def joined(self) -> str:
        return ", ".join(self.args)


@dataclass
class MethodSite(CallSite):
    """A method call: the receiver translated too (journaled first if the method writes)."""

    receiver: str = ""
    receiver_type: t.Type = t.ERROR
    bound: Callable[[str], str] = str  # the code as a name, computed once
    stored: Callable[[str, str, ast.Expr], str] = lambda container, code, node: code
    table_name: Callable[[str], str] = str  # an entity's table, as the runtime names it
    # the code inserting a row (code) into an entity's table
    inserter: Callable[[str, str], str] = lambda entity, row: row


FunctionForm = Callable[[CallSite], str]
MethodForm = Callable[[MethodSite], str]


# ---- functions ---------------------------------------------------------------------------------


def python(name: str) -> FunctionForm:
    """Python's own function of that name: `len(xs)`."""
    return lambda site: f"{name}({site.joined()})"


def helper(name: str) -> FunctionForm:
    """The runtime helper of that name: `h.days(n)`."""
    return lambda site: f"h.{name}({site.joined()})"


def in_order(name: str) -> FunctionForm:
    """`zip`, `enumerate` over the collections in canonical order (a set never in hash order)."""
    return lambda site: f"{name}({', '.join(f'h.in_order({a})' for a in site.args)})"


def string_method(name: str) -> FunctionForm:
    """`lower(s)` is `s.lower()`; `startswith(s, p)` is `s.startswith(p)`."""
    return lambda site: f"{site.args[0]}.{name}({', '.join(site.args[1:])})"


def min_max(name: str) -> FunctionForm:
    def form(site: CallSite) -> str:
        key = site.keyword("key")
        key_arg = f", key={key}" if key is not None else ""
        if len(site.args) > 1:
            return f"{name}({site.joined()}{key_arg})"
        default = site.keyword("default")
        if default is not None:
            return f"h.{name}_or({site.args[0]}, {default}{key_arg})"
        return f"h.{name}_of({site.args[0]}{key_arg})"

    return form


def sum_form(site: CallSite) -> str:
    elem = t.element_type(site.arg_type(0))
    if elem == t.FLOAT:
        return f"h.fsum({site.args[0]})"  # exact, never order-dependent rounding
    start = ", datetime.timedelta()" if elem == t.DURATION else ""
    return f"sum({site.args[0]}{start})"


def sorted_form(site: CallSite) -> str:
    extra = ""
    key = site.keyword("key")
    if key is not None:
        extra += f", key={key}"
    reverse = site.keyword("reverse")
    if reverse is not None:
        extra += f", reverse={reverse}"
    if isinstance(site.arg_type(0), t.SetType):
        return f"h.sorted_of({site.args[0]}{extra})"  # ties in canonical order
    return f"sorted({site.args[0]}{extra})"


def list_form(site: CallSite) -> str:
    return f"h.in_order({site.args[0]})" if site.args else "list()"


def range_form(site: CallSite) -> str:
    return f"self._range({site.joined()})"  # counted against the step budget


def str_form(site: CallSite) -> str:
    return f"h.to_str({site.args[0]})"


def number(name: str) -> FunctionForm:
    """`int(x)`, `float(x)`; of a string, the helper that fails the call on bad text."""

    def form(site: CallSite) -> str:
        if site.arg_type(0) == t.STR:
            return f"h.to_{name}({site.args[0]})"
        return f"{name}({site.args[0]})"

    return form


def contains_form(site: CallSite) -> str:
    return f"({site.args[1]} in {site.args[0]})"


def time_literal(name: str) -> FunctionForm:
    """`date("2024-05-01")`; `date(t)` of a datetime is `date_of(t)`, `datetime(d)` of a date
    `datetime_of(d)`."""
    converts = t.DATETIME if name == "date" else t.DATE

    def form(site: CallSite) -> str:
        helper_name = f"{name}_of" if site.arg_type(0) == converts else name
        return f"h.{helper_name}({site.args[0]})"

    return form


def auto_form(site: CallSite) -> str:
    return "''"  # the table fills the key on insert


def mentions_form(site: CallSite) -> str:
    # the candidates an answer may not also name come from the state being graded
    return f"h.mentions({site.args[0]}, {site.args[1]}, self._graded_state_json())"


def trace(name: str) -> FunctionForm:
    """`called("tool", arg=v)` / `calls(...)`: the call trace's count of matching calls."""

    def form(site: CallSite) -> str:
        tool = site.node.args[0]
        assert isinstance(tool, ast.StrLit)  # the checker accepts only a literal tool name
        params = {p.name: p for p in site.checked.callables[tool.value].params}
        keywords = {k.name.text: k.value for k in site.node.kwargs}
        values = ", ".join(
            f"{k!r}: {site.coerce(site.expr(v), site.type_of(v), params[k].type)}"
            for k, v in keywords.items()
        )
        count = f"self.called_with({tool.value!r}, {{{values}}})"
        return f"({count} > 0)" if name == "called" else count

    return form


# ---- methods -----------------------------------------------------------------------------------


def method(template: str) -> MethodForm:
    """`{r}` the receiver, `{a}` the arguments: `"{r}.append({a})"`, `"({a} in {r})"`."""
    return lambda site: template.format(r=site.receiver, a=site.joined())


def enum_values(site: MethodSite) -> str:
    return f"list({site.receiver})"  # E.values(): the members in declaration order


def table_key_method(kind: str) -> MethodForm:
    """`t.get(k)`, `k in t`, `t.delete(k)`: the key given as a row is given as its key. A
    lookup reads the table's dict (`_rows`): Table.get and `in` are a Python call each, on
    most calls of most tools."""

    def form(site: MethodSite) -> str:
        assert isinstance(site.receiver_type, t.TableType)
        entity = site.receiver_type.entity
        key = site.coerce(site.args[0], site.arg_type(0), t.RefType(entity))
        if kind == "get":
            return f"{site.receiver}._rows.get({key})"
        if kind == "contains":
            return f"({key} in {site.receiver}._rows)"
        return f"self._delete({site.table_name(entity)!r}, {key})"

    return form


def table_insert(site: MethodSite) -> str:
    # the table's own inserter (codegen/row_writes.py), Environment._insert written out, or
    # Environment._insert itself (Translator.inserter)
    assert isinstance(site.receiver_type, t.TableType)
    return site.inserter(site.receiver_type.entity, site.args[0])


def set_add(site: MethodSite) -> str:
    # journaled by `_set_add` as the element it adds (O(1)), not as a copy of the set
    receiver = site.bound(site.receiver)
    return f"self._set_add({receiver}, {site.stored(receiver, site.args[0], site.node.args[0])})"
