"""Where values drawn from state may live: the roots of locals, for writes through them.

A local bound to a record, list, set or map read from state *is* that value (Python's
semantics), so a write through it is a write of the state place it came from.  This module
computes, for an expression, two sets of state places ('table.field' or a scalar state name):

- `self`: places the value itself may live in; a mutation of the value writes them;
- `inner`: places the values inside it may live in; a mutation of an element writes them.

`sorted(o.lines)` is a fresh list (no `self`) of the order's lines (`inner` = orders.lines);
`o.lines[0]` lives in orders.lines.  Sets are built lazily (`AliasSet.includes`) because a
local's roots grow when it is reassigned later in the body, possibly inside a loop, after a
write through it was seen; they are resolved once the body is checked.

Where a value's origin is not visible (the result of a fn or internal tool, a parameter of
one), its roots are every place whose declared type can hold a value of its type: a write is
never dropped from the effect summary, only over-approximated.
"""

from __future__ import annotations

from typing import Callable

from envdsl.semantics import types as t
from envdsl.semantics.builtin_table import FUNCTIONS
from envdsl.semantics.model import NO_ROOTS, AliasSet, CheckedSpec, Local, Roots
from envdsl.syntax import ast
from envdsl.syntax.visitor import EXPRESSIONS, Visitor


def is_mutable(value: t.Type) -> bool:
    """A value that can be changed in place (and so can alias a place in state)."""
    value = t.strip_optional(value)
    if isinstance(value, (t.ListType, t.SetType, t.MapType, t.VariantType)):
        return True
    if isinstance(value, t.RecordType):
        return not value.is_entity
    return value == t.JSON


_SCALAR = "its value is a number, string, bool or none: never mutable, so it has no roots"


class AliasAnalysis(Visitor):
    """Roots of expressions in one checked spec (after the expressions are type-checked):
    `visit_<Expr>(node, bound) -> Roots`, reached only for a mutable value (see `of`)."""

    families = (EXPRESSIONS,)
    not_applicable = {
        **dict.fromkeys(
            (ast.IntLit, ast.FloatLit, ast.StrLit, ast.BoolLit, ast.NoneLit, ast.FString), _SCALAR
        ),
        **dict.fromkeys((ast.Unary, ast.BoolOp, ast.Not, ast.Compare), _SCALAR),
        ast.Lambda: "only a sort key, typed as the key it computes: a number, string or date",
    }

    def __init__(self, checked: CheckedSpec, local_of: Callable[[ast.NameRef], Local | None]):
        self.checked = checked
        # the Local a name reference resolved to (recorded by the checker), or None
        self.local_of = local_of
        self._typed_places: dict[t.Type, frozenset[str]] = {}

    def type_of(self, node: ast.Expr) -> t.Type:
        return self.checked.expr_types.get(id(node), t.ERROR)

    # ---- places by type ------------------------------------------------------------------
    def places_holding(self, value: t.Type) -> frozenset[str]:
        """Every state place whose declared type can hold a value of type `value`."""
        value = t.strip_optional(value)
        cached = self._typed_places.get(value)
        if cached is not None:
            return cached
        found: set[str] = set()
        for name, info in self.checked.state.items():
            if isinstance(info.type, t.TableType):
                record = self.checked.records.get(info.type.entity)
                if record is None:
                    continue
                for field_info in record.fields.values():
                    if value in _mutable_parts(self.checked, field_info.type):
                        found.add(f"{name}.{field_info.name}")
            elif value in _mutable_parts(self.checked, info.type):
                found.add(name)
        result = frozenset(found)
        self._typed_places[value] = result
        return result

    def unknown_origin(self, value: t.Type) -> Roots:
        """A value from a fn, an internal tool or a parameter of one: it may be any value of
        its type in state, and its parts any such parts."""
        if not is_mutable(value):
            return NO_ROOTS
        inner: set[str] = set()
        for part in _mutable_parts(self.checked, value):
            inner |= self.places_holding(part)
        own = set(self.places_holding(value))
        return Roots(AliasSet(own, guessed=True), AliasSet(inner, guessed=True))

    # ---- expressions ---------------------------------------------------------------------
    def of(self, node: ast.Expr, bound: dict[str, Roots] | None = None) -> Roots:
        """The roots of an expression; `bound` holds comprehension variables by name."""
        if not is_mutable(self.type_of(node)):
            return NO_ROOTS
        roots: Roots = self.handlers[node.__class__](self, node, bound or {})  # a visit, inlined
        return roots

    def not_applicable_node(self, node: object, *args: object) -> Roots:
        return NO_ROOTS

    def element(self, node: ast.Expr, bound: dict[str, Roots]) -> AliasSet:
        """Roots of the elements of a collection expression (a loop over it binds these)."""
        return self.of(node, bound).both()

    def visit_NameRef(self, node: ast.NameRef, bound: dict[str, Roots]) -> Roots:
        if node.name in bound and not node.qualified:
            return bound[node.name]
        local = self.local_of(node)
        if local is not None:
            return local.roots
        info = self.checked.state.get(node.name)
        if info is not None and not isinstance(info.type, t.TableType):
            place = AliasSet({node.name})
            return Roots(place, place)
        return NO_ROOTS

    def visit_Attribute(self, node: ast.Attribute, bound: dict[str, Roots]) -> Roots:
        obj_type = self.type_of(node.obj)
        record = None
        if isinstance(obj_type, t.RecordType) and obj_type.is_entity:
            record = self.checked.records.get(obj_type.name)
        elif isinstance(obj_type, t.RefType):
            record = self.checked.records.get(obj_type.entity)
        if record is not None:
            if record.table is None:  # a row of no table: never in state
                return NO_ROOTS
            place = AliasSet({f"{record.table}.{node.name.text}"})
            return Roots(place, place)
        if isinstance(obj_type, t.InitialStateType):
            return NO_ROOTS  # `initial.` is read-only
        return self._inside(node.obj, bound)

    def _inside(self, obj: ast.Expr, bound: dict[str, Roots]) -> Roots:
        """A part of a value (field, element, entry) lives wherever the value or its parts do."""
        parts = self.of(obj, bound).both()
        return Roots(parts, parts)

    def visit_Index(self, node: ast.Index, bound: dict[str, Roots]) -> Roots:
        if isinstance(self.type_of(node.obj), t.TableType):
            return NO_ROOTS  # a row: written through its table
        return self._inside(node.obj, bound)

    def visit_Slice(self, node: ast.Slice, bound: dict[str, Roots]) -> Roots:
        return Roots(AliasSet(), self.of(node.obj, bound).both())

    def visit_Conditional(self, node: ast.Conditional, bound: dict[str, Roots]) -> Roots:
        return _union([self.of(node.body, bound), self.of(node.orelse, bound)])

    def _fresh(self, parts: list[ast.Expr], bound: dict[str, Roots]) -> Roots:
        """A new value built from parts: it lives nowhere yet, its parts may."""
        inner = AliasSet()
        for part in parts:
            inner.add(self.of(part, bound).both())
        return Roots(AliasSet(), inner)

    def visit_ListLit(self, node: ast.ListLit, bound: dict[str, Roots]) -> Roots:
        return self._fresh(list(node.items), bound)

    def visit_SetLit(self, node: ast.SetLit, bound: dict[str, Roots]) -> Roots:
        return self._fresh(list(node.items), bound)

    def visit_MapLit(self, node: ast.MapLit, bound: dict[str, Roots]) -> Roots:
        return self._fresh([e.value for e in node.entries], bound)

    def visit_Binary(self, node: ast.Binary, bound: dict[str, Roots]) -> Roots:
        return self._fresh([node.left, node.right], bound)  # `xs + ys`: a new list

    def visit_Comprehension(self, node: ast.Comprehension, bound: dict[str, Roots]) -> Roots:
        inner_bound = dict(bound)
        for clause in node.clauses:
            if isinstance(clause, ast.CompFor):
                elements = self.element(clause.iterable, inner_bound)
                for target in clause.targets:  # an index or a map key is not mutable: no roots
                    inner_bound[target.text] = Roots(elements, elements)
        value = node.value if node.kind == "map" else node.element
        assert value is not None
        return self._fresh([value], inner_bound)

    def visit_Call(self, node: ast.Call, bound: dict[str, Roots]) -> Roots:
        func = node.func
        if isinstance(func, ast.Attribute):
            return self._method(func, node, bound)
        assert isinstance(func, ast.NameRef)
        name = func.name
        if name in self.checked.records and self.local_of(func) is None:
            return self._fresh([k.value for k in node.kwargs], bound)  # a record value
        if name in self.checked.callables:
            return self.unknown_origin(self.type_of(node))
        args = list(node.args)
        builtin = FUNCTIONS.get(name)
        aliasing = builtin.aliasing if builtin is not None else "fresh"
        if aliasing == "elements":
            if len(args) == 1:
                elements = self.element(args[0], bound)
                return Roots(elements, elements)
            return _union([self.of(a, bound) for a in args])
        if aliasing == "holds_elements":
            inner = AliasSet()
            for arg in args:
                inner.add(self.element(arg, bound))
            return Roots(AliasSet(), inner)
        return NO_ROOTS

    def _method(self, func: ast.Attribute, node: ast.Call, bound: dict[str, Roots]) -> Roots:
        receiver = self.type_of(func.obj)
        method = func.name.text
        if isinstance(receiver, t.TypeRefType) and isinstance(receiver.target, t.VariantType):
            return self._fresh([k.value for k in node.kwargs], bound)  # a variant case value
        if isinstance(receiver, (t.TableType, t.TypeRefType)):
            return NO_ROOTS
        if method == "get":
            parts = self.of(func.obj, bound).both()
            default = [self.of(a, bound) for a in node.args[1:]]
            return _union([Roots(parts, parts), *default])
        if method in ("values", "items", "keys"):
            return Roots(AliasSet(), self.of(func.obj, bound).both())
        return NO_ROOTS


def _union(parts: list[Roots]) -> Roots:
    result = Roots()
    for part in parts:
        result.self.add(part.self)
        result.inner.add(part.inner)
    return result


def _mutable_parts(checked: CheckedSpec, value: t.Type) -> set[t.Type]:
    """The mutable types a value of this type is made of (itself included)."""
    found: set[t.Type] = set()
    stack = [value]
    while stack:
        current = t.strip_optional(stack.pop())
        if current in found:
            continue
        if isinstance(current, (t.ListType, t.SetType)):
            found.add(current)
            stack.append(current.elem)
        elif isinstance(current, t.MapType):
            found.add(current)
            stack.extend([current.key, current.value])
        elif isinstance(current, t.TupleType):
            stack.extend(current.items)
        elif isinstance(current, t.RecordType) and not current.is_entity:
            found.add(current)
            record = checked.records.get(current.name)
            if record is not None:
                stack.extend(f.type for f in record.fields.values())
        elif isinstance(current, t.VariantType):
            found.add(current)
            variant = checked.variants.get(current.name)
            if variant is not None:
                stack.extend(t.case_type(current.name, case) for case in variant.cases)
        elif current == t.JSON:
            found.add(current)
    return found
