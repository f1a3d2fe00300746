"""Stage 4b: type-checking declarations and statement bodies.

Extends the expression checker with statements, the places they write (for purity and the
effect summary), reachability (`return`/`fail` end a path) and the per-declaration contexts:
defaults, constants, invariants, fns and tools.  Task bodies are in tasks.py.
"""

from __future__ import annotations

from typing import Callable

from envdsl.diagnostics import DiagnosticSink, Edit, Fix, codes
from envdsl.semantics import types as t
from envdsl.semantics.aliases import AliasAnalysis
from envdsl.semantics.check_expr import ExprChecker
from envdsl.semantics.model import AliasSet, CallableInfo, CheckedSpec, Effects, Local, RecordInfo
from envdsl.semantics.scope import Context, Scope, local_of, path_of
from envdsl.semantics.suggest import did_you_mean
from envdsl.syntax import ast
from envdsl.syntax.visitor import DECLARATIONS, EXPRESSIONS, STATEMENTS
from envdsl.util import construct
from envdsl.util.frozen_node import record
from envdsl.util.source import Span


class BodyChecker(ExprChecker):
    """Checks declarations (`visit_<Decl>(decl)`) and statements (`stmt`, `visit_<Stmt>(stmt,
    scope) -> bool`, True when the statement ends every path) on top of the expressions."""

    families = (EXPRESSIONS, STATEMENTS, DECLARATIONS)
    not_applicable = {
        ast.EnumDecl: "an enum has no expression to type: resolve.py reads its members",
        ast.TaskDecl: "tasks are checked by task_checks.TaskChecker, once every body is",
    }

    def __init__(
        self,
        checked: CheckedSpec,
        sink: DiagnosticSink,
        assignable: t.Assignability,
        resolve_type: Callable[[ast.TypeExpr], t.Type],
    ):
        super().__init__(checked, sink, assignable)
        self.resolve_type = resolve_type
        # the dict's own `get`, not a lambda over self: a checker that its analysis refers back
        # to is a cycle, and it holds the whole spec (AST, types) for the garbage collector
        local_of = self.name_locals.get
        self.aliases = AliasAnalysis(checked, lambda node: local_of(id(node)))
        # writes through locals, resolved once the body is checked (a local's roots can grow
        # after the write: `x = o.tags` later in a loop)
        self.alias_writes: list[_AliasWrite] = []

    def enter(
        self, kind: str, owner: str, *, result: t.Type | None = None, row: RecordInfo | None = None
    ) -> Context:
        effects = self.checked.effects.setdefault(owner, Effects()) if owner else Effects()
        self.ctx = Context(kind, owner, effects, result=result, row=row)
        self.undeclared = set()
        return self.ctx

    # ---- declarations ------------------------------------------------------------------------
    def check_all(self) -> None:
        envs = [m.env for m in self.checked.modules if m.env is not None] + [self.checked.env]
        for env in envs:
            for decl in env.members:
                self.visit(decl)

    def not_applicable_node(self, node: object, *args: object) -> None:
        return None  # only declarations are listed: they have nothing to check here

    def visit_InvariantDecl(self, decl: ast.InvariantDecl) -> None:
        self.enter("env_invariant", f"invariant:{decl.text.value}")
        self.condition(decl.cond, Scope(), "an invariant")

    def visit_FnDecl(self, decl: ast.FnDecl) -> None:
        self.declared_callable(decl)

    def visit_ToolDecl(self, decl: ast.ToolDecl) -> None:
        self.declared_callable(decl)

    def declared_callable(self, decl: ast.FnDecl | ast.ToolDecl) -> None:
        info = self.checked.callables.get(decl.name.text)
        if info is not None and info.decl is decl:  # not a duplicate declaration
            self.callable_body(info)

    def visit_VariantDecl(self, decl: ast.VariantDecl) -> None:
        for case in decl.cases:
            self.visit_RecordDecl(case, f"{decl.name.text}.{case.name.text}")

    def visit_RecordDecl(self, decl: ast.RecordDecl, name: str | None = None) -> None:
        """A record's (or entity's, or variant case's, named `name`) defaults and invariants."""
        info = self.checked.records.get(name or decl.name.text)
        if info is None or info.decl is not decl:
            return
        for field in info.fields.values():
            if field.decl.default is None:
                continue
            self.enter("default", "")
            self.allow_auto = field.is_key
            default_type = self.expr(field.decl.default, Scope())
            self.allow_auto = False
            if (
                isinstance(field.decl.default, ast.Call)
                and isinstance(field.decl.default.func, ast.NameRef)
                and field.decl.default.func.name == "auto"
            ):
                if field.type != t.STR and not t.is_error(field.type):
                    self.error(
                        codes.INVALID_AUTO,
                        f"`auto(...)` makes str keys; '{field.name}' is {field.type}",
                        field.decl.default.span,
                        help=f"declare `key {field.name}: str = auto(...)`",
                    )
                continue
            self.require_assignable(
                default_type, field.type, field.decl.default.span, f"default of '{field.name}'"
            )
        for invariant in decl.invariants:
            self.enter(
                "row_invariant", f"invariant:{decl.name.text}:{invariant.text.value}", row=info
            )
            self.condition(invariant.cond, Scope(), "a row invariant")

    def visit_StateDecl(self, decl: ast.StateDecl) -> None:
        for field in decl.fields:
            info = self.checked.state.get(field.name.text)
            if field.default is None or info is None or info.decl is not field:
                continue
            self.enter("default", "")
            self.expect(field.default, Scope(), info.type, f"default of '{field.name.text}'")

    def visit_ConstDecl(self, decl: ast.ConstDecl) -> None:
        info = self.checked.consts.get(decl.name.text)
        if info is None or info.decl is not decl:
            return
        self.enter("const", "")
        self.expect(decl.value, Scope(), info.type, f"constant '{decl.name.text}'")

    def callable_body(self, info: CallableInfo) -> None:
        decl = info.decl
        self.enter(info.kind, info.name, result=info.result)
        scope = Scope()
        for param in info.params:
            if param.decl.default is not None:
                self.enter("default", "")
                self.expect(param.decl.default, Scope(), param.type, f"default of '{param.name}'")
                self.enter(info.kind, info.name, result=info.result)
            local = Local(param.name, param.type, param.decl.name.span, "param", True)
            if info.internal or not info.is_tool:
                # a fn's or internal tool's argument may be any value of its type in state
                local.roots = self.aliases.unknown_origin(param.type)
            scope.locals[param.name] = local
        if isinstance(decl, ast.FnDecl) and not isinstance(decl.body, ast.Block):
            self.expect(decl.body, scope, info.result, f"result of fn '{info.name}'")
            return
        body = decl.body
        assert isinstance(body, ast.Block)
        ends = self.block(body, scope.child())
        self.flush_alias_writes()
        if not ends and info.result != t.VOID and not t.is_error(info.result):
            self.error(
                codes.MISSING_RETURN,
                f"{info.kind} '{info.name}' can reach its end without returning a value of type {info.result}",
                Span(body.span.file, max(body.span.end - 1, body.span.start), body.span.end),
                help='end every path with `return value` or `fail "message"`',
            )

    # ---- statements --------------------------------------------------------------------------
    def block(self, block: ast.Block, scope: Scope) -> bool:
        """Check a block; True when every path through it ends (return, fail, break, continue)."""
        ends = False
        for stmt in block.stmts:
            if ends:
                self.error(
                    codes.UNREACHABLE_CODE,
                    "this statement can never run",
                    stmt.span,
                    help="the statement before it always leaves the block; remove or move it",
                )
                break
            ends = self.stmt(stmt, scope)
        self.report_unused(scope)
        return ends

    def report_unused(self, scope: Scope) -> None:
        for local in scope.locals.values():
            if (
                local.kind == "let"
                and not local.used
                and not local.name.startswith("_")
                and not t.is_error(local.type)  # its value was already reported
            ):
                self.sink.report(
                    codes.UNUSED_VARIABLE,
                    f"variable '{local.name}' is never read",
                    local.span,
                    help=f"remove it, or name it '_{local.name}' if it is intentional",
                )

    def stmt(self, stmt: ast.Stmt, scope: Scope) -> bool:
        construct.note(stmt.span)  # for an internal error: where the checker was
        ends: bool = self.handlers[stmt.__class__](self, stmt, scope)  # self.visit, inlined
        return ends

    def visit_Let(self, stmt: ast.Let, scope: Scope) -> bool:
        value = self.expr(stmt.value, scope)
        declared = self.resolve_annotation(stmt.type)
        if stmt.else_message is not None:
            self.message(stmt.else_message, scope)
            path = path_of(stmt.value)
            if path is not None and scope.narrowed_type(path) is not None:
                # `x` is optional but a `!= none` test already proved it is not: the `else`
                # can never run, which is harmless, so say so without rejecting the spec
                drop = Span(stmt.span.file, stmt.value.span.end, stmt.else_message.span.end)
                self.sink.report(
                    codes.REDUNDANT_LET_ELSE,
                    f"'{path}' cannot be none here (it was tested), so this `else` never runs",
                    stmt.value.span,
                    help=f"drop the `else` part: `let {stmt.name.text} = {path}`",
                    fixes=[Fix("drop the `else` part", (Edit(drop, ""),))],
                )
            elif not t.is_optional(value) and not t.is_error(value):
                self.error(
                    codes.NOT_OPTIONAL,
                    f"`let ... else` unwraps an optional, but this value is {value} and never none",
                    stmt.value.span,
                    help='drop the `else` part, or use `require cond else "message"` for a condition',
                )
            else:
                value = t.strip_optional(value) if not isinstance(value, t.NoneType) else t.ERROR
        if isinstance(value, t.VoidType):
            value = self.error(
                codes.TYPE_MISMATCH, "this call returns nothing to bind", stmt.value.span
            )
        if declared is not None:
            self.require_assignable(
                value, declared, stmt.value.span, f"value of '{stmt.name.text}'"
            )
            value = declared
        elif isinstance(value, t.TableType):
            # `let xs = users` binds the list of the rows (as a table used as a value is), so
            # that `xs = []` or `xs = [...]` later stays a list
            value = t.ListType(t.RecordType(value.entity, True))
        elif isinstance(value, t.NothingType) or _contains_nothing(value):
            pass  # `let xs = []`: the element type is fixed by the first use
        self.declare(stmt.name, value, scope)
        local = self.checked.locals.get(id(stmt.name))
        if local is not None and local.span is stmt.name.span:
            self.flows_into(local, stmt.value)
        return False

    def flows_into(self, local: Local, value: ast.Expr) -> None:
        """`let x = e` / `x = e`: x may now be (a part of) whatever e is."""
        roots = self.aliases.of(value)
        local.roots.self.add(roots.self)
        local.roots.inner.add(roots.inner)

    def resolve_annotation(self, node: ast.TypeExpr | None) -> t.Type | None:
        return None if node is None else self.resolve_type(node)

    def declare(self, name: ast.Name, value: t.Type, scope: Scope) -> None:
        existing = scope.lookup(name.text)
        if existing is not None and existing.kind in ("let", "param", "loop"):
            self.error(
                codes.DUPLICATE_DECLARATION,
                f"'{name.text}' is already a {'parameter' if existing.kind == 'param' else 'variable'} here",
                name.span,
                help=f"assign it without `let` (`{name.text} = ...`) or choose another name",
            )
            return
        local = Local(name.text, value, name.span, "let")
        scope.locals[name.text] = local
        self.checked.locals[id(name)] = local

    def message(self, node: ast.Expr, scope: Scope) -> None:
        self.expect(node, scope, t.STR, "the failure message")

    def visit_Require(self, stmt: ast.Require, scope: Scope) -> bool:
        self.condition(stmt.cond, scope, "a `require` condition")
        self.message(stmt.message, scope)
        self.narrow(stmt.cond, scope, positive=True)
        return False

    def visit_Fail(self, stmt: ast.Fail, scope: Scope) -> bool:
        self.message(stmt.message, scope)
        return True

    def visit_Return(self, stmt: ast.Return, scope: Scope) -> bool:
        expected = self.ctx.result or t.VOID
        if stmt.value is None:
            if expected != t.VOID and not t.is_error(expected):
                self.error(
                    codes.TYPE_MISMATCH,
                    f"`return` needs a {expected} value here",
                    stmt.span,
                    help=f"return a value of type {expected}",
                )
            return True
        value = self.expr(stmt.value, scope)
        if expected == t.VOID:
            self.error(
                codes.TYPE_MISMATCH,
                f"{self.ctx.describe} declares no result, but returns {value}",
                stmt.value.span,
                help=f"declare the result type: `-> {value}`" if not t.is_error(value) else None,
            )
        else:
            self.require_assignable(value, expected, stmt.value.span, "the returned value")
        return True

    def visit_If(self, stmt: ast.If, scope: Scope) -> bool:
        all_end = True
        negations: list[ast.Expr] = []
        for branch in stmt.branches:
            branch_scope = scope.child()
            for previous in negations:
                self.narrow(previous, branch_scope, positive=False)
            self.condition(branch.cond, branch_scope, "an `if` condition")
            self.narrow(branch.cond, branch_scope, positive=True)
            all_end = self.block(branch.body, branch_scope) and all_end
            negations.append(branch.cond)
        if stmt.orelse is not None:
            else_scope = scope.child()
            for previous in negations:
                self.narrow(previous, else_scope, positive=False)
            all_end = self.block(stmt.orelse, else_scope) and all_end
        else:
            all_end = False
            # `if x == none { fail ... }` proves x != none for the rest of the block
            if len(stmt.branches) == 1 and _always_leaves(stmt.branches[0].body):
                self.narrow(stmt.branches[0].cond, scope, positive=False)
        return all_end

    def visit_For(self, stmt: ast.For, scope: Scope) -> bool:
        iterable = self.expr(stmt.iterable, scope)
        body_scope = scope.child()
        self.bind_targets(stmt.targets, iterable, stmt.iterable.span, body_scope)
        elements = self.aliases.element(stmt.iterable, {})
        for target in stmt.targets:  # a loop variable is the element itself, as in Python
            local = body_scope.locals.get(target.text)
            if local is not None:
                local.roots.self.add(elements)
                local.roots.inner.add(elements)
        self.ctx.loop_depth += 1
        self.block(stmt.body, body_scope)
        self.ctx.loop_depth -= 1
        return False  # the loop may run zero times

    def visit_Break(self, stmt: ast.Break, scope: Scope) -> bool:
        return True

    def visit_Continue(self, stmt: ast.Continue, scope: Scope) -> bool:
        return True

    def visit_ExprStmt(self, stmt: ast.ExprStmt, scope: Scope) -> bool:
        self.expr(stmt.expr, scope)
        return False

    def visit_Assign(self, stmt: ast.Assign, scope: Scope) -> bool:
        target = stmt.target
        if isinstance(target, ast.Index) and isinstance(target.obj, ast.NameRef):
            local = local_of(scope, target.obj)
            if local is not None and local.type == t.MapType(t.NOTHING, t.NOTHING):
                # `let m = {}` then `m[k] = v`: the first entry fixes the map's types
                local.type = t.MapType(self.expr(target.index, scope), self.expr(stmt.value, scope))
        if (
            isinstance(target, ast.NameRef)
            and not target.qualified
            and scope.lookup(target.name) is None
            and target.name not in self.checked.state
            and self.ctx.row is None
        ):
            if target.name in self.checked.consts:
                self.expr(stmt.value, scope)
                self.error(codes.ASSIGN_TO_READONLY, f"'{target.name}' is a constant", target.span)
                return False
            value_type = self.expr(stmt.value, scope)
            if target.name in self.undeclared:
                return False  # already reported at its first assignment
            self.undeclared.add(target.name)
            writable = scope.all_names() + [
                name
                for name, info in self.checked.state.items()
                if not isinstance(info.type, t.TableType)
            ]
            meant, renames = did_you_mean(target.name, writable, target.span)
            fixes: list[Fix] = list(renames)  # a typo of a variable is likelier than a new one
            if stmt.op == "=":
                # Python's habit: `x = e` declares x. Declare it here, so that later reads
                # of x are checked against its value and not reported again.
                local = Local(target.name, value_type, target.span, "let", used=True)
                scope.locals[target.name] = local
                at = Span(target.span.file, target.span.start, target.span.start)
                fixes.append(Fix(f"declare it: `let {target.name} = ...`", (Edit(at, "let "),)))
            self.error(
                codes.UNKNOWN_NAME,
                f"unknown name '{target.name}'",
                target.span,
                help=(
                    f"{meant + ' Or ' if meant else ''}declare a new variable with `let`: "
                    f"`let {target.name} = ...`"
                ),
                fixes=fixes,
            )
            return False
        # what the place may hold (its declared type: assigning replaces a narrowed optional
        # or variant case, so `if b.due != none { b.due = none }` is fine) and what it holds
        # now, after `!= none` / `is Case` tests (what `+=` reads)
        path = path_of(target)
        narrowed = scope.narrowed_type(path) if path is not None else None
        if isinstance(target, ast.NameRef) and (local := local_of(scope, target)) is not None:
            narrowed_type = self.expr(target, scope)
            target_type = local.type
        elif path is not None and narrowed is not None:
            target_type = self.expr(target, scope.without_narrowing(path))
            narrowed_type = narrowed
        else:
            narrowed_type = target_type = self.expr(target, scope)
        value_type = self.expr(stmt.value, scope)
        if (
            stmt.op == "="
            and isinstance(target, ast.NameRef)
            and (local := local_of(scope, target)) is not None
        ):
            self.flows_into(local, stmt.value)
        # `xs += ys` extends the list in place (as Python does): a write through xs itself
        in_place = stmt.op == "+=" and isinstance(t.strip_optional(target_type), t.ListType)
        if self.check_target(target, stmt.span, scope, stmt.value, in_place=in_place):
            if stmt.op == "=":
                if (
                    isinstance(target, ast.NameRef)
                    and (local := local_of(scope, target)) is not None
                    and _contains_nothing(local.type)
                    and not _contains_nothing(value_type)
                ):
                    local.type = value_type  # `let xs = []` then `xs = [1]` fixes the element type
                else:
                    self.require_assignable(
                        value_type,
                        target_type,
                        stmt.value.span,
                        f"value assigned to '{_describe(target)}'",
                    )
            elif isinstance(narrowed_type, t.OptionalType):
                self.error(
                    codes.POSSIBLY_NONE,
                    f"'{_describe(target)}' may be none, so '{stmt.op}' may fail",
                    target.span,
                    help="test `x != none` first, or assign a value with `=`",
                )
            else:
                base = narrowed_type
                result = (
                    None
                    if t.is_error(base) or t.is_error(value_type)
                    else _augmented(stmt.op[0], base, value_type)
                )
                if result is None and not (t.is_error(base) or t.is_error(value_type)):
                    self.error(
                        codes.INVALID_OPERAND,
                        f"'{stmt.op}' is not defined for {target_type} and {value_type}",
                        stmt.span,
                    )
                elif (
                    result == t.FLOAT
                    and target_type == t.INT
                    and isinstance(target, ast.NameRef)
                    and local_of(scope, target) is not None
                ):  # `let total = 0`, then `total += price`: Python would make it a float
                    self.error(
                        codes.TYPE_MISMATCH,
                        f"result of '{stmt.op}': expected int, found float",
                        stmt.span,
                        help=f"'{target.name}' holds an int: start it as a float "
                        f"(`let {target.name} = 0.0`), or round the value: `round(x)`",
                    )
                elif result is not None:
                    self.require_assignable(
                        result, target_type, stmt.span, f"result of '{stmt.op}'"
                    )
        if path is not None:
            scope.forget(path)
        return False

    def check_target(
        self,
        target: ast.Expr,
        span: Span,
        scope: Scope,
        value: ast.Expr | None = None,
        *,
        in_place: bool = False,
    ) -> bool:
        """Report assignments to read-only places and keys; record the write. False if bad."""
        if isinstance(target, ast.Attribute):
            obj_type = self.checked.expr_types.get(id(target.obj))
            variant = self.checked.variants.get(_variant_name(obj_type))
            if variant is not None and target.name.text == variant.tag:
                self.error(
                    codes.ASSIGN_TO_IMMUTABLE,
                    f"'{variant.tag}' is the tag of {variant.name}: it names the value's case and "
                    "cannot be assigned",
                    target.span,
                    help=f"store a value of the other case instead: `x = {variant.name}.<case>(...)`",
                )
                return False
            record = _row_record(self.checked, obj_type)
            if record is not None:
                field = record.fields.get(target.name.text)
                if field is not None and field.is_key:
                    self.error(
                        codes.ASSIGN_TO_KEY,
                        f"'{field.name}' is the key of {record.name} and cannot change",
                        target.span,
                        help=f"insert a new {record.name} and delete the old one instead",
                    )
                    return False
        return self.write_place(
            target,
            span,
            scope,
            mutation="+=" if in_place else None,
            values=(value,) if value is not None else (),
        )

    def write_place(
        self,
        target: ast.Expr,
        span: Span,
        scope: Scope,
        *,
        mutation: str | None,
        values: tuple[ast.Expr, ...] = (),
    ) -> bool:
        """Record a write through `target`; report it where state may not change."""
        immutable = self._immutable_field(target)
        if immutable is not None:
            record, field = immutable
            self.error(
                codes.ASSIGN_TO_IMMUTABLE,
                f"'{field}' of {record} is immutable: it is set when the row is inserted and "
                "never changes",
                target.span,
                help=f"drop `immutable` from '{field}' if it may change",
            )
            return False
        effect = self._place(target, scope, whole=mutation is None)
        if effect is None:
            self.write_through_value(target, span, mutation, values)
            return True
        if effect.startswith("readonly:"):
            self.error(
                codes.ASSIGN_TO_READONLY,
                effect[len("readonly:") :],
                target.span,
                help="tables change through insert/delete and row fields; constants never",
            )
            return False
        if not self.ctx.can_write:
            what = (
                f"modifies '{effect}'"
                if mutation is None
                else f"modifies '{effect}' with {mutation}"
            )
            if self.ctx.kind == "query":
                self.error(
                    codes.WRITE_IN_QUERY,
                    f"query '{self.ctx.owner}' {what}",
                    span,
                    help="queries only read; declare the tool as an `action` to change state",
                )
            else:
                self.error(
                    codes.WRITE_IN_PURE_CONTEXT,
                    f"{self.ctx.describe} {what}",
                    span,
                    help=f"{self.ctx.describe} must not change state; only actions can",
                )
            return False
        self.ctx.effects.writes.add(effect)
        return True

    def write_through_value(
        self, target: ast.Expr, span: Span, mutation: str | None, values: tuple[ast.Expr, ...]
    ) -> None:
        """A write through a value that is not a state path: a local, a loop variable, a
        call's result.  It lands wherever that value lives; resolved in flush_alias_writes."""
        if mutation is None:
            if isinstance(target, ast.NameRef):
                base = self.name_locals.get(id(target))
                if base is not None:  # `x = e`, `x += e`: rebinding the local itself
                    base.write_bases.add(id(target))
                    self.alias_writes.append(_AliasWrite(AliasSet(), self.ctx, span, target, base))
                return
            if not isinstance(target, (ast.Attribute, ast.Index)):
                return  # not a place at all (reported by the parser)
            written = target.obj  # the record, list or map a part of which is assigned
        else:
            written = target
        base_ref = _base_name(written)
        base = self.name_locals.get(id(base_ref)) if base_ref is not None else None
        if base is not None and base_ref is not None:
            base.write_bases.add(id(base_ref))
            for value in values:  # a local's value now holds what was stored into it
                base.roots.inner.add(self.aliases.of(value).both())
        if isinstance(target, ast.NameRef) and mutation is None:
            return
        roots = self.aliases.of(written).self
        self.alias_writes.append(_AliasWrite(roots, self.ctx, span, written, base))

    def flush_alias_writes(self) -> None:
        """Resolve the writes through locals of the body just checked: each is a write of
        every state place the local may point into (E3001/E3002 where state may not change),
        or, for a value that lives nowhere in state and is never read, a write with no effect."""
        pending, self.alias_writes = self.alias_writes, []
        dead_reported: set[int] = set()
        for write in pending:
            places = sorted(write.roots.resolve())
            if not places:
                local = write.local
                if (
                    local is not None
                    and local.kind in ("let", "loop", "param")
                    and local.reads <= local.write_bases
                    and not local.name.startswith("_")
                    and id(local) not in dead_reported
                    and not t.is_error(local.type)
                ):
                    dead_reported.add(id(local))
                    self._report_dead_write(local, write)
                continue
            ctx = write.ctx
            through = path_of(write.target) or "a value"
            # only places seen on a path: a type-based guess would reject correct specs
            immutable = self._immutable_place(sorted(write.roots.resolve(seen_only=True)))
            if immutable is not None:
                self.error(
                    codes.ASSIGN_TO_IMMUTABLE,
                    f"'{through}' is the {immutable} field, which is immutable: it is set "
                    "when the row is inserted and never changes",
                    write.span,
                    help=f"'{through}' is that value in state, not a copy; build a new value "
                    "instead (`list(...)`, a record constructor), or drop `immutable`",
                )
                continue
            if not ctx.can_write:
                what = f"modifies '{places[0]}' through '{through}'"
                if ctx.kind == "query":
                    self.error(
                        codes.WRITE_IN_QUERY,
                        f"query '{ctx.owner}' {what}",
                        write.span,
                        help=f"'{through}' is a value in state, not a copy: writing it changes "
                        "the state; declare the tool as an `action`, or build a new value",
                    )
                else:
                    self.error(
                        codes.WRITE_IN_PURE_CONTEXT,
                        f"{ctx.describe} {what}",
                        write.span,
                        help=f"'{through}' is a value in state, not a copy; "
                        f"{ctx.describe} must not change state; only actions can",
                    )
                continue
            ctx.effects.writes.update(places)

    def _immutable_place(self, places: list[str]) -> str | None:
        """'Entity.field' of the first immutable row field among the places, if any."""
        for place in places:
            table, _, field_name = place.partition(".")
            for record in self.checked.records.values():
                field = record.fields.get(field_name) if record.table == table else None
                if field is not None and field.decl.immutable:
                    return f"{record.name}.{field_name}"
        return None

    def _report_dead_write(self, local: Local, write: _AliasWrite) -> None:
        text = self.checked.spec.text_of(write.span)
        start, end = write.span.start, write.span.end
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        alone = not text[line_start:start].strip() and not text[end:line_end].strip()
        fixes = []
        if alone and text:
            fixes.append(
                Fix(
                    "remove the write",
                    (Edit(Span(write.span.file, line_start, min(line_end + 1, len(text))), ""),),
                )
            )
        self.sink.report(
            codes.WRITE_WITHOUT_EFFECT,
            f"'{local.name}' is written but never read: the write has no effect",
            write.span,
            help=(
                f"'{local.name}' is a new value that lives nowhere in state; to change the "
                "state, write the state place itself (`row.field = ...`, `row.items.append(...)`); "
                "otherwise remove the write"
            ),
            fixes=fixes,
        )

    def _immutable_field(self, target: ast.Expr) -> tuple[str, str] | None:
        """(entity, field) when a write through `target` changes an immutable row field."""
        while isinstance(target, (ast.Attribute, ast.Index)):
            if isinstance(target, ast.Attribute):
                record = _row_record(self.checked, self.checked.expr_types.get(id(target.obj)))
                if record is not None:
                    field = record.fields.get(target.name.text)
                    if field is not None and field.decl.immutable:
                        return record.name, field.name
                    return None
            target = target.obj
        return None

    def _place(self, target: ast.Expr, scope: Scope, *, whole: bool) -> str | None:
        """The state written through `target` ('table', 'table.field', 'scalar'), None for a
        local value, or 'readonly:<message>'."""
        if isinstance(target, ast.NameRef):
            name = target.name
            # a local or loop variable bound to a row is a handle: writes through it reach the table
            if self.ctx.row is not None and name in self.ctx.row.fields and not target.qualified:
                return f"{self.ctx.row.table or self.ctx.row.name}.{name}"
            if local_of(scope, target) is not None:
                return None  # a local value (a local row is written through its fields)
            info = self.checked.state.get(name)
            if info is not None:
                if isinstance(info.type, t.TableType) and whole:
                    return f"readonly:cannot assign a whole table '{name}'"
                return name
            if name == "initial":
                return "readonly:`initial` is the state before the task; it cannot change"
            if (
                name in self.checked.consts
                or name in self.checked.enums
                or name in self.checked.records
            ):
                return f"readonly:'{name}' cannot be changed"
            return None
        if isinstance(target, ast.Attribute):
            obj_type = self.checked.expr_types.get(id(target.obj))
            if isinstance(obj_type, t.InitialStateType):
                return "readonly:`initial` is the state before the task; it cannot change"
            record = _row_record(self.checked, obj_type)
            if record is not None:
                return f"{record.table or record.name}.{target.name.text}"
            return self._place(target.obj, scope, whole=False)
        if isinstance(target, ast.Index):
            obj_type = self.checked.expr_types.get(id(target.obj))
            if isinstance(obj_type, t.TableType) and whole:
                return "readonly:rows are added with `table.insert(Row(...))`, not by assignment"
            return self._place(target.obj, scope, whole=False)
        return None


def _variant_name(value_type: t.Type | None) -> str:
    """The variant of a variant value or of a narrowed case value; "" for any other type."""
    if isinstance(value_type, t.VariantType):
        return value_type.name
    return (t.variant_of(value_type) if value_type is not None else None) or ""


def _row_record(checked: CheckedSpec, value_type: t.Type | None) -> RecordInfo | None:
    if isinstance(value_type, t.RecordType) and value_type.is_entity:
        return checked.records.get(value_type.name)
    if isinstance(value_type, t.RefType):
        return checked.records.get(value_type.entity)
    return None


def _always_leaves(block: ast.Block) -> bool:
    last = block.stmts[-1] if block.stmts else None
    return isinstance(last, (ast.Return, ast.Fail, ast.Break, ast.Continue))


def _contains_nothing(value: t.Type) -> bool:
    if isinstance(value, t.NothingType):
        return True
    if isinstance(value, (t.ListType, t.SetType)):
        return _contains_nothing(value.elem)
    if isinstance(value, t.MapType):
        return _contains_nothing(value.key) or _contains_nothing(value.value)
    return False


def _augmented(op: str, target: t.Type, value: t.Type) -> t.Type | None:
    from envdsl.semantics.check_expr import arithmetic

    if isinstance(target, t.ListType) and op == "+":
        return target if isinstance(value, t.ListType) else None
    return arithmetic(op, target, value)


def _describe(target: ast.Expr) -> str:
    return path_of(target) or "target"


@record
class _AliasWrite:
    roots: AliasSet  # where the written value may live
    ctx: Context
    span: Span
    target: ast.Expr  # the value written through
    local: Local | None  # the local the target starts from, if any


def _base_name(node: ast.Expr) -> ast.NameRef | None:
    """`x` in `x`, `x.f`, `x[k].g`: the name a chain of fields and indexes starts from."""
    while isinstance(node, (ast.Attribute, ast.Index)):
        node = node.obj
    return node if isinstance(node, ast.NameRef) else None
