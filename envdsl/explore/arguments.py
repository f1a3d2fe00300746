"""Arguments for generated calls, derived from the tools' parameter types.

Most values are what an agent would plausibly send (keys of rows that exist now, enum
members, dates near the clock), so success paths are reached; the rest are fresh or wrong
values (unknown keys, odd numbers, free text), so failure paths are reached too.

Hypothesis draws only the tool and one integer per call; the arguments are derived from that
integer here.  Drawing every value through hypothesis made exploration ten times slower than
the environment it explores, and shrinking still works: hypothesis shrinks the trace (fewer
calls) and each integer towards 0, which this generator maps to the plainest arguments.

The arguments are a pure function of the state and the integer (shrinking and the
determinism replays depend on it). What does not depend on either (each parameter's spec,
the tables a string parameter names, the fields it is named after) is worked out once per
class (`ClassPlan`); what depends on the state only, once per state (`StateSample`).
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Callable

from envdsl.runtime import Environment
from envdsl.runtime.values import (
    BoolSpec,
    DateSpec,
    DateTimeSpec,
    DurationSpec,
    EnumSpec,
    FloatSpec,
    IntSpec,
    JsonSpec,
    ListSpec,
    MapSpec,
    OptionalSpec,
    RecordSpec,
    VariantSpec,
    RefSpec,
    SetSpec,
    StrSpec,
    TypeSpec,
    format_datetime,
)
from envdsl.runtime.errors import BadValue

_TEXT = "abcdefgXYZ-_ 0123456789@."
_MARKS = _TEXT.strip()  # what a fresh variant of an existing string gets appended
_EXAMPLE = re.compile(r"e\.g\.,?\s*([^\s,;)]+)")
_ROWS_SAMPLED = 200  # per table: enough to learn what its data looks like
_MASK64 = (1 << 64) - 1
_MULTIPLIER = 6364136223846793005
_INCREMENT = 1442695040888963407


class Draws:
    """The numbers of one call's arguments, all from its drawn integer: a 64-bit linear
    congruential generator (Knuth's MMIX constants; only its high 32 bits are used) started
    from a SplitMix64 mix of the integer, so that neighbouring integers start far apart.

    It replaces a `random.Random(choice)` per call, whose seeding (a 624-word Mersenne
    Twister state) cost more than the rest of the argument derivation: making one is a few
    integer operations, and each number one more."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.seed(seed)

    def seed(self, seed: int) -> None:
        z = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & _MASK64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        self.state = z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A number in [0, n) (n >= 1)."""
        self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
        return ((state >> 32) * n) >> 32

    def between(self, low: int, high: int) -> int:
        """A number in [low, high), as `random.randrange(low, high)`."""
        return low + self.below(high - low)

    def random(self) -> float:
        """A float in [0, 1)."""
        self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
        return (state >> 32) / 4294967296.0

    def uniform(self, low: float, high: float) -> float:
        return low + (high - low) * self.random()

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.below(len(items))]


@functools.cache
def _texts() -> tuple[str, ...]:
    """Free text of 0-10 characters: as many as exploration can use, made once, on first use,
    from a fixed stream of bytes (a call then picks one with one number instead of drawing
    each character)."""
    count, width = 4096, 11
    stream = hashlib.shake_128(b"envdsl explore texts").digest(count * width)
    characters = bytes(ord(_TEXT[byte % len(_TEXT)]) for byte in range(256))
    return tuple(
        stream[start + 1 : start + 1 + stream[start] % width].translate(characters).decode()
        for start in range(0, count * width, width)
    )


# what one column of a table's first rows holds (or the scalars): values by kind, and its
# strings (None: none, or the scalars); dicts used as ordered sets
_Part = tuple[dict[type, dict[Any, None]], dict[str, None] | None]
_EMPTY: _Part = ({}, None)


def _merged(parts: Iterable[dict[Any, None] | None]) -> list[Any]:
    """The values of the parts that have some, each once, in the order first found."""
    merged: dict[Any, None] = {}
    for part in parts:
        if part:
            merged.update(part)
    return list(merged)


class StateSample:
    """What argument generation learns from one state, computed when first needed: the clock,
    the tables' keys, values by kind, string values by field. Explore keeps it across the
    calls that leave the state as it was (queries, failed calls), and each start state's
    across the examples that begin there; after a call that wrote, `after_write` makes the
    next one, which keeps what the call did not write (scanning the rows once per call was
    most of explore's own time): a table's keys and rows unless the call inserted or deleted
    rows, each column unless the call wrote it (a call that changes one field of a row scans
    that column again, not the whole table).

    The order of every list is the state's own (scalars, then tables, rows and fields in
    order; set elements, whose iteration order is not the same in every process, sorted)."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.plan = class_plan(type(env))
        self._clock: dt.datetime | None = None
        self._keys: dict[str, list[Any]] = {}
        self._rows: dict[str, list[Any]] = {}  # each table's first rows, as scanned
        self._scalars: dict[type, dict[Any, None]] | None = None
        self._columns: list[_Part | None] = [None] * len(self.plan.columns)  # by column id
        self._tables: dict[str, dict[type, dict[Any, None]]] = {}  # its columns' values merged
        self._values: dict[type, list[Any]] = {}  # merged from the parts, per kind asked
        self._strings: dict[str, list[str]] = {}  # the same, per field asked

    def after_write(
        self, tables: Mapping[str, Set[str] | None] | None, scalars: bool
    ) -> StateSample:
        """The sample of the state after a call that wrote (only) `tables` (each with the
        attributes of the fields it wrote, or None: it inserted or deleted rows) and, if
        `scalars`, scalars; None for tables: what it wrote is not known."""
        fresh = StateSample(self.env)
        if tables is None:
            return fresh
        plan = self.plan
        columns = fresh._columns = self._columns.copy()
        fresh._keys = self._keys.copy()
        fresh._rows = self._rows.copy()
        fresh._tables = self._tables.copy()
        for table, attributes in tables.items():
            fresh._tables.pop(table, None)
            ids = plan.column_ids[table]
            # rows in or out, a key written, or an attribute that is no column: all of it
            if attributes is None or plan.keys[table] in attributes or not attributes <= ids.keys():
                fresh._keys.pop(table, None)
                fresh._rows.pop(table, None)
                for column in ids.values():
                    columns[column] = None
            else:
                for attribute in attributes:
                    columns[ids[attribute]] = None
        if not scalars:
            fresh._clock = self._clock
            fresh._scalars = self._scalars
        return fresh

    def keys(self, table: str) -> list[Any]:
        """The table's keys in table order (a copy, made once per sample)."""
        keys = self._keys.get(table)
        if keys is None:
            keys = self._keys[table] = self.env._table(table).keys()
        return keys

    @property
    def clock(self) -> dt.datetime:
        if self._clock is None:
            self._clock = _clock(self.env)
        return self._clock

    def values(self, kind: type) -> list[Any]:
        """Values of a kind (str, int, float, date, datetime) found in the state now: data
        that passes a tool's format checks (emails, salaries in range, datetimes on the
        quarter hour) is most often like the data already there."""
        found = self._values.get(kind)
        if found is None:
            if self._scalars is None:
                self._scalars = _scan_scalars(self.env)
            parts = [self._scalars]
            parts.extend(self._table(name) for name in self.plan.column_ids)
            found = self._values[kind] = _merged(part.get(kind) for part in parts)
        return found

    def strings(self, field: str) -> list[str]:
        """The string values of a field (by JSON name) in the first rows of each table."""
        found = self._strings.get(field)
        if found is None:
            columns = self.plan.columns_named.get(field, ())
            found = self._strings[field] = _merged(self._column(c)[1] for c in columns)
        return found

    def field_values(self, field: str, kind: type) -> list[Any]:
        """The values of a kind of a field (by JSON name) in the first rows of each table, as
        JSON (dates and datetimes in ISO 8601)."""
        columns = self.plan.columns_named.get(field, ())
        found = _merged(self._column(c)[0].get(kind) for c in columns)
        if kind is dt.datetime:
            return [format_datetime(v) for v in found]
        if kind is dt.date:
            return [v.isoformat() for v in found]
        return found

    def _table(self, name: str) -> dict[type, dict[Any, None]]:
        """A table's values by kind, its columns' merged in column order."""
        found = self._tables.get(name)
        if found is None:
            found = self._tables[name] = {}
            for column in self.plan.column_ids[name].values():
                for kind, values in self._column(column)[0].items():
                    found.setdefault(kind, {}).update(values)
        return found

    def _column(self, column: int) -> _Part:
        """A column's part, scanned on first use."""
        part = self._columns[column]
        if part is None:
            table, read = self.plan.columns[column]
            rows = self._rows.get(table)
            if rows is None:
                rows = self._rows[table] = self.env._table(table).rows()[:_ROWS_SAMPLED]
            part = self._columns[column] = _scan_column(rows, read)
        return part


# the specs whose values a parameter named after a field takes exactly from that field: the
# times lookups compare with `==` (a number named like a field is most often a new value)
_EXACT_KINDS: dict[type, type] = {DateTimeSpec: dt.datetime, DateSpec: dt.date}

# the kinds of values the pool keeps (exact types: no bools, no enum members)
_POOLED = frozenset((str, int, float, dt.date, dt.datetime))
_NONE = type(None)


def _scan_scalars(env: Environment) -> dict[type, dict[Any, None]]:
    found: dict[type, dict[Any, None]] = {}
    for name in env.SCALARS:
        _add(found, env._scalars.get(name))
    return found


def _scan_column(rows: list[Any], read: Callable[[Any], Any]) -> _Part:
    """A column's part: most columns hold one kind of value (and nulls), which are then taken
    in bulk."""
    column = list(map(read, rows))
    kinds = set(map(type, column))
    kinds.discard(_NONE)
    if not kinds:
        return _EMPTY
    kind = next(iter(kinds)) if len(kinds) == 1 else None
    if kind in _POOLED:
        values = dict.fromkeys(column)
        values.pop(None, None)
        return {kind: values}, (values if kind is str else None)
    found: dict[type, dict[Any, None]] = {}
    strings: dict[str, None] | None = None
    for value in column:  # mixed kinds, lists and sets: one by one, in row order
        if type(value) is str:
            if strings is None:
                strings = {}
            strings[value] = None
        _add(found, value)
    return found, strings


def _add(found: dict[type, dict[Any, None]], value: Any) -> None:
    kind = type(value)
    if kind in _POOLED:
        found.setdefault(kind, {})[value] = None
    elif isinstance(value, (list, tuple)):  # (a row's lists are OwnedLists)
        for item in value:
            _add(found, item)
    elif isinstance(value, (set, frozenset)):
        for item in sorted(value, key=repr):
            _add(found, item)


class ArgumentGenerator(Draws):
    """The arguments of one call from its drawn integer (`choice`) and the state (`sample`);
    `next_call` makes it the generator of another call, which explore does instead of making
    a generator per call."""

    __slots__ = ("env", "plain", "sample", "plan", "anchors")

    def __init__(self, env: Environment, choice: int, sample: StateSample | None = None) -> None:
        self.env = env
        self.anchors: list[tuple[str, Any]] = []
        self.next_call(choice, sample if sample is not None else StateSample(env))

    def arguments(self, name: str, choice: int, sample: StateSample) -> dict[str, Any]:
        """The arguments of a call of tool `name` from `choice` in the state of `sample`."""
        self.next_call(choice, sample)
        return self.for_tool(name)

    def next_call(self, choice: int, sample: StateSample) -> None:
        self.seed(choice)
        # choice 0 (what shrinking tends to) means "the likeliest value everywhere"
        self.plain = choice == 0
        self.sample = sample
        self.plan = sample.plan
        # rows whose keys were picked for earlier parameters of this call (table, key): a
        # later parameter named like one of their fields (`member_id` after a loan) takes
        # that field's value
        self.anchors.clear()

    def like_existing(self, kind: type) -> Any:
        """An existing value, or one near it (a fresh variant of a string, a shifted number)."""
        values = self.sample.values(kind)
        if not values:
            return None
        value = self.pick(values)
        if self.plain or self.below(2):
            return value
        if kind is str:
            return f"{value}{self.choice(_MARKS)}" if value else self.text()
        if kind is int:
            return value + self.between(-3, 4)
        if kind is float:
            return round(value * self.uniform(0.8, 1.2), 2)
        if kind is dt.datetime:
            return value + dt.timedelta(minutes=15 * self.between(-96, 97))
        if kind is dt.date:
            return value + dt.timedelta(days=self.between(-30, 31))
        return value

    # likely() and pick() run for most values: the generator's step is written out in them

    def likely(self, weight: int = 4) -> bool:
        """True but one time in weight + 1 (always when plain)."""
        if self.plain:
            return True
        self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
        return ((state >> 32) * (weight + 1)) >> 32 != weight

    def pick(self, items: Sequence[Any]) -> Any:
        if self.plain:
            return items[0]
        self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
        return items[((state >> 32) * len(items)) >> 32]

    def text(self) -> str:
        texts = _texts()
        return texts[self.below(len(texts))]

    def for_tool(self, name: str) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        plain = self.plain
        together = self.from_one_row(name)
        for param in self.plan.tools[name]:
            if param.name in together:
                arguments[param.name] = together[param.name]
                continue
            if not (param.required or plain):  # likely(1), written out: given one time in two
                self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
                if state >> 63:
                    continue
            if param.example is not None and self.random() < 0.4:
                # the spec's own description shows the format: "HH:MM, e.g. 08:00"
                arguments[param.name] = param.example
                continue
            arguments[param.name] = self.for_param(param)
        return arguments

    def from_one_row(self, tool: str) -> dict[str, Any]:
        """Values of the parameters that name fields of one table (`meal_id` and `meal_time`,
        `schedule_id` and `venue_id`), all from one existing row of it, three times in four:
        a tool that looks a row up by several of its fields succeeds only with a row's own
        combination, which values drawn one by one almost never make."""
        group = self.plan.row_groups.get(tool)
        if group is None or not self.likely(3):
            return {}
        table, fields = group
        key = self.existing_key([table])
        if key is None:
            return {}
        row = self.env._table(table).get(key)
        values: dict[str, Any] = {}
        for param, field in fields:
            value = getattr(row, field.attribute)
            if value is None:
                continue
            as_json = field.to_json(value)
            if field.spec is not param.inner:  # (a value of the state fits its own spec)
                try:
                    param.inner.from_json(as_json, param.name)
                except BadValue:
                    continue
            values[param.name] = as_json
        return values

    def for_param(self, param: ParamPlan) -> Any:
        """A value for a parameter (or a record's field, named `param.name`)."""
        spec = param.spec
        if param.optional:
            if not self.likely():
                return None
            spec = param.inner
        if self.anchors and param.anchored_by:
            anchored = self.from_anchor(param, spec)
            if anchored is not None and self.likely(3):
                return anchored
        if param.is_str:
            return self.for_str(param)
        if param.fields and self.likely(1):
            # a time named after a field (`meal_time`, `start`): an exact value of it, as a
            # lookup by that field needs; shifted values come from `make` the other times
            named = self.field_values_of_kind(param.fields, spec)
            if named:
                return self.pick(named)
        return param.make(self, spec)

    def for_str(self, param: ParamPlan) -> str:
        """A `str` parameter: an id (of the tables it is named after), a value of the field it
        is named after, something like the state's strings, or text (blank, often)."""
        tables = param.tables
        if self.plain:
            roll = 0
        else:  # below(10), written out
            self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
            roll = ((state >> 32) * 10) >> 32
        if param.names_tables:  # an id: mostly an existing row's, else a fresh one like them
            key = self.existing_key(tables) if roll < 6 else None
            if key is not None:
                return str(key)
            named = self.field_values(param.fields) if roll < 8 else None
            if named:
                return f"{self.pick(named)}{self.choice(_MARKS)}"
        else:
            named = self.field_values(param.fields)
            if named and roll < 6:  # named after a field (`work_email`, `product_name`)
                return self.varied(self.pick(named))
        if roll < 8:
            key = self.existing_key(tables) if tables and roll < 7 else None
            if key is not None:
                return str(key)
            existing = self.like_existing(str)
            if existing is not None:
                return str(existing)
        # blank values are what agents send by mistake most often
        return "" if self.random() < 0.4 else self.text()

    def field_values(self, fields: Sequence[str]) -> list[str]:
        """String values of the first of `fields` the state has any of."""
        for field in fields:
            values = self.sample.strings(field)
            if values:
                return values
        return []

    def field_values_of_kind(self, fields: Sequence[str], spec: TypeSpec) -> list[Any]:
        """JSON values of the first of `fields` the state has any of that fit `spec` (a date
        or a datetime)."""
        kind = _EXACT_KINDS.get(type(spec))
        if kind is None:
            return []
        for field in fields:
            values = self.sample.field_values(field, kind)
            if values:
                return values
        return []

    def varied(self, value: str) -> str:
        """The value itself, or a fresh variant of it (for parameters that must be new)."""
        if self.plain or self.random() < 0.6:
            return value
        return f"{value}{self.choice(_MARKS)}"

    def existing_key(self, tables: Sequence[str]) -> Any:
        # (pick and below written out: most calls pick a key)
        plain = self.plain
        if plain:
            table = tables[0]
        else:
            self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
            table = tables[((state >> 32) * len(tables)) >> 32]
        keys = self.sample.keys(table)
        if not keys:
            return None
        # half the time one of the newest rows: what the previous calls just created is what
        # the next call most likely needs (place an order, then pay it)
        self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
        if state >> 63:
            keys = keys[-3:]
        if plain:
            key = keys[0]
        else:
            self.state = state = (self.state * _MULTIPLIER + _INCREMENT) & _MASK64
            key = keys[((state >> 32) * len(keys)) >> 32]
        self.anchors.append((table, key))
        return key

    def from_anchor(self, param: ParamPlan, spec: TypeSpec) -> Any:
        """The JSON value of a same-named field of a row picked earlier, if it fits `spec`."""
        for table, key in reversed(self.anchors):
            if table not in param.anchored_by:
                continue
            row = self.env._table(table).get(key)
            for field in self.plan.anchors[table][param.name]:
                value = getattr(row, field.attribute)
                if value is None:
                    continue
                as_json = field.to_json(value)
                if field.spec is not spec:  # (a value of the state fits its own spec)
                    try:
                        spec.from_json(as_json, param.name)
                    except BadValue:
                        continue
                return as_json
        return None

    def value(self, spec: TypeSpec) -> Any:
        """A value of `spec` where no parameter name says more (inside lists, maps, ...)."""
        make = _VALUES.get(type(spec))
        if make is None:
            make = _value_maker(type(spec))
        return make(self, spec)

    def optional_value(self, spec: OptionalSpec) -> Any:
        return self.value(spec.inner) if self.likely() else None

    def ref_value(self, spec: RefSpec) -> Any:
        key = self.existing_key([spec.table]) if self.likely() else None
        if key is not None:
            return key
        return self.text() if isinstance(spec.key, StrSpec) else self.between(-5, 10_000)

    def str_value(self, spec: StrSpec) -> str:
        existing = self.like_existing(str) if self.likely(1) else None
        return str(existing) if existing is not None else self.text()

    def enum_value(self, spec: EnumSpec[Any]) -> str:
        return str(self.pick(self.plan.members(spec))) if self.likely(8) else self.text()

    def bool_value(self, spec: BoolSpec) -> bool:
        return not self.plain and self.below(2) == 1

    def int_value(self, spec: IntSpec) -> int:
        near = self.like_existing(int) if self.random() < 0.4 else None
        if near is not None:
            return int(near)
        return self.between(-2, 21) if self.likely() else self.between(-(10**6), 10**6)

    def float_value(self, spec: FloatSpec) -> float:
        near = self.like_existing(float) if self.random() < 0.5 else None
        if near is not None:
            return float(near)
        return round(self.uniform(-10, 500) if self.likely() else self.uniform(-1e6, 1e6), 2)

    def date_value(self, spec: DateSpec) -> str:
        near = self.like_existing(dt.date) if self.random() < 0.5 else None
        if near is not None:
            return str(near.isoformat())
        return (self.sample.clock.date() + dt.timedelta(days=self.between(-90, 91))).isoformat()

    def datetime_value(self, spec: DateTimeSpec) -> str:
        near = self.like_existing(dt.datetime) if self.random() < 0.5 else None
        if near is not None:
            return format_datetime(near)
        quarters = self.between(-4 * 24 * 30, 4 * 24 * 30)
        return format_datetime(self.sample.clock + dt.timedelta(minutes=15 * quarters))

    def duration_value(self, spec: DurationSpec) -> int:
        return self.below(60 * 60 * 24 * 30)

    def set_value(self, spec: SetSpec) -> list[Any]:
        made = (self.value(spec.inner) for _ in range(self.below(4)))
        return list({repr(v): v for v in made}.values())

    def list_value(self, spec: ListSpec) -> list[Any]:
        return [self.value(spec.inner) for _ in range(self.below(4))]

    def map_value(self, spec: MapSpec) -> dict[str, Any]:
        int_keys = isinstance(spec.key, IntSpec)
        return {
            (str(self.below(20)) if int_keys else self.text()): self.value(spec.value)
            for _ in range(self.below(4))
        }

    def record_value(self, spec: RecordSpec) -> dict[str, Any]:
        return {
            plan.name: self.for_param(plan)
            for plan in self.plan.record_fields(spec)
            if plan.required or self.likely(1)
        }

    def variant_value(self, spec: VariantSpec) -> dict[str, Any]:
        case = self.pick(sorted(spec.cases))
        return {spec.tag: case, **self.record_value(spec.cases[case])}

    def json_value(self, spec: JsonSpec) -> Any:
        return self.pick([None, self.between(-5, 6), self.text()])


# spec type -> the generator's method for a value of it (by exact type: SetSpec is a ListSpec)
_VALUES: dict[type, Callable[[ArgumentGenerator, Any], Any]] = {
    OptionalSpec: ArgumentGenerator.optional_value,
    RefSpec: ArgumentGenerator.ref_value,
    StrSpec: ArgumentGenerator.str_value,
    EnumSpec: ArgumentGenerator.enum_value,
    BoolSpec: ArgumentGenerator.bool_value,
    IntSpec: ArgumentGenerator.int_value,
    FloatSpec: ArgumentGenerator.float_value,
    DateSpec: ArgumentGenerator.date_value,
    DateTimeSpec: ArgumentGenerator.datetime_value,
    DurationSpec: ArgumentGenerator.duration_value,
    SetSpec: ArgumentGenerator.set_value,
    ListSpec: ArgumentGenerator.list_value,
    MapSpec: ArgumentGenerator.map_value,
    RecordSpec: ArgumentGenerator.record_value,
    VariantSpec: ArgumentGenerator.variant_value,
    JsonSpec: ArgumentGenerator.json_value,
}


def _value_maker(kind: type) -> Callable[[ArgumentGenerator, Any], Any]:
    """The method for a subclass of a spec type (the nearest base listed), or nothing."""
    for base in kind.__mro__:
        if base in _VALUES:
            _VALUES[kind] = _VALUES[base]
            return _VALUES[kind]
    return lambda generator, spec: None


@dataclass(frozen=True, slots=True)
class ParamPlan:
    """What a parameter's arguments are made from, worked out once per tool."""

    name: str  # the JSON name
    spec: TypeSpec
    required: bool
    example: str | None  # the value its description shows (`e.g. 08:00`), for a str
    optional: bool  # spec is `T?`: then `inner` is T
    inner: TypeSpec
    is_str: bool  # inner is a plain str: ids, names, free text
    # for a str: the tables it names (`user_id` -> users) and True, else every table with
    # string keys and False: LLM-written tools take ids as plain strings
    tables: tuple[str, ...] = ()
    names_tables: bool = False
    fields: tuple[str, ...] = ()  # the fields it is named after, the same name first
    # the tables with a field a parameter of this name takes from a picked row
    anchored_by: frozenset[str] = frozenset()
    # how a value of `inner` is made when it is not a str (ArgumentGenerator.value's choice)
    make: Callable[[ArgumentGenerator, Any], Any] = ArgumentGenerator.value


@dataclass(frozen=True, slots=True)
class AnchorField:
    """A row field that parameters of its name take from a picked row (its values not null)."""

    attribute: str
    spec: TypeSpec  # the field's type, without `?`
    to_json: Callable[[Any], Any]


class ClassPlan:
    """What argument generation needs of an environment class, worked out once: each tool's
    parameter plans, each table's columns (to scan) and fields by the parameter names that
    take them from a picked row; record types' field plans and enum members on first use."""

    def __init__(self, env_class: type[Environment]) -> None:
        self.env_class = env_class
        # every table's columns, numbered in table and field order: (table, reader); per
        # table its columns' numbers by attribute, and its key's attribute; per field name
        # (JSON) the numbers of the columns of that name, in table order
        self.columns: list[tuple[str, Callable[[Any], Any]]] = []
        self.column_ids: dict[str, dict[str, int]] = {}
        self.keys: dict[str, str] = {}
        self.columns_named: dict[str, list[int]] = {}
        for name, spec in env_class.TABLES.items():
            ids = self.column_ids[name] = {}
            self.keys[name] = spec.schema.key
            for f in spec.row.fields:
                ids[f.attribute] = len(self.columns)
                self.columns_named.setdefault(f.name, []).append(len(self.columns))
                self.columns.append((name, attrgetter(f.attribute)))
        self.anchors: dict[str, dict[str, list[AnchorField]]] = {}
        # per table, the parameter names that point at one of its rows through a field the
        # way lookups do: the key's name and `<entity>_id`, a ref's name and `<ref>_id`, and
        # `<entity>_<field>` (`meal_time` for Meal.time); not a plain field name, which is
        # most often a new value (`set_price(sku, price)`, `add_user(user_id, email)`)
        self.row_fields: dict[str, dict[str, AnchorField]] = {}
        for name, spec in env_class.TABLES.items():
            by_param: dict[str, list[AnchorField]] = {}
            for field in spec.row.fields:
                inner = field.spec.inner if isinstance(field.spec, OptionalSpec) else field.spec
                anchor = AnchorField(field.attribute, inner, inner.to_json)
                for param in (field.name, f"{field.name}_id"):
                    by_param.setdefault(param, []).append(anchor)
                entity = spec.schema.entity.lower()
                names = [f"{entity}_{field.name}"]
                if field.attribute == spec.schema.key:
                    names += [field.name, f"{entity}_id"]
                elif isinstance(inner, RefSpec):
                    names += [field.name, f"{field.name}_id"]
                for param in names:
                    self.row_fields.setdefault(name, {}).setdefault(param, anchor)
            self.anchors[name] = by_param
        self.tools = {
            name: [self.param(p.name, p.spec, p.required, p.description) for p in tool.params]
            for name, tool in env_class.TOOLS.items()
        }
        self._records: dict[RecordSpec, list[ParamPlan]] = {}
        self._members: dict[EnumSpec[Any], list[Any]] = {}
        self.row_groups: dict[str, tuple[str, tuple[tuple[ParamPlan, AnchorField], ...]]] = {}
        for tool, params in self.tools.items():
            group = self.row_group(params)
            if group is not None:
                self.row_groups[tool] = group

    def row_group(
        self, params: list[ParamPlan]
    ) -> tuple[str, tuple[tuple[ParamPlan, AnchorField], ...]] | None:
        """The table of which most (two or more) of a tool's parameters name fields the way a
        lookup does (`row_fields`), with those parameters and fields: the parameters that
        must match one row together."""
        best: tuple[str, tuple[tuple[ParamPlan, AnchorField], ...]] | None = None
        for table, spec in self.env_class.TABLES.items():
            by_name = self.row_fields[table]
            matched = tuple((p, by_name[p.name]) for p in params if p.name in by_name)
            if len(matched) >= 2 and (best is None or len(matched) > len(best[1])):
                best = (table, matched)
        return best

    def param(
        self, name: str, spec: TypeSpec, required: bool, description: str | None
    ) -> ParamPlan:
        optional = isinstance(spec, OptionalSpec)
        inner = spec.inner if isinstance(spec, OptionalSpec) else spec
        example = None
        if isinstance(spec, StrSpec):  # (`str` exactly: an optional one shows no example)
            found = _EXAMPLE.search(description or "")
            example = found.group(1).strip("'\"`") if found else None
        anchored_by = frozenset(table for table, by in self.anchors.items() if name in by)
        is_str = isinstance(inner, StrSpec)  # ids, names, free text: from the tables it names
        tables, names_tables = self.tables_named_like(name) if is_str else ((), False)
        return ParamPlan(
            name,
            spec,
            required,
            example,
            optional,
            inner,
            is_str,
            tables,
            names_tables,
            self.fields_named_like(name),
            anchored_by,
            (
                ArgumentGenerator.value
                if is_str
                else _VALUES.get(type(inner)) or _value_maker(type(inner))
            ),
        )

    def record_fields(self, spec: RecordSpec) -> list[ParamPlan]:
        """A record argument's fields, planned as parameters of their names (on first use:
        a record may hold itself)."""
        plans = self._records.get(spec)
        if plans is None:
            plans = self._records[spec] = [
                self.param(f.name, f.spec, f.required, None) for f in spec.fields
            ]
        return plans

    def members(self, spec: EnumSpec[Any]) -> list[Any]:
        """An enum's member values, sorted."""
        members = self._members.get(spec)
        if members is None:
            members = self._members[spec] = sorted(spec.by_value)
        return members

    def tables_named_like(self, param: str) -> tuple[tuple[str, ...], bool]:
        """The tables a `str` parameter probably names (`user_id` -> users) and True, else
        every table with string keys and False: LLM-written tools take ids as plain
        strings."""
        matching: list[str] = []
        with_str_keys: list[str] = []
        for name, spec in self.env_class.TABLES.items():
            key_field = next(f for f in spec.row.fields if f.attribute == spec.schema.key)
            if not isinstance(key_field.spec, StrSpec):
                continue
            with_str_keys.append(name)
            entity = spec.schema.entity.lower()
            names = (key_field.name, f"{entity}_{key_field.name}", f"{entity}_id", entity, name)
            if param in names:
                matching.append(name)
        return (tuple(matching), True) if matching else (tuple(with_str_keys), False)

    def fields_named_like(self, param: str) -> tuple[str, ...]:
        """The table fields a parameter is named after (`work_email` -> email): one of the
        same name first, then the others in table and field order."""
        same: list[str] = []
        suffix: list[str] = []
        for spec in self.env_class.TABLES.values():
            for field in spec.row.fields:
                if field.name == param:
                    same.append(field.name)
                elif param.endswith("_" + field.name):
                    suffix.append(field.name)
        return tuple(dict.fromkeys(same + suffix))


_CLASS_PLANS: weakref.WeakKeyDictionary[type[Environment], ClassPlan]
_CLASS_PLANS = weakref.WeakKeyDictionary()


def class_plan(env_class: type[Environment]) -> ClassPlan:
    plan = _CLASS_PLANS.get(env_class)
    if plan is None:
        plan = _CLASS_PLANS[env_class] = ClassPlan(env_class)
    return plan


def _clock(env: Environment) -> dt.datetime:
    """The environment's `now` (the first date or datetime state field), for dates near it."""
    for name, scalar in env.SCALARS.items():
        value = env._scalars.get(name)
        if isinstance(scalar.spec, DateTimeSpec) and isinstance(value, dt.datetime):
            return value
        if isinstance(scalar.spec, DateSpec) and isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
