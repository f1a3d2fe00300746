"""Loading a JSON state the fast way, for the common case: plain, valid data.

The reference loader (`Environment._load_json_state` and `_check_whole_state`) walks the whole
state for JSON problems, reads every field through its spec with a path, adds rows one by one
and checks every rule row by row. This module does the same work once per state in bulk: the
loaders the compiler wrote for each table (TableSpec.loader, codegen/loaders.py: one loop
per table, the common cases inline as exact type tests, nested values through nested readers)
read a table's rows; a table's dict and indexes are built in one pass (Table.fill), and the
rules are checked by set operations (unique: one key per value; refs: the parents are a
subset of the parent table's keys) and by running each invariant over all rows. A table
without loaders (a hand-written environment's) sends the state to the reference path.

It gives up (`Slow`) at the first thing it does not take: a wrong or converted type (`5.0` for
an int), an unknown or missing field, a duplicate key, a broken rule, any error. The caller
then loads the state again through the reference path, from an empty world. So a state this
loader accepts is exactly one the reference accepts, loaded into the same rows (the loaders'
exact type tests imply everything the JSON walk checks: exact JSON types, string keys, no
lone surrogate, ints in range, finite numbers, bounded depth), and every bad state gets the
reference's message, from one source.
"""

from __future__ import annotations

import gc
from itertools import repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from envdsl.runtime.limits import has_surrogate, json_problem
from envdsl.runtime.load_support import RowLoader, Slow
from envdsl.runtime.specs import TableSpec
from envdsl.runtime.state_owner import StateOwner
from envdsl.runtime.table import highest_auto_number
from envdsl.runtime.values import OptionalSpec, TypeSpec, holds_ref, key_from_json, nested_refs

if TYPE_CHECKING:
    from envdsl.runtime.table import Table


_TABLE_FORMS = (list, dict)
_STR_ONLY = {str}
_PAUSE_COLLECTOR_ROWS = 30_000  # rows of a state loaded with the cyclic collector paused


class _TableCheck(NamedTuple):
    """What _check_plainly checks of one table's rows."""

    name: str
    uniques: tuple[tuple[str, ...], ...]
    refs: tuple[tuple[str, str], ...]  # (ref field, parent table)
    nested: bool  # refs inside its records and collections
    row_invariants: tuple[str, ...]  # methods


class _LoadPlan(NamedTuple):
    """What load_plainly reads of an environment class, read once per class: a reset's cost
    apart from its rows was most of a 100-row reset's excess over pydantic (the class's
    dicts and specs walked afresh each time, every table checked, empty or not)."""

    names: frozenset[str]  # the state fields
    tables: tuple[tuple[str, TableSpec], ...]
    scalars: tuple[tuple[str, TypeSpec, bool], ...]  # (name, spec, required)
    checks: tuple[_TableCheck, ...]
    ref_scalars: bool  # a scalar whose value can hold refs
    env_invariants: tuple[str, ...]  # methods


def _plan(env: StateOwner) -> _LoadPlan:
    cls = type(env)
    plan: _LoadPlan | None = cls.__dict__.get("_LOAD_PLAN")
    if plan is None:
        plan = _LoadPlan(
            names=frozenset([*env.TABLES, *env.SCALARS]),
            tables=tuple(env.TABLES.items()),
            scalars=tuple(
                (
                    name,
                    scalar.spec,
                    scalar.default is None and not isinstance(scalar.spec, OptionalSpec),
                )
                for name, scalar in env.SCALARS.items()
            ),
            checks=tuple(
                _TableCheck(
                    name,
                    spec.schema.uniques,
                    tuple((ref.field, ref.parent_table) for ref in spec.schema.refs),
                    bool(spec.nested_parents),
                    tuple(method for _, method in env.ROW_INVARIANTS.get(name, ())),
                )
                for name, spec in env.TABLES.items()
            ),
            ref_scalars=any(holds_ref(scalar.spec) for scalar in env.SCALARS.values()),
            env_invariants=tuple(env.ENV_INVARIANTS),
        )
        setattr(cls, "_LOAD_PLAN", plan)  # on the class itself: a subclass reads its own
    return plan


def load_plainly(env: StateOwner, data: Any, decoded: bool = False) -> bool:
    """Load `data` into `env`'s (empty) world and check every rule; False when this loader
    does not take it, which leaves the world half-filled: the caller clears it and loads the
    state through the reference path. `decoded`: `data` is what a JSON decoder made of a
    text (every object's names exact strs, which the loaders need not check again)."""
    if type(data) is not dict:
        return False
    plan = _plan(env)
    size = 0
    for name, value in data.items():
        if type(name) is not str or name not in plan.names:
            return False
        if type(value) in _TABLE_FORMS:
            size += len(value)
    coverage = None if env.coverage is None else list(env.coverage)
    # A large load makes a few objects per row and no garbage, yet every 700 of them start a
    # collection, and as they pile up, collections of the whole heap (the state being loaded
    # too, every row of it): at 100,000 rows half the time of a load went there, finding
    # nothing. The collector is off while the rows are made; after, one collection of the
    # young generations passes over them once, as the collector would have (so that the load
    # pays for what it made, not whatever runs next). A smaller load is left to the
    # collector: there, that one collection cost as much as those it saved, or more (the
    # young ones run while what they scan is in the cache; measured on sleep_tracking,
    # even at 20,000 and 30,000 rows, a gain from 40,000 on).
    pausing = size >= _PAUSE_COLLECTOR_ROWS and gc.isenabled()
    if pausing:
        gc.disable()
    call_budget = env.step_budget
    try:
        for name, spec in plan.tables:
            if name in data:
                if spec.loader is None:  # not generated: the reference path
                    raise Slow
                value = data[name]
                if value or type(value) not in _TABLE_FORMS:  # an empty table stays as it is
                    _load_table(env, name, spec, value, spec.loader, decoded)
        for name, scalar_spec, required in plan.scalars:
            if name in data:
                value = data[name]
                if json_problem(value, depth=1) is not None:
                    raise Slow
                env.set_scalar_initial(name, scalar_spec.from_json(value, name))
            elif required:
                raise Slow
        env._start_whole_state_steps()  # (a context manager's generator costs more)
        _check_plainly(env, plan)
    except Exception:  # noqa: BLE001 - whatever it is, the reference path says it properly
        if coverage is not None and env.coverage is not None:
            # fns the invariants call run again there: count them once; in place, for
            # whoever holds the list (explore counts into its own)
            env.coverage[:] = coverage
        return False
    finally:
        env.step_budget = call_budget
        if pausing:
            gc.enable()
            gc.collect(1)
    return True


def _load_table(
    env: StateOwner, name: str, spec: TableSpec, value: Any, load: RowLoader, decoded: bool
) -> None:
    if type(value) is list:
        rows = load.many(value, decoded)
    elif type(value) is dict:
        rows = _load_keyed(spec, value, load, decoded)
    else:
        raise Slow
    _add_rows(env, env._tables[name], rows)
    env._world.digests.table_changed(name)


def _load_keyed(
    spec: TableSpec, keyed: dict[Any, Any], load: RowLoader, decoded: bool
) -> list[Any]:
    """The rows of a table given as an object of them keyed by their keys: each row given its
    key where it leaves it out, and holding the object's key where it does not, read by the
    table's loader."""
    key_attribute = spec.schema.key
    if load.keyed is not None:  # a str key: the object's keys as they are
        key_name = load.keyed
        keys = list(keyed)
        raws = list(keyed.values())
        if not (decoded or set(map(type, keys)) <= _STR_ONLY) or set(map(type, raws)) != {dict}:
            raise Slow
        if not all(map(dict.__contains__, raws, repeat(key_name))):
            raws = [
                raw if key_name in raw else {**raw, key_name: key} for key, raw in zip(keys, raws)
            ]
        rows = load.many(raws, decoded)
        if list(map(attrgetter(key_attribute), rows)) != keys:
            raise Slow
        return rows
    key_spec = next(f for f in spec.row.fields if f.attribute == key_attribute)
    raws = []
    for key, row in keyed.items():
        if type(key) is not str or type(row) is not dict or has_surrogate(key):
            raise Slow
        key_value = key_from_json(key_spec.spec, key, "")  # the reference's canonical key
        if key_spec.name not in row:
            row = {**row, key_spec.name: key_value}
        elif key_spec.spec.from_json(row[key_spec.name], "") != key_value:
            raise Slow
        raws.append(row)
    return load.many(raws, decoded)


def _add_rows(env: StateOwner, table: Table[Any], rows: list[Any]) -> None:
    """Environment.load_rows for rows whose fields are already owned."""
    schema = table.schema
    keys = list(map(attrgetter(schema.key), rows))
    if schema.auto_prefix is not None and "" in keys:
        # keys to make, in row order, each past those loaded and made so far
        table.auto_counter = max(table.auto_counter, highest_auto_number(schema.auto_prefix, keys))
        for row, key in zip(rows, keys):
            if key == "":
                key = env._next_auto_key(table)
                setattr(row, schema.key, key)
            if key in table:
                raise Slow
            table.add(key, row)
        return
    if not table.fill(keys, rows):
        raise Slow  # two rows with one key


def _check_plainly(env: StateOwner, plan: _LoadPlan) -> None:
    """_check_whole_state for a state that passes it (Slow at the first doubt): the same rules,
    and the same invariant calls on the same rows, so the same steps counted (a table without
    rows breaks no rule of its own and runs no row invariant)."""
    scalars = env._scalars
    for name, spec, _ in plan.scalars:
        if scalars[name] is None and not isinstance(spec, OptionalSpec):
            raise Slow
    tables = env._tables
    for check in plan.checks:
        table = tables[check.name]
        if not table._rows:  # (Table.__len__ without its call)
            continue
        for fields in check.uniques:
            if any(None not in value for value in table.shared_values(fields)):
                raise Slow
        for ref_field, parent_table in check.refs:
            if not tables[parent_table].holds_all(table.ref_index[ref_field].keys()):
                raise Slow
        if not (check.nested or check.row_invariants):
            continue
        rows = table.rows()
        if check.nested:
            row_spec = env.TABLES[check.name].row
            for row in rows:
                for _, parent_table, parent_key in nested_refs(row_spec, row):
                    if parent_key is not None and parent_key not in tables[parent_table]:
                        raise Slow
        for method in check.row_invariants:
            if not all(map(getattr(env, method), rows)):
                raise Slow
    if plan.ref_scalars:
        env._verify_scalar_refs()  # its Fail sends the state to the reference path, which says it
    for method in plan.env_invariants:
        if not getattr(env, method)():
            raise Slow
