"""Stage 3: imports and declarations -> a symbol table with resolved types.

Collects every enum, record, entity, state field, constant, fn and tool of the env and of its
imported stdlib modules, reports duplicates and unknown type names, and checks the shape of
each entity (one key, refs to entities, tables of entities, transitions on enums).  Bodies
are not visited here; that is the type checker's job.
"""

from __future__ import annotations

import functools
from pathlib import Path

from envdsl.diagnostics import DiagnosticSink, Edit, Fix, codes
from envdsl.semantics import types as t
from envdsl.semantics.model import (
    CallableInfo,
    CheckedSpec,
    ConstInfo,
    EnumInfo,
    FieldInfo,
    ParamInfo,
    RecordInfo,
    VariantInfo,
    StateFieldInfo,
)
from envdsl.semantics.suggest import did_you_mean
from envdsl.syntax import ast
from envdsl.syntax.visitor import TYPES, Visitor
from envdsl.util.resources import stdlib_dir
from envdsl.util.source import SourceFile, SourceMap, Span

GENERICS = {"list": 1, "set": 1, "map": 2, "optional": 1}
# Names that look like types to an author coming from Python or JSON Schema.
TYPE_ALIASES = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
    "dict": "map",
    "timestamp": "datetime",
    "timedelta": "duration",
    "any": "json",
    "object": "json",
}


@functools.cache
def _load_module(path: str) -> tuple[SourceFile, ast.SpecFile | None, DiagnosticSink]:
    from envdsl.syntax.build import build_ast
    from envdsl.syntax.parse import parse_file

    source = SourceFile(path, Path(path).read_text(encoding="utf-8"))
    sink = DiagnosticSink()
    tree = parse_file(source, sink)
    spec = build_ast(tree, source, sink, expect_module=True) if tree is not None else None
    return source, spec, sink


def available_modules() -> list[str]:
    return sorted(f"std.{p.stem}" for p in stdlib_dir().glob("*.env"))


class Resolver(Visitor):
    """Declares the spec's names; resolves written types (`visit_<TypeExpr>(node,
    allow_entity) -> Type`)."""

    families = (TYPES,)

    def __init__(self, checked: CheckedSpec, sources: SourceMap, sink: DiagnosticSink) -> None:
        self.checked = checked
        self.sources = sources
        self.sink = sink
        self.assignable = t.Assignability({})
        # where each top-level name was declared, for duplicate reports
        self._declared: dict[str, tuple[Span, str | None]] = {}

    # ---- entry point -------------------------------------------------------------------------
    def run(self) -> None:
        env = self.checked.env
        for imported_name, imported in self._imports():
            self._declare_types(imported, imported_name)
        self._declare_types(env, None)
        for decl_env, _ in self._all_envs():
            self._resolve_records(decl_env)
        self.assignable.key_types.update(
            {
                name: info.key.type
                for name, info in self.checked.records.items()
                if info.is_entity and info.key is not None
            }
        )
        self._resolve_state(env)
        for decl_env, module_name in self._all_envs():
            self._declare_values(decl_env, module_name)

    def _all_envs(self) -> list[tuple[ast.EnvDecl, str | None]]:
        envs: list[tuple[ast.EnvDecl, str | None]] = [
            (m.env, m.env.name.text) for m in self.checked.modules if m.env is not None
        ]
        return envs + [(self.checked.env, None)]

    def _imports(self) -> list[tuple[str, ast.EnvDecl]]:
        loaded: list[tuple[str, ast.EnvDecl]] = []
        seen: set[str] = set()
        for imp in self.checked.spec.imports:
            dotted = imp.dotted
            if dotted in seen:
                continue
            seen.add(dotted)
            path = stdlib_dir() / f"{imp.path[-1].text}.env"
            if len(imp.path) != 2 or imp.path[0].text != "std" or not path.is_file():
                names = available_modules()
                path_span = Span(imp.span.file, imp.path[0].span.start, imp.path[-1].span.end)
                suggestion, fixes = did_you_mean(dotted, names, path_span)
                self.sink.report(
                    codes.UNKNOWN_MODULE,
                    f"unknown module '{dotted}'",
                    path_span,
                    help=suggestion or f"the standard modules are: {', '.join(names)}",
                    fixes=fixes,
                )
                continue
            source, spec, module_sink = _load_module(str(path))
            self.sources.add(source)
            for diagnostic in module_sink.diagnostics:
                self.sink.report(
                    diagnostic.code, diagnostic.message, diagnostic.span, help=diagnostic.help
                )
            if spec is not None and spec.env is not None:
                self.checked.modules.append(spec)
                loaded.append((spec.env.name.text, spec.env))
        return loaded

    # ---- declarations ------------------------------------------------------------------------
    def _claim(self, name: ast.Name, what: str, module: str | None) -> bool:
        """Register a top-level name; report a duplicate and return False if it is taken."""
        claimed = self._declared.get(name.text)
        if claimed is not None and claimed[1] is not None and module is None:
            # The spec's own declarations shadow imported ones, so that a new stdlib helper
            # can never break a spec that already uses the name.
            self._declared[name.text] = (name.span, None)
            return True
        if claimed is not None:
            previous = claimed[0]
            where = self.sources.get(previous.file)
            line = where.position(previous.start).line if where else 0
            origin = "" if module is None else f" (module std.{module})"
            self.sink.report(
                codes.DUPLICATE_DECLARATION,
                f"'{name.text}' is already declared{origin}",
                name.span,
                notes=[f"first declared at {previous.file}:{line}"],
                help=f"rename this {what}",
            )
            return False
        self._declared[name.text] = (name.span, module)
        return True

    def _claim_type(self, name: ast.Name, what: str, module: str | None) -> bool:
        """`_claim` for a type's name, which no builtin type may have: a field typed `date`
        would be the builtin date while `date(...)` built the spec's own record."""
        if name.text in t.PRIMITIVES:
            self.sink.report(
                codes.DUPLICATE_DECLARATION,
                f"'{name.text}' is a builtin type",
                name.span,
                help=f"rename this {what} (`{name.text.capitalize()}`)",
            )
            return False
        return self._claim(name, what, module)

    def _declare_types(self, env: ast.EnvDecl, module: str | None) -> None:
        for decl in env.members:
            if isinstance(decl, ast.EnumDecl) and self._claim_type(decl.name, "enum", module):
                members: dict[str, ast.EnumMember] = {}
                json_values: dict[str, ast.EnumMember] = {}
                for member in decl.members:
                    if member.name.text in members:
                        self.sink.report(
                            codes.DUPLICATE_DECLARATION,
                            f"enum member '{member.name.text}' is declared twice in {decl.name.text}",
                            member.name.span,
                            help="remove one of them",
                        )
                        continue
                    value = member.json_value.value if member.json_value else member.name.text
                    if value in json_values:
                        self.sink.report(
                            codes.DUPLICATE_DECLARATION,
                            f"enum members '{json_values[value].name.text}' and "
                            f"'{member.name.text}' have the same JSON value {value!r}",
                            member.span,
                            help="give each member a distinct JSON value",
                        )
                    json_values[value] = member
                    members[member.name.text] = member
                self.checked.enums[decl.name.text] = EnumInfo(decl.name.text, members, decl, module)
            elif isinstance(decl, ast.RecordDecl):
                what = "entity" if decl.is_entity else "record"
                if self._claim_type(decl.name, what, module):
                    self.checked.records[decl.name.text] = RecordInfo(
                        decl.name.text, decl.is_entity, {}, decl, module=module
                    )
            elif isinstance(decl, ast.VariantDecl) and self._claim_type(
                decl.name, "variant", module
            ):
                self._declare_variant(decl, module)

    def _declare_variant(self, decl: ast.VariantDecl, module: str | None) -> None:
        name = decl.name.text
        info = VariantInfo(name, decl.tag.text, {}, decl, module)
        tags: dict[str, str] = {}  # JSON tag -> the case that has it
        for case in decl.cases:
            tag = case.json_tag.value if case.json_tag is not None else case.name.text
            if tag in tags and case.name.text not in info.cases:
                self.sink.report(
                    codes.DUPLICATE_DECLARATION,
                    f"cases '{tags[tag]}' and '{case.name.text}' of {name} have the same JSON "
                    f"tag {tag!r}",
                    case.json_tag.span if case.json_tag is not None else case.name.span,
                    help="give each case a distinct tag",
                )
                continue
            tags[tag] = case.name.text
            if case.name.text in info.cases:
                self.sink.report(
                    codes.DUPLICATE_DECLARATION,
                    f"case '{case.name.text}' is declared twice in {name}",
                    case.name.span,
                    help="remove or rename one of them",
                )
                continue
            qualified = f"{name}.{case.name.text}"
            record = RecordInfo(qualified, False, {}, case, module=module, variant=name)
            info.cases[case.name.text] = record
            self.checked.records[qualified] = record
        self.checked.variants[name] = info

    def resolve_type(self, node: ast.TypeExpr, *, allow_entity: bool = False) -> t.Type:
        """Resolve a written type; entities are allowed only where a row is meant."""
        resolved: t.Type = self.visit(node, allow_entity)
        return resolved

    def visit_OptionalType(self, node: ast.OptionalType, allow_entity: bool) -> t.Type:
        return t.optional(self.resolve_type(node.inner, allow_entity=allow_entity))

    def visit_RefType(self, node: ast.RefType, allow_entity: bool) -> t.Type:
        name = node.entity.text
        info = self.checked.records.get(name)
        if name in self.checked.enums:
            self.checked.used.add(name)
            self.sink.report(
                codes.REF_TO_NON_ENTITY,
                f"'{name}' is an enum, not an entity: only entities can be referenced",
                node.entity.span,
                help=f"store the member itself: `{name}`",
                fixes=[_fix(f"use '{name}'", node.span, name)],
            )
            return t.ERROR
        if name in self.checked.variants:
            self.checked.used.add(name)
            self.sink.report(
                codes.REF_TO_NON_ENTITY,
                f"'{name}' is a variant, not an entity: only entities can be referenced",
                node.entity.span,
                help=f"store the value itself: `{name}`",
                fixes=[_fix(f"use '{name}'", node.span, name)],
            )
            return t.ERROR
        if info is None:
            return self._unknown_type(node.entity)
        self.checked.used.add(name)
        if not info.is_entity:
            self.sink.report(
                codes.REF_TO_NON_ENTITY,
                f"'{name}' is a record, not an entity: only entities can be referenced",
                node.entity.span,
                help=f"store the record by value (`{name}`), or make it an `entity` with a key",
            )
            return t.ERROR
        return t.RefType(name)

    def visit_GenericType(self, node: ast.GenericType, allow_entity: bool) -> t.Type:
        base = node.name.text
        if base in TYPE_ALIASES and TYPE_ALIASES[base] in GENERICS:
            self._unknown_type(node.name)  # `dict[...]`: say it is `map`, then go on
            base = TYPE_ALIASES[base]
        arity = GENERICS.get(base)
        if arity is None:
            return self._unknown_type(node.name, generic=True)
        args = [self.resolve_type(arg, allow_entity=allow_entity) for arg in node.args]
        if len(args) != arity:
            self.sink.report(
                codes.WRONG_ARITY,
                f"'{base}' takes {arity} type argument{'s' if arity > 1 else ''}, "
                f"found {len(args)}",
                node.span,
                help="write list[T], set[T], map[K, V]",
            )
            return t.ERROR
        if base == "list":
            return t.ListType(args[0])
        if base == "optional":
            return t.optional(args[0])
        if not self._hashable(
            args[0], node.args[0], "a set element" if base == "set" else "a map key"
        ):
            return t.ERROR
        if base == "set":
            return t.SetType(args[0])
        return t.MapType(args[0], args[1])

    def _hashable(self, member: t.Type, written: ast.TypeExpr, role: str) -> bool:
        """A set element or a map key is compared by value and must not change in place: a
        record, a variant, a collection or a json value has no such value (E2097)."""
        inner = member.inner if isinstance(member, t.OptionalType) else member
        kind = (
            "a record"
            if isinstance(inner, t.RecordType)
            else (
                "a variant"
                if isinstance(inner, t.VariantType)
                else (
                    "a collection"
                    if isinstance(inner, (t.ListType, t.SetType, t.MapType))
                    else "a json value" if inner == t.JSON else None
                )
            )
        )
        if kind is None:
            return True
        self.sink.report(
            codes.UNHASHABLE_ELEMENT,
            f"{role} cannot be {kind} (`{member}`): its values change in place and have no "
            "value to compare by",
            written.span,
            help=f"key the values by one of their fields instead: `map[str, {member}]`, or keep "
            f"a `list[{member}]`",
        )
        return False

    def visit_NamedType(self, node: ast.NamedType, allow_entity: bool) -> t.Type:
        name = node.name.text
        if name in t.PRIMITIVES:
            return t.PRIMITIVES[name]
        if name in self.checked.enums:
            self.checked.used.add(name)
            return t.EnumType(name)
        if name in self.checked.variants:
            self.checked.used.add(name)
            return t.VariantType(name)
        info = self.checked.records.get(name)
        if info is not None:
            self.checked.used.add(name)
            if info.is_entity and not allow_entity:
                self.sink.report(
                    codes.ENTITY_AS_VALUE,
                    f"'{name}' is an entity: its rows live in a table and are referenced by key",
                    node.span,
                    help=f"use `ref {name}` to point at a row",
                    fixes=[
                        _fix(f"use 'ref {name}'", node.span, f"ref {name}"),
                    ],
                )
                return t.ERROR
            return t.RecordType(name, info.is_entity)
        return self._unknown_type(node.name)

    def _unknown_type(self, name: ast.Name, *, generic: bool = False) -> t.Type:
        alias = TYPE_ALIASES.get(name.text)
        candidates = [*t.PRIMITIVES, *self.checked.enums, *self.checked.variants]
        candidates += [name for name in self.checked.records if "." not in name]
        if generic:
            candidates = list(GENERICS)
        fixes: tuple[Fix, ...]
        if alias is not None:
            help: str | None = f"the type is called '{alias}' here"
            fixes = (_fix(f"replace '{name.text}' with '{alias}'", name.span, alias),)
        else:
            help, fixes = did_you_mean(name.text, candidates, name.span)
        self.sink.report(
            codes.UNKNOWN_TYPE,
            f"unknown type '{name.text}'",
            name.span,
            help=help
            or "builtin types: int float bool str date datetime duration json list set map",
            fixes=fixes,
        )
        return t.ERROR

    def _resolve_records(self, env: ast.EnvDecl) -> None:
        decls = [(decl.name.text, decl) for decl in env.of_type(ast.RecordDecl)]
        for variant in env.of_type(ast.VariantDecl):
            decls += [(f"{variant.name.text}.{case.name.text}", case) for case in variant.cases]
        for qualified, decl in decls:
            info = self.checked.records.get(qualified)
            if info is None or info.decl is not decl:
                continue
            for field_decl in decl.fields:
                if field_decl.name.text in info.fields:
                    self.sink.report(
                        codes.DUPLICATE_DECLARATION,
                        f"field '{field_decl.name.text}' is declared twice in {decl.name.text}",
                        field_decl.name.span,
                        help="remove or rename one of them",
                    )
                    continue
                field_type = self.resolve_type(field_decl.type)
                if info.variant is not None and self._tag_clash(info, field_decl):
                    continue
                info.fields[field_decl.name.text] = FieldInfo(
                    field_decl.name.text, field_type, field_decl
                )
                self._check_field_shape(info, field_decl, field_type)
            self._check_keys(info)
            for unique in decl.uniques:
                for name in unique.fields:
                    if name.text not in info.fields:
                        help, fixes = did_you_mean(name.text, info.fields, name.span)
                        self.sink.report(
                            codes.UNKNOWN_FIELD,
                            f"unknown field '{name.text}' on {decl.name.text}",
                            name.span,
                            help=help,
                            fixes=fixes,
                        )

    def _tag_clash(self, info: RecordInfo, field_decl: ast.FieldDecl) -> bool:
        """A case's field named like the variant's tag: the JSON object has one such member."""
        variant = self.checked.variants[info.variant or ""]
        if field_decl.name.text != variant.tag:
            return False
        self.sink.report(
            codes.VARIANT_TAG_CLASH,
            f"'{variant.tag}' is the tag field of {variant.name}: its value is the case's name",
            field_decl.name.span,
            help=f"remove the field (`x.{variant.tag}` reads the case name), or tag the variant "
            f"by another name: `variant {variant.name} by kind {{ ... }}`",
        )
        return True

    def _check_field_shape(self, info: RecordInfo, decl: ast.FieldDecl, field_type: t.Type) -> None:
        if decl.transitions is not None:
            base = t.strip_optional(field_type)
            if not isinstance(base, t.EnumType):
                if not t.is_error(base):
                    self.sink.report(
                        codes.TRANSITIONS_ON_NON_ENUM,
                        f"`transitions` needs a field of an enum type; '{decl.name.text}' is {field_type}",
                        decl.name.span,
                        help="declare an enum for the states and give the field that type",
                    )
            else:
                enum = self.checked.enums[base.name]
                graph: dict[str, set[str]] = {}
                for transition in decl.transitions:
                    ends = (transition.source, transition.target)
                    if all(self._known_member(enum, end) for end in ends):
                        graph.setdefault(transition.source.text, set()).add(transition.target.text)
                info.fields[decl.name.text].transitions = graph
        if decl.on_delete is not None:
            policy = decl.on_delete.text
            if not isinstance(t.strip_optional(field_type), t.RefType):
                self.sink.report(
                    codes.TYPE_MISMATCH,
                    f"`on delete` applies to `ref` fields; '{decl.name.text}' is {field_type}",
                    decl.on_delete.span,
                    help="remove the `on delete` clause",
                )
            elif policy not in ("cascade", "none", "restrict"):
                self.sink.report(
                    codes.SYNTAX_ERROR,
                    f"unknown delete policy '{policy}'",
                    decl.on_delete.span,
                    help="write `on delete cascade`, `on delete none` or `on delete restrict`",
                )
            elif policy == "none" and not isinstance(field_type, t.OptionalType):
                self.sink.report(
                    codes.TYPE_MISMATCH,
                    f"`on delete none` clears the field, so '{decl.name.text}' must be optional",
                    decl.on_delete.span,
                    help=f"declare it `{decl.name.text}: {field_type}?`",
                )
        if decl.is_key and not info.is_entity:
            self.sink.report(
                codes.KEY_COUNT,
                f"record {info.name} has a key field, but records have no identity",
                decl.span,
                help=f"make {info.name} an `entity` to store it in a table, or drop `key`",
            )
        if decl.is_key and info.is_entity and not t.is_error(field_type):
            if field_type not in (t.STR, t.INT):
                self.sink.report(
                    codes.TYPE_MISMATCH,
                    f"a key must be `str` or `int`, not {field_type}",
                    decl.type.span,
                    help='ids are usually `str`: `key id: str = auto("ID")`',
                )

    def _known_member(self, enum: EnumInfo, name: ast.Name) -> bool:
        if name.text in enum.members:
            return True
        help, fixes = did_you_mean(name.text, enum.members, name.span)
        self.sink.report(
            codes.UNKNOWN_ENUM_MEMBER,
            f"'{name.text}' is not a member of {enum.name}",
            name.span,
            help=help or f"the members are: {', '.join(enum.members)}",
            fixes=fixes,
        )
        return False

    def _check_keys(self, info: RecordInfo) -> None:
        if not info.is_entity:
            return
        keys = [f for f in info.decl.fields if f.is_key]
        if not keys:
            self.sink.report(
                codes.KEY_COUNT,
                f"entity {info.name} has no `key` field",
                info.decl.name.span,
                help=f"mark the identifying field: `key {info.name.lower()}_id: str`",
            )
        for extra in keys[1:]:
            self.sink.report(
                codes.KEY_COUNT,
                f"entity {info.name} has more than one `key` field",
                extra.span,
                help="keep one key; declare other identifying fields `unique`, "
                "or several with `unique(a, b)`",
            )

    def _resolve_state(self, env: ast.EnvDecl) -> None:
        table_of: dict[str, str] = {}
        for state in env.of_type(ast.StateDecl):
            for field_decl in state.fields:
                name = field_decl.name
                if name.text == "state":  # `state.x` names the field x: none can be `state`
                    self.sink.report(
                        codes.STATE_NAME_TAKEN,
                        "a state field cannot be named 'state'",
                        name.span,
                        help="`state.<field>` names the state's fields: rename this one",
                    )
                if not self._claim(name, "state field", None):
                    continue
                state_type: t.Type
                if isinstance(field_decl.type, ast.TableType):
                    entity_name = field_decl.type.entity
                    info = self.checked.records.get(entity_name.text)
                    if entity_name.text in self.checked.variants:
                        self.checked.used.add(entity_name.text)
                        self.sink.report(
                            codes.TABLE_OF_NON_ENTITY,
                            f"'{entity_name.text}' is a variant: only entities live in tables",
                            entity_name.span,
                            help=f"store its values in a `list[{entity_name.text}]` or a map, "
                            "or as a field of an entity",
                        )
                        state_type = t.ERROR
                    elif info is None:
                        state_type = self._unknown_type(entity_name)
                    elif not info.is_entity:
                        self.checked.used.add(info.name)
                        self.sink.report(
                            codes.TABLE_OF_NON_ENTITY,
                            f"'{entity_name.text}' is a record: only entities live in tables",
                            entity_name.span,
                            help=f"declare `entity {entity_name.text}` with a `key` field, "
                            f"or store records in a `list[{entity_name.text}]`",
                        )
                        state_type = t.ERROR
                    else:
                        self.checked.used.add(info.name)
                        state_type = t.TableType(info.name)
                        if info.name in table_of:
                            self.sink.report(
                                codes.DUPLICATE_DECLARATION,
                                f"entity {info.name} already lives in table '{table_of[info.name]}'",
                                field_decl.span,
                                help="each entity lives in exactly one table",
                            )
                        else:
                            table_of[info.name] = name.text
                            info.table = name.text
                else:
                    state_type = self.resolve_type(field_decl.type)
                self.checked.state[name.text] = StateFieldInfo(name.text, state_type, field_decl)
        for info in self.checked.records.values():
            if info.is_entity and info.table is None and info.module is None:
                self.sink.report(
                    codes.TABLE_OF_NON_ENTITY,
                    f"entity {info.name} has no table in the `state` block",
                    info.decl.name.span,
                    help=f"add `{_plural(info.name.lower())}: table {info.name}` to `state {{ ... }}`",
                )

    def _declare_values(self, env: ast.EnvDecl, module: str | None) -> None:
        for decl in env.members:
            if isinstance(decl, ast.ConstDecl):
                if self._claim(decl.name, "constant", module):
                    self.checked.consts[decl.name.text] = ConstInfo(
                        decl.name.text, self.resolve_type(decl.type), decl
                    )
            elif isinstance(decl, ast.FnDecl):
                if self._claim(decl.name, "fn", module):
                    self.checked.callables[decl.name.text] = CallableInfo(
                        decl.name.text,
                        "fn",
                        self._params(decl.params, rows=True),
                        self.resolve_type(decl.result, allow_entity=True),
                        decl,
                        module=module,
                    )
            elif isinstance(decl, ast.ToolDecl):
                if self._claim(decl.name, decl.kind, module):
                    result = (
                        self.resolve_type(decl.result, allow_entity=True)
                        if decl.result is not None
                        else t.VOID
                    )
                    self.checked.callables[decl.name.text] = CallableInfo(
                        decl.name.text,
                        decl.kind,
                        self._params(decl.params, rows=decl.internal),
                        result,
                        decl,
                        internal=decl.internal,
                        module=module,
                    )
            elif isinstance(decl, ast.TaskDecl):
                self._claim(decl.name, "task", module)

    def _params(self, params: tuple[ast.Param, ...], *, rows: bool) -> list[ParamInfo]:
        resolved: list[ParamInfo] = []
        seen: set[str] = set()
        for param in params:
            if param.name.text in seen:
                self.sink.report(
                    codes.DUPLICATE_DECLARATION,
                    f"parameter '{param.name.text}' is declared twice",
                    param.name.span,
                    help="rename one of them",
                )
                continue
            seen.add(param.name.text)
            # A fn may take rows (`fn total(o: Order)`); tools take keys instead.
            resolved.append(
                ParamInfo(param.name.text, self.resolve_type(param.type, allow_entity=rows), param)
            )
        return resolved


def _fix(message: str, span: Span, replacement: str) -> Fix:
    return Fix(message, (Edit(span, replacement),))


def _plural(word: str) -> str:
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")
