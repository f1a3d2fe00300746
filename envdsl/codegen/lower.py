"""Lowering: a checked spec -> the module view model (names, specs, bodies, effect tables)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from envdsl.codegen.loaders import LoaderWriter
from envdsl.codegen.module_uses import used_module_names
from envdsl.codegen.names import Names
from envdsl.codegen.record_factories import factory_lines
from envdsl.codegen.row_writes import RULE_FAILURES, checked_fields, inserter, row_rule_methods
from envdsl.codegen.serializers import json_repr_body, to_json_body
from envdsl.codegen.shapes import shape
from envdsl.codegen.statements import BodyTranslator
from envdsl.codegen.tool_calls import ToolCallWriter, call_method_name
from envdsl.codegen.translate import Context
from envdsl.codegen.views import (
    ConstView,
    EnumView,
    FieldView,
    InitFileView,
    MethodView,
    ModuleView,
    ParamView,
    RecordView,
    ScalarView,
    SpecConstantView,
    TableView,
    TaskView,
    ToolView,
    VariantView,
)
from envdsl.semantics.stamps import stamp_fields
from envdsl.semantics import types as t
from envdsl.semantics.aliases import is_mutable
from envdsl.semantics.builtin_table import called_builtin
from envdsl.semantics.model import CallableInfo, CheckedSpec, Effects, RecordInfo
from envdsl.syntax import ast
from envdsl.tasks.init_files import read_init_file
from envdsl.util.source import Span, line_of

# a spec expression that names a spec (rt.INT, SPEC_Order); any other builds one
_SPEC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?")
_LITERALS = (ast.IntLit, ast.FloatLit, ast.StrLit, ast.BoolLit, ast.NoneLit)


class Lowerer:
    def __init__(self, checked: CheckedSpec, *, loaders: bool = True, calls: bool = True) -> None:
        self.checked = checked
        self.with_loaders = loaders
        self.with_calls = calls
        self.names = Names(checked)
        # the written-out row writes and record factories serve the speed of calls, as the
        # whole calls do: without those, the code takes the runtime's reference forms
        self.body = BodyTranslator(checked, self.names, written_out=calls)
        self.spec_constants: list[SpecConstantView] = []

    def module(self) -> ModuleView:
        checked = self.checked
        env = checked.env
        view = ModuleView(
            source=Path(checked.spec.path).name,
            env_name=env.name.text,
            env_class=self.names.env_class,
            description=env.doc.value if env.doc else env.name.text,
        )
        used = used_module_names(checked)  # of the imported modules' declarations
        view.enums = [
            self.enum(name)
            for name, enum in checked.enums.items()
            if enum.module is None or name in used
        ]
        view.records = [
            self.record(info)
            for info in checked.records.values()
            if info.module is None or info.name in used
        ]
        view.variants = [
            self.variant(name)
            for name, variant in checked.variants.items()
            if variant.module is None or name in used
        ]
        view.consts = [
            ConstView(
                self.names.consts[c.name],
                self.names.py_type(c.type),
                self.body.value(c.decl.value, c.type, Context("const")),
            )
            for c in checked.consts.values()
        ]
        for name, info in checked.state.items():
            if isinstance(info.type, t.TableType):
                view.tables.append(self.table(name, checked.records[info.type.entity]))
            else:
                default = None
                if info.decl.default is not None:
                    value = self.body.value(info.decl.default, info.type, Context("default"))
                    default = f"lambda: {value}"
                view.scalars.append(
                    ScalarView(
                        name,
                        self.names.state[name],
                        self.names.py_type(info.type),
                        self.names.spec(info.type),
                        default,
                    )
                )
        self.invariants(view)
        for callable_info in checked.callables.values():
            if callable_info.module is not None and callable_info.name not in used:
                continue
            params, body = self.body_of(callable_info)
            view.methods.append(
                MethodView(
                    self.names.callables[callable_info.name],
                    params,
                    self._result(callable_info.result),
                    body,
                )
            )
            if callable_info.is_tool and not callable_info.internal:
                view.tools.append(self.tool(callable_info.name))
        for task in env.of_type(ast.TaskDecl):
            view.tasks.append(self.task(task, view))
        for name, params, body, doc in self.body.writer_methods():
            view.methods.append(MethodView(name, params, "None", body, doc))
        tables = {table.name: table for table in view.tables}
        for table_name, method in self.body.inserters.items():
            view.methods.append(inserter(tables[table_name], method))
        view.inserts = bool(self.body.inserters)
        view.inserts_owned = any(tables[name].mutable_fields for name in self.body.inserters)
        view.sites = self.body.sites
        view.typed_methods = self.with_calls
        if self.with_calls:  # the row rules' methods serve only the whole calls
            verify_rows, rule_methods = row_rule_methods(
                view.tables, view.row_invariants, self.names
            )
            view.methods += rule_methods
            rule_code = "\n".join(line for method in rule_methods for line in method.body)
            view.rule_failures = [name for name in RULE_FAILURES if f"_{name}(" in rule_code]
            self.tool_calls(view, verify_rows)
        if self.with_loaders:
            self.loaders(view)
        view.spec_constants = self.spec_constants
        view.stamps = [
            (table, sorted(names)) for table, names in stamp_fields(self.checked).items()
        ]
        return view

    def tool_calls(self, view: ModuleView, verify_rows: str | None) -> None:
        """Each tool's whole call (codegen/tool_calls.py), written from the views above."""
        invariant_lines = {}
        for index, decl in enumerate(self.checked.env.of_type(ast.InvariantDecl)):
            line = self.spec_line(decl.span)
            if line is not None:
                invariant_lines[f"_inv_{index}"] = line
        field_types = {
            name: [f.type for f in info.fields.values()]
            for name, info in self.checked.records.items()
        }
        scalar_refs = any(
            not isinstance(info.type, t.TableType) and t.can_hold_ref(info.type, field_types)
            for info in self.checked.state.values()
        )
        writer = ToolCallWriter(
            self.names,
            {r.name: r for r in view.records},
            view.source,
            invariant_lines,
            scalar_refs,
            verify_rows,
        )
        checked = {
            table.name: checked_fields(table, view.row_invariants.get(table.name, []))
            for table in view.tables
        }
        for tool in view.tools:
            tool.checks_rows = any(self._checks_rows(write, checked) for write in tool.writes)
            tool.call_method = call_method_name(tool.name)
            tool.arguments_constant = f"_ARGUMENTS_{tool.name}"
            tool.call_body = writer.body(tool)

    def loaders(self, view: ModuleView) -> None:
        """Each table's row loaders and the nested readers they call (codegen/loaders.py)."""
        records = {r.name: r for r in view.records}
        writer = LoaderWriter(records)
        for table in view.tables:
            record = records[self.names.type_name(table.entity)]
            table.loader = writer.table(table.name, record, self.names.key_attr(table.entity))
        view.loader_constants = writer.constants
        view.loaders = writer.functions

    def spec(self, value: t.Type) -> str:
        """The spec of a type as a name: a module constant where it would be built."""
        return self.constant(self.names.spec(value), value)

    def constant(self, spec: str, value: t.Type) -> str:
        if _SPEC_NAME.fullmatch(spec):
            return spec
        for known in self.spec_constants:
            if known.value == spec:
                return known.name
        name = f"_SPEC_{len(self.spec_constants)}"  # (no spec name starts with `_`)
        self.spec_constants.append(SpecConstantView(name, spec, str(value)))
        return name

    def spec_line(self, span: Span) -> int | None:
        """The line of a span in the spec being compiled (None in another file)."""
        spec = self.checked.spec
        return line_of(spec.text, span.start) if span.file == spec.path else None

    def body_of(self, info: CallableInfo) -> tuple[list[str], list[str]]:
        self.body.current_result = info.result
        return self.body.callable_body(info)

    def _result(self, result: t.Type) -> str:
        return "None" if isinstance(result, t.VoidType) else self.names.py_type(result)

    # ---- types -------------------------------------------------------------------------------
    def enum(self, name: str) -> EnumView:
        info = self.checked.enums[name]
        members = [(self.names.member(name, m), info.json_value(m)) for m in info.members]
        py = self.names.type_name(name)
        doc = info.decl.doc.value if info.decl.doc else None
        return EnumView(py, members, self.names.spec_name(py), doc)

    def record(self, info: RecordInfo) -> RecordView:
        fields = []
        for field in info.fields.values():
            decl = field.decl
            default: str | None = None
            default_value: str | None = None  # what that default makes
            required = True
            if decl.default is not None:
                required = False
                is_auto = (
                    isinstance(decl.default, ast.Call)
                    and isinstance(decl.default.func, ast.NameRef)
                    and decl.default.func.name == "auto"
                )
                if is_auto:
                    default = default_value = "''"
                else:
                    code = self.body.value(decl.default, field.type, Context("default"))
                    default_value = code
                    default = (
                        code
                        if isinstance(decl.default, _LITERALS) or _is_member(decl.default)
                        else f"field(default_factory=lambda: {code})"
                    )
            elif isinstance(field.type, t.OptionalType):
                default, required = "None", False
                default_value = "None"
            fields.append(
                FieldView(
                    self.names.field(info.name, field.name),
                    field.name,
                    self.names.py_type(field.type),
                    default,
                    self.spec(field.type),
                    required,
                    decl.doc.value if decl.doc else None,
                    shape(self.names, field.type),
                    default_value,
                )
            )
        py = self.names.type_name(info.name)
        doc = info.decl.doc.value if info.decl.doc else None
        # records (values) carry the place they live in; rows are identities and need none
        base = "" if info.is_entity else "rt.Value"
        view = RecordView(py, doc, fields, self.names.spec_name(py), base)
        if self.with_calls:  # else limits' reference sizer, and the record's class
            view.size_lines = self.size_lines(info)
            view.factory_lines = factory_lines(view, self.names.factory(info.name))
        # the JSON writers stay: every state hash and dump runs them, verification's too
        view.to_json, view.json_repr = f"_to_json_{py}", f"_json_repr_{py}"
        view.to_json_body = to_json_body(view)
        view.json_repr_body = json_repr_body(view, view.to_json)
        if info.variant is not None:
            view.tag = (self.names.tag(info.variant), info.tag_value)
        return view

    def variant(self, name: str) -> VariantView:
        info = self.checked.variants[name]
        cases = []
        for record in info.cases.values():
            py = self.names.type_name(record.name)
            cases.append((record.tag_value, py, self.names.spec_name(py)))
        py = self.names.type_name(name)
        return VariantView(py, info.tag, cases, self.names.spec_name(py))

    def size_lines(self, info: RecordInfo) -> list[str]:
        """The body of the record's `_stored_size` (limits.stored_size, written out from the
        declared types): one for the record and for each field whose values are each one
        (bools, dates, enums), and a term per other field. Its strings and ints (and refs to
        such keys) are first tested inline, all within their limits (what a row almost
        always is): then their sizes are a string's length and one, an int's one; the
        checks of `h.text_size`, `h.int_size` and `h.stored_size` raise otherwise."""
        ones = 1
        reads: list[str] = []  # the fields tested inline, read into the locals v0, v1, ...
        tests: list[str] = []
        lengths: list[str] = []
        checked: list[str] = []  # their terms through the checks
        others: list[str] = []  # every other field's term
        for field in info.fields.values():
            attr = f"self.{self.names.field(info.name, field.name)}"
            kind = field.type
            if isinstance(kind, t.RefType):  # a key: its type's
                key = self.checked.records[kind.entity].key
                kind = key.type if key is not None else kind
            local = f"v{len(reads)}"
            if kind in (t.STR, t.INT):
                reads.append(attr)
                if kind == t.STR:
                    tests.append(f"len({local}) <= _MAX_STR")
                    lengths.append(f"len({local})")
                else:
                    tests.append(f"_MIN_INT <= {local} <= _MAX_INT")
                helper = "h.stored_size"
                if field.type == t.STR:
                    helper = "h.text_size"
                elif field.type == t.INT:
                    helper = "h.int_size"
                checked.append(f"{helper}({local})")
            elif field.type in (t.BOOL, t.DATE, t.DATETIME, t.DURATION) or isinstance(
                field.type, t.EnumType
            ):
                ones += 1
            else:  # optional, float (checked finite), collections, records, json
                others.append(f"h.stored_size({attr})")
        generic = " + ".join([str(ones), *checked, *others])
        if not reads:
            return [f"return {generic}"]
        fast = " + ".join([str(ones + len(reads)), *lengths, *others])
        names = ", ".join(f"v{index}" for index in range(len(reads)))
        return [
            f"{names} = {', '.join(reads)}",
            f"if {' and '.join(tests)}:",
            f"    return {fast}",
            f"return {generic}",
        ]

    def table(self, name: str, entity: RecordInfo) -> TableView:
        key = entity.key
        assert key is not None
        auto = None
        default = key.decl.default
        if (
            isinstance(default, ast.Call)
            and default.args
            and isinstance(default.args[0], ast.StrLit)
        ):
            auto = default.args[0].value
        uniques: list[tuple[str, ...]] = [
            (self.names.field(entity.name, f.name),)
            for f in entity.fields.values()
            if f.decl.unique and not f.is_key
        ]
        uniques += [
            tuple(self.names.field(entity.name, n.text) for n in u.fields)
            for u in entity.decl.uniques
        ]
        optional = {
            self.names.field(entity.name, f.name)
            for f in entity.fields.values()
            if isinstance(f.type, t.OptionalType) or f.type == t.JSON  # may hold none
        }
        refs = []
        ref_rules = []
        for field in entity.fields.values():
            target = t.strip_optional(field.type)
            if isinstance(target, t.RefType):
                attr = self.names.field(entity.name, field.name)
                parent_table = self.names.table_of(target.entity)
                ref_rules.append((attr, parent_table, attr in optional))
                policy = field.decl.on_delete.text if field.decl.on_delete else "restrict"
                refs.append(
                    f"rt.RefField(child_table={name!r}, "
                    f"field={self.names.field(entity.name, field.name)!r}, "
                    f"parent_table={self.names.table_of(target.entity)!r}, on_delete={policy!r})"
                )
        transitions = {}
        for field in entity.fields.values():
            if field.transitions is None:
                continue
            enum_type = t.strip_optional(field.type)
            assert isinstance(enum_type, t.EnumType)
            enum_py = self.names.type_name(enum_type.name)
            graph = {
                f"{enum_py}.{self.names.member(enum_type.name, src)}": "frozenset({"
                + ", ".join(
                    f"{enum_py}.{self.names.member(enum_type.name, dst)}" for dst in sorted(dsts)
                )
                + "})"
                for src, dsts in sorted(field.transitions.items())
            }
            body = ", ".join(f"{k}: {v}" for k, v in graph.items())
            transitions[self.names.field(entity.name, field.name)] = "{" + body + "}"
        immutable = sorted(
            self.names.field(entity.name, f.name)
            for f in entity.fields.values()
            if f.decl.immutable and is_mutable(f.type)
        )
        arguments = [
            f"name={name!r}",
            f"entity={entity.name!r}",
            f"key={self.names.key_attr(entity.name)!r}",
            f"auto_prefix={auto!r}",
            f"uniques=({''.join(repr(u) + ', ' for u in uniques)})",
            f"refs=({''.join(r + ', ' for r in refs)})",
        ]
        if transitions:
            items = ", ".join(f"{k!r}: {v}" for k, v in transitions.items())
            arguments.append(f"transitions={{{items}}}")
        if immutable:
            arguments.append(f"immutable=frozenset({immutable!r})")
        schema = f"rt.TableSchema({', '.join(arguments)})"
        py = self.names.type_name(entity.name)
        parents: set[str] = set()
        for field in entity.fields.values():
            if not isinstance(t.strip_optional(field.type), t.RefType):
                parents |= self._nested_parents(field.type, set())
        return TableView(
            name,
            entity.name,
            self.names.state[name],
            f"rt.Table[{py}]",
            schema,
            self.names.spec_name(py),
            sorted(parents),
            row_class=py,
            key=self.names.key_attr(entity.name),
            auto_prefix=auto,
            mutable_fields=[
                self.names.field(entity.name, f.name)
                for f in entity.fields.values()
                if is_mutable(f.type)
            ],
            transitions=list(transitions),
            uniques=[(u, not optional.isdisjoint(u)) for u in uniques],
            refs=ref_rules,
        )

    def _nested_parents(self, value: t.Type, seen: set[str]) -> set[str]:
        """Tables that refs inside records and collections of this type can point at."""
        if isinstance(value, t.RefType):
            return {self.names.table_of(value.entity)}
        if isinstance(value, t.OptionalType):
            return self._nested_parents(value.inner, seen)
        if isinstance(value, (t.ListType, t.SetType)):
            return self._nested_parents(value.elem, seen)
        if isinstance(value, t.MapType):
            return self._nested_parents(value.value, seen)
        if isinstance(value, t.RecordType) and not value.is_entity and value.name not in seen:
            found: set[str] = set()
            for field in self.checked.records[value.name].fields.values():
                found |= self._nested_parents(field.type, seen | {value.name})
            return found
        if isinstance(value, t.VariantType) and value.name not in seen:
            cases = self.checked.variants[value.name].cases
            inner = seen | {value.name}
            return set().union(
                *(self._nested_parents(t.case_type(value.name, c), inner) for c in cases)
            )
        return set()

    # ---- invariants and their effect-driven selection ----------------------------------------
    def invariants(self, view: ModuleView) -> None:
        self.row_invariant_reads: list[tuple[str, str, set[str]]] = []
        for info in self.checked.records.values():
            if not info.is_entity or info.table is None or info.module is not None:
                continue
            items = []
            for index, invariant in enumerate(info.decl.invariants):
                method = f"_rowinv_{info.name}_{index}"
                body = self.body.row_predicate(info, invariant.cond)
                view.methods.append(
                    MethodView(method, [f"row: {self.names.type_name(info.name)}"], "bool", body)
                )
                items.append((invariant.text.value, method))
                reads = self._effects(f"invariant:{info.name}:{invariant.text.value}").reads
                self.row_invariant_reads.append((info.table, method, reads))
            if items:
                view.row_invariants[info.table] = items
        self.env_invariant_reads: list[tuple[str, set[str]]] = []
        # method -> (table, per-row method) for invariants of the form all(P(x) for x in table)
        self.row_wise: dict[str, tuple[str, str]] = {}
        for index, decl in enumerate(self.checked.env.of_type(ast.InvariantDecl)):
            method = f"_inv_{index}"
            view.methods.append(
                MethodView(
                    method, [], "bool", self.body.predicate(decl.cond, Context("env_invariant"))
                )
            )
            row_wise = self.row_wise_invariant(decl.cond, f"{method}_row")
            if row_wise is not None:
                table, row_method = row_wise
                view.methods.append(row_method)
                self.row_wise[method] = (table, row_method.name)
            view.env_invariants.append((method, decl.text.value))
            self.env_invariant_reads.append(
                (method, self._effects(f"invariant:{decl.text.value}").reads)
            )

    def row_wise_invariant(self, cond: ast.Expr, name: str) -> tuple[str, MethodView] | None:
        """For `all(P(x) for x in table if F(x))`, a method checking one row: F(x) implies P(x).

        P may read other state; whether the per-row check suffices for a tool is decided per
        tool from its writes (see `tool`).
        """
        quantifier = called_builtin(cond, self.checked) if isinstance(cond, ast.Call) else None
        if not (
            isinstance(cond, ast.Call)
            and quantifier is not None
            and quantifier.holds_per_row
            and len(cond.args) == 1
            and not cond.kwargs
            and isinstance(cond.args[0], ast.Comprehension)
        ):
            return None
        generator = cond.args[0]
        first = generator.clauses[0]
        if not (
            isinstance(first, ast.CompFor)
            and len(first.targets) == 1
            and isinstance(first.iterable, ast.NameRef)
            and isinstance(self.body.type_of(first.iterable), t.TableType)
            and all(isinstance(c, ast.CompIf) for c in generator.clauses[1:])
        ):
            return None
        table_type = self.body.type_of(first.iterable)
        assert isinstance(table_type, t.TableType)
        filters = [c.cond for c in generator.clauses[1:] if isinstance(c, ast.CompIf)]
        if any(
            self._reads_other_rows(e, first.iterable.name) for e in [*filters, generator.element]
        ):
            return None  # P(x) looks at other rows of the table: a row alone proves nothing
        params, body = self.body.row_quantified(
            first.targets[0], table_type.entity, filters, generator.element
        )
        table = self.names.table_of(table_type.entity)
        return table, MethodView(name, params, "bool", body)

    def _reads_other_rows(self, expr: ast.Expr, table: str) -> bool:
        """Does this expression read the table other than through the quantified row?"""
        for node in ast.walk(expr):
            if isinstance(node, ast.NameRef) and node.name == table:
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.NameRef):
                callee = self.checked.callables.get(node.func.name)
                if callee is not None:
                    reads = self._effects(callee.name).reads
                    if any(r == table or r.startswith(table + ".") for r in reads):
                        return True
            if isinstance(node, ast.Attribute):
                obj_type = self.body.type_of(node.obj)
                ref = obj_type if isinstance(obj_type, t.RefType) else None
                if ref is not None and self.names.table_of(ref.entity) == table:
                    return True  # a ref into its own table reads another row
        return False

    def _effects(self, key: str) -> Effects:
        return self.checked.effects.get(key, Effects())

    def tool(self, name: str) -> ToolView:
        info = self.checked.callables[name]
        decl = info.decl
        assert isinstance(decl, ast.ToolDecl)
        params = []
        for param in info.params:
            default = value = None
            if param.decl.default is not None:
                value = self.body.value(param.decl.default, param.type, Context("default"))
                default = f"lambda: {value}"
            params.append(
                ParamView(
                    param.name,
                    self.names.param(name, param.name),
                    self.names.py_type(param.type),
                    self.spec(param.type),
                    param.decl.default is None and not isinstance(param.type, t.OptionalType),
                    default,
                    param.decl.doc.value if param.decl.doc else None,
                    shape(self.names, param.type, self.constant),
                    value,
                    self.spec_line(param.decl.span),
                )
            )
        writes = self._effects(name).writes if info.kind == "action" else set()
        env_invariants: list[str] = []
        row_env_invariants: list[tuple[str, str, str]] = []
        for method, reads in self.env_invariant_reads:
            if not _affects(writes, reads):
                continue
            row_wise = self.row_wise.get(method)
            if row_wise is not None and all(w.split(".", 1)[0] == row_wise[0] for w in writes):
                # only rows of the quantified table changed: the untouched ones still hold
                row_env_invariants.append((row_wise[0], row_wise[1], method))
            else:
                env_invariants.append(method)
        full_rows = [
            (table, m) for table, m, reads in self.row_invariant_reads if _affects(writes, reads)
        ]
        view = ToolView(
            name,
            self.names.tool_methods[name],
            self.names.callables[name],
            info.kind,
            decl.doc.value if decl.doc else name,
            params,
            self.spec(info.result),
            env_invariants,
            full_rows,
            row_env_invariants,
            f"_json_{name}" if self.with_calls else "",
            self.json_arguments(info) if self.with_calls else [],
            shape(self.names, info.result),
        )
        view.writes = sorted(writes)
        return view

    def _checks_rows(self, write: str, checked: dict[str, frozenset[str] | None]) -> bool:
        """Whether a rule of a row can break by this write (an effect's name): rows of a
        table with rules inserted or deleted, a field a rule of its table reads changed. An
        action none of whose writes can skips the touched rows' rules (as the env invariants
        its writes cannot change are skipped)."""
        table, _, path = write.partition(".")
        if table not in checked:  # a scalar state field
            return False
        fields = checked[table]
        if fields is None or not path:
            return fields is None or bool(fields)
        info = self.checked.state[table].type
        assert isinstance(info, t.TableType)
        attr = self.names.fields.get((info.entity, path.split(".", 1)[0]))
        return attr is None or attr in fields

    def json_arguments(self, info: CallableInfo) -> list[str]:
        """The body of a tool's `_json_<tool>(cls, values)`: a typed call's Python values (by
        JSON name; None where left out) as the JSON arguments the call parser reads. A
        parameter's default fills it in; a value of its own enum becomes the member's JSON,
        a date, list or record through h.to_json; a value of another type is passed on as
        it is, for the parser to reject (runtime/typed.py is the reference)."""
        lines: list[str] = []
        items: list[str] = []
        space = self.names.locals()  # a default may read module names: never shadow one
        for index, param in enumerate(info.params):
            v = space.claim(f"v{index}")
            lines.append(f"{v} = values.get({param.name!r})")
            if param.decl.default is not None:
                value = self.body.value(param.decl.default, param.type, Context("default"))
                lines += [f"if {v} is None:", f"    {v} = {value}"]
            base = t.strip_optional(param.type)
            if isinstance(base, t.RefType):
                key = self.checked.records[base.entity].key
                base = key.type if key is not None else t.JSON
            spec = self.names.spec(base)
            if "(" in spec:  # a spec made per call would cost more than reading the tool's
                spec = f"cls.TOOLS[{info.name!r}].params[{index}].spec"
            if isinstance(base, t.Prim) and base not in (t.DATE, t.DATETIME, t.DURATION):
                shown = v  # its Python value is its JSON
            elif isinstance(base, t.EnumType):
                enum_py = self.names.type_name(base.name)
                shown = f"{v}.value if type({v}) is {enum_py} else h.to_json({spec}, {v})"
            else:
                shown = f"h.to_json({spec}, {v})"
            items.append(f"{param.name!r}: {shown}")
        lines.append(f"return {{{', '.join(items)}}}")
        return lines

    # ---- tasks -------------------------------------------------------------------------------
    def init_file(self, view: ModuleView, path: str, data: object, task: str) -> str:
        """The constant holding an init file's JSON text, written once per distinct state."""
        text = json.dumps(data, sort_keys=True)
        for existing in view.init_files:
            if existing.text == text:
                existing.tasks.append(task)
                return existing.name
        stem = re.sub(r"[^A-Za-z0-9_]", "_", Path(path).name.removesuffix(".json")).upper()
        # a module-level name: free of the spec's types and of another directory's file
        name = self.names.module.claim(f"INIT_{stem}")
        view.init_files.append(InitFileView(name, Path(path).name, text, [task]))
        return name

    def task(self, task: ast.TaskDecl, view: ModuleView) -> TaskView:
        name = task.name.text
        init_method: str | None = None
        init_data: str | None = None
        if isinstance(task.init, ast.InitFrom):
            # embedded, so that a compiled module needs no file next to it
            loaded = read_init_file(task.init.path.span.file, task.init.path.value)
            assert loaded.code is None, loaded.problem  # the checker reported it
            init_data = self.init_file(view, task.init.path.value, loaded.data, name)
        else:
            init_method = f"_init_{name}"
            lines: list[str] = []
            for assign in task.init.assigns if task.init is not None else ():
                state = self.checked.state[assign.name.text]
                value = self.body.value(assign.value, state.type, Context("init"))
                if isinstance(state.type, t.TableType):
                    if isinstance(self.body.type_of(assign.value), t.MapType):
                        value = f"list({value}.values())"
                    lines.append(f"self.load_rows({assign.name.text!r}, {value})")
                else:
                    lines.append(f"self.set_scalar_initial({assign.name.text!r}, {value})")
            view.methods.append(MethodView(init_method, [], "None", lines or ["pass"]))
        solve: str | None = None
        if task.solution is not None:
            solve = f"_solve_{name}"
            view.methods.append(self.replay_method(solve, task.solution))
        counterexamples = []
        for index, counterexample in enumerate(task.counterexamples):
            method = f"_counterexample_{name}_{index}"
            view.methods.append(self.replay_method(method, counterexample.steps))
            counterexamples.append(method)
        checks = []
        for index, check in enumerate(task.checks):
            method = f"_check_{name}_{index}"
            # a check judges the agent's run: it gets the agent's final message, never the
            # reference solution's bindings
            body = self.body.predicate(check.cond, Context("check"))
            view.methods.append(MethodView(method, ["answer: str"], "bool", body))
            checks.append((check.text.value, method))
        instruction = task.doc.value if task.doc else ""
        answer = task.answer.value if task.answer is not None else None
        allow = [_allow_clause(a) for a in task.allows]
        return TaskView(
            name, instruction, init_method, init_data, solve, checks, answer, allow, counterexamples
        )

    def replay_method(self, method: str, steps: tuple[ast.SolutionStep, ...]) -> MethodView:
        """A method that makes a list of tool calls (a solution, a counterexample) through
        `_solution_call`; `let` bindings pass a call's data on to later calls."""
        bound = {s.bind.text for s in steps if s.bind is not None}
        lines = ["b: dict[str, Any] = {}"]
        ctx = Context("solution", bindings=bound)
        for step in steps:
            tool = step.call.func
            assert isinstance(tool, ast.NameRef)
            called = self.checked.callables[tool.name]
            params = {p.name: p for p in called.params}
            values = ", ".join(
                f"{k.name.text!r}: " f"{self.body.value(k.value, params[k.name.text].type, ctx)}"
                for k in step.call.kwargs
            )
            call = f"self._solution_call(results, {tool.name!r}, {{{values}}})"
            lines.append(f"b[{step.bind.text!r}] = {call}" if step.bind else call)
        lines.append("return b")
        return MethodView(method, ["results: list[rt.Result]"], "dict[str, Any]", lines)


def _allow_clause(allow: ast.Allow) -> str:
    """An `allow` target as the runtime reads it (envdsl/runtime/frame.py, Allowance.parse)."""
    if allow.kind == "field":
        assert allow.field is not None
        return f"{allow.table.text}.{allow.field.text}"
    if allow.kind in ("delete", "insert"):
        return f"{allow.kind} {allow.table.text}"
    return allow.table.text


def _affects(writes: set[str], reads: set[str]) -> bool:
    """Can writing `writes` change the value of an expression that read `reads`?

    Entries are table names (rows added or removed, or read by iteration), `table.field`
    and scalar names.  Reading a table as a whole depends on each of its fields.
    """
    for write in writes:
        table = write.split(".", 1)[0]
        if write in reads or table in reads:
            return True
        if "." not in write and any(read.startswith(write + ".") for read in reads):
            return True
    return False


def _is_member(node: ast.Expr) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.obj, ast.NameRef)
