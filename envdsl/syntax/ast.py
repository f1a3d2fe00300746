"""The typed AST: frozen dataclasses, every node carrying the span of the source it came from.

The builder (build.py) is the only producer; the semantic stages only read it.  Nodes hold
plain data, never lark objects, so later stages do not depend on the parser.
"""

from __future__ import annotations

from dataclasses import field
from operator import attrgetter
from typing import Any, Callable, Iterator, TypeVar, Union

from envdsl.util.frozen_node import node
from envdsl.util.source import Span

DeclT = TypeVar("DeclT")


@node
class Name:
    """An identifier as written, with its span (for carets and rename fixes)."""

    text: str
    span: Span


# ---- type expressions ----------------------------------------------------------------------


@node
class NamedType:
    name: Name
    span: Span


@node
class GenericType:
    name: Name
    args: tuple[TypeExpr, ...]
    span: Span


@node
class RefType:
    entity: Name
    span: Span


@node
class OptionalType:
    inner: TypeExpr
    span: Span


TypeExpr = Union[NamedType, GenericType, RefType, OptionalType]


# ---- expressions ---------------------------------------------------------------------------


@node
class IntLit:
    value: int
    span: Span


@node
class FloatLit:
    value: float
    span: Span


@node
class StrLit:
    value: str
    span: Span


@node
class BoolLit:
    value: bool
    span: Span


@node
class NoneLit:
    span: Span


@node
class FStringPart:
    """One `{expr}` or `{expr:spec}` hole of an f-string."""

    expr: Expr
    format_spec: str | None
    span: Span


@node
class FString:
    parts: tuple[str | FStringPart, ...]
    span: Span


@node
class NameRef:
    name: str
    span: Span
    # written `state.<name>`: the state field, even where a parameter or local is named so
    qualified: bool = False

    @property
    def name_span(self) -> Span:
        """The span of the name alone (`flights` of `state.flights`), for rename edits."""
        return Span(self.span.file, self.span.end - len(self.name), self.span.end)


@node
class Attribute:
    obj: Expr
    name: Name
    span: Span


@node
class KeywordArg:
    name: Name
    value: Expr
    span: Span


@node
class Call:
    func: Expr
    args: tuple[Expr, ...]
    kwargs: tuple[KeywordArg, ...]
    span: Span


@node
class Index:
    obj: Expr
    index: Expr
    span: Span


@node
class Slice:
    obj: Expr
    lower: Expr | None
    upper: Expr | None
    span: Span


@node
class Unary:
    op: str  # '-' or '+'
    operand: Expr
    span: Span


@node
class Binary:
    op: str  # + - * / // % **
    left: Expr
    right: Expr
    span: Span


@node
class BoolOp:
    op: str  # 'and' or 'or'
    left: Expr
    right: Expr
    span: Span


@node
class Not:
    operand: Expr
    span: Span


@node
class Compare:
    """A comparison chain `a < b <= c`: operands[i] ops[i] operands[i+1]."""

    operands: tuple[Expr, ...]
    ops: tuple[str, ...]  # == != < <= > >= in 'not in' is 'is not'
    span: Span


@node
class Conditional:
    body: Expr
    test: Expr
    orelse: Expr
    span: Span


@node
class Lambda:
    params: tuple[Name, ...]
    body: Expr
    span: Span


@node
class ListLit:
    items: tuple[Expr, ...]
    span: Span


@node
class SetLit:
    items: tuple[Expr, ...]
    span: Span


@node
class MapEntry:
    key: Expr
    value: Expr
    span: Span


@node
class MapLit:
    entries: tuple[MapEntry, ...]
    span: Span


@node
class CompFor:
    targets: tuple[Name, ...]
    iterable: Expr
    span: Span


@node
class CompIf:
    cond: Expr
    span: Span


@node
class Comprehension:
    """`[e for ...]`, `{e for ...}`, `{k: v for ...}` or a generator argument `f(e for ...)`."""

    kind: str  # 'list' | 'set' | 'map' | 'gen'
    element: Expr  # the key for a map comprehension
    value: Expr | None  # the value for a map comprehension
    clauses: tuple[CompFor | CompIf, ...]
    span: Span


Expr = Union[
    IntLit,
    FloatLit,
    StrLit,
    BoolLit,
    NoneLit,
    FString,
    NameRef,
    Attribute,
    Call,
    Index,
    Slice,
    Unary,
    Binary,
    BoolOp,
    Not,
    Compare,
    Conditional,
    Lambda,
    ListLit,
    SetLit,
    MapLit,
    Comprehension,
]


# ---- statements ----------------------------------------------------------------------------


@node
class Block:
    stmts: tuple[Stmt, ...]
    span: Span


@node
class Let:
    name: Name
    type: TypeExpr | None
    value: Expr
    else_message: Expr | None  # let-else: unwrap an optional or fail with this message
    span: Span


@node
class Assign:
    target: Expr  # NameRef, Attribute or Index (checked by the builder)
    op: str  # '=' '+=' '-='
    value: Expr
    span: Span


@node
class Require:
    cond: Expr
    message: Expr
    span: Span


@node
class Fail:
    message: Expr
    span: Span


@node
class Return:
    value: Expr | None
    span: Span


@node
class IfBranch:
    cond: Expr
    body: Block
    span: Span


@node
class If:
    branches: tuple[IfBranch, ...]  # the `if` and each `elif`
    orelse: Block | None
    span: Span


@node
class For:
    targets: tuple[Name, ...]
    iterable: Expr
    body: Block
    span: Span


@node
class Break:
    span: Span


@node
class Continue:
    span: Span


@node
class ExprStmt:
    expr: Expr
    span: Span


Stmt = Union[Let, Assign, Require, Fail, Return, If, For, Break, Continue, ExprStmt]


# ---- declarations --------------------------------------------------------------------------


@node
class Text:
    """A string written in the spec (docstring, invariant or check text), with its span."""

    value: str
    span: Span


@node
class Import:
    path: tuple[Name, ...]
    span: Span

    @property
    def dotted(self) -> str:
        return ".".join(part.text for part in self.path)


@node
class EnumMember:
    name: Name
    json_value: Text | None
    span: Span


@node
class EnumDecl:
    name: Name
    members: tuple[EnumMember, ...]
    doc: Text | None
    span: Span


@node
class Transition:
    source: Name
    target: Name
    span: Span


@node
class FieldDecl:
    name: Name
    type: TypeExpr
    is_key: bool
    unique: bool
    doc: Text | None
    on_delete: Name | None  # 'cascade', 'none' or 'restrict'
    default: Expr | None
    transitions: tuple[Transition, ...] | None  # None when the field has no transitions clause
    span: Span
    immutable: bool = False  # set when the row is inserted, never changed afterwards


@node
class RowInvariant:
    text: Text
    cond: Expr
    span: Span


@node
class UniqueDecl:
    fields: tuple[Name, ...]
    span: Span


@node
class RecordDecl:
    """A record (value type) or, with is_entity, an entity (a row type living in a table)."""

    name: Name
    is_entity: bool
    fields: tuple[FieldDecl, ...]
    invariants: tuple[RowInvariant, ...]
    uniques: tuple[UniqueDecl, ...]
    doc: Text | None
    span: Span
    json_tag: Text | None = None  # a variant case's `= "json value"` (its tag in JSON)


@node
class VariantDecl:
    """A tagged union: `variant PaymentMethod by source { gift_card { ... } ... }`. Each case is
    a record (is_entity False) named by the case; its JSON carries the tag field `tag`."""

    name: Name
    tag: Name
    cases: tuple[RecordDecl, ...]
    doc: Text | None
    span: Span


@node
class TableType:
    entity: Name
    span: Span


@node
class StateField:
    name: Name
    type: TypeExpr | TableType
    doc: Text | None
    default: Expr | None
    span: Span


@node
class StateDecl:
    fields: tuple[StateField, ...]
    span: Span


@node
class InvariantDecl:
    text: Text
    cond: Expr
    span: Span


@node
class ConstDecl:
    name: Name
    type: TypeExpr
    value: Expr
    span: Span


@node
class Param:
    name: Name
    type: TypeExpr
    doc: Text | None
    default: Expr | None
    span: Span


@node
class FnDecl:
    name: Name
    params: tuple[Param, ...]
    result: TypeExpr
    body: Expr | Block
    span: Span


@node
class ToolDecl:
    name: Name
    kind: str  # 'query' | 'action'
    internal: bool
    params: tuple[Param, ...]
    result: TypeExpr | None
    body: Block
    doc: Text | None
    span: Span


@node
class InitAssign:
    name: Name
    value: Expr
    span: Span


@node
class InitBlock:
    assigns: tuple[InitAssign, ...]
    span: Span


@node
class InitFrom:
    path: Text
    span: Span


@node
class SolutionStep:
    bind: Name | None
    call: Call
    span: Span


@node
class Check:
    text: Text
    cond: Expr
    span: Span


@node
class Allow:
    """One target of an `allow` clause: what the task's frame lets a run change beyond the
    solution's footprint."""

    kind: str  # 'field' (T.f) | 'delete' (delete T) | 'insert' (insert T) | 'name' (T or a scalar)
    table: Name  # the table or scalar state field
    field: Name | None
    span: Span


@node
class Counterexample:
    """A plausible harmful run the author gives: verification replays it; it must score 0."""

    steps: tuple[SolutionStep, ...]
    span: Span


@node
class TaskDecl:
    name: Name
    doc: Text | None
    init: InitBlock | InitFrom | None
    solution: tuple[SolutionStep, ...] | None
    checks: tuple[Check, ...]
    span: Span
    answer: Text | None = None  # the solution's `answer "..."`: the reference final message
    allows: tuple[Allow, ...] = ()
    counterexamples: tuple[Counterexample, ...] = ()


Decl = Union[
    EnumDecl,
    RecordDecl,
    VariantDecl,
    StateDecl,
    InvariantDecl,
    ConstDecl,
    FnDecl,
    ToolDecl,
    TaskDecl,
]


@node
class EnvDecl:
    """An `env` (or, with is_module, a stdlib `module`): declarations in source order."""

    name: Name
    is_module: bool
    doc: Text | None
    members: tuple[Decl, ...]
    span: Span

    def of_type(self, kind: type[DeclT]) -> list[DeclT]:
        return [member for member in self.members if isinstance(member, kind)]


@node
class TasksFor:
    """A task file's `tasks for "env.env" { ... }`: tasks for the env in another file."""

    target: Text  # the env file, relative to the task file's directory
    tasks: tuple[TaskDecl, ...]
    span: Span


# what a file holds at its top level (a formatter lays each out)
TopLevel = Union[Import, EnvDecl, TasksFor]


@node
class SpecFile:
    path: str
    imports: tuple[Import, ...]
    env: EnvDecl | None  # the env, or the module of a stdlib file
    span: Span
    text: str = ""  # the source, for code generation to quote conditions
    tasks_for: TasksFor | None = None  # set for a task file (which has no env)
    # the texts of the task files whose tasks were merged into `env`, by path
    task_texts: dict[str, str] = field(default_factory=dict)

    def text_of(self, span: Span) -> str:
        """The source text a span points into: this spec's or a merged task file's ("" for
        another file, such as a stdlib module's)."""
        return self.text if span.file == self.path else self.task_texts.get(span.file, "")


def walk(node: object) -> Iterator[object]:
    """Every node below `node` (itself included), depth first; spans are not visited, and
    neither the plain values of fields (strings, numbers, booleans, None) nor the tuples and
    lists holding nodes are given: every caller looks for nodes, and those were half of what
    the walk gave.

    With a stack of its own: nested generators (`yield from` per level) pass every node up
    through each level above it. Each class's fields are looked up once (_children_of)."""
    stack = [node]
    pop, extend = stack.pop, stack.extend
    children = _CHILDREN
    leaves = _LEAVES
    while stack:
        node = pop()
        kind = node.__class__
        if kind is tuple or kind is list:
            extend(reversed(node))  # type: ignore[call-overload]
            continue
        if kind in leaves:
            continue
        yield node
        read = children.get(kind)
        if read is None:
            read = _children_of(node)
        if read is not _no_children:
            extend(read(node))


_LEAVES = frozenset({str, int, float, bool, type(None)})  # what walk does not give


def _no_children(value: object) -> tuple[()]:  # what _CHILDREN holds for a leaf's class
    return ()


# class -> a function of one instance giving its fields' values, last field first (a stack
# pops them in order), spans left out
_CHILDREN: dict[type, Callable[[Any], Any]] = {}


def _children_of(node: object) -> Callable[[Any], Any]:
    """What walk reads of a node of this class, as the walk did field by field: the names in
    its `__dataclass_fields__` but `span`, reversed; a list or tuple's subclass is walked as
    one, anything else has no children. A class object itself is never cached (its
    `__dataclass_fields__`, if any, are of its instances)."""
    if isinstance(node, (list, tuple)):
        return reversed
    fields = getattr(node, "__dataclass_fields__", None)
    if fields is None:
        read: Callable[[Any], Any] = _no_children
    else:
        names = [name for name in reversed(list(fields)) if name != "span"]
        if not names:
            read = _no_children
        elif len(names) == 1:  # attrgetter of one name gives the value, not a tuple
            one = attrgetter(names[0])
            read = lambda value: (one(value),)  # noqa: E731
        else:
            read = attrgetter(*names)
    if not isinstance(node, type):
        _CHILDREN[node.__class__] = read
    return read
