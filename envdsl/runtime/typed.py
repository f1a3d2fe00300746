"""Arguments of the typed methods (`env.set_status(user_id=..., status=...)`) as JSON.

A typed method must validate its arguments exactly as `env.call` does, so it does not trust
its Python values: they are written back to their JSON form here and then go through the same
parser as the agent's JSON arguments.  Conversion never fails: a value of the wrong kind is
passed on as it is and the parser rejects it with its usual message (a plain string where an
enum is expected is accepted when it is a member's JSON value, as in `env.call`; a member of
another enum class is rejected unless it is the same enum of another load of the spec, as
after unpickling in a worker).
"""

from __future__ import annotations

import datetime as dt
import enum
from typing import Any

from envdsl.runtime.values import (
    DateSpec,
    DateTimeSpec,
    DurationSpec,
    EnumSpec,
    ListSpec,
    MapSpec,
    OptionalSpec,
    RecordSpec,
    RefSpec,
    TypeSpec,
    VariantSpec,
)


def _same_class(value: object, cls: type[Any]) -> bool:
    kind = type(value)
    return kind is cls or (kind.__qualname__ == cls.__qualname__ and kind.__name__ == cls.__name__)


def to_json(spec: TypeSpec, value: Any) -> Any:
    """The JSON form of a Python argument value, or the value itself when it is of no form of
    `spec` (the parser then reports it)."""
    if value is None:
        return None
    if isinstance(spec, OptionalSpec):
        return to_json(spec.inner, value)
    if isinstance(spec, RefSpec):
        return to_json(spec.key, value)
    if isinstance(spec, EnumSpec):
        if isinstance(value, enum.Enum):
            return value.value if _same_class(value, spec.cls) else value
        return value
    if isinstance(spec, RecordSpec):
        if not _same_class(value, spec.cls):
            return value
        return {f.name: to_json(f.spec, getattr(value, f.attribute)) for f in spec.fields}
    if isinstance(spec, VariantSpec):
        found = spec.case_of(value)
        if found is None:
            return value
        case, case_spec = found
        return {spec.tag: case, **to_json(case_spec, value)}
    if isinstance(spec, ListSpec):  # and SetSpec
        if isinstance(value, (list, tuple, set, frozenset)):
            return [to_json(spec.inner, item) for item in value]
        return value
    if isinstance(spec, MapSpec):
        if isinstance(value, dict):
            return {str(to_json(spec.key, k)): to_json(spec.value, v) for k, v in value.items()}
        return value
    if isinstance(spec, DateTimeSpec):
        return spec.to_json(value) if isinstance(value, dt.datetime) else value
    if isinstance(spec, DateSpec):
        # a datetime is a date in Python, not in the DSL: its text has a time and is rejected
        return value.isoformat() if isinstance(value, dt.date) else value
    if isinstance(spec, DurationSpec):
        return spec.to_json(value) if isinstance(value, dt.timedelta) else value
    return value  # int, float, bool, str, json: their Python values are their JSON
