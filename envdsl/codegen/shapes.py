"""What the written-out argument readers and JSON writers need of a value's type: its kind,
whether it is optional, and the spec its JSON is read by (a ref's, its key's), as Python text.

The runtime's reference paths dispatch on TypeSpec objects at run time; the compiler knows the
same from the checked types, and writes the dispatch out once (codegen/tool_calls.py,
codegen/serializers.py). One function maps a type to both its spec (Names.spec) and its shape.
"""

from __future__ import annotations

from typing import Callable

from envdsl.codegen.names import Names
from envdsl.codegen.views import ShapeView
from envdsl.semantics import types as t

# kinds whose JSON is the Python value itself (str, int, bool): read and written as they are
PLAIN = frozenset({"str", "int", "bool"})
# kinds sent as a string (their length counts against the size budget) or as a number
TEXT = frozenset({"str", "enum", "datetime", "date"})
NUMBER = frozenset({"bool", "float", "duration"})


def shape(
    names: Names, value: t.Type, constant: Callable[[str, t.Type], str] | None = None
) -> ShapeView:
    """The shape of a value of this type (see ShapeView); `constant` names the spec where it
    is an expression that would build a spec (the module's constant for it)."""
    optional = isinstance(value, t.OptionalType)
    inner = value.inner if isinstance(value, t.OptionalType) else value
    ref = isinstance(inner, t.RefType)
    if isinstance(inner, t.RefType):
        key = names.checked.records[inner.entity].key
        inner = key.type if key is not None else t.Prim("json")
        if isinstance(inner, t.OptionalType):  # (no key is optional; kept general)
            optional, inner = True, inner.inner
    spec = names.spec(inner) if constant is None else constant(names.spec(inner), inner)
    if isinstance(inner, t.Prim):
        return ShapeView(inner.name, spec, optional, ref=ref)
    if isinstance(inner, t.EnumType):
        return ShapeView("enum", spec, optional, ref=ref)
    if isinstance(inner, (t.ListType, t.SetType)):
        kind = "list" if isinstance(inner, t.ListType) else "set"
        element = shape(names, inner.elem)
        return ShapeView(kind, spec, optional, element)
    if isinstance(inner, t.MapType):
        return ShapeView(
            "map", spec, optional, shape(names, inner.value), key=shape(names, inner.key)
        )
    if isinstance(inner, t.RecordType):
        return ShapeView("record", spec, optional, record=names.type_name(inner.name))
    if isinstance(inner, t.VoidType):
        return ShapeView("void", spec, optional)
    return ShapeView("other", spec, optional)
