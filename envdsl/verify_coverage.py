"""Which table fields a task's solution changes that none of its checks reads.

Such a field is under-specified: an agent that writes another value there (the wrong book on
the new loan, the wrong quantity) passes every check. The change is measured on the states
themselves (the initial state against the end of the solution), so a field a tool may write
but the solution leaves as it was is not reported; what the checks read comes from the effect
analysis.
"""

from __future__ import annotations

from typing import Any

from envdsl.runtime import Environment
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec, Effects
from envdsl.syntax import ast


def unchecked_fields(
    checked: CheckedSpec, task: ast.TaskDecl, initial: Environment, solved: Environment
) -> list[tuple[str, str]]:
    """(table, field) pairs the solution changes and no check of the task reads, in table
    and field order. Tables no check reads at all are left to the leave-one-out replay, and
    tables a check compares whole (`users["U1"] == initial.users["U1"]`) count as read."""
    reads: set[str] = set()
    for check in task.checks:
        reads |= checked.effects.get(f"check:{task.name.text}:{check.text.value}", Effects()).reads
    read_tables = {r.split(".", 1)[0] for r in reads}
    whole = _compared_whole(checked, task)
    return [
        (table, name)
        for table, name in changed_fields(initial, solved)
        if table in read_tables and table not in whole and f"{table}.{name}" not in reads
    ]


def changed_fields(initial: Environment, solved: Environment) -> list[tuple[str, str]]:
    """Fields whose value differs between the two states, per table; of an inserted row,
    the fields without a default (what the inserting call had to choose), not its key."""
    before, after = initial.state_json(), solved.state_json()
    changed: list[tuple[str, str]] = []
    for table, spec in solved.TABLES.items():
        old_rows: dict[str, Any] = before.get(table, {})
        new_rows: dict[str, Any] = after.get(table, {})
        chosen = {f.name for f in spec.row.fields if f.required} - {spec.schema.key}
        names: set[str] = set()
        for key, row in new_rows.items():
            old = old_rows.get(key)
            if old is None:
                names |= chosen
            else:
                names |= {name for name, value in row.items() if old.get(name) != value}
        changed += [(table, f.name) for f in spec.row.fields if f.name in names]
    return changed


def _compared_whole(checked: CheckedSpec, task: ast.TaskDecl) -> set[str]:
    """Tables some check compares a whole row of, or the whole table of, with `==`/`!=`."""
    tables_of = {
        info.type.entity: name
        for name, info in checked.state.items()
        if isinstance(info.type, t.TableType)
    }
    whole: set[str] = set()
    for check in task.checks:
        for node in ast.walk(check.cond):
            if not isinstance(node, ast.Compare) or not set(node.ops) <= {"==", "!="}:
                continue
            for operand in node.operands:
                kind = checked.expr_types.get(id(operand))
                if isinstance(kind, t.RecordType) and kind.is_entity and kind.name in tables_of:
                    whole.add(tables_of[kind.name])
                elif isinstance(kind, t.TableType) and kind.entity in tables_of:
                    whole.add(tables_of[kind.entity])
    return whole
