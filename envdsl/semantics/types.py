"""The semantic type model and the assignability relation.

Types are small frozen values so they can be compared with `==` and used as dict keys.
`ERROR` absorbs follow-on errors: any operation on it is silent and yields `ERROR`, which is
how one mistake gives one diagnostic.  `NOTHING` is the element type of `[]`, `{}` and
`set()`, assignable to every type.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Union

from envdsl.util.frozen_node import node


@node
class Prim:
    name: str  # int float bool str date datetime duration json

    def __str__(self) -> str:
        return self.name


@node
class NoneType:
    def __str__(self) -> str:
        return "none"


@node
class ErrorType:
    def __str__(self) -> str:
        return "<error>"


@node
class NothingType:
    def __str__(self) -> str:
        return "<empty>"


@node
class VoidType:
    """The result of a tool without `-> T` and of statement-only calls (`xs.append(x)`)."""

    def __str__(self) -> str:
        return "nothing"


@node
class ListType:
    elem: Type

    def __str__(self) -> str:
        return f"list[{self.elem}]"


@node
class SetType:
    elem: Type

    def __str__(self) -> str:
        return f"set[{self.elem}]"


@node
class MapType:
    key: Type
    value: Type

    def __str__(self) -> str:
        return f"map[{self.key}, {self.value}]"


@node
class TupleType:
    """Only produced by zip, enumerate and map.items(), and consumed by `for a, b in ...`."""

    items: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


@node
class OptionalType:
    inner: Type

    def __str__(self) -> str:
        return f"{self.inner}?"


@node
class RefType:
    entity: str

    def __str__(self) -> str:
        return f"ref {self.entity}"


@node
class EnumType:
    name: str

    def __str__(self) -> str:
        return self.name


@node
class RecordType:
    """A record value or an entity row (is_entity)."""

    name: str
    is_entity: bool

    def __str__(self) -> str:
        return self.name


@node
class VariantType:
    """A value of a tagged union: any of its cases. A case's own type is the record type
    named `Variant.case` (case_type), assignable to its variant."""

    name: str

    def __str__(self) -> str:
        return self.name


def case_type(variant: str, case: str) -> RecordType:
    return RecordType(f"{variant}.{case}", False)


def variant_of(value: Type) -> str | None:
    """The variant a case's record type belongs to (`PaymentMethod` of
    `PaymentMethod.gift_card`); None for any other type. Declared names hold no dot."""
    if isinstance(value, RecordType) and not value.is_entity and "." in value.name:
        return value.name.partition(".")[0]
    return None


@node
class TableType:
    entity: str

    def __str__(self) -> str:
        return f"table {self.entity}"


@node
class TypeRefType:
    """The type of a name that denotes a type: `Quality` in `Quality.good`, `User` in `User(...)`."""

    target: Type

    def __str__(self) -> str:
        return f"type {self.target}"


@node
class InitialStateType:
    """The type of `initial` in checks: attribute access gives the state field's type."""

    def __str__(self) -> str:
        return "initial state"


Type = Union[
    Prim,
    NoneType,
    ErrorType,
    NothingType,
    VoidType,
    ListType,
    SetType,
    MapType,
    TupleType,
    OptionalType,
    RefType,
    EnumType,
    RecordType,
    VariantType,
    TableType,
    TypeRefType,
    InitialStateType,
]

INT = Prim("int")
FLOAT = Prim("float")
BOOL = Prim("bool")
STR = Prim("str")
DATE = Prim("date")
DATETIME = Prim("datetime")
DURATION = Prim("duration")
JSON = Prim("json")
NONE = NoneType()
ERROR = ErrorType()
NOTHING = NothingType()
VOID = VoidType()

PRIMITIVES = {p.name: p for p in (INT, FLOAT, BOOL, STR, DATE, DATETIME, DURATION, JSON)}
NUMERIC = (INT, FLOAT)
ORDERED = (INT, FLOAT, STR, DATE, DATETIME, DURATION)


def orderable(t: Type) -> bool:
    """Can values of this type be sorted? (A `ref` is its key, a str or an int.)"""
    return t in ORDERED or isinstance(t, RefType)


def is_error(t: Type) -> bool:
    return isinstance(t, ErrorType)


def strip_optional(t: Type) -> Type:
    return t.inner if isinstance(t, OptionalType) else t


def optional(t: Type) -> Type:
    if isinstance(t, (OptionalType, NoneType, ErrorType)):
        return t
    return OptionalType(t)


def is_optional(t: Type) -> bool:
    return isinstance(t, (OptionalType, NoneType))


def element_type(t: Type) -> Type | None:
    """What `for x in t` binds x to, or None when t is not iterable."""
    if isinstance(t, (ListType, SetType)):
        return t.elem
    if isinstance(t, MapType):
        return t.key
    if isinstance(t, TableType):
        return RecordType(t.entity, True)
    if t == STR:
        return STR
    if isinstance(t, (ErrorType, NothingType)):
        return ERROR
    return None


def join(a: Type, b: Type) -> Type | None:
    """The least common type of two branches (`x if c else y`, list literal items), or None."""
    if a == b:
        return a
    if isinstance(a, (ErrorType,)) or isinstance(b, ErrorType):
        return ERROR
    if isinstance(a, NothingType):
        return b
    if isinstance(b, NothingType):
        return a
    if isinstance(a, NoneType):
        return optional(b)
    if isinstance(b, NoneType):
        return optional(a)
    if {a, b} == {INT, FLOAT}:
        return FLOAT
    if isinstance(a, OptionalType) or isinstance(b, OptionalType):
        inner = join(strip_optional(a), strip_optional(b))
        return optional(inner) if inner is not None else None
    if isinstance(a, ListType) and isinstance(b, ListType):
        elem = join(a.elem, b.elem)
        return ListType(elem) if elem is not None else None
    if isinstance(a, SetType) and isinstance(b, SetType):
        elem = join(a.elem, b.elem)
        return SetType(elem) if elem is not None else None
    if isinstance(a, MapType) and isinstance(b, MapType):
        key, value = join(a.key, b.key), join(a.value, b.value)
        return MapType(key, value) if key is not None and value is not None else None
    variant = variant_of(a) or (a.name if isinstance(a, VariantType) else None)
    if variant is not None and variant in (variant_of(b), getattr(b, "name", None)):
        if isinstance(b, (RecordType, VariantType)):
            return VariantType(variant)  # two cases of one variant: the variant
    if isinstance(a, RefType) and isinstance(b, RecordType) and b.name == a.entity:
        return a
    if isinstance(b, RefType) and isinstance(a, RecordType) and a.name == b.entity:
        return b
    return None


def _holds_tuple(value: Type) -> bool:
    if isinstance(value, TupleType):
        return True
    if isinstance(value, OptionalType):
        return _holds_tuple(value.inner)
    if isinstance(value, (ListType, SetType)):
        return _holds_tuple(value.elem)
    if isinstance(value, MapType):
        return _holds_tuple(value.key) or _holds_tuple(value.value)
    return False


class Assignability:
    """`assignable(src, dst)`: can a value of type src be stored where dst is expected?

    Needs the key type of each entity, because a `ref E` holds E's key: a `str` key value is
    assignable to `ref E` and back, and a row of E is assignable to `ref E` (its key is taken).
    """

    def __init__(self, key_types: dict[str, Type]) -> None:
        self.key_types = key_types

    def __call__(self, src: Type, dst: Type) -> bool:
        if src == dst:
            return True
        if isinstance(src, (ErrorType, NothingType)) or isinstance(dst, ErrorType):
            return True
        if dst == JSON:
            if _holds_tuple(src):  # zip/enumerate/items() pairs have no JSON form of their own
                return False
            return not isinstance(src, (VoidType, TypeRefType, TableType, InitialStateType))
        if src == INT and dst == FLOAT:
            return True
        if isinstance(dst, OptionalType):
            if isinstance(src, NoneType):
                return True
            return self(strip_optional(src), dst.inner)
        if isinstance(dst, VariantType):
            return variant_of(src) == dst.name
        if isinstance(dst, RefType):
            if isinstance(src, RecordType) and src.is_entity and src.name == dst.entity:
                return True
            key = self.key_types.get(dst.entity)
            return key is not None and src == key
        if isinstance(src, RefType):
            return self.key_types.get(src.entity) == dst
        if isinstance(src, ListType) and isinstance(dst, ListType):
            return self(src.elem, dst.elem)
        if isinstance(src, SetType) and isinstance(dst, SetType):
            return self(src.elem, dst.elem)
        if isinstance(src, MapType) and isinstance(dst, MapType):
            return self(src.key, dst.key) and self(src.value, dst.value)
        if isinstance(src, TableType) and isinstance(dst, ListType):
            # a table used as a value is the list of its rows (codegen takes `table.rows()`);
            # only a list of the rows themselves: rows as refs would need a per-element copy
            return dst.elem == RecordType(src.entity, True)
        if isinstance(dst, TableType):
            row = RecordType(dst.entity, True)
            if isinstance(src, ListType):
                return self(src.elem, row)
            if isinstance(src, MapType):
                return self(src.value, row)
        if isinstance(src, TupleType) and isinstance(dst, TupleType):
            return len(src.items) == len(dst.items) and all(
                self(s, d) for s, d in zip(src.items, dst.items)
            )
        return False

    def comparable(self, a: Type, b: Type) -> bool:
        """May `a == b` ever be true?  (Comparing a str with an int is always a mistake.)"""
        if self(a, b) or self(b, a):
            return True
        a, b = strip_optional(a), strip_optional(b)
        if self(a, b) or self(b, a):
            return True
        return isinstance(a, RefType) and isinstance(b, RefType) and a.entity == b.entity


def can_hold_ref(value: Type, records: Mapping[str, Iterable[Type]]) -> bool:
    """Whether a value of this type can hold a ref anywhere inside; `records` gives the field
    types of each record (and variant case) by name, a variant's cases under `Variant.*`."""
    seen: set[str] = set()

    def reaches(current: Type) -> bool:
        if isinstance(current, RefType):
            return True
        if isinstance(current, (ListType, SetType)):
            return reaches(current.elem)
        if isinstance(current, MapType):
            return reaches(current.key) or reaches(current.value)
        if isinstance(current, OptionalType):
            return reaches(current.inner)
        if isinstance(current, TupleType):
            return any(reaches(item) for item in current.items)
        if isinstance(current, (RecordType, VariantType)):
            if current.name in seen:
                return False  # a record inside itself: its refs are found on the first visit
            seen.add(current.name)
            prefix = f"{current.name}." if isinstance(current, VariantType) else None
            fields = [
                field_type
                for name, types in records.items()
                if name == current.name or (prefix is not None and name.startswith(prefix))
                for field_type in types
            ]
            return any(reaches(field_type) for field_type in fields)
        return False

    return reaches(value)
