"""Typed values that flow into a `json` slot are converted to their JSON form there.

`json` accepts a value of any type (a list of rows, a map keyed by ints, a datetime), but the
Python objects behind those (row dataclasses, enum members, datetimes, sets, int keys) are no
JSON: put into `data` as they are, they broke `json.dumps` of a result (`envdsl run`, MCP) and
`state_json()` of a json field.  So where the checker has let a typed value into json, the
generated code converts it with the runtime spec of its static type, as results are.
"""

from __future__ import annotations

from envdsl.semantics import types as t

# their Python values are their JSON values
_PLAIN = (t.INT, t.FLOAT, t.BOOL, t.STR, t.JSON)


def needs_json_form(value: t.Type) -> bool:
    """Does a value of this type need converting to be a JSON value?"""
    if isinstance(value, t.Prim):
        return value not in _PLAIN  # date, datetime, duration
    if isinstance(value, t.OptionalType):
        return needs_json_form(value.inner)
    if isinstance(value, t.ListType):
        return needs_json_form(value.elem)
    if isinstance(value, t.MapType):
        return value.key != t.STR or needs_json_form(value.value)
    # a set (unordered), a record or row, an enum member; a ref is its key, a str or an int
    return isinstance(value, (t.SetType, t.RecordType, t.VariantType, t.EnumType))
