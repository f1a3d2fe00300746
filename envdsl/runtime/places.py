"""Places: where a value in state lives, so that a write through any alias of it is journaled.

A local bound to a list, set, map or record read from state *is* that value, as in Python
(`let item = o.items[0]` then `item.price = 5` changes the order).  To undo such a write when
the call fails, the journal must know which row field (or scalar state field) the value belongs
to, whatever path led to it: a loop variable, `first(...)`, a fn's result.  So every mutable value
stored in state is an *owned copy* that carries its place; generated code calls
`Environment._mut(value)` before changing a value in place, and that journals the value's place
(or nothing, for a value that lives nowhere in state).

Storing a value into state (an insert, a field or scalar assignment, an element added to an
owned collection) stores an owned copy, so no two places in state ever share one value.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import weakref
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class Place(NamedTuple):
    """A row's field (table, row object, attribute) or a scalar state field (table None).
    Immutable, and made for every owned value that enters state: a named tuple is made in
    half the time of a frozen dataclass (whose __init__ sets each field through
    object.__setattr__)."""

    table: str | None
    row: Any
    attr: str


class Value:
    """Base of generated record classes (value types): the place of an owned record."""

    __slots__ = ("_owner",)
    # its Place, set by the generated loaders (codegen/loaders.py); Any, as mypy's dataclass
    # plugin leaves this slot out of a `slots=True` subclass's and takes Any as assignable
    _owner: Any


class OwnedList(list[T]):
    __slots__ = ("_owner",)
    _owner: Place


class OwnedSet(set[T]):
    __slots__ = ("_owner",)
    _owner: Place


class OwnedDict(dict[K, V]):
    __slots__ = ("_owner",)
    _owner: Place


# values that cannot be changed in place: stored as they are
_IMMUTABLE: frozenset[type] = frozenset(
    {str, int, float, bool, type(None), dt.date, dt.datetime, dt.timedelta}
)
# weakly: a batch check loads thousands of generated classes, and a strong key here kept each
# one's whole module alive (found growing `envdsl check` by ~150 KB and slowing each full
# garbage collection a spec)
_RECORD_FIELDS: weakref.WeakKeyDictionary[type, tuple[str, ...]] = weakref.WeakKeyDictionary()


def place_of(value: object) -> Place | None:
    """The place an owned value lives in; None for a value that is not in state."""
    owner: Place | None = getattr(value, "_owner", None)
    return owner


def record_fields(cls: type) -> tuple[str, ...]:
    """The field attributes of a generated dataclass (records and entities)."""
    names = _RECORD_FIELDS.get(cls)
    if names is None:
        # dataclasses.fields leaves out class variables (a variant case's tag is one)
        names = (
            tuple(f.name for f in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else ()
        )
        _RECORD_FIELDS[cls] = names
    return names


IMMUTABLE_TYPES = _IMMUTABLE  # for writers that inline is_immutable on their hot path


def is_immutable(value: object) -> bool:
    return type(value) in _IMMUTABLE or isinstance(value, enum.Enum)


def owned_copy(value: T, place: Place) -> T:
    """A deep copy of `value` whose lists, sets, maps and records all live at `place`."""
    cls = type(value)
    if cls in _IMMUTABLE:
        return value
    result: Any
    if isinstance(value, list):
        result = OwnedList([item if type(item) in _IMMUTABLE else owned_copy(item, place)
                            for item in value])  # fmt: skip
    elif isinstance(value, dict):
        result = OwnedDict({key: item if type(item) in _IMMUTABLE else owned_copy(item, place)
                            for key, item in value.items()})  # fmt: skip
    elif isinstance(value, set):
        result = OwnedSet(value)  # elements are hashable, hence immutable
    elif isinstance(value, Value):
        result = object.__new__(cls)
        for name in record_fields(cls):
            setattr(result, name, owned_copy(getattr(value, name), place))
    else:
        return value  # an enum member, or a row (rows are never nested in values)
    result._owner = place
    return result  # type: ignore[no-any-return]


def own_row_fields(table: str, row: Any, fields: tuple[str, ...] | None = None) -> None:
    """Give a row's mutable field values their own owned copies (a row entering a table);
    `fields`: the only ones whose type can hold a mutable value, when the caller knows them."""
    for name in record_fields(type(row)) if fields is None else fields:
        current = getattr(row, name)
        if type(current) not in _IMMUTABLE:
            setattr(row, name, owned_copy(current, Place(table, row, name)))
