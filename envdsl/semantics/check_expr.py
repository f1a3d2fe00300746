"""Stage 4a: type-checking expressions.

`ExprChecker.expr(node, scope)` returns the node's type, records it in the model, reports
what is wrong and returns `ERROR` after a report so that callers stay silent (one mistake,
one diagnostic).  Calls of builtins and methods are typed in builtins.py.
"""

from __future__ import annotations

from typing import ClassVar, Iterable

from envdsl.diagnostics import DiagnosticSink, Edit, Fix, codes
from envdsl.semantics import builtins
from envdsl.semantics import types as t
from envdsl.semantics.model import CallableInfo, CheckedSpec, Effects, Local, RecordInfo
from envdsl.semantics.scope import Context, Scope, path_of
from envdsl.semantics.suggest import as_function_call, did_you_mean
from envdsl.syntax import ast
from envdsl.syntax.visitor import EXPRESSIONS, Family, Visitor
from envdsl.util import construct
from envdsl.util.source import Span

_ARITH = {"+", "-", "*", "/", "//", "%", "**"}
_DATE_LIKE = (t.DATE, t.DATETIME)
_EMPTY_MAP = t.MapType(t.NOTHING, t.NOTHING)  # the type of the literal `{}`


class ExprChecker(Visitor):
    """Types an expression (`expr`): one `visit_<Node>(node, scope) -> Type` per kind."""

    families: ClassVar[tuple[Family, ...]] = (EXPRESSIONS,)  # BodyChecker adds its own

    def __init__(self, checked: CheckedSpec, sink: DiagnosticSink, assignable: t.Assignability):
        self.checked = checked
        self.sink = sink
        self.assignable = assignable
        self.ctx: Context = Context("const", "", Effects())
        self.allow_auto = False  # set while checking the default of a key field
        # (check, binding) pairs already reported: one mistake, one diagnostic
        self.bindings_reported: set[tuple[str, str]] = set()
        # names assigned without `let` in the current body, each reported once (E1001)
        self.undeclared: set[str] = set()
        self.name_locals: dict[int, Local] = {}  # id of a name reference -> the local it reads

    # ---- helpers -----------------------------------------------------------------------------
    def error(
        self,
        code: codes.Code,
        message: str,
        span: Span,
        help: str | None = None,
        fixes: Iterable[object] = (),
        notes: Iterable[str] = (),
    ) -> t.Type:
        self.sink.report(code, message, span, help=help, fixes=fixes, notes=notes)  # type: ignore[arg-type]
        return t.ERROR

    def record(self, node: ast.Expr, result: t.Type) -> t.Type:
        self.checked.expr_types[id(node)] = result
        return result

    def expect(self, node: ast.Expr, scope: Scope, expected: t.Type, what: str) -> t.Type:
        """Check node and that its type fits `expected`; `what` names the slot in messages."""
        actual = self.expr(node, scope)
        self.require_assignable(actual, expected, node.span, what)
        return actual

    def require_assignable(self, actual: t.Type, expected: t.Type, span: Span, what: str) -> bool:
        if self.assignable(actual, expected):
            return True
        if isinstance(actual, t.OptionalType) and self.assignable(actual.inner, expected):
            self.error(
                codes.POSSIBLY_NONE,
                f"{what} may be none here: expected {expected}, found {actual}",
                span,
                help='unwrap it first: `let x = value else "message"`, '
                "or test `if x != none { ... }`",
            )
            return False
        help = None
        fixes: tuple[Fix, ...] = ()
        if actual == t.FLOAT and t.strip_optional(expected) == t.INT:
            # `let cents: int = price * 100`: Python's habit is int(...), which truncates
            help = "round it to an int: `round(x)` (`int(x)` would drop the fraction)"
            fixes = (
                Fix(
                    "round it with `round(...)`",
                    (
                        Edit(Span(span.file, span.start, span.start), "round("),
                        Edit(Span(span.file, span.end, span.end), ")"),
                    ),
                ),
            )
        if isinstance(actual, t.MapType) and isinstance(expected, (t.RecordType, t.VariantType)):
            # `{"kind": "cash", "id": "x"}`: Python's dict where a typed value is built
            case = ".<case>" if isinstance(expected, t.VariantType) else ""
            help = f"build the value: `{expected.name}{case}(field=...)`, not a map"
        if actual == t.NONE and not isinstance(expected, t.OptionalType):
            help = f"only an optional holds none: declare the type `{expected}?`"
        if actual == t.STR and isinstance(expected, t.EnumType):
            help = f"write the member itself: `{expected.name}.<member>`"
        if actual == t.STR and expected in _DATE_LIKE:
            help = f'convert it: `{expected}("...")`'
        shown = str(actual)
        if actual == _EMPTY_MAP and isinstance(t.strip_optional(expected), t.SetType):
            shown = "an empty map"  # `{}`: the Python reading, and the one LLMs forget
            help = "`{}` is an empty map, as in Python; the empty set is `set()`"
        self.error(
            codes.TYPE_MISMATCH,
            f"{what}: expected {expected}, found {shown}",
            span,
            help=help,
            fixes=fixes,
        )
        return False

    def condition(self, node: ast.Expr, scope: Scope, what: str, hint: str | None = None) -> bool:
        """Check that `node` is a bool; False (reported) where it is some other value."""
        actual = self.expr(node, scope)
        if actual == t.BOOL or t.is_error(actual):
            return True
        hint = hint or "compare explicitly, e.g. `len(xs) > 0` or `x != none`"
        self.error(
            codes.CONDITION_NOT_BOOL, f"{what} must be a bool, found {actual}", node.span, hint
        )
        return False

    def write_place(
        self,
        target: ast.Expr,
        span: Span,
        scope: Scope,
        *,
        mutation: str | None,
        values: tuple[ast.Expr, ...] = (),
    ) -> bool:
        """Record a write through `target` (implemented by check.BodyChecker)."""
        raise NotImplementedError

    def note_read(self, what: str) -> None:
        self.ctx.effects.reads.add(what)

    # ---- expressions -------------------------------------------------------------------------
    def expr(self, node: ast.Expr, scope: Scope) -> t.Type:
        construct.note(node.span)  # for an internal error: where the checker was
        result: t.Type = self.handlers[node.__class__](self, node, scope)  # self.visit, inlined
        return self.record(node, result)

    def visit_IntLit(self, node: ast.IntLit, scope: Scope) -> t.Type:
        return t.INT

    def visit_FloatLit(self, node: ast.FloatLit, scope: Scope) -> t.Type:
        return t.FLOAT

    def visit_StrLit(self, node: ast.StrLit, scope: Scope) -> t.Type:
        return t.STR

    def visit_BoolLit(self, node: ast.BoolLit, scope: Scope) -> t.Type:
        return t.BOOL

    def visit_NoneLit(self, node: ast.NoneLit, scope: Scope) -> t.Type:
        return t.NONE

    def visit_FString(self, node: ast.FString, scope: Scope) -> t.Type:
        for part in node.parts:
            if isinstance(part, ast.FStringPart):
                part_type = self.expr(part.expr, scope)
                if isinstance(part_type, (t.TypeRefType, t.VoidType, t.TableType)):
                    self.error(
                        codes.TYPE_MISMATCH,
                        f"cannot format {part_type} in an f-string",
                        part.span,
                    )
                spec = part.format_spec
                if spec and spec.rstrip().endswith(("f", "e", "%")):
                    if not (t.is_error(part_type) or part_type in t.NUMERIC):
                        self.error(
                            codes.TYPE_MISMATCH,
                            f"format ':{spec}' needs a number, found {part_type}",
                            part.span,
                        )
        return t.STR

    def visit_NameRef(self, node: ast.NameRef, scope: Scope) -> t.Type:
        if node.qualified:
            return self.state_field(node, scope)
        local = scope.lookup(node.name)
        if local is not None:
            self.name_locals[id(node)] = local
            local.reads.add(id(node))
        return self.name(node.name, node.span, scope)

    def name(self, name: str, span: Span, scope: Scope) -> t.Type:
        if self.ctx.kind == "check" and name in _CHECK_NAMES:
            hider = self.check_name_hider(name, scope)
            if hider is not None:
                self.checked.used.add(name)  # it is reached: no "never used" beside this error
                meaning = _CHECK_NAMES[name]
                escape = f"; `state.{name}` reads the field" if hider == "state field" else ""
                return self.error(
                    codes.CHECK_NAME_TAKEN,
                    f"in a check, `{name}` is {meaning}, but the {hider} '{name}' hides it",
                    span,
                    help=f"rename the {hider} (`{name}_value`): in a check `{name}` always "
                    f"means {meaning}{escape}",
                )
        narrowed = scope.narrowed_type(name)
        local = scope.lookup(name)
        if local is not None:
            local.used = True
            if local.kind == "binding" and self.ctx.kind == "check":
                return self.binding_in_check(local, span)
            return narrowed if narrowed is not None else local.type
        ctx = self.ctx
        if ctx.row is not None and name in ctx.row.fields:
            return narrowed if narrowed is not None else ctx.row.fields[name].type
        if name in self.checked.state and ctx.sees_state:
            self.note_read(name)
            return narrowed if narrowed is not None else self.checked.state[name].type
        if name in self.checked.consts:
            self.checked.used.add(name)
            return self.checked.consts[name].type
        if name in self.checked.enums:
            self.checked.used.add(name)
            return t.TypeRefType(t.EnumType(name))
        if name in self.checked.records:
            self.checked.used.add(name)
            info = self.checked.records[name]
            return t.TypeRefType(t.RecordType(name, info.is_entity))
        if name in self.checked.variants:
            self.checked.used.add(name)
            return t.TypeRefType(t.VariantType(name))
        if name == "initial" and ctx.kind == "check":
            return t.InitialStateType()
        if name == "answer" and ctx.kind == "check":
            return t.STR  # the agent's final message to the user
        if name in self.checked.state:
            return self.error(
                codes.UNKNOWN_NAME,
                f"{ctx.describe} cannot read the state field '{name}'",
                span,
                help="defaults, constants and init values are computed without the state",
            )
        if name in self.checked.callables:
            return self.error(
                codes.UNKNOWN_NAME,
                f"'{name}' is a {self.checked.callables[name].kind}, not a value",
                span,
                help=f"call it: `{name}(...)`",
            )
        if name in self.undeclared:
            return t.ERROR  # `x = e` without `let` was reported where x was assigned
        candidates = set(scope.all_names()) | set(self.checked.consts) | set(self.checked.enums)
        if ctx.sees_state:
            candidates |= set(self.checked.state)
        if ctx.row is not None:
            candidates |= set(ctx.row.fields)
        help, fixes = did_you_mean(name, candidates, span)
        if name == "state" and ctx.sees_state:
            first = next(iter(self.checked.state), "users")
            help, fixes = f"`state` is no value: name one of its fields, `state.{first}`", ()
        if help is None and name in ("self", "this"):
            help = "there is no `self`: name state fields directly (`users`, `now`)"
        if help is None and name in _PYTHON_MODULES:
            help = _PYTHON_MODULES[name]
        if help is None:  # `status = active`: a member, unqualified, of one enum
            owners = [e for e, info in self.checked.enums.items() if name in info.members]
            if len(owners) == 1:
                member = f"{owners[0]}.{name}"
                help = f"write the member with its enum: `{member}`"
                fixes = (Fix(f"write `{member}`", (Edit(span, member),)),)
        return self.error(codes.UNKNOWN_NAME, f"unknown name '{name}'", span, help, fixes)

    def check_name_hider(self, name: str, scope: Scope) -> str | None:
        """The kind of what a check's `answer` or `initial` would name instead, as `name`
        resolves it: the check could not reach the agent's message or the state before the
        task, and a grader that reads another value than its author meant passes wrong runs."""
        local = scope.lookup(name)
        if local is not None:
            return _local_kind(local)
        if self.ctx.row is not None and name in self.ctx.row.fields:
            return "field"
        if name in self.checked.state and self.ctx.sees_state:
            return "state field"
        if name in self.checked.consts:
            return "constant"
        if name in self.checked.enums:
            return "enum"
        if name in self.checked.records:
            return "type"
        if name in self.checked.variants:
            return "variant"
        return None

    def state_field(self, node: ast.NameRef, scope: Scope) -> t.Type:
        """`state.<name>`: the state field, past any parameter, local or row field so named."""
        name, ctx = node.name, self.ctx
        holder = scope.lookup("state")
        if holder is not None or (ctx.row is not None and "state" in ctx.row.fields):
            what = f"the {_local_kind(holder)} 'state'" if holder else "the row field 'state'"
            return self.error(
                codes.STATE_NAME_TAKEN,
                f"`state.{name}` names a state field, but {what} hides `state` here",
                node.span,
                help="rename it (`new_state`, `status`): `state.` always names the state",
            )
        info = self.checked.state.get(name)
        if info is None:
            help, fixes = did_you_mean(name, self.checked.state, node.name_span)
            return self.error(
                codes.UNKNOWN_STATE_FIELD,
                f"the state has no field '{name}'",
                node.span,
                help or f"the state fields are: {', '.join(self.checked.state) or 'none'}",
                fixes,
            )
        if not ctx.sees_state:
            return self.error(
                codes.UNKNOWN_NAME,
                f"{ctx.describe} cannot read the state field '{name}'",
                node.span,
                help="defaults, constants and init values are computed without the state",
            )
        self.note_read(name)
        narrowed = scope.narrowed_type(f"state.{name}")
        return narrowed if narrowed is not None else info.type

    def binding_in_check(self, local: Local, span: Span) -> t.Type:
        """A check reads only the agent's run; the solution's `let` holds what the reference
        run produced (its auto key, its result), which an agent's run need not reproduce."""
        name = local.name
        if (self.ctx.owner, name) in self.bindings_reported:
            return t.ERROR
        self.bindings_reported.add((self.ctx.owner, name))
        help = (
            f"`{name}` is what the reference solution got; an agent's run can differ (another "
            "auto key, another order). Check the state the task is about, the trace "
            '(`called("tool", arg=...)`) or `answer`'
        )
        if isinstance(local.type, t.RecordType) and local.type.is_entity:
            tables = [
                table
                for table, info in self.checked.state.items()
                if isinstance(info.type, t.TableType) and info.type.entity == local.type.name
            ]
            if tables:
                table, var = tables[0], local.type.name[0].lower()
                help = (
                    f"`{name}` is the row the reference solution got; an agent's row can have "
                    f"another key. Find it by its content: `any({var}.<field> == ... for {var} "
                    f"in {table})`, `count({var} for {var} in {table} if ...) == 1`, or "
                    f"`first({var} for {var} in {table} if ...)` (the row or none)"
                )
        return self.error(
            codes.CHECK_READS_SOLUTION_BINDING,
            f"a check cannot read the solution's binding '{name}'",
            span,
            help=help,
        )

    def visit_Attribute(self, node: ast.Attribute, scope: Scope) -> t.Type:
        path = path_of(node)
        obj_type = self.expr(node.obj, scope)
        if path is not None:
            narrowed = scope.narrowed_type(path)
            if narrowed is not None:
                self.attribute(obj_type, node, scope)  # still records reads and checks the name
                return narrowed
        return self.attribute(obj_type, node, scope)

    def attribute(self, obj_type: t.Type, node: ast.Attribute, scope: Scope) -> t.Type:
        field_name = node.name.text
        if t.is_error(obj_type):
            return t.ERROR
        if isinstance(obj_type, t.OptionalType):
            return self.error(
                codes.POSSIBLY_NONE,
                f"'{_short(node.obj)}' may be none, so '.{field_name}' may fail",
                node.obj.span,
                help='unwrap it first: `let x = value else "message"`, or test '
                "`if x != none { ... }`",
            )
        if isinstance(obj_type, t.TypeRefType):
            target = obj_type.target
            if isinstance(target, t.EnumType):
                enum = self.checked.enums[target.name]
                if field_name in enum.members:
                    return target
                help, fixes = did_you_mean(field_name, enum.members, node.name.span)
                return self.error(
                    codes.UNKNOWN_ENUM_MEMBER,
                    f"'{field_name}' is not a member of {enum.name}",
                    node.name.span,
                    help or f"the members are: {', '.join(enum.members)}",
                    fixes,
                )
            if isinstance(target, t.VariantType):
                return self.variant_case(target.name, node)
            return self.error(
                codes.UNKNOWN_FIELD,
                f"'{target}' is a type; '.{field_name}' reads nothing",
                node.name.span,
                help=f"build a value with `{target}(field=...)`",
            )
        if isinstance(obj_type, t.InitialStateType):
            info = self.checked.state.get(field_name)
            if info is None:
                help, fixes = did_you_mean(field_name, self.checked.state, node.name.span)
                return self.error(
                    codes.UNKNOWN_STATE_FIELD,
                    f"the state has no field '{field_name}'",
                    node.name.span,
                    help,
                    fixes,
                )
            return info.type
        if isinstance(obj_type, t.VariantType):
            return self.variant_field(obj_type.name, node)
        record: RecordInfo | None = None
        if isinstance(obj_type, t.RecordType):
            record = self.checked.records.get(obj_type.name)
        elif isinstance(obj_type, t.RefType):
            record = self.checked.records.get(obj_type.entity)
        if record is not None and record.variant is not None:
            if field_name == self.checked.variants[record.variant].tag:
                return t.STR  # the case's name
        if record is not None:
            field = record.fields.get(field_name)
            if field is None:
                help, fixes = did_you_mean(field_name, record.fields, node.name.span)
                return self.error(
                    codes.UNKNOWN_FIELD,
                    f"unknown field '{field_name}' on {record.name}",
                    node.name.span,
                    help or f"{record.name} has: {', '.join(record.fields)}",
                    fixes,
                )
            if record.is_entity and record.table:
                self.note_read(f"{record.table}.{field_name}")
            return field.type
        component = _TIME_COMPONENTS.get(obj_type, {}).get(field_name)
        if component is not None:
            return component
        if isinstance(obj_type, t.EnumType) and field_name in ("value", "name"):
            return self.enum_text(obj_type, node)
        if field_name in _METHOD_NAMES:
            hint: str | None = "methods are called with parentheses: `x.name(...)`"
        elif obj_type == t.DURATION and field_name in ("days", "seconds"):
            hint = _TIMEDELTA_FIELDS
        else:
            hint = None
        return self.error(
            codes.UNKNOWN_FIELD, f"{obj_type} has no field '{field_name}'", node.name.span, hint
        )

    def enum_text(self, enum_type: t.EnumType, node: ast.Attribute) -> t.Type:
        """Python's `x.value` / `x.name` of an enum member: E1003 with `str(x)`, its JSON value
        (offered as a fix where that is what Python would give: for `.name`, only when no
        member declares a JSON value of its own)."""
        enum = self.checked.enums[enum_type.name]
        attribute = node.name.text
        exact = attribute == "value" or all(
            enum.json_value(member) == member for member in enum.members
        )
        return self.error(
            codes.UNKNOWN_FIELD,
            f"an enum member has no field '{attribute}'",
            node.name.span,
            "`str(x)` is a member's text: its JSON value"
            + ("" if exact else " (not its name, for a member that declares one)"),
            as_function_call("str", node, node.span.end) if exact else (),
        )

    def variant_case(self, variant: str, node: ast.Attribute) -> t.Type:
        """`PaymentMethod.gift_card`: the case, to build (`...(id=...)`) or test (`m is ...`)."""
        info = self.checked.variants[variant]
        case = node.name.text
        if case in info.cases:
            return t.TypeRefType(t.case_type(variant, case))
        help, fixes = did_you_mean(case, info.cases, node.name.span)
        return self.error(
            codes.UNKNOWN_VARIANT_CASE,
            f"'{case}' is not a case of {variant}",
            node.name.span,
            help or f"the cases are: {', '.join(info.cases)}",
            fixes,
        )

    def variant_field(self, variant: str, node: ast.Attribute) -> t.Type:
        """A field of a variant value: its tag (the case name), a field every case has alike,
        or, for one case's own field, an error that says how to narrow the value first."""
        info = self.checked.variants[variant]
        name = node.name.text
        if name == info.tag:
            return t.STR
        shared = info.shared_field(name)
        if shared is not None:
            return shared.type
        having = [case for case, record in info.cases.items() if name in record.fields]
        if not having:
            fields = {info.tag, *(f for r in info.cases.values() for f in r.fields)}
            help, fixes = did_you_mean(name, fields, node.name.span)
            return self.error(
                codes.UNKNOWN_FIELD,
                f"no case of {variant} has a field '{name}'",
                node.name.span,
                help or f"its fields: {', '.join(sorted(fields))}",
                fixes,
            )
        value = _short(node.obj)
        return self.error(
            codes.VARIANT_NOT_NARROWED,
            f"'{name}' is a field of {variant}.{having[0]}"
            + (f" (and of {', '.join(having[1:])})" if len(having) > 1 else "")
            + f", but '{value}' may be another case",
            node.name.span,
            help=f"test the case first: `if {value} is {variant}.{having[0]} {{ ... {value}.{name} "
            f'... }}`, or `require {value} is {variant}.{having[0]} else "..."`',
        )

    def visit_Index(self, node: ast.Index, scope: Scope) -> t.Type:
        obj_type = self.expr(node.obj, scope)
        index_type = self.expr(node.index, scope)
        if t.is_error(obj_type):
            return t.ERROR
        if isinstance(obj_type, t.OptionalType):
            return self.error(
                codes.POSSIBLY_NONE,
                f"'{_short(node.obj)}' may be none, so indexing it may fail",
                node.obj.span,
                help='unwrap it first with `let x = value else "message"`',
            )
        if isinstance(obj_type, (t.ListType,)) or obj_type == t.STR:
            self.require_assignable(index_type, t.INT, node.index.span, "list index")
            return obj_type.elem if isinstance(obj_type, t.ListType) else t.STR
        if isinstance(obj_type, t.MapType):
            self.require_assignable(index_type, obj_type.key, node.index.span, "map key")
            return obj_type.value
        if isinstance(obj_type, t.TableType):
            entity = self.checked.records[obj_type.entity]
            key = entity.key
            if key is not None:
                self.require_assignable(
                    index_type, t.RefType(entity.name), node.index.span, f"key of {entity.name}"
                )
            return t.RecordType(entity.name, True)
        if obj_type == t.JSON:
            return t.JSON
        help = "lists, strings, maps and tables can be indexed"
        if isinstance(obj_type, t.TypeRefType) and isinstance(obj_type.target, t.EnumType):
            # Python's `Status["active"]`: a tool's enum parameter is a member already
            name = obj_type.target.name
            first = next(iter(self.checked.enums[name].members), "<member>")
            help = f"write a member, `{name}.{first}`; a parameter of type {name} is one already"
        return self.error(codes.NOT_INDEXABLE, f"{obj_type} cannot be indexed", node.span, help)

    def visit_Slice(self, node: ast.Slice, scope: Scope) -> t.Type:
        obj_type = self.expr(node.obj, scope)
        for bound in (node.lower, node.upper):
            if bound is not None:
                self.expect(bound, scope, t.INT, "slice bound")
        if t.is_error(obj_type) or isinstance(obj_type, t.ListType) or obj_type == t.STR:
            return obj_type
        if isinstance(obj_type, t.TableType):  # the list of its rows: `users[:3]`
            return t.ListType(t.RecordType(obj_type.entity, True))
        return self.error(
            codes.NOT_INDEXABLE,
            f"{obj_type} cannot be sliced",
            node.span,
            "lists and strings can be sliced",
        )

    def visit_Unary(self, node: ast.Unary, scope: Scope) -> t.Type:
        operand = self.expr(node.operand, scope)
        if t.is_error(operand) or operand in (t.INT, t.FLOAT, t.DURATION):
            return operand
        return self.error(
            codes.INVALID_OPERAND, f"unary '{node.op}' needs a number, found {operand}", node.span
        )

    def visit_Binary(self, node: ast.Binary, scope: Scope) -> t.Type:
        left = self.expr(node.left, scope)
        right = self.expr(node.right, scope)
        if t.is_error(left) or t.is_error(right):
            return t.ERROR
        result = arithmetic(node.op, left, right)
        if result is not None:
            return result
        if isinstance(left, t.OptionalType) or isinstance(right, t.OptionalType):
            if arithmetic(node.op, t.strip_optional(left), t.strip_optional(right)) is not None:
                optional_side = node.left if isinstance(left, t.OptionalType) else node.right
                return self.error(
                    codes.POSSIBLY_NONE,
                    f"'{_short(optional_side)}' may be none, so '{node.op}' may fail",
                    optional_side.span,
                    help='unwrap it first: `let x = value else "message"`, or give a '
                    "fallback: `x if x != none else 0`",
                )
        help = None
        if node.op == "+" and t.STR in (left, right):
            help = 'convert with str(x), or use an f-string: f"... {x}"'
        elif node.op == "%" and left == t.STR:  # Python's `"%s" % x`
            help = 'format with an f-string: f"... {x}"'
        elif t.OptionalType in (type(left), type(right)):
            help = "an optional value must be unwrapped before arithmetic"
        return self.error(
            codes.INVALID_OPERAND,
            f"'{node.op}' is not defined for {left} and {right}",
            node.span,
            help,
        )

    def visit_BoolOp(self, node: ast.BoolOp, scope: Scope) -> t.Type:
        # Python's `x or default` picks a value; here `or` takes and gives a bool
        hint = "`x or y` is no fallback here: write `x if x != none else y`"
        left = self.condition(
            node.left, scope, f"the left operand of '{node.op}'", hint if node.op == "or" else None
        )
        right_scope = scope.child()
        if node.op == "and":
            self.narrow(node.left, right_scope, positive=True)
        else:
            self.narrow(node.left, right_scope, positive=False)
        if node.op == "or" and not left:  # `x or "default"`: one error, not one per operand
            self.expr(node.right, right_scope)
            return t.ERROR  # nor one more where the value is used
        right = self.condition(node.right, right_scope, f"the right operand of '{node.op}'")
        return t.BOOL if left and right else t.ERROR

    def visit_Not(self, node: ast.Not, scope: Scope) -> t.Type:
        self.condition(node.operand, scope, "the operand of 'not'")
        return t.BOOL

    def visit_Compare(self, node: ast.Compare, scope: Scope) -> t.Type:
        operand_types = [self.expr(operand, scope) for operand in node.operands]
        for index, op in enumerate(node.ops):
            left, right = operand_types[index], operand_types[index + 1]
            if t.is_error(left) or t.is_error(right):
                continue
            span = node.operands[index].span.cover(node.operands[index + 1].span)
            self.comparison(op, left, right, span)
        return t.BOOL

    def comparison(self, op: str, left: t.Type, right: t.Type, span: Span) -> None:
        if op in ("is", "is not"):
            case = right.target if isinstance(right, t.TypeRefType) else None
            case_variant = t.variant_of(case) if case is not None else None
            if case_variant is not None:
                value = t.strip_optional(left)
                if case_variant not in (t.variant_of(value), getattr(value, "name", None)):
                    self.error(
                        codes.INVALID_OPERAND,
                        f"'{op} {case}' tests a {case_variant} value, found {left}",
                        span,
                        help=f"test a value of the variant: `x {op} {case}`",
                    )
                return
            if not (isinstance(right, t.NoneType) or isinstance(left, t.NoneType)):
                variant = right.target if isinstance(right, t.TypeRefType) else None
                self.error(
                    codes.INVALID_OPERAND,
                    f"'{op}' only compares with none or a variant's case",
                    span,
                    help=(
                        f"test one of its cases: `x {op} {variant}.<case>`"
                        if isinstance(variant, t.VariantType)
                        else "use '==' or '!=' to compare values"
                    ),
                )
            elif not self.assignable.comparable(left, right):  # `x is none`, x never none
                value = left if isinstance(right, t.NoneType) else right
                self.error(
                    codes.INVALID_OPERAND,
                    f"a {value} is never none, so '{op} none' is always "
                    f"{'false' if op == 'is' else 'true'}",
                    span,
                    help=f"drop the test, or declare the value optional (`{value}?`)",
                )
            return
        if op in ("==", "!="):
            if not self.assignable.comparable(left, right):
                self.error(
                    codes.INVALID_OPERAND,
                    f"comparing {left} with {right} is always {'false' if op == '==' else 'true'}",
                    span,
                    help=_compare_help(left, right),
                )
            return
        if op in ("in", "not in"):
            container_ok = membership(left, right, self.assignable)
            if container_ok is None:
                self.error(
                    codes.INVALID_OPERAND,
                    f"'{op}' needs a collection, table or string on the right, found {right}",
                    span,
                )
            elif not container_ok:
                self.error(
                    codes.INVALID_OPERAND,
                    f"{left} can never be in {right}",
                    span,
                )
            return
        base_left, base_right = left, right
        if isinstance(base_left, t.OptionalType) or isinstance(base_right, t.OptionalType):
            self.error(
                codes.POSSIBLY_NONE,
                f"'{op}' cannot order a value that may be none ({left} {op} {right})",
                span,
                help="test `x != none` first, or unwrap with `let ... else`",
            )
            return
        numeric = base_left in t.NUMERIC and base_right in t.NUMERIC
        same_ordered = base_left == base_right and base_left in t.ORDERED
        if not (numeric or same_ordered):
            self.error(
                codes.INVALID_OPERAND,
                f"'{op}' cannot order {left} and {right}",
                span,
                help="numbers, strings, dates, datetimes and durations are ordered; enums are not",
            )

    def visit_Conditional(self, node: ast.Conditional, scope: Scope) -> t.Type:
        self.condition(node.test, scope, "the condition of 'if'")
        then_scope = scope.child()
        self.narrow(node.test, then_scope, positive=True)
        else_scope = scope.child()
        self.narrow(node.test, else_scope, positive=False)
        body = self.expr(node.body, then_scope)
        orelse = self.expr(node.orelse, else_scope)
        joined = t.join(body, orelse)
        if joined is None and t.TableType in (type(body), type(orelse)):
            # `users if c else []`: a table as a value is the list of its rows
            joined = t.join(_rows_of(body), _rows_of(orelse))
        if joined is None and self.assignable(body, orelse):
            joined = orelse  # e.g. a key and a `ref` to it: the ref's key type
        elif joined is None and self.assignable(orelse, body):
            joined = body
        if joined is None:
            return self.error(
                codes.TYPE_MISMATCH,
                f"the branches of 'if ... else' differ: {body} and {orelse}",
                node.span,
            )
        return joined

    def visit_Lambda(self, node: ast.Lambda, scope: Scope) -> t.Type:
        return self.error(
            codes.MISPLACED_LAMBDA,
            "`lambda` is only allowed as the `key=` of sorted, min and max",
            node.span,
            help="declare a `fn` for anything else",
        )

    def lambda_key(self, node: ast.Expr, elem: t.Type, scope: Scope) -> t.Type:
        """Check `key=lambda x: ...` against the element type; returns the key's type."""
        if not isinstance(node, ast.Lambda):
            return self.error(
                codes.TYPE_MISMATCH,
                "`key=` takes a lambda: `key=lambda x: x.field`",
                node.span,
            )
        if len(node.params) != 1:
            return self.error(
                codes.WRONG_ARITY,
                f"the key lambda takes one parameter, found {len(node.params)}",
                node.span,
            )
        inner = scope.child()
        self.bind(node.params[0], elem, inner)
        inner.locals[node.params[0].text].used = True
        key_type = self.expr(node.body, inner)
        self.record(node, key_type)
        if not (
            t.is_error(key_type)
            or t.orderable(key_type)
            or key_type == t.BOOL
            or isinstance(key_type, t.EnumType)
        ):
            self.error(
                codes.INVALID_OPERAND,
                f"a sort key must be a number, string, date, datetime or duration, found {key_type}",
                node.body.span,
            )
        return key_type

    def visit_ListLit(self, node: ast.ListLit, scope: Scope) -> t.Type:
        return t.ListType(self.items(node.items, scope, "list"))

    def visit_SetLit(self, node: ast.SetLit, scope: Scope) -> t.Type:
        return t.SetType(self.items(node.items, scope, "set"))

    def visit_MapLit(self, node: ast.MapLit, scope: Scope) -> t.Type:
        keys = self.items([e.key for e in node.entries], scope, "map key")
        values = self.items([e.value for e in node.entries], scope, "map value")
        return t.MapType(keys, values)

    def items(self, nodes: Iterable[ast.Expr], scope: Scope, what: str) -> t.Type:
        common: t.Type = t.NOTHING
        for item in nodes:
            item_type = self.expr(item, scope)
            joined = t.join(common, item_type)
            if joined is None:
                self.error(
                    codes.TYPE_MISMATCH,
                    f"{what} items must have one type: {common} and {item_type} differ",
                    item.span,
                )
                return t.ERROR
            common = joined
        return common

    def visit_Comprehension(self, node: ast.Comprehension, scope: Scope) -> t.Type:
        inner = self.comprehension_scope(node.clauses, scope)
        element = self.expr(node.element, inner)
        if node.kind == "map":
            assert node.value is not None
            value = self.expr(node.value, inner)
            return t.MapType(element, value)
        if node.kind == "set":
            return t.SetType(element)
        return t.ListType(element)  # 'gen' arguments are typed as lists by their consumer

    def comprehension_scope(
        self, clauses: Iterable[ast.CompFor | ast.CompIf], scope: Scope
    ) -> Scope:
        inner = scope.child()
        for clause in clauses:
            if isinstance(clause, ast.CompFor):
                iterable = self.expr(clause.iterable, inner)
                self.bind_targets(clause.targets, iterable, clause.iterable.span, inner)
            else:
                self.condition(clause.cond, inner, "a comprehension filter")
                self.narrow(clause.cond, inner, positive=True)
        return inner

    def bind_targets(
        self, targets: tuple[ast.Name, ...], iterable: t.Type, span: Span, scope: Scope
    ) -> None:
        elem = t.element_type(iterable)
        if elem is None:
            if isinstance(iterable, t.OptionalType):
                self.error(
                    codes.POSSIBLY_NONE,
                    f"cannot loop over {iterable}: it may be none",
                    span,
                    help='unwrap it first with `let x = value else "message"`',
                )
            else:
                self.error(
                    codes.NOT_ITERABLE,
                    f"cannot loop over {iterable}",
                    span,
                    help="loop over a list, set, map, table, string or `range(n)`",
                )
            elem = t.ERROR
        if len(targets) == 1:
            self.bind(targets[0], elem, scope)
            return
        items: tuple[t.Type, ...]
        if isinstance(elem, t.TupleType) and len(elem.items) == len(targets):
            items = elem.items
        else:
            if not t.is_error(elem):
                self.error(
                    codes.TYPE_MISMATCH,
                    f"cannot unpack {elem} into {len(targets)} names",
                    span,
                    help="unpack pairs from zip(a, b), enumerate(xs) or m.items()",
                )
            items = tuple(t.ERROR for _ in targets)
        for target, item in zip(targets, items):
            self.bind(target, item, scope)

    def bind(self, target: ast.Name, value: t.Type, scope: Scope) -> None:
        local = Local(target.text, value, target.span, "loop")
        scope.locals[target.text] = local
        self.checked.locals[id(target)] = local

    # ---- narrowing ---------------------------------------------------------------------------
    def narrow(self, cond: ast.Expr, scope: Scope, *, positive: bool) -> None:
        """Record what `cond` (or, with positive=False, `not cond`) proves about none-ness."""
        if isinstance(cond, ast.Not):
            self.narrow(cond.operand, scope, positive=not positive)
            return
        if isinstance(cond, ast.BoolOp):
            if (cond.op == "and") == positive:  # both sides hold
                self.narrow(cond.left, scope, positive=positive)
                self.narrow(cond.right, scope, positive=positive)
            return
        if not isinstance(cond, ast.Compare) or len(cond.ops) != 1:
            return
        op = cond.ops[0]
        left, right = cond.operands
        case = self.checked.expr_types.get(id(right))
        if isinstance(case, t.TypeRefType) and isinstance(case.target, t.RecordType):
            path = path_of(left)
            if path is not None and op in ("is", "is not") and t.variant_of(case.target):
                self.narrow_case(path, left, case.target, scope, holds=(op == "is") == positive)
            return
        if isinstance(left, ast.NoneLit):
            left, right = right, left
        if not isinstance(right, ast.NoneLit):
            return
        not_none = op in ("!=", "is not")
        if op not in ("!=", "is not", "==", "is") or not_none != positive:
            return
        path = path_of(left)
        current = self.checked.expr_types.get(id(left))
        if path is not None and isinstance(current, t.OptionalType):
            scope.narrowed[path] = current.inner

    def narrow_case(
        self, path: str, value: ast.Expr, case: t.RecordType, scope: Scope, *, holds: bool
    ) -> None:
        """Where `value is V.case` holds, the value is that case; where it fails, the case is
        ruled out (remembered under `path.!case`, which an assignment to path forgets), and
        the value is the one case left once all others are."""
        if holds:
            scope.narrowed[path] = case
            return
        current = self.checked.expr_types.get(id(value))
        if not isinstance(current, t.VariantType):  # (an optional one may still be none)
            return
        variant = self.checked.variants[current.name]
        scope.narrowed[f"{path}.!{case.name}"] = case
        left = [
            t.case_type(variant.name, other)
            for other in variant.cases
            if scope.narrowed_type(f"{path}.!{variant.name}.{other}") is None
        ]
        if len(left) == 1:
            scope.narrowed[path] = left[0]

    # ---- calls -------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call, scope: Scope) -> t.Type:
        return builtins.check_call(self, node, scope)

    def arguments(
        self,
        call: ast.Call,
        scope: Scope,
        params: list[tuple[str, t.Type, bool]],
        callee: str,
        *,
        allow_positional: bool = True,
        noun: str = "parameter",
    ) -> dict[str, ast.Expr]:
        """Match and check arguments against (name, type, required) parameters."""
        given: dict[str, ast.Expr] = {}
        misspelled: set[str] = set()
        names = [p[0] for p in params]
        # `P(1, 2)`: one mistake, not also each field "missing"
        refused_positional = bool(call.args) and not allow_positional
        if refused_positional:
            self.error(
                codes.WRONG_ARITY,
                f"{callee} takes named arguments only",
                call.args[0].span,
                help=f"write `{callee}({', '.join(f'{n}=...' for n in names[:3])})`",
            )
            for arg in call.args:
                self.expr(arg, scope)
        else:
            for index, arg in enumerate(call.args):
                if index >= len(params):
                    self.error(
                        codes.WRONG_ARITY,
                        f"{callee} takes {len(params)} argument{'s' if len(params) != 1 else ''}, "
                        f"found {len(call.args)}",
                        arg.span,
                    )
                    self.expr(arg, scope)
                    continue
                given[names[index]] = arg
        unknown: list[ast.KeywordArg] = []
        for kwarg in call.kwargs:
            name = kwarg.name.text
            if name in given:
                self.error(
                    codes.DUPLICATE_ARGUMENT,
                    f"argument '{name}' is given twice",
                    kwarg.span,
                    help="remove one of them",
                )
            elif name not in names:
                unknown.append(kwarg)
            else:
                given[name] = kwarg.value
        missing = [p for p in params if p[2] and p[0] not in given]
        for kwarg in unknown:
            name = kwarg.name.text
            help, fixes = did_you_mean(name, names, kwarg.name.span)
            if not fixes and len(unknown) == len(missing):
                # as many unknown names as missing ones: each is most likely a renaming
                meant = missing[unknown.index(kwarg)][0]
                help = (
                    f"{callee} has no {noun} '{name}' but needs '{meant}': did you mean '{meant}'?"
                )
                fixes = (Fix(f"replace '{name}' with '{meant}'", (Edit(kwarg.name.span, meant),)),)
            if fixes:  # the missing parameter it was meant for is not reported again
                misspelled.add(fixes[0].edits[0].replacement)
            self.error(
                codes.UNKNOWN_ARGUMENT,
                f"{callee} has no {noun} '{name}'",
                kwarg.name.span,
                help
                or (
                    f"its {noun}s are: {', '.join(names)}"
                    if names
                    else f"{callee} takes no arguments"
                ),
                fixes,
            )
            self.expr(kwarg.value, scope)
        for name, param_type, required in params:
            if name in given:
                self.expect(given[name], scope, param_type, f"argument '{name}' of {callee}")
            elif required and name not in misspelled and not refused_positional:
                self.error(
                    codes.MISSING_ARGUMENT,
                    f"{callee} needs argument '{name}' ({param_type})",
                    call.span,
                    help=f"add `{name}=...`",
                )
        return given

    def call_declared(self, info: CallableInfo, node: ast.Call, scope: Scope) -> t.Type:
        params = [(p.name, p.type, not p.has_default) for p in info.params]
        self.arguments(node, scope, params, f"{info.kind} '{info.name}'")
        self.ctx.effects.calls.add(info.name)
        self.checked.used.add(info.name)
        return info.result


def arithmetic(op: str, left: t.Type, right: t.Type) -> t.Type | None:
    """The result type of `left op right`, or None when the operator does not apply."""
    if op not in _ARITH:
        return None
    if left in t.NUMERIC and right in t.NUMERIC:
        if op == "/":
            return t.FLOAT
        return t.INT if left == right == t.INT else t.FLOAT
    if op == "+":
        if left == right == t.STR:
            return t.STR
        if isinstance(left, t.ListType) and isinstance(right, t.ListType):
            return t.join(left, right)
        if left in _DATE_LIKE and right == t.DURATION:
            return left
        if left == t.DURATION and right in _DATE_LIKE:
            return right
        if left == right == t.DURATION:
            return t.DURATION
    if op == "-":
        if left in _DATE_LIKE and right == t.DURATION:
            return left
        if left in _DATE_LIKE and left == right:
            return t.DURATION
        if left == right == t.DURATION:
            return t.DURATION
        if isinstance(left, t.SetType) and isinstance(right, t.SetType):
            return t.join(left, right)
    if op == "*":
        if left == t.DURATION and right in t.NUMERIC or right == t.DURATION and left in t.NUMERIC:
            return t.DURATION
    if op == "/" and left == t.DURATION and right in t.NUMERIC:
        return t.DURATION
    if op == "/" and left == right == t.DURATION:
        return t.FLOAT
    return None


def membership(item: t.Type, container: t.Type, assignable: t.Assignability) -> bool | None:
    """None: not a container; False: the item can never be in it; True: fine."""
    if t.is_error(container) or t.is_error(item):
        return True
    if container == t.STR:
        return item == t.STR
    if isinstance(container, (t.ListType, t.SetType)):
        return assignable.comparable(item, container.elem)
    if isinstance(container, t.MapType):
        return assignable.comparable(item, container.key)
    if isinstance(container, t.TableType):
        return assignable(item, t.RefType(container.entity))
    if isinstance(container, t.TypeRefType) and isinstance(container.target, t.EnumType):
        return item == t.STR or item == container.target
    return None


def _rows_of(value: t.Type) -> t.Type:
    """A table's type as the list of its rows; any other type as it is."""
    return t.ListType(t.RecordType(value.entity, True)) if isinstance(value, t.TableType) else value


def _compare_help(left: t.Type, right: t.Type) -> str | None:
    enum = next((x for x in (left, right) if isinstance(x, t.EnumType)), None)
    if t.STR in (left, right) and enum is not None:
        return f"compare with an enum member: `x == {enum.name}.<member>`"
    if any(isinstance(x, t.RecordType) and x.is_entity for x in (left, right)):
        return "compare keys: `row.id == other_id`"
    case = next((x.target for x in (left, right) if isinstance(x, t.TypeRefType)), None)
    if isinstance(case, t.RecordType) and "." in case.name:  # `m == Pay.card`: a case
        return f"test the case with `is`: `x is {case.name}` (`is not` for `!=`)"
    return None


def _short(node: ast.Expr) -> str:
    path = path_of(node)
    if path is not None:
        return path
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return f"{path_of(node.func.obj) or '...'}.{node.func.name.text}(...)"
    if isinstance(node, ast.Index):
        return f"{path_of(node.obj) or '...'}[...]"
    return "the value"


_TIME_COMPONENTS: dict[t.Type, dict[str, t.Type]] = {
    t.DATE: {"year": t.INT, "month": t.INT, "day": t.INT},
    t.DATETIME: {
        "year": t.INT,
        "month": t.INT,
        "day": t.INT,
        "hour": t.INT,
        "minute": t.INT,
        "second": t.INT,
    },
}
# Python's timedelta fields (`(b - a).days`): a duration's size is read by a function
_TIMEDELTA_FIELDS = (
    "a duration's size is `total_minutes(d)` or `total_seconds(d)`; whole days between two "
    "dates: `days_between(a, b)`"
)

# modules a Python author reaches for, which expressions here cannot name
_PYTHON_MODULES = {
    "math": "there are no modules: `abs`, `round`, `int`, `min`, `max` and `sum` are builtins",
    "random": "environments are deterministic: there is no randomness",
    "uuid": 'ids come from `auto("PREFIX")` keys',
    "json": "there are no modules: values are typed, and the runtime reads and writes JSON",
    "re": "there is no `re`: `contains`, `startswith`, `endswith`, `split`, `replace` work on text",
}

_METHOD_NAMES = {
    "get",
    "insert",
    "delete",
    "append",
    "remove",
    "add",
    "keys",
    "values",
    "items",
    "lower",
    "upper",
    "strip",
    "split",
    "replace",
    "startswith",
    "endswith",
    "count",
}


# the names a check gives a meaning of its own: nothing else may be reached by them there
_CHECK_NAMES = {"answer": "the agent's final message", "initial": "the state before the task"}


def _local_kind(local: Local) -> str:
    return {"param": "parameter", "loop": "loop variable", "binding": "solution binding"}.get(
        local.kind, "variable"
    )
