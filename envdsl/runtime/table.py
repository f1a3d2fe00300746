"""Tables: the rows of one entity in insertion order, with unique and reference indexes.

Rows are mutable dataclass instances; the environment journals every change it makes here so
that a failed call can be undone in time proportional to what it changed, not to the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import groupby
from operator import attrgetter
from typing import AbstractSet, Any, Callable, Generic, Iterable, Iterator, TypeVar

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
    # the fields some index reads (a change of any other field moves nothing): made once per
    # schema, not per Table, since every reset makes each table afresh
    indexed: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        indexed = frozenset(f for fields in self.uniques for f in fields)
        object.__setattr__(self, "indexed", indexed | {ref.field for ref in self.refs})


class Table(Generic[R]):
    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        self._rows: dict[Key, R] = {}
        self._seq: dict[Key, int] = {}
        self._next_seq = 0
        self._out_of_order = False  # set when an undone delete put a row back at the end
        self.auto_counter = 0
        # unique fields tuple -> value -> the key of the row holding it, or a set of the keys
        # where several rows do (values with a none, which the rule lets rows share, and
        # duplicates inside a call until the end-of-call check rejects them): a set per row
        # was most of what the index cost to build and to hold. The value is a field's own
        # for a one-field unique (a tuple of one per row was a third of a load's index), a
        # tuple of them for several: what attrgetter(*fields) gives. Read through `sharing`
        # and `shared_values`, which take and give tuples.
        self.unique_index: dict[tuple[str, ...], dict[Any, Any]] = (
            {fields: {} for fields in schema.uniques} if schema.uniques else {}
        )
        # ref field name -> parent key -> the key of its one child row, or a set of the keys
        # where several rows point at it (for delete restrict/cascade/none): held as the unique
        # index holds its values, since a set per parent was most of what the index cost to
        # build at a load (4 of 8 ms of a 10,000-row table's fill). Read through `children`.
        self.ref_index: dict[str, dict[Key, Any]] = (
            {ref.field: {} for ref in schema.refs} if schema.refs else {}
        )
        self.indexed = schema.indexed

    # ---- reading -------------------------------------------------------------------------
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

    def fill(self, keys: list[Key], rows: list[R]) -> bool:
        """Add rows to an empty table under these keys, in this order, the indexes built in
        one pass per index (as `add` row by row would build them), the auto counter past the
        keys of the table's auto form (`LOG-0042`); False, with the table left half-filled,
        when two keys are equal. (The indexes and the counter are built here, not when first
        used: a tool call's cost must not depend on the size of the state it was loaded
        with.)"""
        count = len(rows)
        self._rows = dict(zip(keys, rows))
        if len(self._rows) != count:
            return False
        self._seq = dict(zip(keys, range(count)))
        self._next_seq = count
        for fields in self.unique_index:
            values = list(map(attrgetter(*fields), rows))
            index = dict(zip(values, keys))
            if len(index) != count:  # values shared by several rows: a set holds them
                index = {
                    value: next(iter(group)) if len(group) == 1 else group
                    for value, group in _grouped(values, keys).items()
                }
            self.unique_index[fields] = index
        for ref_field in self.ref_index:
            parents = list(map(attrgetter(ref_field), rows))
            children = dict(zip(parents, keys))
            if len(children) != count:  # parents with several children: a set holds them
                children = {
                    parent: next(iter(group)) if len(group) == 1 else group
                    for parent, group in _grouped(parents, keys).items()
                }
            children.pop(None, None)
            self.ref_index[ref_field] = children
        prefix = self.schema.auto_prefix
        if prefix is not None:
            self.auto_counter = max(self.auto_counter, highest_auto_number(prefix, keys))
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
            _hold(index, _indexed_value(fields, row), key)
        for ref_field, index in self.ref_index.items():
            parent = getattr(row, ref_field)
            if parent is not None:
                _hold(index, parent, key)

    def unindex_row(self, key: Key, row: R) -> None:
        for fields, index in self.unique_index.items():
            _release(index, _indexed_value(fields, row), key)
        for ref_field, index in self.ref_index.items():
            parent = getattr(row, ref_field)
            if parent is not None:
                _release(index, parent, key)

    def reindex_field(self, key: Key, row: R, field_name: str, old: Any, new: Any) -> None:
        if field_name not in self.indexed:
            return
        for fields, index in self.unique_index.items():
            if len(fields) == 1:
                if fields[0] == field_name:
                    _release(index, old, key)
                    _hold(index, new, key)
            elif field_name in fields:
                before = tuple(old if f == field_name else getattr(row, f) for f in fields)
                after = tuple(new if f == field_name else getattr(row, f) for f in fields)
                _release(index, before, key)
                _hold(index, after, key)
        ref_index = self.ref_index.get(field_name)
        if ref_index is not None:
            if old is not None:
                _release(ref_index, old, key)
            if new is not None:
                _hold(ref_index, new, key)

    def sharing(self, fields: tuple[str, ...], value: tuple[Any, ...]) -> set[Key] | None:
        """The keys of the rows holding this value of these unique fields where several do,
        else None."""
        held = self.unique_index[fields].get(value[0] if len(fields) == 1 else value)
        return held if type(held) is set else None

    def shared_values(self, fields: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """The values of these unique fields that several rows hold."""
        index = self.unique_index[fields]
        if len(index) == len(self._rows):
            return []
        shared = [value for value, held in index.items() if type(held) is set]
        return [(value,) for value in shared] if len(fields) == 1 else shared

    def children(self, ref_field: str, parent: Key) -> list[Key]:
        """The keys of the rows whose `ref_field` points at `parent`, in table order."""
        held = self.ref_index.get(ref_field, {}).get(parent, _NOBODY)
        if held is _NOBODY:
            return []
        if type(held) is not set:
            return [held]
        return sorted(held, key=self._seq.__getitem__)

    def seq_of(self, key: Key) -> int:
        return self._seq[key]


def _indexed_value(fields: tuple[str, ...], row: Any) -> Any:
    """A row's value in the index of these unique fields (see Table.unique_index)."""
    if len(fields) == 1:
        return getattr(row, fields[0])
    return tuple(getattr(row, f) for f in fields)


_NOBODY: Any = object()  # no row holds the value


def _hold(index: dict[Any, Any], value: Any, key: Key) -> None:
    """Index one more row holding `value` (a key alone, a set for several: keys are
    hashable, so never a set): a unique index's value tuple, or a ref index's parent key."""
    held = index.get(value, _NOBODY)
    if held is _NOBODY:
        index[value] = key
    elif type(held) is set:
        held.add(key)
    elif held != key:
        index[value] = {held, key}


def _release(index: dict[Any, Any], value: Any, key: Key) -> None:
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
    """The highest number of the keys of a table's auto form (`LOG-0042` -> 42), 0 if none:
    where a table's auto counter starts after rows are loaded, so that the first insert does
    not probe every loaded key. Raises ValueError for a key with digits int() does not read."""
    start = prefix + "-"
    keys = keys if type(keys) is list else list(keys)
    if set(map(type, keys)) <= _STR_ONLY:
        # the common case in C loops, where the keys are ASCII without a line break: the
        # keys as lines
        text = "\n".join(keys)
        count = len(keys)
        if text.isascii() and text.count("\n") == count - 1:
            # the commonest case, keys the counter made (`LOG-0001`... `LOG-10000`...): runs
            # of keys of one width, each key `start` and ASCII digits, so that in each run the
            # largest key in text order holds its largest number (a regex over every line,
            # below, was a tenth of a 10,000-row load)
            width = len(keys[0]) if keys else 0
            if len(text) == count * (width + 1) - 1 and text[width :: width + 1] == "\n" * (
                count - 1
            ):  # every key as wide as the first (each line break where that makes it)
                if _counter_made(start, text, width, count):
                    return int(max(keys)[len(start) :])
            else:
                runs = [list(run) for _, run in groupby(keys, len)]
                if len(runs) <= _WIDTH_RUNS and all(
                    _counter_made(start, "\n".join(run), len(run[0]), len(run)) for run in runs
                ):
                    return max([int(max(run)[len(start) :]) for run in runs])
            # one regex pass over the lines (on ASCII, [0-9] is what isdigit takes), and
            # where the numbers have one width, the largest in text order is the largest
            numbers = _numbered(start)(text)
            if len(set(map(len, numbers))) == 1:
                return int(max(numbers))
            return max(map(int, numbers), default=0)
    cut = len(start)
    tails = [key[cut:] for key in keys if isinstance(key, str) and key.startswith(start)]
    return max([int(tail) for tail in tails if tail.isdigit()], default=0)


_STR_ONLY = {str}
_WIDTH_RUNS = 8  # runs of keys of one width read apart (more: the regex)


def _counter_made(start: str, text: str, width: int, count: int) -> bool:
    """Whether each of `count` ASCII keys of this width, joined by line breaks into `text`,
    is `start` and ASCII digits: the characters of each position are a slice of the text."""
    if width <= len(start):
        return False
    step = width + 1
    return all(text[at::step] == char * count for at, char in enumerate(start)) and all(
        text[at::step].isdigit() for at in range(len(start), width)
    )


@lru_cache(maxsize=64)
def _numbered(start: str) -> Callable[[str], list[str]]:
    """The numbers of the lines `<start><digits>` of a text, as strings."""
    return re.compile("^" + re.escape(start) + "([0-9]+)$", re.MULTILINE).findall


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
