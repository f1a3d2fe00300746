"""Which table fields a task's solution changes that none of its checks reads.

Such a field is under-specified: an agent that writes another value there (the wrong book on
the new loan, the wrong quantity) passes every check. The change is measured on the states
themselves (the initial state against the end of the solution), so a field a tool may write
but the solution leaves as it was is not reported; what the checks read comes from the effect
analysis. Only fields set to a value the solution passes in a call count: those the agent
chooses. A field a tool derives (a timestamp from `now`, a counter) is the tool's business.
"""

from __future__ import annotations

from typing import Any

from envdsl.runtime import Environment
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec, Effects
from envdsl.syntax import ast


def unchecked_fields(
    checked: CheckedSpec, task: ast.TaskDecl, env_class: type[Environment], actions: list[int]
) -> list[tuple[int, str, str]]:
    """(step index, table, field) for each field a state-changing step of the solution sets
    to a value it was passed and no check of the task reads, in step, table and field order.
    Tables no check reads at all are left to the leave-one-out replay, and tables a check
    compares whole (`users["U1"] == initial.users["U1"]`) count as read."""
    assert task.solution is not None
    reads: set[str] = set()
    for check in task.checks:
        reads |= checked.effects.get(f"check:{task.name.text}:{check.text.value}", Effects()).reads
    read_tables = {r.split(".", 1)[0] for r in reads}
    whole = _compared_whole(checked, task)
    steps = len(task.solution)
    found: list[tuple[int, str, str]] = []
    seen: set[tuple[str, str]] = set()
    previous = env_class()
    previous.reset(task=task.name.text)
    for index in range(steps):
        # the state after the first index + 1 steps: the solution with the rest left out
        current = env_class()
        current.solve(task.name.text, leave_out=range(index + 1, steps))
        if index in actions and current.trace:
            passed = _leaves(current.trace[-1].arguments)
            for table, name, value in changed_fields(previous, current):
                if (
                    (table, name) not in seen
                    and table in read_tables
                    and table not in whole
                    and f"{table}.{name}" not in reads
                    and any(value == v and type(value) is type(v) for v in passed)
                ):
                    seen.add((table, name))
                    found.append((index, table, name))
        previous = current
    return found


def changed_fields(initial: Environment, solved: Environment) -> list[tuple[str, str, Any]]:
    """(table, field, a new value as JSON) for each field whose value differs between the
    two states; of an inserted row, the fields without a default (what the inserting call
    had to choose), not its key."""
    before, after = initial.state_json(), solved.state_json()
    changed: list[tuple[str, str, Any]] = []
    for table, spec in solved.TABLES.items():
        old_rows: dict[str, Any] = before.get(table, {})
        new_rows: dict[str, Any] = after.get(table, {})
        chosen = {f.name for f in spec.row.fields if f.required} - {spec.schema.key}
        values: dict[str, Any] = {}
        for key, row in new_rows.items():
            old = old_rows.get(key)
            for name, value in row.items():
                if name in chosen if old is None else old.get(name) != value:
                    values.setdefault(name, value)
        changed += [(table, f.name, values[f.name]) for f in spec.row.fields if f.name in values]
    return changed


def _leaves(value: Any) -> list[Any]:
    """The scalar JSON values inside a call's arguments."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value] if value is not None else []


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
