"""What the generated row loaders and nested readers (envdsl/codegen/loaders.py) name from the
runtime, in one place: the generated module imports these under private names (`_Slow`, ...),
and runtime/loading.py runs the loaders a table's spec carries (TableSpec.loader).

The names are typed for the generated code's mypy --strict: builtins and runtime functions
given the signatures the loaders call them with (a name bound to a builtin calls the builtin
itself, at no cost over the exec'd source these functions replace).
"""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any, Callable, Iterable, NamedTuple

from envdsl.runtime.errors import BadValue
from envdsl.runtime.limits import (
    MAX_INT,
    MAX_ITEMS,
    MAX_JSON_DEPTH,
    MAX_STR,
    MIN_INT,
    has_surrogate,
    json_problem,
)
from envdsl.runtime.places import (
    IMMUTABLE_TYPES,
    OwnedDict,
    OwnedList,
    OwnedSet,
    Place,
    owned_copy as _owned_copy,
)
from envdsl.runtime.values import TypeSpec, UTC, parse_date, parse_datetime


class RowLoader(NamedTuple):
    """The generated reader of one table's rows, `many` (a list of rows from a list of JSON
    objects, in one loop: no call per row; told whether they were decoded from JSON text, where
    every name is an exact str already), and `keyed`: the key's JSON name where the key
    is a str, so that a table given as an object of rows keyed by their keys takes the
    object's keys as they are (runtime/loading.py); None for other keys, read through their
    specs."""

    many: Callable[[Any, bool], list[Any]]  # (rows, decoded from JSON text)
    keyed: str | None


class Slow(Exception):
    """Not the plain case: load the state through the reference path."""


class NotPlain(Exception):
    """A nested value a reader does not take as it is: read the field the reference way."""


# what `value.get(name, MISSING)` gives for a member left out (None is JSON null); Any so
# that a field read is Any to the type checker, as the JSON it stands for
MISSING: Any = object()
FIELD_DEPTH = 3  # state object -> table -> row -> field value
INF = float("inf")
DICT_ONLY: set[type] = {dict}
STR_ONLY: set[type] = {str}

new: Callable[[type[Any]], Any] = object.__new__  # a row without its __init__
# Place(...) without its Python-level __new__
place_new: Callable[[type[Place], tuple[str, Any, str]], Place] = tuple.__new__
owned_copy: Callable[[Any, Place], Any] = _owned_copy
chain: Callable[[Iterable[Iterable[Any]]], Iterable[Any]] = itertools.chain.from_iterable
datetime_from: Callable[[str], dt.datetime] = dt.datetime.fromisoformat
date_from: Callable[[str], dt.date] = dt.date.fromisoformat


def read_field(spec: TypeSpec, raw: Any) -> Any:
    """What a row loader does with a present raw value its inline test did not take: the
    JSON walk and the spec's own from_json (Slow for a problem: the caller starts over)."""
    if raw is MISSING:
        raise Slow
    if json_problem(raw, depth=FIELD_DEPTH) is not None:
        raise Slow
    try:
        return spec.from_json(raw, "")
    except BadValue:
        raise Slow from None


def plain_strs(items: list[Any]) -> bool:
    return all(type(item) is str and item.isascii() and len(item) <= 64 for item in items)


def plain_ints(items: list[Any]) -> bool:
    return all(type(item) is int and MIN_INT <= item <= MAX_INT for item in items)


def plain_bools(items: list[Any]) -> bool:
    return all(item is True or item is False for item in items)


def long_str(value: str) -> bool:
    """A string StrSpec and the JSON walk take that is not short ASCII."""
    return len(value) <= MAX_STR and not has_surrogate(value)


def nested_datetime(raw: Any) -> dt.datetime:
    """DateTimeSpec.from_json for the ASCII forms (as the row loader's inline reading), NotPlain
    for the rest."""
    if type(raw) is str and raw.isascii():
        try:
            return parse_datetime(raw)
        except ValueError:
            pass
    raise NotPlain


def nested_date(raw: Any) -> dt.date:
    """DateSpec.from_json for the ASCII forms, NotPlain for the rest."""
    if type(raw) is str and raw.isascii():
        try:
            return parse_date(raw)
        except ValueError:
            pass
    raise NotPlain


def not_plain() -> Any:
    raise NotPlain


__all__ = [
    "DICT_ONLY",
    "FIELD_DEPTH",
    "IMMUTABLE_TYPES",
    "INF",
    "MAX_INT",
    "MAX_ITEMS",
    "MAX_JSON_DEPTH",
    "MAX_STR",
    "MIN_INT",
    "MISSING",
    "NotPlain",
    "OwnedDict",
    "OwnedList",
    "OwnedSet",
    "Place",
    "RowLoader",
    "STR_ONLY",
    "Slow",
    "UTC",
    "chain",
    "date_from",
    "datetime_from",
    "long_str",
    "nested_date",
    "nested_datetime",
    "new",
    "not_plain",
    "owned_copy",
    "place_new",
    "plain_bools",
    "plain_ints",
    "plain_strs",
    "read_field",
]
