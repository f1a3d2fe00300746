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
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from envdsl.runtime.limits import has_surrogate, json_problem
from envdsl.runtime.load_support import RowLoader, Slow
from envdsl.runtime.specs import TableSpec
from envdsl.runtime.state_owner import StateOwner
from envdsl.runtime.table import highest_auto_number
from envdsl.runtime.values import OptionalSpec, key_from_json, nested_refs

if TYPE_CHECKING:
    from envdsl.runtime.table import Table


_TABLE_FORMS = (list, dict)
_PAUSE_COLLECTOR_ROWS = 30_000  # rows of a state loaded with the cyclic collector paused


def load_plainly(env: StateOwner, data: Any) -> bool:
    """Load `data` into `env`'s (empty) world and check every rule; False when this loader
    does not take it, which leaves the world half-filled: the caller clears it and loads the
    state through the reference path."""
    if type(data) is not dict:
        return False
    for name in data:
        if type(name) is not str or (name not in env.TABLES and name not in env.SCALARS):
            return False
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
    size = sum(len(value) for value in data.values() if type(value) in _TABLE_FORMS)
    pausing = size >= _PAUSE_COLLECTOR_ROWS and gc.isenabled()
    if pausing:
        gc.disable()
    try:
        for name, spec in env.TABLES.items():
            if name in data:
                if spec.loader is None:  # not generated: the reference path
                    raise Slow
                _load_table(env, name, spec, data[name], spec.loader)
        for name, scalar in env.SCALARS.items():
            if name in data:
                value = data[name]
                if json_problem(value, depth=1) is not None:
                    raise Slow
                env.set_scalar_initial(name, scalar.spec.from_json(value, name))
            elif scalar.default is None and not isinstance(scalar.spec, OptionalSpec):
                raise Slow
        with env._whole_state_steps():
            _check_plainly(env)
    except Exception:  # noqa: BLE001 - whatever it is, the reference path says it properly
        if coverage is not None and env.coverage is not None:
            # fns the invariants call run again there: count them once; in place, for
            # whoever holds the list (explore counts into its own)
            env.coverage[:] = coverage
        return False
    finally:
        if pausing:
            gc.enable()
            gc.collect(1)
    return True


def _load_table(env: StateOwner, name: str, spec: TableSpec, value: Any, load: RowLoader) -> None:
    if type(value) is list:
        rows = load.many(value)
    elif type(value) is dict and load.keyed is not None:
        rows = load.keyed(value)
    elif type(value) is dict:
        key_spec = next(f for f in spec.row.fields if f.attribute == spec.schema.key)
        rows = []
        for key, row in value.items():
            if type(key) is not str or type(row) is not dict or has_surrogate(key):
                raise Slow
            key_value = key_from_json(key_spec.spec, key, "")  # the reference's canonical key
            if key_spec.name not in row:
                row = {**row, key_spec.name: key_value}
            elif key_spec.spec.from_json(row[key_spec.name], "") != key_value:
                raise Slow
            rows.append(load.one(row))
    else:
        raise Slow
    _add_rows(env, env._tables[name], rows)
    env._world.digests.table_changed(name)


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


def _check_plainly(env: StateOwner) -> None:
    """_check_whole_state for a state that passes it (Slow at the first doubt): the same rules,
    and the same invariant calls on the same rows, so the same steps counted."""
    for name, scalar in env.SCALARS.items():
        if env._scalars[name] is None and not isinstance(scalar.spec, OptionalSpec):
            raise Slow
    for name, table in env._tables.items():
        for fields in table.unique_index:
            if any(None not in value for value in table.shared_values(fields)):
                raise Slow
        for ref in table.schema.refs:
            if not env._tables[ref.parent_table].holds_all(table.ref_index[ref.field].keys()):
                raise Slow
        spec = env.TABLES[name]
        rows = table.rows()
        if spec.nested_parents:
            for row in rows:
                for _, parent_table, parent_key in nested_refs(spec.row, row):
                    if parent_key is not None and parent_key not in env._tables[parent_table]:
                        raise Slow
        for _, method in env.ROW_INVARIANTS.get(name, ()):
            if not all(map(getattr(env, method), rows)):
                raise Slow
    env._verify_scalar_refs()  # its Fail sends the state to the reference path, which says it
    for method in env.ENV_INVARIANTS:
        if not getattr(env, method)():
            raise Slow
