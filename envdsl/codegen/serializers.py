"""Each record's JSON writers, written into the generated module: `_to_json_<Record>` (what
RecordSpec.to_json gives) and `_json_repr_<Record>` (`repr` of that JSON, what state_hash()
digests per row), both run for every result and state dump.

The reference is RecordSpec's generic walk over its FieldSpecs (runtime/values.py), which a
record built without these functions takes; tests/test_fast_paths.py compares the two. Built
from the RecordView the template renders (its FieldViews and their ShapeViews).
"""

from __future__ import annotations

from typing import Callable

from envdsl.codegen import shapes
from envdsl.codegen.views import FieldView, RecordView


def to_json_body(record: RecordView) -> list[str]:
    """`return {"a": value.a, "b": <b's JSON>, ...}`: the members in name order (the canonical
    form of state_json()); a dict display of attribute reads costs a third of a loop over
    the fields."""
    return [f"return {record_display(record, 'value')}"]


def record_display(
    record: RecordView, value: str, datetime_text: Callable[[str], str] | None = None
) -> str:
    """The dict display that serializes the record named `value` (source text): plain values
    (and refs to plain keys) read as they are, enums by `._value_` (`.value` is a property,
    slower), datetimes by format_datetime (or `datetime_text` of the read), lists of plain
    values by `list`, an optional one of these with its None passed on; anything else by its
    field's spec."""
    members = []
    for field in _by_name(record):
        member = _member(field, f"{value}.{field.attr}", datetime_text)
        members.append(f"{field.json_name!r}: {member}")
    return f"{{{', '.join(members)}}}"


def _member(field: FieldView, read: str, datetime_text: Callable[[str], str] | None = None) -> str:
    shape = field.shape
    assert shape is not None
    if shape.kind in shapes.PLAIN:
        return read
    if shape.kind == "enum":
        shown = f"{read}._value_"
    elif shape.kind == "datetime":
        shown = f"_format_datetime({read})" if datetime_text is None else datetime_text(read)
    elif _plain_list(field):
        shown = f"list({read})"
    else:
        return f"{field.spec}.to_json({read})"
    return f"(None if {read} is None else {shown})" if shape.optional else shown


def _plain_list(field: FieldView) -> bool:
    """A list (not a set) of plain values (not refs, which their spec writes): its JSON is a
    copy of it, and its repr that JSON's."""
    shape = field.shape
    assert shape is not None
    element = shape.element
    return (
        shape.kind == "list"
        and element is not None
        and element.kind in shapes.PLAIN
        and not element.optional
        and not element.ref
    )


def json_repr_body(record: RecordView, to_json: str) -> list[str]:
    """`return repr(to_json(value))` written as one f-string, without building the dict: a
    dict's repr is `{'a': <repr of a>, 'b': ...}`, and `{x!r}` is that repr of x. Plain
    values, optional plain values and lists of plain values as they are (the owned lists in
    state are lists with list's repr); a UTC datetime (how state holds them) as its ISO text
    in quotes, which is its repr (ASCII, no quote), in whole seconds by %-formatting its
    fields (half the time of isoformat()); a row holding another datetime goes through
    `repr(to_json(value))`."""
    members = []
    datetimes: list[str] = []  # the names the datetimes are read into, once: tested, written
    lines = []
    for index, field in enumerate(_by_name(record)):
        read = f"value.{field.attr}"
        shape = field.shape
        assert shape is not None
        name = repr(field.json_name).replace("{", "{{").replace("}", "}}")
        plain_list = _plain_list(field) and not shape.optional
        if shape.kind in shapes.PLAIN or shape.kind == "json" or plain_list:
            members.append(f"{name}: {{{read}!r}}")
        elif shape.kind == "enum" and not shape.optional:
            members.append(f"{name}: {{{read}._value_!r}}")
        elif shape.kind == "datetime" and not shape.optional:
            moment = f"d{index}"
            datetimes.append(moment)
            lines.append(f"{moment} = {read}")
            seconds = (
                f"_ISO_SECONDS % ({moment}.year, {moment}.month, {moment}.day, "
                f"{moment}.hour, {moment}.minute, {moment}.second)"
            )
            text = f"{seconds} if not {moment}.microsecond else {moment}.isoformat()[:-6]"
            members.append(f"{name}: '{{{text}}}Z'")
        else:
            members.append(f"{name}: {{{_member(field, read)}!r}}")
    if datetimes:
        other = " or ".join(f"{moment}.tzinfo is not _UTC" for moment in datetimes)
        lines += [f"if {other}:", f"    return repr({to_json}(value))"]
    return lines + ["return (", *(f"    {piece}" for piece in _pieces(members)), ")"]


def _pieces(members: list[str]) -> list[str]:
    """`{m0, m1, ...}` as adjacent f-strings, one member each (joined when compiled)."""
    if not members:
        return ['"{}"']
    pieces = [f'f"{{{{{members[0]}"']
    pieces += [f'f", {member}"' for member in members[1:]]
    pieces.append('"}"')
    return pieces


def _by_name(record: RecordView) -> list[FieldView]:
    return sorted(record.fields, key=lambda field: field.json_name)
