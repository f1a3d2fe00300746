"""Type specs: how each DSL type is read from JSON, written to JSON and described in schemas.

One spec object per declared type is built by the generated module; argument validation,
JSON states, results and tool schemas all go through it, so they cannot disagree.

Coercion policy (documented in docs/language.md): JSON numbers are accepted for `float`
(an integer in the 64-bit range stays a Python int, so `100` is written back as `100` and
`100.0` as `100.0`: a loaded state's JSON is its input's), only integral numbers for `int` (`5.0` is accepted, `5.5` and `"5"` are
not), `true`/`false` only for `bool`; strings are never parsed as numbers; dates and
datetimes are ISO 8601 strings (a datetime without offset is UTC); durations are seconds.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import math
import re
import weakref
from typing import Any, Callable, Generic, TypeVar

from envdsl.runtime.errors import BadValue
from envdsl.runtime.limits import (
    MAX_INT,
    MAX_ITEMS,
    MAX_STR,
    MIN_INT,
    clip,
    has_surrogate,
    json_problem,
)

JSONValue = Any
T = TypeVar("T")
UTC = dt.timezone.utc


def _describe(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


class TypeSpec:
    name = "value"

    def from_json(self, value: JSONValue, path: str) -> Any:
        raise NotImplementedError

    def to_json(self, value: Any) -> JSONValue:
        return value

    def schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def mismatch(self, value: JSONValue, path: str) -> BadValue:
        return BadValue(path, f"expected {self.name}, got {_describe(value)}")


class IntSpec(TypeSpec):
    name = "an integer"

    def from_json(self, value: JSONValue, path: str) -> int:
        if isinstance(value, bool):
            raise self.mismatch(value, path)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise self.mismatch(value, path)
        if not MIN_INT <= value <= MAX_INT:
            raise BadValue(path, "the integer is outside the 64-bit range")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "integer"}


class FloatSpec(TypeSpec):
    name = "a number"

    def from_json(self, value: JSONValue, path: str) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.mismatch(value, path)
        if type(value) is int and MIN_INT <= value <= MAX_INT:
            return value  # as the data wrote it: Python's arithmetic keeps it exact
        try:
            number = float(value)  # an integer beyond 1e308 overflows
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            raise BadValue(path, "expected a finite number")
        return number

    def to_json(self, value: Any) -> JSONValue:
        # `5` (read as an int, or int arithmetic on one) and `5.0` as they are: equal values
        # whose JSON is what came in, so a state loaded and written back is byte-equal
        return value if type(value) is int or type(value) is float else float(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "number"}


class BoolSpec(TypeSpec):
    name = "true or false"

    def from_json(self, value: JSONValue, path: str) -> bool:
        if not isinstance(value, bool):
            raise self.mismatch(value, path)
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}


class StrSpec(TypeSpec):
    name = "a string"

    def from_json(self, value: JSONValue, path: str) -> str:
        if not isinstance(value, str):
            raise self.mismatch(value, path)
        if not value.isascii() or len(value) > 64:  # the common case: one O(1) test
            if len(value) > MAX_STR:
                raise BadValue(path, f"the string is longer than {MAX_STR} characters")
            if has_surrogate(value):
                raise BadValue(path, "the string holds a lone surrogate (not valid Unicode)")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string"}


def parse_date(text: str) -> dt.date:
    if len(text) != 10:
        raise ValueError(text)
    return dt.date.fromisoformat(text)


def parse_datetime(text: str) -> dt.datetime:
    if "T" not in text and " " not in text:
        raise ValueError(text)
    value = dt.datetime.fromisoformat(text)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 9999-12-31T23:59-01:00 is after the last representable instant
        raise ValueError(text) from None


def format_datetime(value: dt.datetime) -> str:
    """A datetime's canonical text (`2024-05-01T09:00:00Z`), remembered for the datetimes
    formatted last: isoformat of an aware datetime costs ~0.7 µs in CPython 3.11, a lookup of
    one already hashed ~0.05, and results show the same stored datetimes again and again.
    Equal datetimes have the same text (an aware one is written as its UTC instant; naive
    and aware ones are never equal), so the memo cannot give one another's."""
    text = _DATETIME_TEXTS.get(value)
    if text is None:
        text = _datetime_text(value)
        if len(_DATETIME_TEXTS) >= _DATETIME_TEXTS_KEPT:
            _DATETIME_TEXTS.clear()
        _DATETIME_TEXTS[value] = text
    return text


_DATETIME_TEXTS: dict[dt.datetime, str] = {}
_DATETIME_TEXTS_KEPT = 4096


def _datetime_text(value: dt.datetime) -> str:
    if value.tzinfo is UTC:  # how state holds them: isoformat pads the year and omits a zero
        return value.isoformat()[:-6] + "Z"  # microsecond, as the form below does
    value = value.astimezone(UTC) if value.tzinfo is not None else value
    # not strftime("%Y"): it writes year 1 as "1", which does not parse back
    text = (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
        f"T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    )
    if value.microsecond:
        text += f".{value.microsecond:06d}"
    return text + "Z"


class DateSpec(TypeSpec):
    name = "a date (YYYY-MM-DD)"

    def from_json(self, value: JSONValue, path: str) -> dt.date:
        if isinstance(value, str):
            try:
                return parse_date(value)
            except ValueError:
                pass
        raise self.mismatch(value, path)

    def to_json(self, value: Any) -> JSONValue:
        return value.isoformat()

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "format": "date"}


class DateTimeSpec(TypeSpec):
    name = "a datetime (ISO 8601, e.g. 2024-05-01T09:00:00Z)"

    def from_json(self, value: JSONValue, path: str) -> dt.datetime:
        if isinstance(value, str):
            try:
                return parse_datetime(value)
            except ValueError:
                pass
        raise self.mismatch(value, path)

    def to_json(self, value: Any) -> JSONValue:
        return format_datetime(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "format": "date-time"}


class DurationSpec(TypeSpec):
    name = "a duration in seconds"

    def from_json(self, value: JSONValue, path: str) -> dt.timedelta:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.mismatch(value, path)
        try:
            return dt.timedelta(seconds=value)
        except (OverflowError, ValueError):  # beyond 999,999,999 days, or not finite
            raise BadValue(path, "the duration is out of range") from None

    def to_json(self, value: Any) -> JSONValue:
        seconds = value.total_seconds()
        return int(seconds) if seconds.is_integer() else seconds

    def schema(self) -> dict[str, Any]:
        return {"type": "number", "description": "seconds"}


class JsonSpec(TypeSpec):
    name = "any JSON value"

    def from_json(self, value: JSONValue, path: str) -> Any:
        problem = json_problem(value)
        if problem is not None:
            raise BadValue(path, problem)
        return value

    def to_json(self, value: Any) -> JSONValue:
        # a copy: the value in state is an owned object, and one handed out as it is (in a
        # result, in state_json()) would let its reader change the state past the journal
        return _json_copy(value)

    def schema(self) -> dict[str, Any]:
        return {}


def _json_copy(value: Any) -> Any:
    """A JSON value's objects and arrays as new plain dicts and lists (the rest is immutable)."""
    if isinstance(value, dict):
        return {key: _json_copy(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_copy(item) for item in value]
    return value


E = TypeVar("E", bound=enum.Enum)


class EnumSpec(TypeSpec, Generic[E]):
    def __init__(self, cls: type[E]) -> None:
        self.cls = cls
        self.by_value = {member.value: member for member in cls}
        self.name = "one of " + ", ".join(repr(v) for v in self.by_value)

    def from_json(self, value: JSONValue, path: str) -> E:
        member = self.by_value.get(value) if isinstance(value, str) else None
        if member is None:
            raise self.mismatch(value, path)
        return member

    def to_json(self, value: Any) -> JSONValue:
        return value.value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(self.by_value)}


class OptionalSpec(TypeSpec):
    def __init__(self, inner: TypeSpec) -> None:
        self.inner = inner
        self.name = f"{inner.name} or null"

    def from_json(self, value: JSONValue, path: str) -> Any:
        return None if value is None else self.inner.from_json(value, path)

    def to_json(self, value: Any) -> JSONValue:
        return None if value is None else self.inner.to_json(value)

    def schema(self) -> dict[str, Any]:
        inner = self.inner.schema()
        if "type" in inner and isinstance(inner["type"], str) and "enum" not in inner:
            return {**inner, "type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}


class ListSpec(TypeSpec):
    def __init__(self, inner: TypeSpec) -> None:
        self.inner = inner
        self.name = f"an array of {inner.name}"

    def from_json(self, value: JSONValue, path: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.mismatch(value, path)
        if len(value) > MAX_ITEMS:
            raise BadValue(path, f"more than {MAX_ITEMS} elements")
        return [self.inner.from_json(item, f"{path}[{i}]") for i, item in enumerate(value)]

    def to_json(self, value: Any) -> JSONValue:
        if type(self.inner) in _PLAIN:
            return list(value)
        return [self.inner.to_json(item) for item in value]

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": self.inner.schema()}


class SetSpec(ListSpec):
    def __init__(self, inner: TypeSpec) -> None:
        super().__init__(inner)
        self.name = f"an array of distinct {inner.name}"

    def from_json(self, value: JSONValue, path: str) -> set[Any]:  # type: ignore[override]
        return set(super().from_json(value, path))

    def to_json(self, value: Any) -> JSONValue:
        # sets have no order: they are written, and iterated (helpers.ordered), sorted
        return [self.inner.to_json(item) for item in ordered(value)]

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": self.inner.schema(), "uniqueItems": True}


class MapSpec(TypeSpec):
    def __init__(self, key: TypeSpec, value: TypeSpec) -> None:
        self.key = key
        self.value = value
        self.name = f"an object of {value.name}"

    def from_json(self, value: JSONValue, path: str) -> dict[Any, Any]:
        if not isinstance(value, dict):
            raise self.mismatch(value, path)
        if len(value) > MAX_ITEMS:
            raise BadValue(path, f"more than {MAX_ITEMS} entries")
        result: dict[Any, Any] = {}
        seen: dict[Any, str] = {}
        for raw_key, item in value.items():
            where = (
                f"{path}.{raw_key if isinstance(raw_key, str) and len(raw_key) <= 40 else '<key>'}"
            )
            if not isinstance(raw_key, str):
                raise BadValue(where, "an object key must be a string")
            key = key_from_json(self.key, raw_key, where)
            if key in seen:  # "1" and "1.0" of a float map, say: one key written twice
                raise BadValue(where, f"the keys {clip(seen[key])} and {clip(raw_key)} are one key")
            seen[key] = raw_key
            result[key] = self.value.from_json(item, where)
        return result

    def to_json(self, value: Any) -> JSONValue:
        # insertion order, as maps iterate: equal JSON then means equal behaviour from here on
        return {key_to_json(self.key, k): self.value.to_json(v) for k, v in value.items()}

    def schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.value.schema()}


_INT_TEXT = re.compile(r"0|-?[1-9][0-9]{0,18}")


def key_from_json(spec: TypeSpec, raw: str, path: str) -> Any:
    """A map key from its JSON object key: numbers and booleans in their one canonical text
    (`"1"`, never `"01"` or `" 1"`, which would silently merge with it), the rest as values."""
    if isinstance(spec, RefSpec):
        spec = spec.key
    if isinstance(spec, IntSpec):
        if _INT_TEXT.fullmatch(raw) is None:
            raise BadValue(path, f"expected an integer key, got {clip(raw)}")
        return spec.from_json(int(raw), path)
    if isinstance(spec, (FloatSpec, DurationSpec)):
        try:
            number = float(raw) if raw.strip() == raw and "_" not in raw else math.nan
        except ValueError:
            number = math.nan
        if not math.isfinite(number):
            raise BadValue(path, f"expected a number key, got {clip(raw)}")
        if isinstance(spec, FloatSpec) and _INT_TEXT.fullmatch(raw) is not None:
            return spec.from_json(int(raw), path)  # "100" stays "100" when written back
        return spec.from_json(number, path)
    if isinstance(spec, BoolSpec):
        if raw not in ("true", "false"):
            raise BadValue(path, f"expected the key true or false, got {clip(raw)}")
        return raw == "true"
    return spec.from_json(raw, path)


def key_to_json(spec: TypeSpec, key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(spec.to_json(key))


@dataclasses.dataclass(frozen=True, slots=True)
class FieldSpec:
    name: str  # the JSON name, as written in the spec
    spec: TypeSpec
    required: bool
    description: str | None = None
    attr: str = ""  # the Python attribute when the name had to be mangled (`from` -> `from_`)

    @property
    def attribute(self) -> str:
        return self.attr or self.name


class RecordSpec(TypeSpec):
    """A record or an entity row: a JSON object with one member per field."""

    def __init__(
        self,
        cls: type[Any],
        fields: Callable[[], list[FieldSpec]],
        *,
        to_json: Callable[[Any], JSONValue] | None = None,
        json_repr: Callable[[Any], str] | None = None,
    ) -> None:
        """`to_json` and `json_repr`: the record's JSON writers, as the compiler writes them
        for the fields (codegen/serializers.py); without them, the generic walk (the
        reference, reference_to_json)."""
        self.cls = cls
        self._fields_factory = fields
        self._fields: list[FieldSpec] | None = None
        self._serialize = to_json
        self._repr = json_repr
        self._known: dict[str, FieldSpec] | None = None
        self.name = f"a {cls.__name__} object"

    @property
    def fields(self) -> list[FieldSpec]:
        # built lazily: records may refer to each other, and to themselves through lists
        if self._fields is None:
            self._fields = self._fields_factory()
        return self._fields

    def from_json(self, value: JSONValue, path: str) -> Any:
        if not isinstance(value, dict):
            raise self.mismatch(value, path)
        known = self._known
        if known is None:
            known = self._known = {f.name: f for f in self.fields}
        if len(value) > len(known) or any(k not in known for k in value):
            unknown = next(k for k in value if k not in known)
            raise BadValue(
                path,
                f"{self.cls.__name__} has no field {clip(unknown)} (fields: {', '.join(known)})",
            )
        kwargs: dict[str, Any] = {}
        try:  # without building each field's path (a state load reads 100,000s of rows)
            for field in self.fields:
                name = field.name
                if name in value:
                    kwargs[field.attribute] = field.spec.from_json(value[name], "")
                elif field.required:
                    raise BadValue("", "")
        except BadValue:  # again, to say where
            for field in self.fields:
                where = f"{path}.{field.name}" if path else field.name
                if field.name in value:
                    kwargs[field.attribute] = field.spec.from_json(value[field.name], where)
                elif field.required:
                    raise BadValue(where, f"missing required field of {self.cls.__name__}")
        return self.cls(**kwargs)

    def to_json(self, value: Any) -> JSONValue:
        return self.serializer()(value)

    def serializer(self) -> Callable[[Any], JSONValue]:
        """This record's to_json: the generated module's function for its fields, or the
        generic walk; it runs for every result and state dump."""
        serialize = self._serialize
        if serialize is None:
            serialize = self._serialize = functools.partial(reference_to_json, self)
        return serialize

    def json_repr(self) -> Callable[[Any], str]:
        """`lambda value: repr(self.to_json(value))`, the generated module's written out for
        its fields where there is one: what state_hash() digests, per row."""
        write = self._repr
        if write is None:
            write = self._repr = functools.partial(_reference_json_repr, self)
        return write

    def schema(self) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for field in self.fields:
            prop = dict(field.spec.schema())
            if field.description:
                prop["description"] = field.description
            properties[field.name] = prop
        return {
            "type": "object",
            "properties": properties,
            "required": [f.name for f in self.fields if f.required],
            "additionalProperties": False,
        }


class VariantSpec(TypeSpec):
    """A variant (tagged union): a JSON object whose tag member names the case, and whose
    other members are that case's fields (each case is a record with its own RecordSpec).
    Nothing else: no member for another case's fields, no nulls."""

    def __init__(self, variant: str, tag: str, cases: Callable[[], dict[str, RecordSpec]]) -> None:
        self.variant = variant
        self.tag = tag
        self._cases_factory = cases
        self._cases: dict[str, RecordSpec] | None = None
        self._by_class: dict[type[Any], tuple[str, RecordSpec]] | None = None
        self.name = f"a {variant} object"

    @property
    def cases(self) -> dict[str, RecordSpec]:
        if self._cases is None:  # lazily, as a record's fields: cases may hold the variant
            self._cases = self._cases_factory()
        return self._cases

    def case_of(self, value: Any) -> tuple[str, RecordSpec] | None:
        """The case (name and spec) of a Python value, or None when it is no case's."""
        by_class = self._by_class
        if by_class is None:
            by_class = self._by_class = {spec.cls: (c, spec) for c, spec in self.cases.items()}
        found = by_class.get(type(value))
        if found is None:  # a case class of another load of the spec (unpickled in a worker)
            name = type(value).__qualname__
            found = next((v for cls, v in by_class.items() if cls.__qualname__ == name), None)
        return found

    def from_json(self, value: JSONValue, path: str) -> Any:
        if not isinstance(value, dict):
            raise self.mismatch(value, path)
        where = f"{path}.{self.tag}" if path else self.tag
        cases = ", ".join(self.cases)
        if self.tag not in value:
            raise BadValue(where, f"missing the tag of {self.variant} (one of: {cases})")
        case = value[self.tag]
        spec = self.cases.get(case) if isinstance(case, str) else None
        if spec is None:
            shown = clip(case) if isinstance(case, str) else _describe(case)
            raise BadValue(where, f"{shown} is no case of {self.variant} (cases: {cases})")
        fields = {name: item for name, item in value.items() if name != self.tag}
        try:
            return spec.from_json(fields, path)
        except BadValue as error:  # named as the spec names it, not by its Python class
            qualified = f"{self.variant}.{case}"
            raise BadValue(error.path, error.message.replace(spec.cls.__name__, qualified))

    def to_json(self, value: Any) -> JSONValue:
        found = self.case_of(value)
        if found is None:
            raise BadValue("", f"expected {self.name}, got {type(value).__name__}")
        case, spec = found
        data = spec.to_json(value)
        data[self.tag] = case
        return dict(sorted(data.items()))  # in name order, as a record's (state_json's form)

    def schema(self) -> dict[str, Any]:
        """OpenAPI's form: `oneOf` the cases' objects, each with its tag as a constant, and a
        `discriminator` naming the tag member."""
        one_of = []
        for case, spec in self.cases.items():
            schema = spec.schema()
            tag = {"type": "string", "const": case}
            one_of.append(
                {
                    **schema,
                    "properties": {self.tag: tag, **schema["properties"]},
                    "required": [self.tag, *schema["required"]],
                }
            )
        return {"oneOf": one_of, "discriminator": {"propertyName": self.tag}}


class RefSpec(TypeSpec):
    """A `ref E`: the key of a row of E (integrity is checked by the environment)."""

    def __init__(self, key: TypeSpec, entity: str, table: str) -> None:
        self.key = key
        self.entity = entity
        self.table = table
        self.name = f"the key of a {entity} ({key.name})"

    def from_json(self, value: JSONValue, path: str) -> Any:
        return self.key.from_json(value, path)

    def to_json(self, value: Any) -> JSONValue:
        return self.key.to_json(value)

    def schema(self) -> dict[str, Any]:
        return {**self.key.schema(), "description": f"id of a {self.entity}"}


class VoidSpec(TypeSpec):
    name = "nothing"

    def from_json(self, value: JSONValue, path: str) -> None:
        return None

    def to_json(self, value: Any) -> JSONValue:
        return None

    def schema(self) -> dict[str, Any]:
        return {"type": "null"}


INT = IntSpec()
FLOAT = FloatSpec()
BOOL = BoolSpec()
STR = StrSpec()
DATE = DateSpec()
DATETIME = DateTimeSpec()
DURATION = DurationSpec()
JSON = JsonSpec()
VOID = VoidSpec()


def nested_refs(spec: RecordSpec, row: Any) -> list[tuple[str, str, Any]]:
    """(path, table, key) of every ref inside a row's records and collections.

    Top-level ref fields are not included: the table's reference index covers them. Only the
    values whose type can hold a ref are walked: an order's option maps and item names are
    not, and walking them (a path string per element) made every write of a row with one
    nested ref 1.4-1.7x slower.
    """
    found: list[tuple[str, str, Any]] = []
    for field in spec.fields:
        if not isinstance(field.spec, RefSpec) and holds_ref(field.spec):
            _walk(field.spec, getattr(row, field.attribute), field.name, found)
    return found


def refs_in(spec: TypeSpec, value: Any, path: str) -> list[tuple[str, str, Any]]:
    """(path, table, key) of every ref inside a value of type `spec` (a scalar state field's,
    named `path`)."""
    found: list[tuple[str, str, Any]] = []
    if holds_ref(spec):
        _walk(spec, value, path, found)
    return found


def _walk(spec: TypeSpec, value: Any, path: str, found: list[tuple[str, str, Any]]) -> None:
    if value is None:
        return
    if isinstance(spec, OptionalSpec):
        _walk(spec.inner, value, path, found)
    elif isinstance(spec, RefSpec):
        found.append((path, spec.table, value))
    elif isinstance(spec, ListSpec):  # includes SetSpec
        if holds_ref(spec.inner):
            for index, item in enumerate(value):
                _walk(spec.inner, item, f"{path}[{index}]", found)
    elif isinstance(spec, MapSpec):
        if holds_ref(spec.value):
            for key, item in value.items():
                _walk(spec.value, item, f"{path}.{key}", found)
    elif isinstance(spec, RecordSpec):
        for field in spec.fields:
            if holds_ref(field.spec):
                _walk(field.spec, getattr(value, field.attribute), f"{path}.{field.name}", found)
    elif isinstance(spec, VariantSpec):
        case = spec.case_of(value)
        if case is not None:
            _walk(case[1], value, path, found)


# per spec (weakly: a batch check loads thousands of classes), whether it can hold a ref
_HOLDS_REF: weakref.WeakKeyDictionary[TypeSpec, bool] = weakref.WeakKeyDictionary()


def holds_ref(spec: TypeSpec) -> bool:
    """Whether a value of this type can hold a ref, anywhere inside (records included)."""
    known = _HOLDS_REF.get(spec)
    if known is None:
        known = _HOLDS_REF[spec] = _reaches_ref(spec, set())
    return known


def _reaches_ref(spec: TypeSpec, seen: set[int]) -> bool:
    if isinstance(spec, RefSpec):
        return True
    if id(spec) in seen:  # a record type inside itself: its refs are found on the first visit
        return False
    seen.add(id(spec))
    if isinstance(spec, (OptionalSpec, ListSpec)):
        return _reaches_ref(spec.inner, seen)
    if isinstance(spec, MapSpec):
        return _reaches_ref(spec.value, seen)
    if isinstance(spec, RecordSpec):
        return any(_reaches_ref(field.spec, seen) for field in spec.fields)
    if isinstance(spec, VariantSpec):
        return any(_reaches_ref(case, seen) for case in spec.cases.values())
    return False


_IMMUTABLE_SPECS: tuple[type[TypeSpec], ...] = (
    IntSpec,
    FloatSpec,
    BoolSpec,
    StrSpec,
    DateSpec,
    DateTimeSpec,
    DurationSpec,
    EnumSpec,
    RefSpec,
)


def holds_mutable(spec: TypeSpec) -> bool:
    """A value of this type may be changed in place: a list, set, map, record or json."""
    if isinstance(spec, OptionalSpec):
        spec = spec.inner
    return not isinstance(spec, _IMMUTABLE_SPECS)


# specs whose JSON form is the Python value itself, and immutable: handed out as it is
_PLAIN: frozenset[type[TypeSpec]] = frozenset({IntSpec, StrSpec, BoolSpec})


def reference_to_json(spec: RecordSpec, value: Any) -> JSONValue:
    """A record's JSON by the generic walk: each field by its spec, in name order (the
    canonical form of state_json()). The reference for the generated writers."""
    return {
        field.name: field.spec.to_json(getattr(value, field.attribute))
        for field in sorted(spec.fields, key=lambda field: field.name)
    }


def _reference_json_repr(spec: RecordSpec, value: Any) -> str:
    return repr(spec.to_json(value))


def canonical_key(item: Any) -> tuple[str, Any]:
    """A total order over set elements (str, int, float, bool, enum members, dates)."""
    if isinstance(item, enum.Enum):
        return ("enum", str(item.value))
    if isinstance(item, bool):
        return ("bool", item)
    if isinstance(item, (int, float)):
        return ("number", item)
    return (type(item).__name__, item)


def ordered(items: Any) -> Any:
    """Sets in their canonical order (never hash order, which changes between processes)."""
    if isinstance(items, (set, frozenset)):
        return sorted(items, key=canonical_key)
    return items
