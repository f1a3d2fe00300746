"""Lowering of statements and whole bodies (tools, fns, invariants, checks, tasks) to lines."""

from __future__ import annotations

from pathlib import Path

from envdsl.codegen.names import Names
from envdsl.codegen.translate import CgScope, Context, Translator, unparenthesized
from envdsl.semantics import types as t
from envdsl.semantics.model import CallableInfo, CheckedSpec, RecordInfo
from envdsl.syntax import ast
from envdsl.syntax.visitor import EXPRESSIONS, STATEMENTS
from envdsl.util import construct
from envdsl.util.source import Span, line_of

INDENT = "    "


class BodyTranslator(Translator):
    """Lines of Python for a statement (`stmt`): `visit_<Stmt>(stmt, scope, level) -> lines`,
    on top of the expressions."""

    families = (EXPRESSIONS, STATEMENTS)

    def __init__(self, checked: CheckedSpec, names: Names, *, written_out: bool = True) -> None:
        super().__init__(checked, names, written_out=written_out)
        # the field writers the bodies call: (entity, attribute) -> method name
        self.writers: dict[tuple[str, str], str] = {}

    # ---- whole bodies ------------------------------------------------------------------------
    def callable_body(self, info: CallableInfo) -> tuple[list[str], list[str]]:
        """(parameter declarations, body lines) of a fn or a tool's implementation."""
        self.ctx = Context("tool" if info.is_tool else "fn")
        self.owner = info.name
        scope = self.scope()
        params = []
        for param in info.params:
            py = scope.declare(param.name, param.type, self.names.param(info.name, param.name))
            params.append(f"{py}: {self.names.py_type(param.type)}")
        body = info.decl.body
        if isinstance(body, ast.Block):
            lines = self.block(body, scope, 0)
        else:
            lines = self.flush(0) + [f"return {self.result(body, info.result, scope)}"]
        return params, lines

    def result(self, value: ast.Expr, expected: t.Type, scope: CgScope) -> str:
        return self.coerce(self.expr(value, scope), self.type_of(value), expected)

    def predicate(self, cond: ast.Expr, ctx: Context) -> list[str]:
        """The body of an invariant or check method: one boolean expression."""
        self.ctx = ctx
        code = self.expr(cond, self.scope())
        return self.flush(0) + [f"return bool({unparenthesized(code)})"]

    def row_quantified(
        self, target: ast.Name, entity: str, filters: list[ast.Expr], element: ast.Expr
    ) -> tuple[list[str], list[str]]:
        """(params, body) of a check of one row x: `not F(x) or P(x)`."""
        self.ctx = Context("env_invariant")
        scope = self.scope()
        py = scope.declare(target.text, t.RecordType(entity, True))
        conditions = [self.expr(f, scope) for f in filters]
        value = self.expr(element, scope)
        if conditions:
            test = f"not ({' and '.join(map(unparenthesized, conditions))}) or {value}"
        else:
            test = unparenthesized(value)
        params = [f"{py}: {self.names.type_name(entity)}"]
        return params, self.flush(0) + [f"return bool({test})"]

    def row_predicate(self, record: RecordInfo, cond: ast.Expr) -> list[str]:
        return self.predicate(cond, Context("row_invariant", row=record))

    def value(self, node: ast.Expr, expected: t.Type, ctx: Context) -> str:
        """A standalone value: defaults, constants, init values, solution arguments."""
        self.ctx = ctx
        return self.coerce(self.expr(node, self.scope()), self.type_of(node), expected)

    def flush(self, level: int) -> list[str]:
        lines = [INDENT * level + line for line in self.pending]
        self.pending = []
        return lines

    # ---- statements --------------------------------------------------------------------------
    def block(self, block: ast.Block, scope: CgScope, level: int) -> list[str]:
        lines: list[str] = []
        for stmt in block.stmts:
            lines += self.stmt(stmt, scope, level)
        return lines or [INDENT * level + "pass"]

    def stmt(self, stmt: ast.Stmt, scope: CgScope, level: int) -> list[str]:
        construct.note(stmt.span)  # for an internal error: where the generator was
        lines: list[str] = self.visit(stmt, scope, level)
        return lines

    def visit_Require(self, stmt: ast.Require, scope: CgScope, level: int) -> list[str]:
        pad = INDENT * level
        cond = self.expr(stmt.cond, scope)
        message = self.expr(stmt.message, scope)
        site = self.site("require", stmt.cond)
        return self.flush(level) + [
            f"{pad}if not {cond}:",
            f"{pad}{INDENT}raise rt.Fail({message}, {site}){self.where(stmt.span)}",
            *self.hit(site, level),
        ]

    def hit(self, site: int, level: int) -> list[str]:
        """The site passed: counted by `_hit` while exploring, tested inline otherwise (a
        method call on every `require` of every call, for a count almost nobody keeps)."""
        pad = INDENT * level
        return [f"{pad}if self.coverage is not None:", f"{pad}{INDENT}self._hit({site})"]

    def visit_Fail(self, stmt: ast.Fail, scope: CgScope, level: int) -> list[str]:
        message = self.expr(stmt.message, scope)
        return self.flush(level) + [
            f"{INDENT * level}raise rt.Fail({message}){self.where(stmt.span)}"
        ]

    def visit_Return(self, stmt: ast.Return, scope: CgScope, level: int) -> list[str]:
        pad = INDENT * level
        if stmt.value is None:
            return [f"{pad}return None"]
        expected = self.current_result
        code = self.coerce(self.expr(stmt.value, scope), self.type_of(stmt.value), expected)
        return self.flush(level) + [f"{pad}return {code}"]

    def visit_If(self, stmt: ast.If, scope: CgScope, level: int) -> list[str]:
        pad = INDENT * level
        lines: list[str] = []
        for index, branch in enumerate(stmt.branches):
            cond = self.expr(branch.cond, scope)
            lines += self.flush(level) if index == 0 else []
            keyword = "if" if index == 0 else "elif"
            lines.append(f"{pad}{keyword} {cond}:")
            lines += self.block(branch.body, scope.child(), level + 1)
        if stmt.orelse is not None:
            lines.append(f"{pad}else:")
            lines += self.block(stmt.orelse, scope.child(), level + 1)
        return lines

    def visit_For(self, stmt: ast.For, scope: CgScope, level: int) -> list[str]:
        iterable = self.iterable(stmt.iterable, scope)
        inner = scope.child()
        targets = [inner.declare(n.text, self.local_type(n)) for n in stmt.targets]
        return self.flush(level) + [
            f"{INDENT * level}for {', '.join(targets)} in {iterable}:",
            *self.block(stmt.body, inner, level + 1),
        ]

    def visit_Break(self, stmt: ast.Break, scope: CgScope, level: int) -> list[str]:
        return [f"{INDENT * level}break"]

    def visit_Continue(self, stmt: ast.Continue, scope: CgScope, level: int) -> list[str]:
        return [f"{INDENT * level}continue"]

    def visit_ExprStmt(self, stmt: ast.ExprStmt, scope: CgScope, level: int) -> list[str]:
        code = self.expr(stmt.expr, scope)
        return self.flush(level) + [f"{INDENT * level}{code}"]

    def site(self, kind: str, node: ast.Expr) -> int:
        """Register a `require`/`let ... else` for coverage: (owner, line, kind, source text)."""
        text = self.checked.spec.text
        line = line_of(text, node.span.start)
        written = " ".join(text[node.span.start : node.span.end].split())
        self.sites.append((self.owner, line, kind, written))
        return len(self.sites) - 1

    def where(self, span: Span) -> str:
        """The comment at a failure site of the generated code: `  # <spec file>:<line>`."""
        text = self.checked.spec.text_of(span)
        if not text:
            return ""
        return f"  # {Path(span.file).name}:{line_of(text, span.start)}"

    current_result: t.Type = t.VOID  # the declared result of the tool or fn being lowered

    def visit_Let(self, stmt: ast.Let, scope: CgScope, level: int) -> list[str]:
        pad = INDENT * level
        local_type = self.local_type(stmt.name)
        code = self.expr(stmt.value, scope)  # the value itself, not a copy (places and values)
        value_type = self.type_of(stmt.value)
        lines = self.flush(level)
        py = scope.declare(stmt.name.text, local_type)
        if stmt.else_message is not None:
            message = self.expr(stmt.else_message, scope)
            lines += self.flush(level)
            site = self.site("let-else", stmt.value)
            lines += [
                f"{pad}{py} = {code}",
                f"{pad}if {py} is None:",
                f"{pad}{INDENT}raise rt.Fail({message}, {site}){self.where(stmt.span)}",
                *self.hit(site, level),
            ]
            return lines
        code = self.coerce(code, value_type, local_type)
        annotation = self.names.py_type(local_type)
        lines.append(f"{pad}{py}: {annotation} = {code}")
        return lines

    def visit_Assign(self, stmt: ast.Assign, scope: CgScope, level: int) -> list[str]:
        pad = INDENT * level
        target = stmt.target
        value = self.expr(stmt.value, scope)
        value_type = self.type_of(stmt.value)
        lines = self.flush(level)
        target_type = t.strip_optional(self.type_of(target))
        if stmt.op == "+=" and isinstance(target_type, t.ListType):
            # `xs += ys` extends the list in place, as in Python: every alias sees it
            code = self.mutated(self.expr(target, scope), scope, grow=True)
            extend = f"h.extend({code}, {self.stored(code, value, stmt.value)})"
            return lines + self.flush(level) + [f"{pad}{extend}"]
        if isinstance(target, ast.NameRef):
            local = None if target.qualified else scope.lookup(target.name)
            if local is not None:
                declared = scope.lookup_type(target.name) or t.ERROR
                value = self.coerce(value, value_type, declared)
                return lines + [f"{pad}{local} {stmt.op} {value}"]
            info = self.checked.state[target.name]
            accessor = f"self.{self.names.state[target.name]}"
            value = self.coerce(value, value_type, info.type)
            if stmt.op != "=":
                current = self.narrowed(accessor, info.type, self.type_of(target))
                value = f"{current} {stmt.op[0]} {value}"
            return lines + [f"{pad}self._set_scalar({target.name!r}, {value})"]
        record = (
            self.row_record(self.type_of(target.obj)) if isinstance(target, ast.Attribute) else None
        )
        if isinstance(target, ast.Attribute) and record is not None:
            # a field of a row: written through the journal, by the field's own writer when its
            # values are immutable, else by `_set`, which stores a copy
            row_code = self.expr(target.obj, scope)
            if isinstance(self.type_of(target.obj), t.RefType):
                row_code = f"self.{self._table_accessor(record.name)}.row({row_code})"
            lines += self.flush(level)
            if not row_code.isidentifier():
                temp = self.temp(scope)
                lines.append(f"{pad}{temp} = {row_code}")
                row_code = temp
            attr = self.names.field(record.name, target.name.text)
            declared = record.fields[target.name.text].type
            value = self.coerce(value, value_type, declared)
            if stmt.op != "=":
                current = self.narrowed(f"{row_code}.{attr}", declared, self.type_of(target))
                value = f"{current} {stmt.op[0]} {value}"
            table = self.names.table_of(record.name)
            if (
                _plain_valued(declared) and self.written_out
            ):  # the field's writer (field_writer)  # the field's writer (field_writer)
                return lines + [f"{pad}self.{self.field_writer(record, attr)}({row_code}, {value})"]
            return lines + [f"{pad}self._set({table!r}, {row_code}, {attr!r}, {value})"]
        # a part of a value (a record's field, a list element, a map entry): changed in place,
        # after journaling the place the value lives in, wherever the path to it came from
        assert isinstance(target, (ast.Attribute, ast.Index))
        obj_type = self.type_of(target.obj)
        if isinstance(target, ast.Index) and isinstance(t.strip_optional(obj_type), t.MapType):
            # `m[k] = v`: journaled by `_put` as the entry it replaces (O(1)), not the whole map
            obj = self.bound(self.expr(target.obj, scope), scope)
            index = self.expr(target.index, scope)
            lines += self.flush(level)
            if stmt.op != "=":
                value = f"h.lookup({obj}, {index}) {stmt.op[0]} {value}"
            return lines + [
                f"{pad}self._put({obj}, {index}, {self.stored(obj, value, stmt.value)})"
            ]
        obj = self.mutated(self.expr(target.obj, scope), scope)
        lines += self.flush(level)
        if isinstance(target, ast.Attribute):
            if isinstance(obj_type, t.VariantType):  # a field every case has: any case's
                shared = self.variant_field(obj_type, target.name.text)
                assert shared is not None
                attr, declared = shared
            else:
                assert isinstance(obj_type, t.RecordType)
                attr = self.names.field(obj_type.name, target.name.text)
                declared = self.checked.records[obj_type.name].fields[target.name.text].type
            value = self.coerce(value, value_type, declared)
            if stmt.op != "=":
                current = self.narrowed(f"{obj}.{attr}", declared, self.type_of(target))
                value = f"{current} {stmt.op[0]} {value}"
            return lines + [f"{pad}{obj}.{attr} = {self.stored(obj, value, stmt.value)}"]
        index = self.expr(target.index, scope)
        lines += self.flush(level)
        if isinstance(obj_type, t.ListType):
            if stmt.op != "=":
                value = f"h.at({obj}, {index}) {stmt.op[0]} {value}"
            return lines + [f"{pad}h.set_at({obj}, {index}, {self.stored(obj, value, stmt.value)})"]
        if stmt.op != "=":
            value = f"h.lookup({obj}, {index}) {stmt.op[0]} {value}"
        return lines + [f"{pad}{obj}[{index}] = {self.stored(obj, value, stmt.value)}"]

    def field_writer(self, record: RecordInfo, attr: str) -> str:
        """The method that writes one row field whose values are immutable, made once per
        field (see `writer_methods`)."""
        name = self.writers.get((record.name, attr))
        if name is None:
            name = self.names.writer_method(self.names.table_of(record.name), attr)
            self.writers[(record.name, attr)] = name
        return name

    def writer_methods(self) -> list[tuple[str, list[str], list[str], str]]:
        """(name, params, body, docstring) of each field writer used: `_set` for a field whose
        values are immutable (str, numbers, bools, enums, dates, refs), with what `_set` works
        out per call known here: no owned copy to make, the key's attribute, whether the value
        needs `store`'s check (strings and numbers) and the table's indexes (unique and ref
        fields); `_journal_field` written out. The indexes are still the runtime's
        (`_reindex`)."""
        methods = []
        for (entity, attr), name in self.writers.items():
            record = self.checked.records[entity]
            table = self.names.table_of(entity)
            field = next(
                f for f in record.fields.values() if self.names.field(entity, f.name) == attr
            )
            annotation = self.names.py_type(field.type)
            key = self.names.key_attr(entity)
            body = [
                f"old = row.{attr}",
                "if old == value and type(old) is type(value):",
                f"{INDENT}return  # assigning the current value is not a change",
            ]
            body += _store_check(field.type)
            # Environment._journal_field, inline: the undo entry, and the field's value
            # before the call for the end-of-call check
            body += [
                f"key = row.{key}",
                "journal = self._journal",
                "if journal is not None:  # None while building an initial state",
                f"{INDENT}journal.append(('field', {table!r}, key, row, {attr!r}, old))",
                "touched = self._touched",
                f"originals = touched.get(({table!r}, key))",
                "if originals is None:",
                f"{INDENT}touched[({table!r}, key)] = {{{attr!r}: old}}",
                "elif originals is not _INSERTED:",
                f"{INDENT}originals.setdefault({attr!r}, old)",
            ]
            if self._indexed(record, field.name):
                body.append(f"self._reindex({table!r}, row, {attr!r}, old, value)")
            body.append(f"row.{attr} = value")
            params = [f"row: {self.names.type_name(entity)}", f"value: {annotation}"]
            doc = f"`row.{attr} = value` for a row of {table}, journaled."
            methods.append((name, params, body, doc))
        return methods

    def _indexed(self, record: RecordInfo, field: str) -> bool:
        """The field is in one of the table's indexes: a unique one or a ref."""
        info = record.fields[field]
        if info.decl.unique or isinstance(t.strip_optional(info.type), t.RefType):
            return True
        return any(field in (n.text for n in u.fields) for u in record.decl.uniques)


def _plain_valued(value: t.Type) -> bool:
    """A field type whose values are immutable: primitives but json, enums, refs (keys)."""
    value = t.strip_optional(value)
    if isinstance(value, (t.EnumType, t.RefType)):
        return True
    return value in (t.INT, t.FLOAT, t.BOOL, t.STR, t.DATE, t.DATETIME, t.DURATION)


def _store_check(value: t.Type) -> list[str]:
    """`rt.store(value)` where `limits.store` checks this type's values, behind the test of
    its own fast case where it has one (an int in range, a short string: nothing to do)."""
    if not _stored_with_check(value):
        return []
    plain = t.strip_optional(value)
    if plain == t.INT:
        skip = "type(value) is int and _MIN_INT <= value <= _MAX_INT"
    elif plain == t.STR:
        skip = "type(value) is str and len(value) <= 64"
    else:
        return ["rt.store(value)"]
    return [f"if not ({skip}):", f"{INDENT}rt.store(value)"]


def _stored_with_check(value: t.Type) -> bool:
    """`limits.store` checks this type's values (a string's length, a number's range); it
    passes the others (bools, enums, dates, datetimes, durations, None) as they are."""
    value = t.strip_optional(value)
    if isinstance(value, t.RefType):
        return True  # a key: a str or an int
    return value in (t.INT, t.FLOAT, t.STR)
