"""Which declarations of imported modules (std.time, ...) a spec uses, so that the generated
module holds only those: a spec that imports std.time and calls `overlaps` gets `overlaps`,
not the module's every enum, record and fn.

A declaration is used when a name that the spec's own declarations (tools, fns, invariants,
tasks, types) write refers to it, or one used declaration's does. Names are taken as written,
so a local that shadows a module fn keeps the fn: too much is emitted, never too little.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast
from envdsl.util.source import Span


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
    stack = [root]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.NameRef):
            yield current.name
        elif isinstance(current, ast.NamedType):
            yield current.name.text
        elif isinstance(current, Span):
            continue
        elif isinstance(current, (list, tuple)):
            stack.extend(current)
        elif dataclasses.is_dataclass(current) and not isinstance(current, type):
            stack.extend(getattr(current, f.name) for f in dataclasses.fields(current))
