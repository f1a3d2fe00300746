"""Tables: the rows of one entity in insertion order, with unique and reference indexes.

Rows are mutable dataclass instances; the environment journals every change it makes here so
that a failed call can be undone in time proportional to what it changed, not to the table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter
from typing import AbstractSet, Any, Generic, Iterable, Iterator, TypeVar

R = TypeVar("R")
Key = Any


@dataclass(frozen=True, slots=True)
class RefField:
    """A top-level `ref` field of a child entity pointing at a parent table."""

    child_table: str
    field: str
    parent_table: str
    on_delete: str  # 'restrict' | 'cascade' | 'none'


@dataclass(frozen=True, slots=True)
class TableSchema:
    name: str
    entity: str
    key: str
    auto_prefix: str | None
    uniques: tuple[tuple[str, ...], ...]  # each a field tuple; one field for `unique`
    refs: tuple[RefField, ...]  # this table's own top-level ref fields
    transitions: dict[str, dict[Any, frozenset[Any]]] = field(default_factory=dict)
    # `immutable` fields whose values can be changed in place (lists, maps, sets, records): the
    # checker rejects writes on a path to them, the runtime those through a fn's parameter
    immutable: frozenset[str] = frozenset()


class Table(Generic[R]):
    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        self._rows: dict[Key, R] = {}
        self._seq: dict[Key, int] = {}
        self._next_seq = 0
        self._out_of_order = False  # set when an undone delete put a row back at the end
        self._auto_counter = 0
        # keys loaded by `fill` whose auto numbers are not counted yet: counted on the first
        # read of auto_counter (an insert), so that a reset that inserts nothing skips it
        self._uncounted_keys: list[Key] | None = None
        # unique fields tuple -> value tuple -> the key of the row holding it, or a set of
        # the keys where several rows do (values with a none, which the rule lets rows
        # share, and duplicates inside a call until the end-of-call check rejects them): a
        # set per row was most of what the index cost to build and to hold. Read through
        # `sharing` and `shared_values`.
        self.unique_index: dict[tuple[str, ...], dict[tuple[Any, ...], Any]] = {
            fields: {} for fields in schema.uniques
        }
        # ref field name -> parent key -> child keys (for delete restrict/cascade/none); None
        # after `fill` until something reads it (a parent row's delete), built then from the
        # rows as they are: most resets never delete a parent row, and a set per parent was
        # 3 ms of a 54 ms load of 10,000 users and 10,000 logs
        self._ref_index: dict[str, dict[Key, set[Key]]] | None = {
            ref.field: {} for ref in schema.refs
        }
        # the fields some index reads: a change of any other field moves nothing
        self.indexed = frozenset(f for fields in schema.uniques for f in fields) | frozenset(
            ref.field for ref in schema.refs
        )

    # ---- reading -------------------------------------------------------------------------
    @property
    def auto_counter(self) -> int:
        """The last number an auto key of this table was made with (or loaded under)."""
        if self._uncounted_keys is not None:
            prefix = self.schema.auto_prefix
            assert prefix is not None  # only set for tables with auto keys
            highest = highest_auto_number(prefix, self._uncounted_keys)
            self._auto_counter = max(self._auto_counter, highest)
            self._uncounted_keys = None
        return self._auto_counter

    @auto_counter.setter
    def auto_counter(self, value: int) -> None:
        self._uncounted_keys = None  # whatever they made it, it is this now
        self._auto_counter = value

    @property
    def ref_index(self) -> dict[str, dict[Key, set[Key]]]:
        """Per ref field, the keys of the rows pointing at each parent."""
        if self._ref_index is None:
            keys = self.keys()
            rows = list(self._rows.values())
            index = {}
            for ref_field in self.schema.refs:
                children = _grouped(map(attrgetter(ref_field.field), rows), keys)
                children.pop(None, None)
                index[ref_field.field] = children
            self._ref_index = index
        return self._ref_index

    def ref_parents(self, ref_field: str) -> AbstractSet[Key]:
        """The parent keys the rows point at through this ref field (not None)."""
        if self._ref_index is not None:
            return self._ref_index[ref_field].keys()
        parents = set(map(attrgetter(ref_field), self._rows.values()))
        parents.discard(None)
        return parents

    def get(self, key: Key) -> R | None:
        return self._rows.get(key)

    def row(self, key: Key) -> R:
        """The row with this key; a missing key fails the call (`t[key]` in the DSL)."""
        row = self._rows.get(key)
        if row is None:
            from envdsl.runtime.errors import Fail

            raise Fail(f"{self.schema.entity} {key!r} not found")
        return row

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def rows(self) -> list[R]:
        """The rows in table order (a snapshot: deleting while looping over it is safe)."""
        self._restore_order()
        return list(self._rows.values())

    def __eq__(self, other: object) -> bool:
        """Two tables are equal when they hold equal rows under the same keys, in order."""
        if not isinstance(other, Table):
            return NotImplemented
        return self.keys() == other.keys() and self.rows() == other.rows()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __iter__(self) -> Iterator[R]:
        return iter(self.rows())

    def keys(self) -> list[Key]:
        self._restore_order()
        return list(self._rows)

    def _restore_order(self) -> None:
        if self._out_of_order:
            ordered = sorted(self._rows, key=self._seq.__getitem__)
            self._rows = {key: self._rows[key] for key in ordered}
            self._out_of_order = False

    # ---- writing (only through Environment, which journals) -------------------------------
    def add(self, key: Key, row: R, seq: int | None = None) -> int:
        if seq is None:
            seq = self._next_seq
            self._next_seq += 1
        elif self._rows:
            # an undone delete puts the row back with its old position; the dict order is
            # repaired lazily by the next read that needs it
            self._out_of_order = True
        self._rows[key] = row
        self._seq[key] = seq
        self.index_row(key, row)
        return seq

    def fill(self, keys: list[Key], rows: list[R], count_auto_keys: bool = True) -> bool:
        """Add rows to an empty table under these keys, in this order, the unique indexes
        built in one pass per index (as `add` row by row would build them, the ref indexes
        when first read); False, with the table left half-filled, when two keys are equal.
        The auto counter continues after the keys of the table's auto form (`LOG-0042`),
        counted when first read where `count_auto_keys` is False (the caller knows every key
        is an ASCII string: nothing in counting them can fail)."""
        count = len(rows)
        self._rows = dict(zip(keys, rows))
        if len(self._rows) != count:
            return False
        self._seq = dict(zip(keys, range(count)))
        self._next_seq = count
        for fields in self.unique_index:
            values = _index_values(fields, rows)
            index = dict(zip(values, keys))
            if len(index) != count:  # values shared by several rows: a set holds them
                index = {
                    value: next(iter(group)) if len(group) == 1 else group
                    for value, group in _grouped(values, keys).items()
                }
            self.unique_index[fields] = index
        if self.schema.refs:
            self._ref_index = None
        prefix = self.schema.auto_prefix
        if prefix is not None:
            if count_auto_keys:
                self._auto_counter = max(self._auto_counter, highest_auto_number(prefix, keys))
            else:
                self._uncounted_keys = keys
        return True

    def holds_all(self, keys: AbstractSet[Key]) -> bool:
        """Whether every one of these keys (a set or a dict's keys) is a row's key."""
        return self._rows.keys() >= keys

    def remove(self, key: Key) -> tuple[R, int]:
        row = self._rows.pop(key)
        seq = self._seq.pop(key)
        self.unindex_row(key, row)
        return row, seq

    def index_row(self, key: Key, row: R) -> None:
        for fields, index in self.unique_index.items():
            _hold(index, tuple(getattr(row, f) for f in fields), key)
        if self._ref_index is None:
            return  # built from the rows when read
        for ref_field, index in self._ref_index.items():
            parent = getattr(row, ref_field)
            if parent is not None:
                index.setdefault(parent, set()).add(key)

    def unindex_row(self, key: Key, row: R) -> None:
        for fields, index in self.unique_index.items():
            _release(index, tuple(getattr(row, f) for f in fields), key)
        if self._ref_index is None:
            return
        for ref_field, index in self._ref_index.items():
            parent = getattr(row, ref_field)
            if parent is not None:
                _discard(index, parent, key)

    def reindex_field(self, key: Key, row: R, field_name: str, old: Any, new: Any) -> None:
        if field_name not in self.indexed:
            return
        for fields, index in self.unique_index.items():
            if field_name in fields:
                before = tuple(old if f == field_name else getattr(row, f) for f in fields)
                after = tuple(new if f == field_name else getattr(row, f) for f in fields)
                _release(index, before, key)
                _hold(index, after, key)
        ref_index = None if self._ref_index is None else self._ref_index.get(field_name)
        if ref_index is not None:
            if old is not None:
                _discard(ref_index, old, key)
            if new is not None:
                ref_index.setdefault(new, set()).add(key)

    def sharing(self, fields: tuple[str, ...], value: tuple[Any, ...]) -> set[Key] | None:
        """The keys of the rows holding this value of these unique fields where several do,
        else None."""
        held = self.unique_index[fields].get(value)
        return held if type(held) is set else None

    def shared_values(self, fields: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """The values of these unique fields that several rows hold."""
        index = self.unique_index[fields]
        if len(index) == len(self._rows):
            return []
        return [value for value, held in index.items() if type(held) is set]

    def children(self, ref_field: str, parent: Key) -> list[Key]:
        keys = self.ref_index.get(ref_field, {}).get(parent, set())
        return sorted(keys, key=self._seq.__getitem__)

    def seq_of(self, key: Key) -> int:
        return self._seq[key]


def _index_values(fields: tuple[str, ...], rows: Iterable[Any]) -> list[tuple[Any, ...]]:
    """The value tuples of these unique fields in these rows."""
    values = map(attrgetter(*fields), rows)
    return list(zip(values) if len(fields) == 1 else values)


_NOBODY: Any = object()  # no row holds the value


def _hold(index: dict[tuple[Any, ...], Any], value: tuple[Any, ...], key: Key) -> None:
    """Index one more row holding `value` (a key alone, a set for several: keys are
    hashable, so never a set)."""
    held = index.get(value, _NOBODY)
    if held is _NOBODY:
        index[value] = key
    elif type(held) is set:
        held.add(key)
    elif held != key:
        index[value] = {held, key}


def _release(index: dict[tuple[Any, ...], Any], value: tuple[Any, ...], key: Key) -> None:
    """Unindex a row holding `value`; a set left with one key is the key again."""
    held = index.get(value, _NOBODY)
    if type(held) is set:
        held.discard(key)
        if len(held) == 1:
            index[value] = next(iter(held))
        elif not held:
            del index[value]
    elif held is not _NOBODY and held == key:
        del index[value]


def highest_auto_number(prefix: str, keys: Iterable[Key]) -> int:
    """The highest number of the keys of a table's auto form (`LOG-0042` -> 42), 0 if none;
    raises ValueError for a key with digits int() does not read (as load_rows does)."""
    start = prefix + "-"
    cut = len(start)
    tails = [key[cut:] for key in keys if type(key) is str and key.startswith(start)]
    return max([int(tail) for tail in tails if tail.isdigit()], default=0)


def _grouped(values: Iterable[Any], keys: list[Key]) -> dict[Any, set[Key]]:
    """value -> the keys of the rows holding it."""
    groups: dict[Any, set[Key]] = {}
    for value, key in zip(values, keys):
        group = groups.get(value)
        if group is None:
            groups[value] = {key}
        else:
            group.add(key)
    return groups


def _discard(index: dict[Any, set[Key]], value: Any, key: Key) -> None:
    keys = index.get(value)
    if keys is not None:
        keys.discard(key)
        if not keys:
            del index[value]
