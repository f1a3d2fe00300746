"""Lexical scopes of tool and fn bodies, with flow-narrowing facts (`x != none`)."""

from __future__ import annotations

from dataclasses import field

from envdsl.semantics.model import Effects, Local, RecordInfo
from envdsl.semantics.types import Type
from envdsl.syntax import ast
from envdsl.util.frozen_node import record
from envdsl.util.source import Span


@record
class Scope:
    parent: Scope | None = None
    locals: dict[str, Local] = field(default_factory=dict)
    # path ('x', 'x.f') -> the type it has in this scope after a `!= none` test, or None
    # where an assignment in this scope invalidated what an outer scope knew
    narrowed: dict[str, Type | None] = field(default_factory=dict)

    def child(self) -> Scope:
        return Scope(self)

    def lookup(self, name: str) -> Local | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.locals:
                return scope.locals[name]
            scope = scope.parent
        return None

    def narrowed_type(self, path: str) -> Type | None:
        scope: Scope | None = self
        while scope is not None:
            if path in scope.narrowed:
                return scope.narrowed[path]
            scope = scope.parent
        return None

    def without_narrowing(self, path: str) -> Scope:
        """A child scope in which `path` (as `x` and as `state.x`) has its declared type."""
        bare = path.removeprefix("state.")
        return Scope(self, narrowed={bare: None, f"state.{bare}": None})

    def forget(self, path: str) -> None:
        """An assignment to `path` invalidates what was known about it and below it: about
        `x` and `state.x` both, which are one place where no local is named x."""
        bare = path.removeprefix("state.")
        for written in (bare, f"state.{bare}"):
            scope: Scope | None = self
            while scope is not None:
                for known in list(scope.narrowed):
                    if known == written or known.startswith(written + "."):
                        scope.narrowed[known] = None
                scope = scope.parent
            self.narrowed[written] = None

    def all_names(self) -> list[str]:
        names: list[str] = []
        scope: Scope | None = self
        while scope is not None:
            names.extend(scope.locals)
            scope = scope.parent
        return names


@record
class Context:
    """Where a body or expression is checked, and what it may do."""

    kind: str  # query action fn row_invariant env_invariant check default const init solution
    owner: str  # the declaration's name, for messages and the effect summary
    effects: Effects
    result: Type | None = None  # the declared result of a tool or fn
    row: RecordInfo | None = None  # the row whose fields are in scope (row invariants)
    loop_depth: int = 0

    @property
    def can_write(self) -> bool:
        return self.kind == "action"

    @property
    def sees_state(self) -> bool:
        return self.kind not in ("default", "const", "init")

    @property
    def describe(self) -> str:
        return {
            "query": f"query '{self.owner}'",
            "action": f"action '{self.owner}'",
            "fn": f"fn '{self.owner}'",
            "row_invariant": "a row invariant",
            "env_invariant": "an invariant",
            "check": "a check",
            "default": "a default value",
            "const": "a constant",
            "init": "a task's init",
            "solution": "a solution",
        }.get(self.kind, self.kind)


def local_of(scope: Scope, ref: ast.NameRef) -> Local | None:
    """The local (or parameter) `ref` names; none for `state.<name>`, the state field."""
    return None if ref.qualified else scope.lookup(ref.name)


def path_of(expr: ast.Expr) -> str | None:
    """'x' for a name, 'x.f.g' for a field path, 'state.x' for `state.x`; None for anything
    else."""
    if isinstance(expr, ast.NameRef):
        return f"state.{expr.name}" if expr.qualified else expr.name
    if isinstance(expr, ast.Attribute):
        base = path_of(expr.obj)
        return f"{base}.{expr.name.text}" if base is not None else None
    return None
