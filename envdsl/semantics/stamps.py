"""Stamps: fields the tools keep current whatever else a call does, which the frame of a task
(envdsl/runtime/frame.py) lets change on a row the reference solution changes too.

`n.updated_at = now`, `d.version += 1`, `r.helpful_votes += 1`: an agent that reaches a
task's goal through other legitimate calls than the solution's (another tool that edits the
same row, one more call on it) changes such a field where the solution did not, and must not
fail the frame for it. Which fields they are follows from the tools' writes, not from the
task's author: a field is a stamp when every assignment to it in every tool is one of

- `x.f = e` where `e` reads state (a state field such as `now`) and nothing the call was
  given: every name in it is a state field or a constant, at least one a state field;
- `x.f += e` / `x.f -= e` where `e` reads nothing the call was given (a counter step).

A value the agent chooses (a parameter, a local made from one) or a literal (`status =
Status.closed`, the main effect of a tool) is no stamp. Scalar state fields follow the same
rule (`events_seen += 1`).
"""

from __future__ import annotations

from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast

SCALARS = ""  # the key of the scalar state fields in the result


def stamp_fields(checked: CheckedSpec) -> dict[str, frozenset[str]]:
    """table -> its entity's stamp fields, "" -> the scalar ones (only non-empty entries)."""
    verdicts: dict[tuple[str, str], bool] = {}  # (table or "", field) -> every write a stamp
    for tool in checked.env.of_type(ast.ToolDecl):
        local, assigns = _bound_names(tool)
        for node in assigns:
            place = _place(node.target, checked, local)
            if place is not None:
                stamp = _is_stamp(node, checked, local)
                verdicts[place] = verdicts.get(place, True) and stamp
    result: dict[str, set[str]] = {}
    for (table, name), stamp in verdicts.items():
        if stamp:
            result.setdefault(table, set()).add(name)
    return {table: frozenset(names) for table, names in sorted(result.items())}


def _bound_names(tool: ast.ToolDecl) -> tuple[set[str], list[ast.Assign]]:
    """The names a tool binds (parameters, `let`s, loop and comprehension variables): they
    shadow state fields of the same name, and hold what the call was given or made; and its
    assignments, in order (one walk finds both)."""
    names = {p.name.text for p in tool.params}
    assigns: list[ast.Assign] = []
    for node in ast.walk(tool.body):
        if isinstance(node, ast.Assign):
            assigns.append(node)
        elif isinstance(node, ast.Let):
            names.add(node.name.text)
        elif isinstance(node, (ast.For, ast.CompFor)):
            names.update(n.text for n in node.targets)
        elif isinstance(node, ast.Lambda):
            names.update(n.text for n in node.params)
    return names, assigns


def _place(target: ast.Expr, checked: CheckedSpec, local: set[str]) -> tuple[str, str] | None:
    """The (table, field) a row field assignment writes, ("", name) for a scalar state
    field, None for a local or a record's field."""
    if isinstance(target, ast.NameRef):
        shadowed = target.name in local and not target.qualified
        info = checked.state.get(target.name) if not shadowed else None
        if info is not None and not isinstance(info.type, t.TableType):
            return (SCALARS, target.name)
        return None
    if not isinstance(target, ast.Attribute):
        return None
    owner = t.strip_optional(checked.expr_types.get(id(target.obj), t.ERROR))
    entity = owner.entity if isinstance(owner, t.RefType) else None
    if isinstance(owner, t.RecordType) and owner.is_entity:
        entity = owner.name
    record = checked.records.get(entity) if entity is not None else None
    if record is None or record.table is None:
        return None
    return (record.table, target.name.text)


def _is_stamp(assign: ast.Assign, checked: CheckedSpec, local: set[str]) -> bool:
    names = _read_names(assign.value)
    if any(
        (n in local and not qualified) or (n not in checked.state and n not in checked.consts)
        for n, qualified in names
    ):
        return False  # reads a parameter, a local, an enum member: the call's own value
    if assign.op in ("+=", "-="):
        return True
    return any(n in checked.state for n, _ in names)


def _read_names(value: ast.Expr) -> list[tuple[str, bool]]:
    """The names an expression reads as values (a called function's name is none), each
    with whether it is written `state.<name>` (the state field, never a local)."""
    called: set[int] = set()  # a call comes before its function in the walk
    names: list[tuple[str, bool]] = []
    for n in ast.walk(value):
        if isinstance(n, ast.Call):
            called.add(id(n.func))
        elif isinstance(n, ast.NameRef) and id(n) not in called:
            names.append((n.name, n.qualified))
    return names
