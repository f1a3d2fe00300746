"""Incremental state hashing: per-row digests kept up to date from the journal.

`state_hash()` is a SHA-256 over the state fields in name order, each one's digest: a scalar's
is its canonical JSON text, a table's a digest of its rows' digests in table order, and a
row's a digest of its canonical JSON value (which holds its key). Rows are digested once and
again only after a journal entry names them (a call that succeeded, an undo), so hashing after
a step costs the rows it changed plus one 16-byte read per row of the tables it changed, not a
serialization of the whole state. `reference_hash` computes the same value from nothing.
"""

from __future__ import annotations

import hashlib
import json
from hashlib import blake2b
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from envdsl.runtime.table import Table
    from envdsl.runtime.values import RecordSpec, TypeSpec

Entry = tuple[Any, ...]
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
# the journal entries (runtime/snapshots.py, undo_entry) that name a row, and those that name
# the place of a collection changed by one element
_ROW_ENTRIES = frozenset(("field", "insert", "delete"))
_PLACE_ENTRIES = frozenset(("grow", "discard", "unput", "reput"))


class StateDigests:
    """The digests of one world's rows, tables and scalars, and which of them are stale."""

    __slots__ = ("rows", "tables", "scalars", "dirty_rows")

    def __init__(self) -> None:
        self.rows: dict[str, dict[Any, bytes]] = {}  # table -> key -> row digest
        self.tables: dict[str, bytes] = {}  # up-to-date table digests
        self.scalars: dict[str, bytes] = {}  # up-to-date scalar texts
        self.dirty_rows: dict[str, set[Any]] = {}  # rows to digest again, per table

    # ---- what changed ------------------------------------------------------------------------
    def note(self, tables: dict[str, Table[Any]], entries: Iterable[Entry]) -> None:
        """Mark what these journal entries wrote as stale (after every call that wrote: a
        row's entry is `row_changed` written out)."""
        digested = self.rows
        for entry in entries:
            kind = entry[0]
            if kind in _ROW_ENTRIES:
                table = entry[1]
                self.tables.pop(table, None)
                if table in digested:
                    dirty = self.dirty_rows.get(table)
                    if dirty is None:
                        self.dirty_rows[table] = {entry[2]}
                    else:
                        dirty.add(entry[2])
            elif kind == "counter":
                continue  # an auto key's counter is no part of the state
            elif kind == "scalar":
                self.scalar_changed(entry[1])
            elif kind in _PLACE_ENTRIES:
                place = entry[1]
                if place.table is None:
                    self.scalar_changed(place.attr)
                else:
                    key = getattr(place.row, tables[place.table].schema.key)
                    self.row_changed(place.table, key)

    def row_changed(self, table: str, key: Any) -> None:
        self.tables.pop(table, None)
        if table in self.rows:
            self.dirty_rows.setdefault(table, set()).add(key)

    def table_changed(self, table: str) -> None:
        """Forget a table's digests (rows were added outside a call)."""
        self.tables.pop(table, None)
        self.rows.pop(table, None)
        self.dirty_rows.pop(table, None)

    def scalar_changed(self, name: str) -> None:
        self.scalars.pop(name, None)

    # ---- the hash ----------------------------------------------------------------------------
    def state_hash(
        self,
        tables: dict[str, Table[Any]],
        row_specs: dict[str, RecordSpec],
        scalars: dict[str, Any],
        scalar_specs: dict[str, TypeSpec],
    ) -> str:
        whole = hashlib.sha256()
        for name in sorted([*tables, *scalars]):
            whole.update(name.encode("utf-8", "surrogatepass") + b"\0")
            if name in tables:
                digest = self.tables.get(name)
                if digest is None:
                    digest = self.tables[name] = self._table_digest(
                        name, tables[name], row_specs[name]
                    )
            else:
                digest = self.scalars.get(name)
                if digest is None:
                    value = scalars[name]
                    data = None if value is None else scalar_specs[name].to_json(value)
                    digest = self.scalars[name] = _text(data)
            whole.update(len(digest).to_bytes(8, "little") + digest)
        return whole.hexdigest()

    def _table_digest(self, name: str, table: Table[Any], spec: RecordSpec) -> bytes:
        known = self.rows.get(name)
        if known is None:  # from nothing: in table order, so the digests join as they are
            digests = self.rows[name] = _row_digests(table.keys(), table.rows(), spec)
            return blake2b(b"".join(digests.values()), digest_size=32).digest()
        digests = known
        for key in self.dirty_rows.pop(name, ()):
            row = table.get(key)
            if row is None:
                digests.pop(key, None)
            else:
                digests[key] = _digest_row(row, spec)
        keys = table.keys()
        if list(digests) != keys:
            # rows inserted in another order than the table's (the dirty keys are a set), a
            # deleted row put back by an undo, a row added without a journal entry naming it:
            # the digests in table order again, so that the next step's join is one C call
            def digest_of(key: Any) -> bytes:
                known_digest = digests.get(key)
                return _digest_row(table.get(key), spec) if known_digest is None else known_digest

            digests = self.rows[name] = {key: digest_of(key) for key in keys}
        return blake2b(b"".join(digests.values()), digest_size=32).digest()


def reference_hash(
    tables: dict[str, Table[Any]],
    row_specs: dict[str, RecordSpec],
    scalars: dict[str, Any],
    scalar_specs: dict[str, TypeSpec],
) -> str:
    """The same hash computed from nothing: what the incremental one must always equal."""
    return StateDigests().state_hash(tables, row_specs, scalars, scalar_specs)


def _text(data: Any) -> bytes:
    try:
        text = _ENCODER.encode(data)
    except ValueError:  # an int past the text-conversion limit (state values never are)
        text = _ENCODER.encode(_hex_ints(data))
    return text.encode("utf-8", "surrogatepass")


def _hex_ints(data: Any) -> Any:
    """The JSON value with every int written in hex, which has no length limit."""
    if type(data) is int:
        return hex(data)
    if isinstance(data, dict):
        return {key: _hex_ints(value) for key, value in data.items()}
    if isinstance(data, list):
        return [_hex_ints(value) for value in data]
    return data


def _row_digests(keys: list[Any], rows: list[Any], spec: RecordSpec) -> dict[Any, bytes]:
    """key -> _row_digest(spec.to_json(row)) for a table's rows, by the record's json_repr
    (the same text, without building the dicts)."""
    write = spec.json_repr()
    try:
        return {
            key: blake2b(write(row).encode(), digest_size=16).digest()
            for key, row in zip(keys, rows)
        }
    except ValueError:  # a lone surrogate (strict UTF-8 refuses it), an int too long for text
        to_json = spec.serializer()
        return {key: _row_digest(to_json(row)) for key, row in zip(keys, rows)}


def _digest_row(row: Any, spec: RecordSpec) -> bytes:
    """_row_digest(spec.to_json(row)), by the record's json_repr."""
    try:
        text = spec.json_repr()(row).encode()
    except ValueError:  # a lone surrogate (strict UTF-8 refuses it), an int too long for text
        return _row_digest(spec.to_json(row))
    return blake2b(text, digest_size=16).digest()


def _row_digest(data: Any) -> bytes:
    """The digest of a row's JSON value (it holds the key) by its repr: as canonical as its
    JSON text (JSON values only, sets already in order) and made in C in one call, which
    JSONEncoder.encode is not."""
    try:
        text = repr(data)
    except ValueError:  # an int past the text-conversion limit (state values never are)
        text = repr(_hex_ints(data))
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
