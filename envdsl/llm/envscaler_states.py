"""EnvScaler start states (a scenario's `init_config`) as envdsl JSON states.

An `init_config` sets the attributes of the EnvScaler class: `{"requests": {"r1": {...}},
"job_queue": {"queued_request_ids": [...]}, ...}`. The mapping, guided by the spec's schema
(docs/synth.md, "Start states"):

- a top-level key is the state field of the same name; an object keyed by id is a table's
  rows (the JSON-state path already reads it: each row's key field is its object key);
- a top-level key that is no state field but an object whose keys all are (a holder such as
  `job_queue: {"queued_request_ids": [...]}`) is flattened: its keys become state fields;
- a number where the spec has a `datetime` or a `date` is read as Unix seconds (UTC), and an
  ISO text without a zone as UTC;
- everything else is passed as it is, so that the load says what does not fit.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from envdsl.runtime.values import (
    DateSpec,
    DateTimeSpec,
    ListSpec,
    MapSpec,
    OptionalSpec,
    RecordSpec,
    RefSpec,
    TypeSpec,
    format_datetime,
)

if TYPE_CHECKING:
    from envdsl.llm.envscaler import Scenario
    from envdsl.runtime import Environment


def convert_state(init_config: Mapping[str, Any], env_class: type[Environment]) -> dict[str, Any]:
    """The envdsl JSON state for an EnvScaler start state (see the module's docstring)."""
    fields = {**{n: None for n in env_class.TABLES}, **{n: None for n in env_class.SCALARS}}
    flat: dict[str, Any] = {}
    for name, value in init_config.items():
        holder = (
            name not in fields
            and isinstance(value, dict)
            and value
            and all(key in fields and key not in init_config for key in value)
        )
        if holder:
            flat.update(value)
        else:
            flat[name] = value
    state: dict[str, Any] = {}
    for name, value in flat.items():
        if name in env_class.TABLES:
            state[name] = _table(value, env_class.TABLES[name].row)
        elif name in env_class.SCALARS:
            state[name] = _value(value, env_class.SCALARS[name].spec)
        else:
            state[name] = value
    return state


def _table(value: Any, row: RecordSpec) -> Any:
    if isinstance(value, dict):
        return {key: _value(item, row) for key, item in value.items()}
    if isinstance(value, list):
        return [_value(item, row) for item in value]
    return value


def _value(value: Any, spec: TypeSpec) -> Any:
    if isinstance(spec, OptionalSpec):
        return None if value is None else _value(value, spec.inner)
    if isinstance(spec, DateTimeSpec):
        return _datetime(value)
    if isinstance(spec, DateSpec):
        moment = _datetime(value)
        return moment[:10] if isinstance(moment, str) and moment != value else value
    if isinstance(spec, RefSpec):
        return _value(value, spec.key)
    if isinstance(spec, ListSpec) and isinstance(value, list):  # sets too
        return [_value(item, spec.inner) for item in value]
    if isinstance(spec, MapSpec) and isinstance(value, dict):
        return {key: _value(item, spec.value) for key, item in value.items()}
    if isinstance(spec, RecordSpec) and isinstance(value, dict):
        by_name = {f.name: f.spec for f in spec.fields}
        return {k: _value(v, by_name[k]) if k in by_name else v for k, v in value.items()}
    return value


def _datetime(value: Any) -> Any:
    """Unix seconds, or an ISO text without a zone, as an ISO datetime in UTC; else as is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return format_datetime(dt.datetime.fromtimestamp(value, dt.timezone.utc))
        except (OverflowError, OSError, ValueError):
            return value
    if isinstance(value, str):
        try:
            moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.timezone.utc)
        return format_datetime(moment)
    return value


def load_failures(
    scenarios: Sequence[Scenario], env_class: type[Environment]
) -> list[tuple[str, str | None]]:
    """Each scenario's id and why its start state does not load (None: it loads)."""
    from envdsl.runtime import InvalidState

    report: list[tuple[str, str | None]] = []
    for scenario in scenarios:
        try:
            env_class().reset(state=convert_state(scenario.init_config, env_class))
        except InvalidState as error:
            report.append((scenario.id, str(error)))
        else:
            report.append((scenario.id, None))
    return report


def environment_of_checked(checked: object) -> type[Environment]:
    """The environment class of a checked spec (envdsl.semantics.model.CheckedSpec), run in
    memory and not registered."""
    from envdsl.codegen.emit import generate, output_name
    from envdsl.generated.modules import environment_class, load_module
    from envdsl.semantics.model import CheckedSpec

    assert isinstance(checked, CheckedSpec)
    source = generate(checked, formatted=False)
    return environment_class(load_module(source, f"{output_name(checked)}_fit", register=False))
