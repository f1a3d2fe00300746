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
    if not read_tables - whole:
        return []  # nothing this could report: no check reads a table field by field
    # the states between the steps of one replay (the solution succeeded, so they are the
    # states of the solution with the later steps left out), each with the step's arguments
    solved = env_class()
    states: list[tuple[int, dict[str, Any], list[Any]]] = []

    def after_step(index: int) -> None:
        if index in actions:
            states.append((index, solved.state_json(), _leaves(solved.trace[-1].arguments)))

    solved.solve(task.name.text, after_step=after_step)
    initial = env_class()
    initial.reset(task=task.name.text)
    previous = initial.state_json()
    found: list[tuple[int, str, str]] = []
    seen: set[tuple[str, str]] = set()
    for index, current, passed in states:
        for table, name, value in _changed(env_class, previous, current):
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
    return _changed(type(solved), initial.state_json(), solved.state_json())


def _changed(
    env_class: type[Environment], before: dict[str, Any], after: dict[str, Any]
) -> list[tuple[str, str, Any]]:
    changed: list[tuple[str, str, Any]] = []
    for table, spec in env_class.TABLES.items():
        old_rows: dict[str, Any] = before.get(table, {})
        new_rows: dict[str, Any] = after.get(table, {})
        # the schema names the key by its Python attribute (`type_`), state JSON by its name
        key_field = {f.name for f in spec.row.fields if f.attribute == spec.schema.key}
        chosen = {f.name for f in spec.row.fields if f.required} - key_field
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
