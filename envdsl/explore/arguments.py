"""Arguments for generated calls, derived from the tools' parameter types.

Most values are what an agent would plausibly send (keys of rows that exist now, enum
members, dates near the clock), so success paths are reached; the rest are fresh or wrong
values (unknown keys, odd numbers, free text), so failure paths are reached too.

Hypothesis draws only the tool and one integer per call; the arguments are derived from that
integer here.  Drawing every value through hypothesis made exploration ten times slower than
the environment it explores, and shrinking still works: hypothesis shrinks the trace (fewer
calls) and each integer towards 0, which this generator maps to the plainest arguments.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import weakref
from collections.abc import Sequence
from typing import Any

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
    RefSpec,
    SetSpec,
    StrSpec,
    TypeSpec,
    format_datetime,
)
from envdsl.runtime.errors import BadValue

_TEXT = "abcdefgXYZ-_ 0123456789@."
_EXAMPLE = re.compile(r"e\.g\.,?\s*([^\s,;)]+)")


class StateSample:
    """What argument generation learns from one state, computed when first needed: the clock,
    values by kind, string values by field. Explore keeps it across the calls that leave the
    state as it was (queries, failed calls) and starts a new one after each call that may
    have changed it: scanning the rows once per call was most of explore's own time."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self._clock: dt.datetime | None = None
        self._pool: dict[type, list[Any]] | None = None
        self._fields: dict[str, list[Any]] | None = None
        self._keys: dict[str, list[Any]] = {}

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

    @property
    def pool(self) -> dict[type, list[Any]]:
        """Values of each kind found in the state now: data that passes a tool's format checks
        (emails, salaries in range, datetimes on the quarter hour) is most often like the data
        already there."""
        if self._pool is None:
            self._pool = _state_values(self.env)
        return self._pool

    @property
    def fields(self) -> dict[str, list[Any]]:
        if self._fields is None:
            self._fields = _field_values(self.env)
        return self._fields


class ArgumentGenerator:
    def __init__(self, env: Environment, choice: int, sample: StateSample | None = None) -> None:
        self.env = env
        self.rng = random.Random(choice)
        # choice 0 (what shrinking tends to) means "the likeliest value everywhere"
        self.plain = choice == 0
        self.sample = sample if sample is not None else StateSample(env)
        # rows whose keys were picked for earlier parameters of this call: a later parameter
        # named like one of their fields (`member_id` after a loan) takes that field's value
        self.anchors: list[tuple[Any, Any]] = []  # (row spec, row)

    @property
    def clock(self) -> dt.datetime:
        return self.sample.clock

    @property
    def pool(self) -> dict[type, list[Any]]:
        return self.sample.pool

    def like_existing(self, kind: type) -> Any:
        """An existing value, or one near it (a fresh variant of a string, a shifted number)."""
        values = self.pool.get(kind)
        if not values:
            return None
        value = self.pick(values)
        if self.plain or self.rng.random() < 0.5:
            return value
        if kind is str:
            return f"{value}{self.rng.choice(_TEXT.strip())}" if value else self.text()
        if kind is int:
            return value + self.rng.randrange(-3, 4)
        if kind is float:
            return round(value * self.rng.uniform(0.8, 1.2), 2)
        if kind is dt.datetime:
            return value + dt.timedelta(minutes=15 * self.rng.randrange(-96, 97))
        if kind is dt.date:
            return value + dt.timedelta(days=self.rng.randrange(-30, 31))
        return value

    def likely(self, weight: int = 4) -> bool:
        return self.plain or self.rng.randrange(weight + 1) != weight

    def text(self) -> str:
        return "".join(self.rng.choice(_TEXT) for _ in range(self.rng.randrange(11)))

    def pick(self, items: Sequence[Any]) -> Any:
        return items[0] if self.plain else self.rng.choice(items)

    def for_tool(self, name: str) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        for param_name, spec, required, example in _params(type(self.env), name):
            if not (required or self.likely(1)):
                continue
            if example is not None and self.rng.random() < 0.4:
                # the spec's own description shows the format: "HH:MM, e.g. 08:00"
                arguments[param_name] = example
                continue
            arguments[param_name] = self.for_param(param_name, spec)
        return arguments

    def for_param(self, name: str, spec: TypeSpec) -> Any:
        if isinstance(spec, OptionalSpec):
            return self.for_param(name, spec.inner) if self.likely() else None
        anchored = self.from_anchor(name, spec)
        if anchored is not None and self.likely(3):
            return anchored
        if isinstance(spec, RefSpec):
            key = self.existing_key([spec.table]) if self.likely() else None
            if key is not None:
                return key
            return self.text() if isinstance(spec.key, StrSpec) else self.rng.randrange(-5, 10_000)
        if isinstance(spec, StrSpec):
            tables, matched = self.tables_named_like(name)
            named = self.field_values(name)
            roll = 0 if self.plain else self.rng.randrange(10)
            if matched:  # an id: mostly an existing row's, else a fresh one like them
                key = self.existing_key(tables) if roll < 6 else None
                if key is not None:
                    return key
                if roll < 8 and named:
                    return f"{self.pick(named)}{self.rng.choice(_TEXT.strip())}"
            elif named:  # named after a field (`work_email`, `product_name`): its values
                if roll < 6:
                    return self.varied(self.pick(named))
            if roll < 8:
                key = self.existing_key(tables) if tables and roll < 7 else None
                if key is not None:
                    return key
                existing = self.like_existing(str)
                if existing is not None:
                    return existing
            # blank values are what agents send by mistake most often
            return "" if self.rng.random() < 0.4 else self.text()
        return self.value(spec)

    def field_values(self, param: str) -> list[Any]:
        """String values of the fields this parameter is named after (`work_email`, `name`)."""
        for field, values in self.sample.fields.items():
            if param == field or param.endswith("_" + field):
                return values
        return []

    def varied(self, value: str) -> str:
        """The value itself, or a fresh variant of it (for parameters that must be new)."""
        if self.plain or self.rng.random() < 0.6:
            return value
        return f"{value}{self.rng.choice(_TEXT.strip())}"

    def existing_key(self, tables: Sequence[str]) -> Any:
        table = self.pick(tables)
        keys = self.sample.keys(table)
        if not keys:
            return None
        # half the time one of the newest rows: what the previous calls just created is what
        # the next call most likely needs (place an order, then pay it)
        key = self.pick(keys[-3:] if self.rng.random() < 0.5 else keys)
        self.anchors.append((self.env.TABLES[table].row, self.env._table(table).get(key)))
        return key

    def from_anchor(self, param: str, spec: TypeSpec) -> Any:
        """The JSON value of a same-named field of a row picked earlier, if it fits `spec`."""
        for row_spec, row in reversed(self.anchors):
            for field in row_spec.fields:
                if param not in (field.name, f"{field.name}_id"):
                    continue
                value = getattr(row, field.attribute)
                if value is None:
                    continue
                as_json = field.spec.to_json(value)
                try:
                    spec.from_json(as_json, param)
                except BadValue:
                    continue
                return as_json
        return None

    def value(self, spec: TypeSpec) -> Any:
        rng = self.rng
        if isinstance(spec, OptionalSpec):
            return self.value(spec.inner) if self.likely() else None
        if isinstance(spec, RefSpec):
            key = self.existing_key([spec.table]) if self.likely() else None
            if key is not None:
                return key
            return self.text() if isinstance(spec.key, StrSpec) else rng.randrange(-5, 10_000)
        if isinstance(spec, StrSpec):
            existing = self.like_existing(str) if self.likely(1) else None
            return existing if existing is not None else self.text()
        if isinstance(spec, EnumSpec):
            return self.pick(sorted(spec.by_value)) if self.likely(8) else self.text()
        if isinstance(spec, BoolSpec):
            return not self.plain and rng.random() < 0.5
        if isinstance(spec, IntSpec):
            near = self.like_existing(int) if rng.random() < 0.4 else None
            if near is not None:
                return near
            return rng.randrange(-2, 21) if self.likely() else rng.randrange(-(10**6), 10**6)
        if isinstance(spec, FloatSpec):
            near = self.like_existing(float) if rng.random() < 0.5 else None
            if near is not None:
                return near
            return round(rng.uniform(-10, 500) if self.likely() else rng.uniform(-1e6, 1e6), 2)
        if isinstance(spec, DateSpec):
            near = self.like_existing(dt.date) if rng.random() < 0.5 else None
            if near is not None:
                return near.isoformat()
            return (self.clock.date() + dt.timedelta(days=rng.randrange(-90, 91))).isoformat()
        if isinstance(spec, DateTimeSpec):
            near = self.like_existing(dt.datetime) if rng.random() < 0.5 else None
            if near is not None:
                return format_datetime(near)
            quarters = rng.randrange(-4 * 24 * 30, 4 * 24 * 30)
            return format_datetime(self.clock + dt.timedelta(minutes=15 * quarters))
        if isinstance(spec, DurationSpec):
            return rng.randrange(0, 60 * 60 * 24 * 30)
        if isinstance(spec, SetSpec):
            items = {repr(v): v for v in (self.value(spec.inner) for _ in range(rng.randrange(4)))}
            return list(items.values())
        if isinstance(spec, ListSpec):
            return [self.value(spec.inner) for _ in range(rng.randrange(4))]
        if isinstance(spec, MapSpec):
            return {
                (str(rng.randrange(20)) if isinstance(spec.key, IntSpec) else self.text()): (
                    self.value(spec.value)
                )
                for _ in range(rng.randrange(4))
            }
        if isinstance(spec, RecordSpec):
            return {
                f.name: self.for_param(f.name, f.spec)
                for f in spec.fields
                if f.required or self.likely(1)
            }
        if isinstance(spec, JsonSpec):
            return self.pick([None, rng.randrange(-5, 6), self.text()])
        return None

    def tables_named_like(self, param: str) -> tuple[Sequence[str], bool]:
        known = _NAMED_LIKE.setdefault(type(self.env), {})
        if param not in known:
            known[param] = _tables_named_like(type(self.env), param)
        return known[param]


# per environment class and parameter name (asked on every call of a tool: it never changes)
_NAMED_LIKE: weakref.WeakKeyDictionary[type[Environment], dict[str, tuple[Sequence[str], bool]]]
_NAMED_LIKE = weakref.WeakKeyDictionary()

# per environment class and tool: (JSON name, spec, required, the example its description
# shows for a string parameter), read once instead of searching descriptions on every call
_ParamPlan = tuple[str, TypeSpec, bool, str | None]
_PARAMS: weakref.WeakKeyDictionary[type[Environment], dict[str, list[_ParamPlan]]]
_PARAMS = weakref.WeakKeyDictionary()


def _params(env_class: type[Environment], tool: str) -> list[_ParamPlan]:
    plans = _PARAMS.setdefault(env_class, {})
    plan = plans.get(tool)
    if plan is None:
        plan = plans[tool] = []
        for param in env_class.TOOLS[tool].params:
            found = _EXAMPLE.search(param.description or "")
            example = found.group(1).strip("'\"`") if found else None
            if not isinstance(param.spec, StrSpec):
                example = None
            plan.append((param.name, param.spec, param.required, example))
    return plan


def _tables_named_like(env_class: type[Environment], param: str) -> tuple[Sequence[str], bool]:
    """The tables a `str` parameter probably names (`user_id` -> users) and True, else every
    table with string keys and False: LLM-written tools take ids as plain strings."""
    matching: list[str] = []
    with_str_keys: list[str] = []
    for name, spec in env_class.TABLES.items():
        key_field = next(f for f in spec.row.fields if f.attribute == spec.schema.key)
        if not isinstance(key_field.spec, StrSpec):
            continue
        with_str_keys.append(name)
        entity = spec.schema.entity.lower()
        names = (key_field.name, f"{entity}_{key_field.name}", f"{entity}_id", entity, name)
        if param in names:
            matching.append(name)
    return (tuple(matching), True) if matching else (tuple(with_str_keys), False)


def _clock(env: Environment) -> dt.datetime:
    """The environment's `now` (the first date or datetime state field), for dates near it."""
    for name, scalar in env.SCALARS.items():
        value = env._scalars.get(name)
        if isinstance(scalar.spec, DateTimeSpec) and isinstance(value, dt.datetime):
            return value
        if isinstance(scalar.spec, DateSpec) and isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def _state_values(env: Environment) -> dict[type, list[Any]]:
    """Scalar values in the state by kind (str, int, float, date, datetime), de-duplicated,
    from the scalars and the first rows of each table (enough to learn what data looks like)."""
    found: dict[type, dict[Any, None]] = {}

    def add(value: Any) -> None:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, (list, set, frozenset, tuple)):
            for item in value:
                add(item)
            return
        kind = type(value)
        if kind in (str, int, float, dt.date, dt.datetime):
            found.setdefault(kind, {})[value] = None

    for name in env.SCALARS:
        add(env._scalars.get(name))
    for name, spec in env.TABLES.items():
        for row in env._table(name).rows()[:200]:
            for field in spec.row.fields:
                add(getattr(row, field.attribute))
    return {kind: sorted(values, key=repr) for kind, values in found.items()}


def _field_values(env: Environment) -> dict[str, list[Any]]:
    """String values in the tables by field name (JSON name), de-duplicated."""
    found: dict[str, dict[str, None]] = {}
    for name, spec in env.TABLES.items():
        for row in env._table(name).rows()[:200]:
            for field in spec.row.fields:
                value = getattr(row, field.attribute)
                if isinstance(value, str):
                    found.setdefault(field.name, {})[value] = None
    return {field: sorted(values) for field, values in found.items()}
