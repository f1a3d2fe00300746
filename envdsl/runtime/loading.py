"""Loading a JSON state the fast way, for the common case: plain, valid data.

The reference loader (`Environment._load_json_state` and `_check_whole_state`) walks the whole
state for JSON problems, reads every field through its spec with a path, adds rows one by one
and checks every rule row by row. This module does the same work once per state in bulk: one
loop per entity (source built here from its fields and compiled: the last code the runtime
builds at run time; the tools' whole calls and the records' writers are the compiler's now)
reads a table's rows with the common cases inlined as exact type tests (short ASCII
strings, 64-bit ints, enum values, ISO datetimes, lists of those; records, lists and maps of
them through nested readers, below), after two passes in C that every row is an object and
every member name an exact str; a table's dict and indexes are built in one pass
(Table.fill), and the rules are checked by
set operations (unique: one key per value; refs: the parents are a subset of the parent
table's keys) and by running each invariant over all rows.

It gives up (`Slow`) at the first thing it does not take: a wrong or converted type (`5.0` for
an int), an unknown or missing field, a duplicate key, a broken rule, any error. The caller
then loads the state again through the reference path, from an empty world. So a state this
loader accepts is exactly one the reference accepts, loaded into the same rows (its exact type
tests imply everything the JSON walk checks: exact JSON types, string keys, no lone surrogate,
ints in range, finite numbers, bounded depth), and every bad state gets the reference's
message, from one source.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import itertools
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

from envdsl.runtime.errors import BadValue
from envdsl.runtime.limits import (
    MAX_INT,
    MAX_ITEMS,
    MAX_JSON_DEPTH,
    MAX_STR,
    MIN_INT,
    has_surrogate,
    json_problem,
)
from envdsl.runtime.places import (
    IMMUTABLE_TYPES,
    OwnedDict,
    OwnedList,
    OwnedSet,
    Place,
    Value,
    owned_copy,
)
from envdsl.runtime.specs import TableSpec
from envdsl.runtime.state_owner import StateOwner
from envdsl.runtime.table import highest_auto_number
from envdsl.runtime.values import (
    BoolSpec,
    DateSpec,
    DateTimeSpec,
    EnumSpec,
    FloatSpec,
    IntSpec,
    ListSpec,
    MapSpec,
    OptionalSpec,
    RecordSpec,
    RefSpec,
    SetSpec,
    StrSpec,
    TypeSpec,
    key_from_json,
    nested_refs,
    parse_date,
    parse_datetime,
)

if TYPE_CHECKING:
    from envdsl.runtime.table import Table


class RowLoader(NamedTuple):
    """The compiled readers of one table's rows: `one` reads a row, `many` a list of rows
    and `keyed` an object of rows keyed by their str keys, where the key is a str (the same
    statements in one loop: no call per row)."""

    one: Callable[[Any], Any]
    many: Callable[[Any], list[Any]]
    keyed: Callable[[Any], list[Any]] | None


_MISSING = object()
_FIELD_DEPTH = 3  # state object -> table -> row -> field value
_UTC = dt.timezone.utc
_TABLE_FORMS = (list, dict)
_PAUSE_COLLECTOR_ROWS = 30_000  # rows of a state loaded with the cyclic collector paused


class Slow(Exception):
    """Not the plain case: load the state through the reference path."""


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
        loaders = row_loaders(type(env))
        for name, spec in env.TABLES.items():
            if name in data:
                _load_table(env, name, spec, data[name], loaders[name])
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


def row_loaders(cls: type[StateOwner]) -> dict[str, RowLoader]:
    """One row loader per table of a generated class, made once."""
    loaders: dict[str, RowLoader] | None = cls.__dict__.get("_ROW_LOADERS")
    if loaders is None:
        loaders = {
            name: row_loader(spec.row, name, spec.schema.key) for name, spec in cls.TABLES.items()
        }
        setattr(cls, "_ROW_LOADERS", loaders)
    return loaders


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
    for method in env.ENV_INVARIANTS:
        if not getattr(env, method)():
            raise Slow


# ---- row loaders -----------------------------------------------------------------------------


def row_loader(spec: RecordSpec, table: str, key: str | None = None) -> RowLoader:
    """Functions that read rows of `table` from JSON objects as spec.from_json would (the
    same rows, with their mutable fields owned as Environment.load_rows owns them), or raise
    Slow for anything they do not take. `key`: the attribute of the table's key."""
    names: dict[str, Any] = {
        "Slow": Slow,
        "KNOWN": frozenset(f.name for f in spec.fields),
        "M": _MISSING,
        "CLS": spec.cls,
        "new": object.__new__,
        "MIN": MIN_INT,
        "MAX": MAX_INT,
        "MAX_ITEMS": MAX_ITEMS,
        "UTC": _UTC,
        "datetime_from": dt.datetime.fromisoformat,
        "date_from": dt.date.fromisoformat,
        "Owned": OwnedList,
        "Place": Place,
        "place_new": tuple.__new__,  # Place(...) without its Python-level __new__
        "owned_copy": owned_copy,
        "IMMUTABLE": IMMUTABLE_TYPES,
        "TABLE": table,
        "chain": itertools.chain.from_iterable,
        "DICT_ONLY": {dict},
        "STR_ONLY": {str},
    }
    defaults = {f.name: f for f in dataclasses.fields(spec.cls)}
    lines: list[str] = []
    owning = []
    arguments = []
    plain_init = _plain_init(spec)
    nested = _NestedReaders(names)
    for index, field in enumerate(spec.fields):
        if not field.attribute.isidentifier():  # generated attributes always are
            raise ValueError(f"not an attribute name: {field.attribute!r}")
        target = f"f{index}"
        names[f"other_{index}"] = _slow_reader(field.spec, field.required, defaults, field)
        reader = nested.field_reader(field.spec) if plain_init else None
        if reader is not None:  # read once the row exists: its values are owned at its place
            owning.extend(_nested_field(reader, field.attribute, index, field.spec))
            continue
        lines.extend("    " + line for line in _read(field.spec, target, index, names))
        arguments.append(f"{field.attribute} = {target}")
        own = _owning(field.spec, field.attribute, index)
        if own:
            owning.extend(own)
    if plain_init:
        lines.append("    row = new(CLS)")
        lines.extend(f"    row.{argument}" for argument in arguments)
    else:
        lines.append(f"    row = CLS({', '.join(arguments)})")
    lines.extend("    " + line for line in owning)
    source = [
        "def load(value):",
        *_members(spec, keys_checked=False),
        *lines,
        "    return row",
    ]
    # the rows of a list, and of an object keyed by str keys: a row's key is its object key
    members = ["    " + line for line in _members(spec, keys_checked=True)]
    reads = ["    " + line for line in lines]
    source += _table_loop("load_all(values)", "value in values", "values", [], members + reads)
    key_index = next(
        (i for i, f in enumerate(spec.fields) if f.attribute == key and type(f.spec) is StrSpec),
        None,
    )
    if key_index is not None:
        key_field = f"f{key_index}"
        each_row = [
            *members,
            f"        if {key_field} is M:",
            f"            {key_field} = key",
            *reads,
            f"        if {key_field} != key:",
            "            raise Slow",
        ]
        source += _table_loop(
            "load_keyed(keyed)",
            "key, value in keyed.items()",
            "keyed.values()",
            ["keyed"],
            each_row,
        )
    exec("\n".join(source), names)  # noqa: S102 - source built here from the specs
    return RowLoader(names["load"], names["load_all"], names.get("load_keyed"))


def _table_loop(
    signature: str, loop: str, rows: str, keys: list[str], each_row: list[str]
) -> list[str]:
    """A function reading every row `loop` gives with the statements `each_row` (indented for
    the loop), after checking in C that every one of `rows` is an object, every name of a
    member of one an exact str, and so is every one of the collections `keys`: a row whose
    names are all fields is then taken by its size and a subscript each (_members)."""
    tests = [f"set(map(type, {rows})) != DICT_ONLY"]
    tests += [f"not set(map(type, chain({rows}))) <= STR_ONLY"]
    tests += [f"not set(map(type, {other})) <= STR_ONLY" for other in keys]
    return [
        f"def {signature}:",
        "    rows = []",
        "    append = rows.append",
        f"    if {rows} and ({' or '.join(tests)}):",
        "        raise Slow",
        f"    for {loop}:",
        *each_row,
        "        append(row)",
        "    return rows",
    ]


def _members(spec: RecordSpec, keys_checked: bool) -> list[str]:
    """Statements taking the raw members of the row in `value` into f0, f1, ... (M where
    missing), or raising Slow for a row that is no object or holds a member that is no field.
    `keys_checked`: the caller has seen that the row is a dict whose names are exact strs."""
    count = len(spec.fields)
    subscripts = [f"    f{i} = value[{f.name!r}]" for i, f in enumerate(spec.fields)]
    if keys_checked:  # `count` names, each a field's, is every field: a subscript each
        lines = [f"if len(value) == {count}:", "    try:", *("    " + s for s in subscripts)]
        lines += ["    except KeyError:  # a name that is no field's", "        raise Slow"]
        lines += ["else:", "    for name in value:", "        if name not in KNOWN:"]
        lines += ["            raise Slow"]
    else:
        lines = ["if type(value) is not dict:", "    raise Slow", "for name in value:"]
        lines += ["    if type(name) is not str or name not in KNOWN:", "        raise Slow"]
        lines += [f"if len(value) == {count}:", *subscripts, *["    pass"] * (not count), "else:"]
    lines.append("    get = value.get")
    lines += [f"    f{i} = get({f.name!r}, M)" for i, f in enumerate(spec.fields)]
    return ["    " + line for line in lines]


def _plain_init(spec: RecordSpec) -> bool:
    """Whether the class's __init__ only stores its fields (a dataclass of exactly these
    fields, no __post_init__): a row is then made by storing them, a third of the call."""
    cls = spec.cls
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        return False
    fields = dataclasses.fields(cls)
    return all(f.init for f in fields) and sorted(f.name for f in fields) == sorted(
        f.attribute for f in spec.fields
    )


def _read(spec: TypeSpec, target: str, index: int, names: dict[str, Any]) -> list[str]:
    """Statements that turn the raw JSON value in `target` into the field's value in place,
    with the common case inline and anything else through `other_<index>`."""
    other = [f"    {target} = other_{index}({target})"]
    test = _plain_test(spec, target)
    if isinstance(spec, OptionalSpec):
        inner = spec.inner
        inner_test = _plain_test(inner, target)
        if inner_test is not None:
            return [f"if {target} is None or {inner_test}:", "    pass", "else:", *other]
        converted = _converting(inner, target, index, names)
        if converted is not None:
            return [f"if {target} is not None:", *("    " + line for line in converted)]
        return [f"if {target} is not None:", *other]
    if test is not None:
        return [f"if not ({test}):", *other]
    converted = _converting(spec, target, index, names)
    if converted is None:
        return [other[0].strip()]
    if _plain_list(spec):  # its owned copy, given its place once the row exists (_owning)
        converted += [f"if type({target}) is list:", f"    {target} = Owned({target})"]
    return converted


def _plain_list(spec: TypeSpec) -> bool:
    """A list (not a set) of values the row loader takes as they are."""
    return (
        isinstance(spec, ListSpec)
        and not isinstance(spec, SetSpec)
        and _plain_test(spec.inner, "item") is not None
    )


def _plain_test(spec: TypeSpec, name: str) -> str | None:
    """An expression true when the raw value is already the field's value (no conversion) and
    one the spec and the JSON walk both accept; None for specs that convert."""
    if isinstance(spec, RefSpec):
        spec = spec.key
    kind = type(spec)
    if kind is StrSpec:
        return f"type({name}) is str and {name}.isascii() and len({name}) <= 64"
    if kind is IntSpec:
        return f"type({name}) is int and MIN <= {name} <= MAX"
    if kind is BoolSpec:
        return f"({name} is True or {name} is False)"
    return None


def _converting(spec: TypeSpec, name: str, index: int, names: dict[str, Any]) -> list[str] | None:
    """Statements converting a raw value of the common form (enum value, ISO text), falling
    back to `other_<index>`; None for specs with no inline form."""
    other = f"{name} = other_{index}({name})"
    kind = type(spec)
    if kind is EnumSpec:
        names[f"members_{index}"] = spec.by_value  # type: ignore[attr-defined]
        return [
            f"if type({name}) is str and {name} in members_{index}:",
            f"    {name} = members_{index}[{name}]",
            "else:",
            f"    {other}",
        ]
    if kind is DateTimeSpec:  # values.parse_datetime, inline
        return [
            f"if type({name}) is str and {name}.isascii() and ('T' in {name} or ' ' in {name}):",
            "    raw = " + name,
            "    try:",
            f"        {name} = datetime_from(raw)",
            f"        if {name}.tzinfo is not UTC:  # (a Z or +00:00 is UTC itself)",
            f"            if {name}.tzinfo is None:",
            f"                {name} = {name}.replace(tzinfo=UTC)",
            "            else:",
            f"                {name} = {name}.astimezone(UTC)",
            "    except (ValueError, OverflowError):",
            f"        {name} = other_{index}(raw)",
            "else:",
            f"    {other}",
        ]
    if kind is DateSpec:
        return [
            f"if type({name}) is str and len({name}) == 10 and {name}.isascii():",
            "    raw = " + name,
            "    try:",
            f"        {name} = date_from(raw)",
            "    except ValueError:",
            f"        {name} = other_{index}(raw)",
            "else:",
            f"    {other}",
        ]
    if kind is ListSpec:  # not SetSpec: a set is built from its elements
        element = spec.inner  # type: ignore[attr-defined]
        plain_items = _PLAIN_ITEMS.get(
            type(element.key if isinstance(element, RefSpec) else element)
        )
        if plain_items is None:
            return None
        names[f"plain_items_{index}"] = plain_items
        return [
            f"if not (type({name}) is list and len({name}) <= MAX_ITEMS",
            f"        and (not {name} or plain_items_{index}({name}))):",
            f"    {other}",
        ]
    return None


def _plain_strs(items: list[Any]) -> bool:
    return all(type(item) is str and item.isascii() and len(item) <= 64 for item in items)


def _plain_ints(items: list[Any]) -> bool:
    return all(type(item) is int and MIN_INT <= item <= MAX_INT for item in items)


def _plain_bools(items: list[Any]) -> bool:
    return all(item is True or item is False for item in items)


# whether every element of a list is already its value: _plain_test of each element kind
_PLAIN_ITEMS: dict[type[TypeSpec], Callable[[list[Any]], bool]] = {
    StrSpec: _plain_strs,
    IntSpec: _plain_ints,
    BoolSpec: _plain_bools,
}


def _owning(spec: TypeSpec, attribute: str, index: int) -> list[str]:
    """Statements giving the row's mutable value of this field its owned copy, as
    places.own_row_fields does (a list of plain items: an OwnedList of them)."""
    place = f"place_new(Place, (TABLE, row, {attribute!r}))"
    if _plain_list(spec):  # made Owned as it was read
        return [
            f"if type(f{index}) is Owned:",
            f"    f{index}._owner = {place}",
            "else:",
            f"    row.{attribute} = owned_copy(f{index}, {place})",
        ]
    if _plain_test(spec, "x") is not None or type(spec) in _NEVER_MUTABLE:
        return []
    if isinstance(spec, OptionalSpec) and (
        _plain_test(spec.inner, "x") is not None or type(spec.inner) in _NEVER_MUTABLE
    ):
        return []
    return [
        f"current = row.{attribute}",
        "if type(current) not in IMMUTABLE:",
        f"    row.{attribute} = owned_copy(current, {place})",
    ]


_NEVER_MUTABLE = frozenset({EnumSpec, DateTimeSpec, DateSpec})


# ---- nested values: records, lists of them, maps, sets ---------------------------------------
#
# A field holding a record, a list of records or a map went through the JSON walk, its spec's
# from_json and owned_copy: three passes and a path string per level. A nested reader does the
# three in one: exact type tests at each level (the JSON walk's checks and the spec's, at once),
# the owned value built directly at its place. Anything it does not take raises NotPlain, and
# that field alone is read the reference way (then any error there is Slow, as before).


class NotPlain(Exception):
    """A nested value a reader does not take as it is: read the field the reference way."""


def _nested_field(reader: str, attribute: str, index: int, spec: TypeSpec) -> list[str]:
    """Statements reading field `index` (raw in f<index>) through its nested reader into the
    row, its value owned at the row's place; a missing field gets its default, owned."""
    place = f"place_new(Place, (TABLE, row, {attribute!r}))"
    optional = isinstance(spec, OptionalSpec)
    return [
        f"raw = f{index}",
        *([f"if raw is None:", f"    row.{attribute} = None"] if optional else []),
        f"{'elif' if optional else 'if'} raw is M:",
        f"    value = other_{index}(raw)",
        f"    row.{attribute} = value if type(value) in IMMUTABLE else owned_copy(value, {place})",
        "else:",
        f"    place = {place}",
        "    try:",
        f"        row.{attribute} = {reader}(raw, place, {_FIELD_DEPTH})",
        "    except NotPlain:",
        f"        value = other_{index}(raw)",
        "        if type(value) not in IMMUTABLE:",
        "            value = owned_copy(value, place)",
        f"        row.{attribute} = value",
    ]


def _nested_datetime(raw: Any, place: Any, depth: int) -> dt.datetime:
    """DateTimeSpec.from_json for the ASCII forms (as the row loader's inline reading), NotPlain
    for the rest."""
    if type(raw) is str and raw.isascii():
        try:
            return parse_datetime(raw)
        except ValueError:
            pass
    raise NotPlain


def _nested_date(raw: Any, place: Any, depth: int) -> dt.date:
    """DateSpec.from_json for the ASCII forms, NotPlain for the rest."""
    if type(raw) is str and raw.isascii():
        try:
            return parse_date(raw)
        except ValueError:
            pass
    raise NotPlain


def _not_plain() -> Any:
    raise NotPlain


def _long_str(value: str) -> bool:
    """A string StrSpec and the JSON walk take that is not short ASCII."""
    return len(value) <= MAX_STR and not has_surrogate(value)


class _NestedReaders:
    """The nested readers of one row loader, compiled into its namespace: each a function
    `(raw, place, depth)` returning the owned value spec.from_json then owned_copy would make
    of a raw value `depth` deep in the state (depth bounds it as the JSON walk does), or
    raising NotPlain. Made once per spec, so that recursive records reuse their reader."""

    def __init__(self, names: dict[str, Any]) -> None:
        self.names = names
        self.made: dict[int, str | None] = {}
        names.update(
            NotPlain=NotPlain,
            MAX_DEPTH=MAX_JSON_DEPTH,
            MAX_STR=MAX_STR,
            INF=float("inf"),
            long_str=_long_str,
            OwnedSet=OwnedSet,
            OwnedDict=OwnedDict,
            nested_datetime=_nested_datetime,
            nested_date=_nested_date,
            nested_bad=_not_plain,
        )

    def field_reader(self, spec: TypeSpec) -> str | None:
        """The reader of a row field of this spec, where it has one (an optional's inner)."""
        if isinstance(spec, OptionalSpec):
            spec = spec.inner
        if isinstance(spec, ListSpec) and not isinstance(spec, SetSpec):
            if _plain_test(spec.inner, "item") is not None:
                return None  # the row loader reads lists of plain values inline already
        if not isinstance(spec, (RecordSpec, ListSpec, MapSpec)):
            return None
        return self.reader(spec)

    def reader(self, spec: TypeSpec) -> str | None:
        key = id(spec)
        if key in self.made:
            return self.made[key]
        name = f"nested_{len(self.made)}"
        self.made[key] = name  # before the body: a record may hold lists of itself
        if isinstance(spec, RecordSpec):
            body = self._record(spec, name)
        elif isinstance(spec, MapSpec):
            body = self._map(spec)
        elif isinstance(spec, ListSpec):
            body = self._list(spec)
        else:
            body = None
        if body is None:
            self.made[key] = None
            return None
        source = "\n".join(
            [
                f"def {name}(raw, place, depth):",
                "    try:",
                *("        " + line for line in body),
                "    except KeyError:  # an enum element that is no member's value",
                "        raise NotPlain from None",
            ]
        )
        exec(source, self.names)  # noqa: S102 - source built here from the specs
        return name

    def plain(self, spec: TypeSpec, value: str) -> str | None:
        """A test that the raw value is already the element's value (and its JSON fine)."""
        if isinstance(spec, RefSpec):
            spec = spec.key
        kind = type(spec)
        if kind is StrSpec:
            return (
                f"(type({value}) is str and ({value}.isascii() and len({value}) <= MAX_STR "
                f"or long_str({value})))"
            )
        if kind is FloatSpec:  # a float, or an int kept as one (FloatSpec.from_json)
            return (
                f"(type({value}) is float and -INF < {value} < INF "
                f"or type({value}) is int and MIN <= {value} <= MAX)"
            )
        return _plain_test(spec, value)

    def converted(self, spec: TypeSpec, value: str) -> str | None:
        """An expression converting a raw element (raising NotPlain), or None."""
        kind = type(spec)
        if kind is FloatSpec:  # not plain: an int out of range, FloatSpec.from_json's to read
            return "nested_bad()"
        if kind is EnumSpec:
            members = f"members_{id(spec)}"
            self.names[members] = spec.by_value  # type: ignore[attr-defined]
            return f"({members}[{value}] if type({value}) is str else nested_bad())"
        if kind is DateTimeSpec:
            return f"nested_datetime({value}, place, depth + 1)"
        if kind is DateSpec:
            return f"nested_date({value}, place, depth + 1)"
        if isinstance(spec, (RecordSpec, ListSpec, MapSpec)):
            reader = self.reader(spec)
            return None if reader is None else f"{reader}({value}, place, depth + 1)"
        return None

    def _container(self, kind: str) -> list[str]:
        return [
            f"if type(raw) is not {kind} or depth >= MAX_DEPTH or len(raw) > MAX_ITEMS:",
            "    raise NotPlain",
        ]

    def _list(self, spec: ListSpec) -> list[str] | None:
        owned = "OwnedSet" if isinstance(spec, SetSpec) else "Owned"
        lines = self._container("list")
        test = self.plain(spec.inner, "item")
        if test is not None:
            lines += [f"if not all({test} for item in raw):", "    raise NotPlain"]
            lines.append(f"value = {owned}(raw)")
        else:
            element = self.converted(spec.inner, "item")
            if element is None:
                return None
            lines.append(f"value = {owned}([{element} for item in raw])")
        return [*lines, "value._owner = place", "return value"]

    def _map(self, spec: MapSpec) -> list[str] | None:
        key_spec = spec.key.key if isinstance(spec.key, RefSpec) else spec.key
        if type(key_spec) is not StrSpec:
            return None  # numbers and enums as keys: read the reference way
        lines = self._container("dict")
        key_test = self.plain(key_spec, "key")
        lines += [f"if not all({key_test} for key in raw):", "    raise NotPlain"]
        test = self.plain(spec.value, "item")
        if test is not None:
            lines += [f"if not all({test} for item in raw.values()):", "    raise NotPlain"]
            lines.append("value = OwnedDict(raw)")
        else:
            element = self.converted(spec.value, "item")
            if element is None:
                return None
            lines.append(f"value = OwnedDict({{key: {element} for key, item in raw.items()}})")
        return [*lines, "value._owner = place", "return value"]

    def _record(self, spec: RecordSpec, name: str) -> list[str] | None:
        cls: Any = spec.cls
        if not issubclass(cls, Value) or not _plain_init(spec):
            return None  # (only records hold their place; a row is never nested in a value)
        if not all(f.attribute.isidentifier() for f in spec.fields):
            return None
        own = f"{name}_fields"
        self.names[f"{own}_cls"] = cls
        self.names[f"{own}_known"] = frozenset(f.name for f in spec.fields)
        lines = [
            "if type(raw) is not dict or depth >= MAX_DEPTH:",
            "    raise NotPlain",
            "for key in raw:",
            f"    if type(key) is not str or key not in {own}_known:",
            "        raise NotPlain",
            "get = raw.get",
            f"record = new({own}_cls)",
        ]
        defaults = {f.name: f for f in dataclasses.fields(cls)}
        for index, field in enumerate(spec.fields):
            inner = field.spec.inner if isinstance(field.spec, OptionalSpec) else field.spec
            test = self.plain(inner, "item")
            element = self.converted(inner, "item")
            if test is None and element is None:
                return None
            default = _default_maker(defaults.get(field.attribute), field.required)
            lines.append(f"item = get({field.name!r}, M)")
            if default is None:
                lines.append("if item is M: raise NotPlain")
            else:
                self.names[f"{own}_default_{index}"] = default
                lines.append(f"if item is M: item = owned_copy({own}_default_{index}(), place)")
            if isinstance(field.spec, OptionalSpec):
                lines.append("elif item is None: pass")
            if test is not None:
                otherwise = "raise NotPlain" if element is None else f"item = {element}"
                lines.append(f"elif not {test}: {otherwise}")
            else:
                lines.append(f"else: item = {element}")
            lines.append(f"record.{field.attribute} = item")
        return [*lines, "record._owner = place", "return record"]


def _default_maker(
    field: dataclasses.Field[Any] | None, required: bool
) -> Callable[[], Any] | None:
    """What makes a missing field's value (its dataclass default, as from_json gives it),
    None where a missing field is not taken."""
    if required or field is None:
        return None
    if field.default is not dataclasses.MISSING:
        value = field.default
        return lambda: value
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory
    return None


def _slow_reader(
    spec: TypeSpec, required: bool, defaults: dict[str, dataclasses.Field[Any]], field: Any
) -> Callable[[Any], Any]:
    """What a row loader does with a raw value its inline test did not take: a missing field
    gets the dataclass default (Slow where there is none), anything else goes through the
    JSON walk and the spec's own from_json (a BadValue makes the caller start over)."""
    make_default = _default_maker(defaults.get(field.attribute), required)

    def read(raw: Any) -> Any:
        if raw is _MISSING:
            if make_default is None:
                raise Slow
            return make_default()
        if json_problem(raw, depth=_FIELD_DEPTH) is not None:
            raise Slow
        try:
            return spec.from_json(raw, "")
        except BadValue:
            raise Slow from None

    return read
