"""The semantic model: declarations with resolved types, shared by all later stages."""

from __future__ import annotations

from dataclasses import dataclass, field

from envdsl.semantics.types import Type
from envdsl.syntax import ast
from envdsl.util.frozen_node import record
from envdsl.util.source import Span


# Where values drawn from state may live (computed by semantics/aliases.py): kept here
# because a Local carries its Roots and the model carries the Locals.
@dataclass(eq=False, slots=True)
class AliasSet:
    places: set[str] = field(default_factory=set)
    includes: list[AliasSet] = field(default_factory=list)
    # places guessed from a type (a fn's result or parameter), not seen on a path
    guessed: bool = False

    def add(self, other: AliasSet) -> None:
        if other is not self:
            self.includes.append(other)

    def resolve(self, *, seen_only: bool = False) -> set[str]:
        """Every place in this set and those it includes (with seen_only, not guessed ones)."""
        found: set[str] = set()
        seen: set[int] = set()
        stack: list[AliasSet] = [self]
        while stack:
            current = stack.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if not (seen_only and current.guessed):
                found |= current.places
            stack.extend(current.includes)
        return found


@record
class Roots:
    self: AliasSet = field(default_factory=AliasSet)
    inner: AliasSet = field(default_factory=AliasSet)

    def both(self) -> AliasSet:
        """Roots of what is reached through this value: its own places and its elements'."""
        merged = AliasSet()
        merged.add(self.self)
        merged.add(self.inner)
        return merged


NO_ROOTS = Roots()


@record
class Local:
    name: str
    type: Type
    span: Span
    kind: str = "let"  # 'let' | 'param' | 'loop' | 'binding' (a solution's `let b = tool()`)
    used: bool = False
    # the state places its value (and what is inside it) may live in: writes through it land there
    roots: Roots = field(default_factory=Roots)
    # ids of the name references that read it, and of those that only lead to a write through it
    reads: set[int] = field(default_factory=set)
    write_bases: set[int] = field(default_factory=set)


@record
class EnumInfo:
    name: str
    members: dict[str, ast.EnumMember]
    decl: ast.EnumDecl
    module: str | None = None

    def json_value(self, member: str) -> str:
        decl = self.members[member]
        return decl.json_value.value if decl.json_value is not None else member


@record
class FieldInfo:
    name: str
    type: Type
    decl: ast.FieldDecl
    # source member -> allowed target members; None when the field has no transitions clause
    transitions: dict[str, set[str]] | None = None

    @property
    def is_key(self) -> bool:
        return self.decl.is_key

    @property
    def has_default(self) -> bool:
        return self.decl.default is not None


@record
class RecordInfo:
    """A record or an entity (is_entity), with its fields in declaration order."""

    name: str
    is_entity: bool
    fields: dict[str, FieldInfo]
    decl: ast.RecordDecl
    table: str | None = None  # the state table holding an entity's rows
    module: str | None = None
    variant: str | None = None  # the variant of a case (its name is `Variant.case`)

    @property
    def case(self) -> str:
        """A variant case's own name (`gift_card` of `PaymentMethod.gift_card`)."""
        return self.name.partition(".")[2]

    @property
    def tag_value(self) -> str:
        """A variant case's JSON tag: its `= "..."` string, else its name."""
        tag = self.decl.json_tag
        return tag.value if tag is not None else self.case

    @property
    def key(self) -> FieldInfo | None:
        return next((f for f in self.fields.values() if f.is_key), None)


@record
class VariantInfo:
    """A tagged union: its JSON tag field and its cases, each a record named `Variant.case`
    (also in CheckedSpec.records, so that fields, construction and writes work as a record's)."""

    name: str
    tag: str
    cases: dict[str, RecordInfo]  # by case name
    decl: ast.VariantDecl
    module: str | None = None

    def shared_field(self, name: str) -> FieldInfo | None:
        """A field every case declares with one type: readable without narrowing."""
        found = [case.fields.get(name) for case in self.cases.values()]
        first = found[0] if found else None
        if first is None or any(f is None or f.type != first.type for f in found):
            return None
        return first


@record
class StateFieldInfo:
    name: str
    type: Type  # a TableType for tables
    decl: ast.StateField


@record
class ConstInfo:
    name: str
    type: Type
    decl: ast.ConstDecl


@record
class ParamInfo:
    name: str
    type: Type
    decl: ast.Param

    @property
    def has_default(self) -> bool:
        return self.decl.default is not None


@record
class CallableInfo:
    """A `fn` or a tool: anything called with checked arguments."""

    name: str
    kind: str  # 'fn' | 'query' | 'action'
    params: list[ParamInfo]
    result: Type
    decl: ast.FnDecl | ast.ToolDecl
    internal: bool = False
    module: str | None = None

    @property
    def is_tool(self) -> bool:
        return self.kind in ("query", "action")


@record
class Effects:
    """What a body reads and writes: table names, `table.field` and scalar state names."""

    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    calls: set[str] = field(default_factory=set)


@record
class CheckedSpec:
    """Everything the back end needs: the AST plus resolved declarations and types."""

    spec: ast.SpecFile
    env: ast.EnvDecl
    enums: dict[str, EnumInfo] = field(default_factory=dict)
    records: dict[str, RecordInfo] = field(default_factory=dict)
    variants: dict[str, VariantInfo] = field(default_factory=dict)
    state: dict[str, StateFieldInfo] = field(default_factory=dict)
    consts: dict[str, ConstInfo] = field(default_factory=dict)
    callables: dict[str, CallableInfo] = field(default_factory=dict)
    modules: list[ast.SpecFile] = field(default_factory=list)
    # types of expressions, by id() of the AST node (the AST outlives this map)
    expr_types: dict[int, Type] = field(default_factory=dict)
    effects: dict[str, Effects] = field(default_factory=dict)  # per fn/tool/invariant name
    used: set[str] = field(default_factory=set)  # declaration names referenced anywhere
    # every local variable, by id() of the Name that declares it (let, for, lambda, binding);
    # its `type` is final once checking ends (`let xs = []` is refined by its first append)
    locals: dict[int, Local] = field(default_factory=dict)

    @property
    def tools(self) -> list[CallableInfo]:
        return [c for c in self.callables.values() if c.is_tool]

    def entity(self, name: str) -> RecordInfo | None:
        info = self.records.get(name)
        return info if info is not None and info.is_entity else None
