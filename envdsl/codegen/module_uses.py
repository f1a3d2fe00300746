"""Which declarations of imported modules (std.time, ...) a spec uses, so that the generated
module holds only those: a spec that imports std.time and calls `overlaps` gets `overlaps`,
not the module's every enum, record and fn.

A declaration is used when a name that the spec's own declarations (tools, fns, invariants,
tasks, types) write refers to it, or one used declaration's does. Names are taken as written,
so a local that shadows a module fn keeps the fn: too much is emitted, never too little.
"""

from __future__ import annotations

from typing import Any, Iterable

from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast


def used_module_names(checked: CheckedSpec) -> set[str]:
    """The names of module-declared enums, records and fns that the spec reaches."""
    declared: dict[str, Any] = {}  # module declaration name -> its AST node
    for enum in checked.enums.values():
        if enum.module is not None:
            declared[enum.name] = enum.decl
    for record in checked.records.values():
        if record.module is not None:
            declared[record.name] = record.decl
    for info in checked.callables.values():
        if info.module is not None:
            declared[info.name] = info.decl
    used: set[str] = set()
    if not declared:  # the spec imports no module, or nothing from one: nothing to walk
        return used
    pending = [name for name in _names_in(checked.env) if name in declared]
    while pending:
        name = pending.pop()
        if name in used:
            continue
        used.add(name)
        pending.extend(n for n in _names_in(declared[name]) if n in declared and n not in used)
    return used


def _names_in(root: Any) -> Iterable[str]:
    """Every name a node's subtree refers to: names read or called, and type names."""
    for current in ast.walk(root):  # (the AST's classes have no fields but their own)
        kind = current.__class__
        if kind is ast.NameRef:
            yield current.name  # type: ignore[attr-defined]
        elif kind is ast.NamedType:
            yield current.name.text  # type: ignore[attr-defined]
