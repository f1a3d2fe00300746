"""The frame of a task: what a run may change, and the first change outside it.

The footprint of a task is its reference solution's end state against the task's start
state (both canonical JSON, see `Environment.state_json`): per table the rows deleted (by
key), the number of rows inserted, the rows updated and which fields; the scalar state fields
changed; and, for a collection (list, set, map) field, the elements removed and how many were
added. A run fits the frame when every change it made is one the footprint has, or one the
task allows (`allow ...`), or a stamp a tool maintains on a row the footprint changes too
(`updated_at = now`, `version += 1`: see envdsl/semantics/stamps.py).

Rows and elements the run adds are counted, not compared: their content is the checks'
business, and an inserted row's auto key is whatever the counter gave it. Rows and elements
that existed at the start are compared by key and content: removing or editing one the
solution left alone is collateral damage.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping

from envdsl.runtime.values import ListSpec, MapSpec, OptionalSpec, TypeSpec

# the JSON kinds of a field's type that are compared element by element
LIST, MAP = "list", "map"
Kinds = Mapping[str, Mapping[str, str]]  # table (or "" for scalars) -> field -> LIST | MAP


@dataclass(frozen=True)
class Allowance:
    """What a task's `allow` clauses widen its frame by."""

    fields: frozenset[tuple[str, str]] = frozenset()  # (table, field): any row's field
    deletes: frozenset[str] = frozenset()  # tables any row of which may be deleted
    inserts: frozenset[str] = frozenset()  # tables any number of rows may be inserted into
    names: frozenset[str] = frozenset()  # scalar fields, or whole tables, that may change

    @classmethod
    def parse(cls, clauses: tuple[str, ...]) -> Allowance:
        """`clauses` as codegen emits them: "T.f", "delete T", "insert T", "name"."""
        fields, deletes, inserts, names = set(), set(), set(), set()
        for clause in clauses:
            word, _, rest = clause.partition(" ")
            if word == "delete" and rest:
                deletes.add(rest)
            elif word == "insert" and rest:
                inserts.add(rest)
            elif "." in clause:
                table, _, name = clause.partition(".")
                fields.add((table, name))
            else:
                names.add(clause)
        return cls(frozenset(fields), frozenset(deletes), frozenset(inserts), frozenset(names))


@dataclass
class Change:
    """How one place (a row's field, a scalar) differs between two states."""

    removed: Counter[str] = field(default_factory=Counter)  # elements (map: keys) gone
    added: Counter[str] = field(default_factory=Counter)  # elements (map: keys) new
    changed: list[str] = field(default_factory=list)  # map keys whose value changed
    whole: bool = False  # a value that is no collection changed


@dataclass
class Footprint:
    """The reference solution's changes (see the module docstring)."""

    deleted: dict[str, frozenset[str]] = field(default_factory=dict)
    inserted: dict[str, int] = field(default_factory=dict)
    updated: dict[str, dict[str, dict[str, Change]]] = field(default_factory=dict)
    scalars: dict[str, Change] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (
            any(self.deleted.values())
            or any(self.inserted.values())
            or any(self.updated.values())
            or self.scalars
        )

    def describe(self) -> list[str]:
        """One line per change, in state order: what `envdsl verify` shows as the frame."""
        lines: list[str] = []
        for table in sorted({*self.deleted, *self.inserted, *self.updated}):
            for key in sorted(self.deleted.get(table, ())):
                lines.append(f"{_row(table, key)} deleted")
            count = self.inserted.get(table, 0)
            if count:
                lines.append(f"{_rows(count)} inserted into {table}")
            for key, fields in self.updated.get(table, {}).items():
                for name, change in fields.items():
                    lines.append(f"{_row(table, key)}.{name} {_summary(change)}")
        for name, change in sorted(self.scalars.items()):
            lines.append(f"{name} {_summary(change)}")
        return lines

    def as_json(self) -> dict[str, Any]:
        return {
            "deleted": {t: sorted(k) for t, k in self.deleted.items() if k},
            "inserted": {t: n for t, n in self.inserted.items() if n},
            "updated": {
                t: {k: sorted(f) for k, f in rows.items()} for t, rows in self.updated.items()
            },
            "scalars": sorted(self.scalars),
        }


@dataclass(frozen=True)
class TaskReference:
    """What grading knows of a task besides its checks (see Environment.task_reference)."""

    guards: frozenset[int]  # indices of the checks true at the task's start
    start: dict[str, Any]  # the start state, canonical JSON
    start_hash: str  # its state_hash()
    footprint: Footprint | None  # None: no solution to take it from (no frame)
    kinds: dict[str, dict[str, str]]
    allowance: Allowance


def collection_kind(spec: TypeSpec) -> str | None:
    """LIST for a list or set type, MAP for a map type (optional or not), else None."""
    if isinstance(spec, OptionalSpec):
        spec = spec.inner
    if isinstance(spec, ListSpec):  # a SetSpec is one too
        return LIST
    if isinstance(spec, MapSpec):
        return MAP
    return None


def footprint(start: Mapping[str, Any], end: Mapping[str, Any], kinds: Kinds) -> Footprint:
    """The changes from `start` to `end` (canonical JSON states)."""
    result = Footprint()
    for name, before in start.items():
        after = end.get(name, {})
        if name in kinds and name != "":
            deleted, inserted, updated = _table_diff(before, after, kinds[name])
            result.deleted[name] = frozenset(deleted)
            result.inserted[name] = inserted
            if updated:
                result.updated[name] = updated
        elif before != after:
            result.scalars[name] = _change(before, after, kinds.get("", {}).get(name))
    return result


def first_violation(
    start: Mapping[str, Any],
    run: Mapping[str, Any],
    reference: Footprint,
    kinds: Kinds,
    allowance: Allowance,
    stamps: Mapping[str, frozenset[str]],
) -> str | None:
    """The first change of `run` (against `start`) that `reference` does not make and the
    task does not allow, in words (`contacts["C2"].notes changed`); None when it fits."""
    for name in sorted(start):
        before, after = start[name], run.get(name, {})
        if before == after or name in allowance.names:
            continue
        if name not in kinds or name == "":
            stamped = name in stamps.get("", frozenset()) and not reference.is_empty()
            if stamped:
                continue
            change = _change(before, after, kinds.get("", {}).get(name))
            problem = _beyond(name, change, reference.scalars.get(name))
            if problem is not None:
                return problem
            continue
        problem = _table_violation(name, before, after, reference, kinds[name], allowance, stamps)
        if problem is not None:
            return problem
    return None


def _table_violation(
    table: str,
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    reference: Footprint,
    kinds: Mapping[str, str],
    allowance: Allowance,
    stamps: Mapping[str, frozenset[str]],
) -> str | None:
    allowed_deletes = reference.deleted.get(table, frozenset())
    updated = reference.updated.get(table, {})
    stamped = stamps.get(table, frozenset())
    for key, row in before.items():
        now = after.get(key)
        if now is None:
            if key not in allowed_deletes and table not in allowance.deletes:
                return f"{_row(table, key)} deleted"
            continue
        if now == row:
            continue
        touched = updated.get(key, {})
        for name in sorted({*row, *now}):
            old, new = row.get(name), now.get(name)
            if old == new or (table, name) in allowance.fields:
                continue
            if name in stamped and (touched or key in allowed_deletes):
                continue  # a tool keeps it current on a row the solution changes as well
            change = _change(old, new, kinds.get(name))
            problem = _beyond(f"{_row(table, key)}.{name}", change, touched.get(name))
            if problem is not None:
                return problem
    inserted = sum(1 for key in after if key not in before)
    expected = reference.inserted.get(table, 0)
    if inserted > expected and table not in allowance.inserts:
        solution = f"the solution inserts {expected}" if expected else "the solution inserts none"
        return f"{_rows(inserted)} inserted into {table}, {solution}"
    return None


def _beyond(place: str, change: Change, allowed: Change | None) -> str | None:
    """How `change` of `place` goes beyond the solution's change of it (None: it does not)."""
    if allowed is None:
        if change.whole:
            return f"{place} changed"
        allowed = Change()
    elif allowed.whole or change.whole:
        return None  # the solution changes the value itself: the checks judge the new one
    extra_removed = change.removed - allowed.removed
    if extra_removed:
        return f"{place} lost {min(extra_removed)}"
    for key in change.changed:
        if key not in allowed.changed:
            return f"{place}[{key}] changed"
    if sum(change.added.values()) > sum(allowed.added.values()):
        extra_added = change.added - allowed.added
        return f"{place} gained {min(extra_added or change.added)}"
    return None


def _table_diff(
    before: Mapping[str, Any], after: Mapping[str, Any], kinds: Mapping[str, str]
) -> tuple[set[str], int, dict[str, dict[str, Change]]]:
    deleted = {key for key in before if key not in after}
    inserted = sum(1 for key in after if key not in before)
    updated: dict[str, dict[str, Change]] = {}
    for key, row in before.items():
        now = after.get(key)
        if now is None or now == row:
            continue
        updated[key] = {
            name: _change(row.get(name), now.get(name), kinds.get(name))
            for name in sorted({*row, *now})
            if row.get(name) != now.get(name)
        }
    return deleted, inserted, updated


def _change(before: Any, after: Any, kind: str | None) -> Change:
    """The difference of two JSON values of one place, element-wise for collections."""
    if kind == LIST and isinstance(before, list) and isinstance(after, list):
        old, new = Counter(map(_element, before)), Counter(map(_element, after))
        return Change(removed=old - new, added=new - old)
    if kind == MAP and isinstance(before, dict) and isinstance(after, dict):
        return Change(
            removed=Counter(_element(k) for k in before if k not in after),
            added=Counter(_element(k) for k in after if k not in before),
            changed=sorted(_element(k) for k in before if k in after and before[k] != after[k]),
        )
    return Change(whole=True)


def _element(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _row(table: str, key: str) -> str:
    return f"{table}[{json.dumps(key, ensure_ascii=False)}]"


def _rows(count: int) -> str:
    return f"{count} row{'s' if count != 1 else ''}"


def _summary(change: Change) -> str:
    if change.whole:
        return "changed"
    parts = [f"loses {e}" for e in sorted(change.removed.elements())]
    parts += [f"{k} changed" for k in change.changed]
    added = sum(change.added.values())
    if added:
        parts.append(f"gains {added} element{'s' if added != 1 else ''}")
    return ", ".join(parts) or "reordered"
