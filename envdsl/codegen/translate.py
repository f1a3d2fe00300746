"""Lowering of checked bodies to Python: expressions and statements become code lines.

Every decision here follows the types the checker recorded: which table a row belongs to, when a
ref is followed, when a row must be written through the journal, when a narrowed optional
needs `h.unwrap` for mypy.  Spec strings only ever reach the output through `repr`.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field
from typing import ClassVar

from envdsl.codegen.json_values import needs_json_form
from envdsl.codegen.names import Names
from envdsl.codegen.naming import Namespace
from envdsl.semantics import types as t
from envdsl.semantics.aliases import is_mutable
from envdsl.semantics.builtin_forms import CallSite, MethodSite
from envdsl.semantics.builtin_table import ENUM_VALUES, FUNCTIONS, METHODS, receiver_kind
from envdsl.semantics.model import CheckedSpec, RecordInfo
from envdsl.semantics.scope import path_of
from envdsl.syntax import ast
from envdsl.syntax.visitor import EXPRESSIONS, Family, Visitor
from envdsl.util import construct

_COMPARE = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "in": "in",
            "not in": "not in", "is": "is", "is not": "is not"}  # fmt: skip


@dataclass
class CgScope:
    """DSL names of locals -> Python names, per block; names are unique per function.

    `space` is the function's namespace, shared by its blocks: it starts with every module-level
    name (see Names.locals), so a local can neither shadow a type, constant or helper module nor
    another local, whatever the DSL's own scoping allows (a loop variable outlives its loop in
    Python)."""

    space: Namespace
    parent: CgScope | None = None
    names: dict[str, str] = field(default_factory=dict)
    types: dict[str, t.Type] = field(default_factory=dict)  # declared DSL types

    def child(self) -> CgScope:
        return CgScope(self.space, self, {}, {})

    def lookup(self, name: str) -> str | None:
        scope: CgScope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.names[name]
            scope = scope.parent
        return None

    def lookup_type(self, name: str) -> t.Type | None:
        scope: CgScope | None = self
        while scope is not None:
            if name in scope.names:
                return scope.types.get(name)
            scope = scope.parent
        return None

    def declare(self, name: str, dsl_type: t.Type, py: str | None = None) -> str:
        """A fresh Python name for a DSL local (`x`, or `x_` if the function has an `x`);
        `py` when the name was decided before (a parameter)."""
        candidate = self.space.claim(name) if py is None else self.space.reserve(py)
        self.names[name] = candidate
        self.types[name] = dsl_type
        return candidate


@dataclass
class Context:
    kind: str  # tool fn row_invariant env_invariant check solution init default
    row: RecordInfo | None = None  # row invariants: the row's fields are bare names
    bindings: set[str] = field(default_factory=set)  # solution/check bindings in `b`


class Translator(Visitor):
    """Python code for an expression (`expr`): `visit_<Expr>(node, scope) -> str`."""

    families: ClassVar[tuple[Family, ...]] = (EXPRESSIONS,)  # BodyTranslator adds its own

    def __init__(self, checked: CheckedSpec, names: Names, *, written_out: bool = True) -> None:
        self.checked = checked
        self.names = names
        # False: the code calls the runtime's reference forms (`Environment._insert`, `_set`,
        # a record's class) where it would call the module's written-out inserters, field
        # writers and record factories, which a module run for a few calls does not need
        # (generate's `calls=False`, verification's module)
        self.written_out = written_out
        self.ctx = Context("default")
        self._temp = 0
        # journal calls that must run before the statement being translated
        self.pending: list[str] = []
        # every require / let-else site generated so far: (owner, line, kind, condition)
        self.sites: list[tuple[str, int, str, str]] = []
        self.owner = ""  # the fn or tool being translated
        # the tables' inserters the code calls: table -> method name (codegen/row_writes.py)
        self.inserters: dict[str, str] = {}
        # ids of the generator arguments `f(x for x in xs)` whose callee reads them lazily
        self.lazy_generators: set[int] = set()

    # ---- helpers -----------------------------------------------------------------------------
    def inserter(self, entity: str, row: str) -> str:
        """The code inserting `row` into this entity's table: the table's inserter method,
        made once per table, or `Environment._insert`."""
        table = self.names.table_of(entity)
        if not self.written_out:
            return f"self._insert({table!r}, {row})"
        name = self.inserters.get(table)
        if name is None:
            name = self.inserters[table] = self.names.inserter_method(table)
        return f"self.{name}({row})"

    def type_of(self, node: ast.Expr) -> t.Type:
        return self.checked.expr_types.get(id(node), t.ERROR)

    def local_type(self, name: ast.Name) -> t.Type:
        local = self.checked.locals.get(id(name))
        return local.type if local is not None else t.ERROR

    def temp(self, scope: CgScope) -> str:
        """A generator temporary: bound in the function, invisible to DSL names (no spec name
        maps to `_tmpN`: spec names with a leading underscore become `u_...`)."""
        self._temp += 1
        return scope.space.reserve(f"_tmp{self._temp}")

    def scope(self) -> CgScope:
        """The outermost scope of a new generated function."""
        return CgScope(self.names.locals())

    def row_record(self, value: t.Type) -> RecordInfo | None:
        if isinstance(value, t.RecordType) and value.is_entity:
            return self.checked.records[value.name]
        if isinstance(value, t.RefType):
            return self.checked.records[value.entity]
        return None

    def _table_accessor(self, entity: str) -> str:
        return self.names.state[self.names.table_of(entity)]

    def stored(self, container: str, code: str, node: ast.Expr) -> str:
        """A value stored into `container`: the runtime copies it when the container lives in
        state (so no two places share a value); a fresh local container just holds it.
        Numbers and strings go through it too: a store is checked against the value limits
        and counted against the call's size budget."""
        value_type = t.strip_optional(self.type_of(node))
        if is_mutable(value_type) or value_type in (t.STR, t.INT, t.FLOAT):
            return f"self._own({container}, {code})"
        return code

    def mutated(self, code: str, scope: CgScope, *, grow: bool = False) -> str:
        """Before changing the value of `code` in place: journal its place (`self._mut`, or
        `self._grow` for an append, which journals a list's old length), with `code` first
        bound to a temporary unless it is a plain name, so it is computed once."""
        code = self.bound(code, scope)
        self.pending.append(f"self.{'_grow' if grow else '_mut'}({code})")
        return code

    def bound(self, code: str, scope: CgScope) -> str:
        """`code` as a plain name (bound to a temporary first unless it is one), for a value
        that is used twice but must be computed once."""
        if not code.isidentifier():
            temp = self.temp(scope)
            self.pending.append(f"{temp} = {code}")
            code = temp
        return code

    def coerce(self, code: str, source: t.Type, target: t.Type) -> str:
        """Adapt a value to where it goes: a row stored in a ref slot becomes its key."""
        target_base = t.strip_optional(target)
        if isinstance(source, t.RecordType) and source.is_entity:
            if isinstance(target_base, t.RefType) or target_base in (t.STR, t.INT):
                return f"{code}.{self.names.key_attr(source.name)}"
        if isinstance(source, t.TableType) and isinstance(target_base, t.ListType):
            return f"{code}.rows()"  # a table where a list is expected: the list of its rows
        if target_base == t.JSON and needs_json_form(source):
            return f"{self.names.spec(source)}.to_json({code})"  # rows, enums, dates as JSON
        return code

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, node: ast.Expr, scope: CgScope) -> str:
        construct.note(node.span)  # for an internal error: where the generator was
        code: str = self.handlers[node.__class__](self, node, scope)  # self.visit, inlined
        return code

    def visit_IntLit(self, node: ast.IntLit, scope: CgScope) -> str:
        return repr(node.value)

    def visit_FloatLit(self, node: ast.FloatLit, scope: CgScope) -> str:
        # `repr(1e999)` is `inf`: a name, which a parameter called `inf` would capture
        return "1e999" if node.value == float("inf") else repr(node.value)

    def visit_StrLit(self, node: ast.StrLit, scope: CgScope) -> str:
        return repr(node.value)

    def visit_BoolLit(self, node: ast.BoolLit, scope: CgScope) -> str:
        return "True" if node.value else "False"

    def visit_NoneLit(self, node: ast.NoneLit, scope: CgScope) -> str:
        return "None"

    def visit_FString(self, node: ast.FString, scope: CgScope) -> str:
        pieces: list[str] = []
        for part in node.parts:
            if isinstance(part, str):
                pieces.append(repr(part))
            elif part.format_spec:
                pieces.append(f"h.fmt({self.expr(part.expr, scope)}, {part.format_spec!r})")
            else:
                pieces.append(f"h.to_str({self.expr(part.expr, scope)})")
        return "(" + " + ".join(pieces) + ")" if pieces else "''"

    def visit_NameRef(self, node: ast.NameRef, scope: CgScope) -> str:
        declared: t.Type | None
        if node.qualified:  # `state.x`: the state field, whatever a local is named
            code, declared = self.state_field(node.name)
        else:
            code, declared = self.name(node.name, scope)
        return self.narrowed(code, declared, self.type_of(node))

    def state_field(self, name: str) -> tuple[str, t.Type]:
        return f"self.{self.names.state[name]}", self.checked.state[name].type

    def narrowed(self, code: str, declared: t.Type | None, actual: t.Type) -> str:
        """`h.unwrap(x)` where the checker narrowed an optional that Python cannot see."""
        if isinstance(declared, t.OptionalType) and not t.is_optional(actual):
            if not t.is_error(actual):
                return f"h.unwrap({code})"
        return code

    def name(self, name: str, scope: CgScope) -> tuple[str, t.Type | None]:
        local = scope.lookup(name)
        if local is not None:
            return local, self._declared_local(name, scope)
        if name in self.ctx.bindings:
            return f"b[{name!r}]", None
        row = self.ctx.row
        if row is not None and name in row.fields:
            return f"row.{self.names.field(row.name, name)}", row.fields[name].type
        if name in self.checked.state:
            return self.state_field(name)
        if name in self.checked.consts:
            const = self.checked.consts[name]
            if is_mutable(const.type):
                # a constant is shared by every call and every environment: each read is a
                # fresh value, so no write through a local can change the constant itself
                return f"h.fresh({self.names.consts[name]})", const.type
            return self.names.consts[name], const.type
        if name in self.checked.enums or name in self.checked.records:
            return self.names.type_name(name), None
        if name in self.checked.variants:
            return self.names.type_name(name), None
        if name == "initial":
            return "self.initial_state()", None
        if name == "answer" and self.ctx.kind == "check":
            return "answer", t.STR  # the check method's parameter: the agent's final message
        raise AssertionError(f"unresolved name {name!r} reached code generation")

    def _declared_local(self, name: str, scope: CgScope) -> t.Type | None:
        return scope.lookup_type(name)

    def visit_Attribute(self, node: ast.Attribute, scope: CgScope) -> str:
        obj_type = self.type_of(node.obj)
        field_name = node.name.text
        if isinstance(obj_type, t.TypeRefType) and isinstance(obj_type.target, t.EnumType):
            enum = obj_type.target.name
            return f"{self.names.type_name(enum)}.{self.names.member(enum, field_name)}"
        if isinstance(obj_type, t.TypeRefType) and isinstance(obj_type.target, t.VariantType):
            return self.names.type_name(f"{obj_type.target.name}.{field_name}")  # the case class
        obj = self.expr(node.obj, scope)
        variant_field = self.variant_field(obj_type, field_name)
        if variant_field is not None:  # the tag, or a field every case has
            attr, declared_type = variant_field
            return self.narrowed(f"{obj}.{attr}", declared_type, self.type_of(node))
        if isinstance(obj_type, t.InitialStateType):
            return f"{obj}.{self.names.state[field_name]}"
        declared: t.Type | None = None
        if isinstance(obj_type, t.RefType):
            record = self.checked.records[obj_type.entity]
            obj = f"self.{self._table_accessor(record.name)}.row({obj})"
            declared = record.fields[field_name].type
            code = f"{obj}.{self.names.field(record.name, field_name)}"
        elif isinstance(obj_type, t.RecordType):
            declared = self.checked.records[obj_type.name].fields[field_name].type
            code = f"{obj}.{self.names.field(obj_type.name, field_name)}"
        else:  # date and datetime components
            code = f"{obj}.{field_name}"
        return self.narrowed(code, declared, self.type_of(node))

    def visit_Index(self, node: ast.Index, scope: CgScope) -> str:
        obj_type = self.type_of(node.obj)
        obj = self.expr(node.obj, scope)
        index = self.expr(node.index, scope)
        if isinstance(obj_type, t.TableType):
            index = self.coerce(index, self.type_of(node.index), t.RefType(obj_type.entity))
            return f"{obj}.row({index})"  # `obj` may be `initial.<table>`
        if isinstance(obj_type, t.MapType):
            return f"h.lookup({obj}, {index})"
        if obj_type == t.STR:
            return f"h.char_at({obj}, {index})"
        if obj_type == t.JSON:
            return f"{obj}[{index}]"
        return f"h.at({obj}, {index})"

    def visit_Slice(self, node: ast.Slice, scope: CgScope) -> str:
        lower = self.expr(node.lower, scope) if node.lower is not None else ""
        upper = self.expr(node.upper, scope) if node.upper is not None else ""
        obj = self.expr(node.obj, scope)
        if isinstance(self.type_of(node.obj), t.TableType):
            obj = f"{obj}.rows()"  # a table sliced is the list of its rows sliced
        return f"{obj}[{lower}:{upper}]"

    def visit_Unary(self, node: ast.Unary, scope: CgScope) -> str:
        return f"({node.op}{self.expr(node.operand, scope)})"

    def visit_Binary(self, node: ast.Binary, scope: CgScope) -> str:
        left, right = self.expr(node.left, scope), self.expr(node.right, scope)
        left_type, right_type = self.type_of(node.left), self.type_of(node.right)
        if node.op == "/":
            if left_type == t.DURATION:
                return f"h.div_duration({left}, {right})"
            return f"h.div({left}, {right})"
        if node.op == "//":
            return f"h.floordiv({left}, {right})"
        if node.op == "%":
            return f"h.mod({left}, {right})"
        if node.op == "**":
            if self.type_of(node) == t.FLOAT:  # either side may hold an int: no int overflow
                return f"h.power_float({left}, {right})"
            result = self.names.py_type(self.type_of(node))
            return f"cast({result!r}, h.power({left}, {right}))"
        # the places a value can grow are checked against the value limits (runtime/limits.py)
        if node.op == "*":
            if self.type_of(node) == t.FLOAT:
                return f"h.mul_float({left}, {right})"
            return f"h.mul({left}, {right})"
        if isinstance(left_type, t.ListType) and isinstance(right_type, t.ListType):
            return f"h.concat_lists({left}, {right})"
        if node.op == "+" and left_type == t.STR:
            return f"h.concat({left}, {right})"
        if node.op in ("+", "-") and self.type_of(node) == t.FLOAT:  # never inf, never NaN
            return f"h.{'add' if node.op == '+' else 'sub'}_float({left}, {right})"
        return f"({left} {node.op} {right})"

    def visit_BoolOp(self, node: ast.BoolOp, scope: CgScope) -> str:
        # `a and b and c` flat, as written: the chain's operands in order, each without the
        # parentheses of a comparison, `not` or arithmetic (which bind tighter than and/or)
        parts = [self._chain_operand(operand, scope) for operand in _chain(node)]
        return "(" + f" {node.op} ".join(parts) + ")"

    def _chain_operand(self, node: ast.Expr, scope: CgScope) -> str:
        code = self.expr(node, scope)
        wrapped = isinstance(node, (ast.Compare, ast.Not, ast.Unary)) or (
            isinstance(node, ast.Binary) and code.startswith("(")  # not a helper's call
        )
        return code[1:-1] if wrapped else code

    def visit_Not(self, node: ast.Not, scope: CgScope) -> str:
        return f"(not {self.expr(node.operand, scope)})"

    def variant_field(self, obj_type: t.Type, name: str) -> tuple[str, t.Type] | None:
        """The attribute (and declared type) of a variant value's tag or shared field, or of a
        narrowed case's tag; None for any other read."""
        if isinstance(obj_type, t.RecordType):
            variant = t.variant_of(obj_type)
            if variant is not None and name == self.checked.variants[variant].tag:
                return self.names.tag(variant), t.STR
            return None
        if not isinstance(obj_type, t.VariantType):
            return None
        info = self.checked.variants[obj_type.name]
        if name == info.tag:
            return self.names.tag(info.name), t.STR
        shared = info.shared_field(name)
        assert shared is not None, f"{info.name}.{name} reached code generation unnarrowed"
        first = next(iter(info.cases.values()))
        return self.names.field(first.name, name), shared.type

    def visit_Compare(self, node: ast.Compare, scope: CgScope) -> str:
        case_test = self.case_test(node, scope)
        if case_test is not None:
            return case_test
        codes = [self.expr(operand, scope) for operand in node.operands]
        types = [self.type_of(operand) for operand in node.operands]
        parts = [self.compare_operand(codes[0], types[0], types[1])]
        for index, op in enumerate(node.ops):
            left_type, right_type = types[index], types[index + 1]
            right = codes[index + 1]
            if op in ("==", "!=") and (
                isinstance(node.operands[index + 1], ast.NoneLit)
                or isinstance(node.operands[index], ast.NoneLit)
            ):
                op = "is" if op == "==" else "is not"  # mypy narrows `is None`, not `== None`
            if op in ("in", "not in") and isinstance(right_type, t.TableType):
                parts[-1] = self.coerce(parts[-1], left_type, t.RefType(right_type.entity))
            parts.append(_COMPARE[op])
            parts.append(self.compare_operand(right, right_type, left_type))
        return "(" + " ".join(parts) + ")"

    def case_test(self, node: ast.Compare, scope: CgScope) -> str | None:
        """`m is V.case` as `isinstance(m, V_case)` (which mypy narrows as the checker does)."""
        if len(node.ops) != 1 or node.ops[0] not in ("is", "is not"):
            return None
        case = self.type_of(node.operands[1])
        if not (isinstance(case, t.TypeRefType) and t.variant_of(case.target) is not None):
            return None
        value = self.expr(node.operands[0], scope)
        test = f"isinstance({value}, {self.expr(node.operands[1], scope)})"
        # parenthesized as every comparison is (and/or chains take the parentheses off)
        return f"({test})" if node.ops[0] == "is" else f"(not {test})"

    def compare_operand(self, code: str, own: t.Type, other: t.Type) -> str:
        """A row compared with a key or ref is compared by its key; a table compared with a
        list, by the list of its rows (a Table never equals a Python list)."""
        if isinstance(own, t.TableType) and isinstance(t.strip_optional(other), t.ListType):
            return f"{code}.rows()"
        if isinstance(own, t.RecordType) and own.is_entity:
            other_base = t.strip_optional(other)
            if not (isinstance(other_base, t.RecordType) and other_base.is_entity):
                return f"{code}.{self.names.key_attr(own.name)}"
        return code

    def visit_Conditional(self, node: ast.Conditional, scope: CgScope) -> str:
        body, test, orelse = (self.expr(x, scope) for x in (node.body, node.test, node.orelse))
        # each branch takes the joined type: a table its rows, a row in a ref-typed join its key
        whole = self.type_of(node)
        body = self.coerce(body, self.type_of(node.body), whole)
        orelse = self.coerce(orelse, self.type_of(node.orelse), whole)
        return f"({body} if {test} else {orelse})"

    def visit_Lambda(self, node: ast.Lambda, scope: CgScope) -> str:
        inner = scope.child()
        params = [inner.declare(p.text, self.local_type(p)) for p in node.params]
        return f"(lambda {', '.join(params)}: {self.expr(node.body, inner)})"

    def visit_ListLit(self, node: ast.ListLit, scope: CgScope) -> str:
        return self.items("[", node.items, "]", self.type_of(node), scope)

    def items(
        self, open_: str, items: tuple[ast.Expr, ...], close: str, whole: t.Type, scope: CgScope
    ) -> str:
        elem = t.element_type(whole) or t.ERROR
        codes = [self.coerce(self.expr(i, scope), self.type_of(i), elem) for i in items]
        return open_ + ", ".join(codes) + close

    def visit_SetLit(self, node: ast.SetLit, scope: CgScope) -> str:
        return self.items("{", node.items, "}", self.type_of(node), scope)

    def visit_MapLit(self, node: ast.MapLit, scope: CgScope) -> str:
        entries = [f"{self.expr(e.key, scope)}: {self.expr(e.value, scope)}" for e in node.entries]
        return "{" + ", ".join(entries) + "}"

    def visit_Comprehension(self, node: ast.Comprehension, scope: CgScope) -> str:
        inner = scope.child()
        clauses: list[str] = []
        for clause in node.clauses:
            if isinstance(clause, ast.CompFor):
                iterable = self.iterable(clause.iterable, inner)
                targets = [inner.declare(n.text, self.local_type(n)) for n in clause.targets]
                clauses.append(f"for {', '.join(targets)} in {iterable}")
            else:
                clauses.append(f"if {self.expr(clause.cond, inner)}")
        element = self.expr(node.element, inner)
        body = " ".join(clauses)
        if node.kind == "map":
            assert node.value is not None
            return f"{{{element}: {self.expr(node.value, inner)} {body}}}"
        if node.kind == "set":
            return f"{{{element} {body}}}"
        if node.kind == "gen" and id(node) in self.lazy_generators:
            return f"({element} {body})"
        # a generator argument of any other callee is the list its type says (`len(gen)`, a
        # spec's own fn): a Python generator there fails or prints as `<generator object ...>`
        return f"[{element} {body}]"

    def iterable(self, node: ast.Expr, scope: CgScope) -> str:
        """An iteration under the step budget, over a snapshot of the collection."""
        value_type = self.type_of(node)
        code = self.expr(node, scope)
        if isinstance(value_type, t.TableType):
            return f"self._it({code}.rows())"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.NameRef):
            builtin = FUNCTIONS.get(node.func.name)
            if builtin is not None and builtin.fresh_sequence:
                return f"self._it({code})"
        if isinstance(value_type, t.SetType):
            return f"self._it(h.in_order({code}))"  # never hash order
        return f"self._it(list({code}))"

    # ---- calls -------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call, scope: CgScope) -> str:
        func = node.func
        if isinstance(func, ast.Attribute):
            return self.method_call(func, node, scope)
        assert isinstance(func, ast.NameRef)
        name = func.name
        record = self.checked.records.get(name)
        if record is not None and scope.lookup(name) is None:
            return self.build_record(record, node, scope)
        info = self.checked.callables.get(name)
        if info is not None:
            params = {p.name: p for p in info.params}
            args = []
            for index, arg in enumerate(node.args):
                param = info.params[index]
                value = self.coerce(self.expr(arg, scope), self.type_of(arg), param.type)
                args.append(f"{self.names.param(name, param.name)}={value}")
            for kwarg in node.kwargs:
                param = params[kwarg.name.text]
                value = self.coerce(
                    self.expr(kwarg.value, scope), self.type_of(kwarg.value), param.type
                )
                args.append(f"{self.names.param(name, param.name)}={value}")
            return f"self.{self.names.callables[name]}({', '.join(args)})"
        return self.builtin(name, node, scope)

    def build_record(self, record: RecordInfo, node: ast.Call, scope: CgScope) -> str:
        """`R(f=v, ...)`, or a variant case's `V.case(f=v, ...)`: the record's factory with its
        fields (the class itself, called by keyword, costs twice as much), or the class where
        nothing is written out."""
        args = []
        for kwarg in node.kwargs:
            field_info = record.fields[kwarg.name.text]
            value = self.coerce(
                self.expr(kwarg.value, scope), self.type_of(kwarg.value), field_info.type
            )
            args.append(f"{self.names.field(record.name, kwarg.name.text)}={value}")
        make = self.names.factory if self.written_out else self.names.type_name
        return f"{make(record.name)}({', '.join(args)})"

    def builtin(self, name: str, node: ast.Call, scope: CgScope) -> str:
        """A call of a builtin function, in its table entry's form."""
        builtin = FUNCTIONS[name]
        lazy = [id(arg) for arg in node.args if builtin.lazy_argument]
        self.lazy_generators.update(lazy)
        args = [self.expr(arg, scope) for arg in node.args]
        code = builtin.form(self.call_site(node, args, scope))
        self.lazy_generators.difference_update(lazy)
        return code

    def call_site(self, node: ast.Call, args: list[str], scope: CgScope) -> CallSite:
        return CallSite(
            node, args, lambda e: self.expr(e, scope), self.type_of, self.coerce, self.checked
        )

    def method_call(self, func: ast.Attribute, node: ast.Call, scope: CgScope) -> str:
        """A method call, in its table entry's form; a writing method's receiver is journaled
        first, and what it stores is owned by the receiver."""
        receiver_type = self.type_of(func.obj)
        method = func.name.text
        if isinstance(receiver_type, t.TypeRefType) and isinstance(
            receiver_type.target, t.VariantType
        ):
            case = self.checked.records[f"{receiver_type.target.name}.{method}"]
            return self.build_record(case, node, scope)
        if isinstance(receiver_type, t.TypeRefType):
            entry = ENUM_VALUES
        else:
            found = METHODS[receiver_kind(receiver_type)].get(method)
            if found is None:  # `s.lower()`: the string function `lower(s)`
                self.expr(func.obj, scope)
                for arg in node.args:
                    self.expr(arg, scope)
                rewritten = ast.Call(
                    ast.NameRef(method, func.span), (func.obj, *node.args), node.kwargs, node.span
                )
                return self.builtin(method, rewritten, scope)
            entry = found
        receiver = self.expr(func.obj, scope)
        args = [self.expr(arg, scope) for arg in node.args]
        if entry.journal in ("mut", "grow"):
            receiver = self.mutated(receiver, scope, grow=entry.journal == "grow")
            if entry.stores:
                args = [self.stored(receiver, a, n) for a, n in zip(args, node.args)]
        site = MethodSite(
            node,
            args,
            lambda e: self.expr(e, scope),
            self.type_of,
            self.coerce,
            self.checked,
            receiver=receiver,
            receiver_type=receiver_type,
            bound=lambda code: self.bound(code, scope),
            stored=self.stored,
            table_name=self.names.table_of,
            inserter=self.inserter,
        )
        return entry.form(site)


def _chain(node: ast.BoolOp) -> list[ast.Expr]:
    """The operands of a run of one boolean operator, left to right (`and` and `or` are each
    associative, short-circuits included)."""
    operands: list[ast.Expr] = []
    stack: list[ast.Expr] = [node.right, node.left]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.BoolOp) and current.op == node.op:
            stack.extend((current.right, current.left))
        else:
            operands.append(current)
    return operands


# a string literal (its body ends at the first unescaped closing quote, as Python's tokenizer
# reads it, whatever its prefix), a bracket, or what only the tokenizer reads right here
_STRING_OR_BRACKET = re.compile(
    r"""(?:'''(?:[^'\\]|\\.|'(?!''))*'''|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\""""
    r"""|'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|([()\[\]{}])|[#'"\\]"""
)


def unparenthesized(code: str) -> str:
    """`code` without one pair of parentheses around the whole of it, for a place that needs
    none (a call's only argument, an operand of `and`): `(a and b)` -> `a and b`, while
    `(a) + (b)` stays."""
    if not (code.startswith("(") and code.endswith(")")):
        return code
    if "\n" in code or "\r" in code:
        return _unparenthesized_by_tokens(code)
    depth = 0  # one line: the brackets outside its strings, as the tokenizer finds them
    for found in _STRING_OR_BRACKET.finditer(code):
        bracket = found.group(1)
        if bracket is None:
            if len(found.group()) > 1 and found.group()[-1] in "'\"":
                continue  # a string
            return _unparenthesized_by_tokens(code)  # a comment, a lone quote or backslash
        if bracket in "([{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return code[1:-1] if found.end() == len(code) else code
    return code


def _unparenthesized_by_tokens(code: str) -> str:
    depth = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type != tokenize.OP:
                continue
            if token.string in "([{":
                depth += 1
            elif token.string in ")]}":
                depth -= 1
                if depth == 0:
                    # the first pair closes here: it wraps the whole only at the very end
                    return code[1:-1] if token.end[1] == len(code) and token.end[0] == 1 else code
    except (tokenize.TokenError, SyntaxError):
        return code
    return code
