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

_TEXT = "abcdefgXYZ-_ 0123456789@."


class ArgumentGenerator:
    def __init__(self, env: Environment, choice: int) -> None:
        self.env = env
        self.rng = random.Random(choice)
        # choice 0 (what shrinking tends to) means "the likeliest value everywhere"
        self.plain = choice == 0
        self.clock = _clock(env)

    def likely(self, weight: int = 4) -> bool:
        return self.plain or self.rng.randrange(weight + 1) != weight

    def text(self) -> str:
        return "".join(self.rng.choice(_TEXT) for _ in range(self.rng.randrange(11)))

    def pick(self, items: list[Any]) -> Any:
        return items[0] if self.plain else self.rng.choice(items)

    def for_tool(self, name: str) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        for param in self.env.TOOLS[name].params:
            if param.required or self.likely(1):
                arguments[param.name] = self.for_param(param.name, param.spec)
        return arguments

    def for_param(self, name: str, spec: TypeSpec) -> Any:
        if isinstance(spec, StrSpec):
            keys = self.keys_named_like(name)
            return self.pick(keys) if keys and self.likely() else self.text()
        return self.value(spec)

    def value(self, spec: TypeSpec) -> Any:
        rng = self.rng
        if isinstance(spec, OptionalSpec):
            return self.value(spec.inner) if self.likely() else None
        if isinstance(spec, RefSpec):
            keys = self.env._table(spec.table).keys()
            if keys and self.likely():
                return self.pick(keys)
            return self.text() if isinstance(spec.key, StrSpec) else rng.randrange(-5, 10_000)
        if isinstance(spec, EnumSpec):
            return self.pick(sorted(spec.by_value)) if self.likely(8) else self.text()
        if isinstance(spec, BoolSpec):
            return not self.plain and rng.random() < 0.5
        if isinstance(spec, IntSpec):
            return rng.randrange(-2, 21) if self.likely() else rng.randrange(-(10**6), 10**6)
        if isinstance(spec, FloatSpec):
            return round(rng.uniform(-10, 500) if self.likely() else rng.uniform(-1e6, 1e6), 2)
        if isinstance(spec, DateSpec):
            return (self.clock.date() + dt.timedelta(days=rng.randrange(-90, 91))).isoformat()
        if isinstance(spec, DateTimeSpec):
            minutes = rng.randrange(-60 * 24 * 60, 60 * 24 * 60)
            return format_datetime(self.clock + dt.timedelta(minutes=minutes))
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
            return {f.name: self.value(f.spec) for f in spec.fields if f.required or self.likely(1)}
        if isinstance(spec, JsonSpec):
            return self.pick([None, rng.randrange(-5, 6), self.text()])
        return None

    def keys_named_like(self, param: str) -> list[Any]:
        """Keys of the tables a `str` parameter probably names (`user_id` -> users' keys),
        else every string key: an LLM-written tool often takes ids as plain strings."""
        matching: list[Any] = []
        everything: list[Any] = []
        for name, spec in self.env.TABLES.items():
            keys = [k for k in self.env._table(name).keys() if isinstance(k, str)]
            everything += keys
            key_field = next(f.name for f in spec.row.fields if f.attribute == spec.schema.key)
            entity = spec.schema.entity.lower()
            if param in (key_field, f"{entity}_id", f"{entity}_key", entity):
                matching += keys
        return matching or everything


def _clock(env: Environment) -> dt.datetime:
    """The environment's `now` (the first date or datetime state field), for dates near it."""
    for name, scalar in env.SCALARS.items():
        value = env._scalars.get(name)
        if isinstance(scalar.spec, DateTimeSpec) and isinstance(value, dt.datetime):
            return value
        if isinstance(scalar.spec, DateSpec) and isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
