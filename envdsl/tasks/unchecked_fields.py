"""Which table fields a task's solution changes that none of its checks reads.

Such a field is under-specified: an agent that writes another value there (the wrong book on
the new loan, the wrong quantity) passes every check. The change is measured on the states
themselves (the initial state against the end of the solution), so a field a tool may write
but the solution leaves as it was is not reported; what the checks read comes from the effect
analysis. Only fields set to a value the solution passes in a call count: those the agent
chooses. A field a tool derives (a timestamp from `now`, a counter) is the tool's business.
Prose (a note or message of four words or more, envdsl.util.prose) is not reported: the agent
words it its own way, and demanding the solution's wording would fail a paraphrase (W5022).
"""

from __future__ import annotations

from typing import Any, Callable

from envdsl.runtime import Environment
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec, Effects
from envdsl.syntax import ast
from envdsl.util.prose import is_prose


class FieldsWatched:
    """What a task's checks read of the tables, for `unchecked_fields`; made before the
    solution's replay, which records the states between its steps only when `needed`."""

    def __init__(self, checked: CheckedSpec, task: ast.TaskDecl) -> None:
        self.reads: set[str] = set()
        for check in task.checks:
            key = f"check:{task.name.text}:{check.text.value}"
            self.reads |= checked.effects.get(key, Effects()).reads
        self.read_tables = {r.split(".", 1)[0] for r in self.reads}
        self.whole = _compared_whole(checked, task)
        # nothing could be reported where no check reads a table field by field
        self.needed = bool(self.read_tables - self.whole)


def solution_states(
    env: Environment, actions: list[int]
) -> tuple[list[Any], Callable[[int], None]]:
    """The states after the state-changing steps of a replay of the solution on `env`, each
    with the step's arguments (the list), filled by the `after_step` callback (the function)
    that `Environment.solve` calls; a replay that succeeds gives the states of the solution
    with the later steps left out."""
    states: list[tuple[int, dict[str, Any], list[Any]]] = []

    def after_step(index: int) -> None:
        if index in actions:
            states.append((index, env.state_json(), _leaves(env.trace[-1].arguments)))

    return states, after_step


def unchecked_fields(
    env_class: type[Environment],
    watched: FieldsWatched,
    initial: dict[str, Any],
    states: list[tuple[int, dict[str, Any], list[Any]]],
) -> list[tuple[int, str, str]]:
    """(step index, table, field) for each field a state-changing step of the solution sets
    to a value it was passed and no check of the task reads, in step, table and field order,
    from the `initial` state (as JSON) and the `states` of a successful replay of the
    solution (solution_states). Tables no check reads at all are left to the leave-one-out
    replay, and tables a check compares whole (`users["U1"] == initial.users["U1"]`) count as
    read."""
    if not watched.needed:
        return []
    reads, read_tables, whole = watched.reads, watched.read_tables, watched.whole
    previous = initial
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
                and not (isinstance(value, str) and is_prose(value))
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
