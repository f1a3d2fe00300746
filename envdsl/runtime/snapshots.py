"""Snapshots as positions in the undo history.

A *world* is one line of states: the tables, scalars and trace an environment works on between
two resets, and the history of the calls that changed them (each call's journal, the entries
`Environment._rollback` undoes). A snapshot is a position in that history and in the trace:
taking one is O(1), and restoring it undoes the journal entries written since, O(writes
since), the same undo a failed call uses, and cuts the trace back to its length.

The history is kept only while a snapshot of the world is alive (a weak set of them): an
environment that never takes one keeps no history. Undoing past a position that a living
snapshot still needs would lose it, so such a snapshot is *materialized* (a deep copy of the
state at its position, taken on the way down) before it is passed; restoring it later copies
that state. A snapshot of another environment (or one that went through pickle, which copies
its world) is restored from a copy of its world, never by sharing one: two environments never
share a mutable value.
"""

from __future__ import annotations

import copy
import weakref
from typing import TYPE_CHECKING, Any

from envdsl.runtime.digests import StateDigests

if TYPE_CHECKING:
    from envdsl.runtime.specs import TraceEntry
    from envdsl.runtime.table import Table

Entry = tuple[Any, ...]


_NO_SNAPSHOTS: frozenset[Any] = frozenset()


class Owner:
    """The identity of an environment, which pickle and deepcopy copy along with it."""

    __slots__ = ("__weakref__",)


class World:
    """The state an environment works on and the journal entries of its successful calls."""

    __slots__ = ("tables", "scalars", "trace", "history", "live", "watched", "owner", "digests")

    def __init__(
        self,
        tables: dict[str, Table[Any]],
        scalars: dict[str, Any],
        trace: list[TraceEntry],
        owner: Owner,
    ) -> None:
        self.tables = tables
        self.scalars = scalars
        self.trace = trace
        self.history: list[Entry] = []
        # the living snapshots of this world: a weak set from the first one taken (making
        # one was a tenth of a new environment's cost, and most worlds never get a snapshot)
        self.live: weakref.WeakSet[Snapshot] | frozenset[Snapshot] = _NO_SNAPSHOTS
        # a snapshot of this world was ever taken: until then no call asks the weak set (its
        # len() is a Python method) whether one lives
        self.watched = False
        self.owner = owner
        self.digests = StateDigests()

    def watch(self, snapshot: Snapshot) -> None:
        """Count a snapshot of this world among the living ones."""
        live = self.live
        if type(live) is frozenset:
            live = self.live = weakref.WeakSet()
        assert isinstance(live, weakref.WeakSet)
        live.add(snapshot)
        self.watched = True

    def record(self, journal: list[Entry]) -> None:
        """Keep a successful call's journal while a snapshot may need to undo it (and mark
        the rows it wrote for the state hash)."""
        self.digests.note(self.tables, journal)
        if self.watched and self.live:
            self.history.extend(journal)
        elif self.history:
            self.history.clear()  # positions restart: no snapshot refers to one

    def undo_to(self, position: int) -> None:
        """Undo the history back to `position`, materializing the living snapshots above it
        as their positions are passed."""
        waiting = sorted((s for s in self.live if s.position > position), key=lambda s: -s.position)
        history = self.history
        while history and len(history) > position:
            while waiting and waiting[0].position >= len(history):
                waiting.pop(0).materialize()
            entry = history.pop()
            undo_entry(self.tables, self.scalars, entry)
            self.digests.note(self.tables, (entry,))
        for snapshot in waiting:  # at the position itself (nothing left to undo above it)
            snapshot.materialize()

    def __getstate__(self) -> dict[str, Any]:
        # the weak set cannot pickle; unpickled snapshots register again (Snapshot.__setstate__)
        skip = ("live", "digests")  # digests are rebuilt on the next state_hash()
        return {name: getattr(self, name) for name in self.__slots__ if name not in skip}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.watched = True  # unless the state says otherwise
        for name, value in state.items():
            setattr(self, name, value)
        self.live = weakref.WeakSet()
        self.digests = StateDigests()

    def __deepcopy__(self, memo: dict[int, Any]) -> World:
        copied = World.__new__(World)
        memo[id(self)] = copied
        copied.__setstate__(copy.deepcopy(self.__getstate__(), memo))
        return copied


class Snapshot:
    """A position in a world's history (or, once materialized, a copy of that state)."""

    __slots__ = ("world", "position", "trace", "trace_length", "task", "copied", "__weakref__")

    def __init__(self, world: World, task: str | None) -> None:
        self.world: World | None = world
        self.position = len(world.history)
        # the trace as the first `trace_length` entries of this list (a failed call changes
        # the trace and not the history); a restore cuts the list only where no living
        # snapshot still needs its entries, and copies the part it needs otherwise
        self.trace = world.trace
        self.trace_length = len(world.trace)
        self.task = task
        # (tables, scalars) once materialized; the world is then no longer needed
        self.copied: tuple[dict[str, Table[Any]], dict[str, Any]] | None = None
        world.watch(self)

    def materialize(self) -> None:
        """Copy the state at this position (the world is at it now) before it is undone."""
        world = self.world
        if world is None:
            return
        if isinstance(world.live, weakref.WeakSet):
            world.live.discard(self)
        self.copied = copy.deepcopy((world.tables, world.scalars))
        self.trace = self.trace[: self.trace_length]  # the list may be cut from now on
        self.world = None

    def world_for(self, owner: Owner) -> World:
        """The world to continue in after restoring this snapshot into `owner`'s environment:
        its own world undone to the position, or a fresh copy (another environment's
        snapshot, a materialized one)."""
        world = self.world
        if world is not None and world.owner is owner:
            world.undo_to(self.position)
            if self.trace is world.trace and not any(
                other.trace is self.trace and other.trace_length > self.trace_length
                for other in world.live
            ):
                del world.trace[self.trace_length :]  # O(calls since)
            else:
                world.trace = self.trace[: self.trace_length]
            return world
        # another environment's (undo a copy, not theirs) or a materialized one: copies, and
        # of the trace entries too, so that no mutable value is shared
        trace = copy.deepcopy(self.trace[: self.trace_length])
        if world is not None:
            world = copy.deepcopy(world)
            world.owner = owner
            world.undo_to(self.position)
        else:
            assert self.copied is not None
            tables, scalars = copy.deepcopy(self.copied)
            world = World(tables, scalars, [], owner)
        world.trace = trace
        return world

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__ if name != "__weakref__"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        if self.world is not None:
            self.world.watch(self)


def undo_entry(tables: dict[str, Table[Any]], scalars: dict[str, Any], entry: Entry) -> None:
    """Undo one journal entry (the state must be as the entry's write left it)."""
    kind = entry[0]
    if kind == "field":
        _, table_name, key, row, field_name, old = entry
        table = tables[table_name]
        if field_name in table.indexed and table.get(key) is row:
            table.reindex_field(key, row, field_name, getattr(row, field_name), old)
        setattr(row, field_name, old)
    elif kind == "insert":
        tables[entry[1]].remove(entry[2])
    elif kind == "delete":
        _, table_name, key, row, seq = entry
        tables[table_name].add(key, row, seq)
    elif kind == "scalar":
        scalars[entry[1]] = entry[2]
    elif kind == "counter":
        tables[entry[1]].auto_counter = entry[2]
    elif kind == "grow":
        _, place, length = entry
        current = scalars[place.attr] if place.table is None else getattr(place.row, place.attr)
        # what the place holds now: an undone write may have put back a copy of the list
        del current[length:]
    elif kind == "discard":  # an element `s.add(x)` put in
        _, place, element = entry
        current = scalars[place.attr] if place.table is None else getattr(place.row, place.attr)
        current.discard(element)
    elif kind == "unput":  # a key `m[k] = v` added
        _, place, key = entry
        current = scalars[place.attr] if place.table is None else getattr(place.row, place.attr)
        current.pop(key, None)
    elif kind == "reput":  # a key `m[k] = v` replaced
        _, place, key, old = entry
        current = scalars[place.attr] if place.table is None else getattr(place.row, place.attr)
        current[key] = old
