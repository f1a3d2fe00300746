"""The data a generated environment class declares about itself (its tools, tables, scalars
and tasks) and the trace it keeps: shared by the Environment class and the library modules it
calls, so none of them imports the class for its types."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from envdsl.runtime.load_support import RowLoader
from envdsl.runtime.table import TableSchema
from envdsl.runtime.values import RecordSpec, TypeSpec

Result = dict[str, Any]
INSERTED: dict[str, Any] = {}  # marks a row inserted by the current call (no old values)


@dataclass(frozen=True, slots=True)
class ParamSpec:
    name: str  # the JSON name
    spec: TypeSpec
    required: bool
    default: Callable[[], Any] | None = None
    description: str | None = None
    attr: str = ""  # the Python parameter name when mangled

    @property
    def attribute(self) -> str:
        return self.attr or self.name


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    kind: str  # 'query' | 'action'
    description: str
    params: tuple[ParamSpec, ...]
    result: TypeSpec
    impl: str  # the method holding the body
    # env invariants (method names) that can be affected by this tool's writes
    env_invariants: tuple[str, ...] = ()
    # row invariants that read other tables this tool writes: re-checked on every row
    full_row_invariants: tuple[tuple[str, str], ...] = ()  # (table, method)
    # env invariants `all(P(x) for x in table)` this tool can only affect through the rows it
    # touches: checked on those rows alone, (table, per-row method, env invariant method)
    row_env_invariants: tuple[tuple[str, str, str], ...] = ()
    # the class method that turns a typed call's Python values into the JSON arguments,
    # written out by the compiler ('' for none: the plan interprets its typed_params)
    json_arguments: str = ""
    # the method running the tool's whole call, written out by the compiler (codegen/
    # tool_calls.py; '' for none: every call takes the reference path, `_invoke`)
    call: str = ""


@dataclass(frozen=True, slots=True)
class ScalarSpec:
    name: str
    spec: TypeSpec
    default: Callable[[], Any] | None = None


@dataclass(frozen=True, slots=True)
class TableSpec:
    schema: TableSchema
    row: RecordSpec
    # tables that refs inside this entity's records and collections point at (such refs are
    # checked by walking the row; deleting from such a table scans this one)
    nested_parents: tuple[str, ...] = ()
    # the bulk loaders the compiler wrote for its rows (codegen/loaders.py); a table without
    # them (a hand-written environment's) is loaded the reference way
    loader: RowLoader | None = None


@dataclass(frozen=True, slots=True)
class TaskSpec:
    name: str
    instruction: str
    init: str | None  # method that loads the initial state, or None for an init file
    init_data: str | None  # the JSON text of an `init from` file, embedded at compile time
    solve: str | None  # method that replays the solution
    checks: tuple[tuple[str, str], ...]  # (text, method)
    answer: str | None = None  # the reference answer the solution states (`answer "..."`)
    # the task's `allow` clauses ("T.f", "delete T", "insert T", "name"): see runtime/frame.py
    allow: tuple[str, ...] = ()
    # methods that replay the task's `counterexample { ... }` runs (verification replays them)
    counterexamples: tuple[str, ...] = ()


@dataclass(slots=True)
class TraceEntry:
    name: str
    arguments: dict[str, Any]
    success: bool
    error: str | None = None
