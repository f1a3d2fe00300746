"""What the language server knows about one document: the checker's own results, queried by
offset. No parsing of its own: hover, definitions, completion and symbols read the syntax tree
and the semantic model (declarations, expression types, locals) that `check_source` builds.

Completion after `.` works on text that does not parse yet (`order.`): the document is checked
once more with a placeholder name typed at the cursor, and the type of what stands before the
dot is read from that check.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator

from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.pipeline import CompileResult, check_source
from envdsl.semantics import types as t
from envdsl.semantics.model import CallableInfo, CheckedSpec, Local, RecordInfo, VariantInfo
from envdsl.syntax import ast
from envdsl.syntax.visitor import DECLARATIONS, Visitor
from envdsl.util.source import SourceFile, Span

PLACEHOLDER = "__envdsl_completion__"
_IDENTIFIER_TAIL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True, slots=True)
class Completion:
    label: str
    kind: str  # 'field' | 'member' | 'method' | 'tool'
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    kind: str  # 'env' 'enum' 'member' 'entity' 'record' 'field' 'state' 'const' 'fn' 'tool' ...
    span: Span
    selection: Span
    children: tuple[Symbol, ...] = ()


@dataclass(slots=True)
class Analysis:
    source: SourceFile
    result: CompileResult
    _checked: CheckedSpec | None = field(default=None, init=False)
    _reads: dict[int, Local] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        checked = self.result.checked
        self._checked = checked if isinstance(checked, CheckedSpec) else None

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for d in self.result.diagnostics if d.span.file == self.source.path]

    # ---- what is at an offset -------------------------------------------------------------
    def path_at(self, offset: int, file: str | None = None) -> list[object]:
        """The AST nodes whose span holds `offset` of `file` (by default the document; an
        identifier's end counts), outermost first, with the nodes of other files that hold
        them (an env holds the tasks merged from a task file)."""
        spec = self.result.spec
        if spec is None:
            return []
        found: list[object] = []
        _descend(spec, file or self.source.path, offset, found)
        return found

    def hover(self, offset: int) -> tuple[str, Span] | None:
        target = self._target(offset)
        if target is None:
            return None
        text, span, _ = target
        return (text, span) if text else None

    def definition(self, offset: int) -> Span | None:
        target = self._target(offset)
        return target[2] if target is not None else None

    def _target(self, offset: int) -> tuple[str, Span, Span | None] | None:
        """(hover text, span of the word, where it is declared) for the word at `offset`."""
        return self.target_of(self.path_at(offset))

    def target_of(self, path: list[object]) -> tuple[str, Span, Span | None] | None:
        """(hover text, span of the word, where it is declared) for the innermost node of
        `path` (the nodes from the root down to it, as path_at gives them)."""
        checked = self._checked
        if checked is None or not path:
            return None
        node, parent = path[-1], path[-2] if len(path) > 1 else None
        if isinstance(node, ast.NameRef):
            return self._name_ref(checked, node, path)
        if not isinstance(node, ast.Name):
            return None
        if isinstance(parent, ast.Attribute):
            return self._attribute(checked, parent)
        if isinstance(parent, ast.KeywordArg) and len(path) > 2:
            return self._keyword(checked, path[-3], node)
        if isinstance(parent, (ast.NamedType, ast.RefType, ast.TableType, ast.GenericType)):
            return self._global(checked, node.text, node.span)
        local = checked.locals.get(id(node))
        if local is not None:
            return _code(f"({local.kind}) {local.name}: {local.type}"), node.span, local.span
        return self._declared(checked, node, parent, path)

    def _keyword(
        self, checked: CheckedSpec, call: object, node: ast.Name
    ) -> tuple[str, Span, Span | None] | None:
        """`name=` in a call: a parameter of a fn or tool, or a field of a record or row."""
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.NameRef):
            return None
        info = checked.callables.get(call.func.name)
        param = next((p for p in info.params if p.name == node.text), None) if info else None
        if param is not None:
            text = _code(f"(parameter) {param.name}: {param.type}") + _doc(param.decl.doc)
            return text, node.span, param.decl.name.span
        record = checked.records.get(call.func.name)
        field_info = record.fields.get(node.text) if record is not None else None
        if record is not None and field_info is not None:
            text = _code(f"(field) {record.name}.{node.text}: {field_info.type}")
            return text + _doc(field_info.decl.doc), node.span, field_info.decl.name.span
        return None

    def _name_ref(
        self, checked: CheckedSpec, ref: ast.NameRef, path: list[object]
    ) -> tuple[str, Span, Span | None]:
        if ref.qualified:  # `state.x`: the state field (its word alone is what a rename edits)
            info = checked.state.get(ref.name)
            if info is None:
                return "", ref.name_span, None
            text = _code(f"(state) {ref.name}: {info.type}") + _doc(info.decl.doc)
            return text, ref.name_span, info.decl.name.span
        local = self._local_reads().get(id(ref))
        if local is not None:
            text = _code(f"({local.kind}) {local.name}: {local.type}")
            return text + self._param_doc(checked, local.span), ref.span, local.span
        # a parameter (the checker keeps its Local in the body's scope only: a name no inner
        # local reads is the enclosing callable's parameter of that name, if it has one)
        owner = next((p for p in reversed(path) if isinstance(p, (ast.ToolDecl, ast.FnDecl))), None)
        param = next((p for p in owner.params if p.name.text == ref.name), None) if owner else None
        if param is not None:
            found = self._param_hover(checked, param, param.name)
            if found is not None:
                return found[0], ref.span, param.name.span
        # a field of the row, in a row invariant or a field's default
        record = next((p for p in reversed(path) if isinstance(p, ast.RecordDecl)), None)
        field_decl = (
            next((f for f in record.fields if f.name.text == ref.name), None) if record else None
        )
        row_field = (
            self._field(checked, record.name.text, field_decl.name, ref.span)
            if record is not None and field_decl is not None
            else None
        )
        if row_field is not None:
            return row_field
        found = self._global(checked, ref.name, ref.span)
        if found is not None:
            return found
        kind = checked.expr_types.get(id(ref))
        return (_code(f"{ref.name}: {kind}") if kind is not None else ""), ref.span, None

    def _local_reads(self) -> dict[int, Local]:
        """The local each name reference reads (or writes through), by the reference's id."""
        if self._reads is None:
            checked = self._checked
            self._reads = {
                ref: local
                for local in (checked.locals.values() if checked is not None else ())
                for ref in (*local.reads, *local.write_bases)
            }
        return self._reads

    def _field(
        self, checked: CheckedSpec, owner: str, name: ast.Name, span: Span
    ) -> tuple[str, Span, Span | None] | None:
        record = checked.records.get(owner)
        info = record.fields.get(name.text) if record is not None else None
        if record is None or info is None:
            return None
        text = _code(f"(field) {record.name}.{name.text}: {info.type}") + _doc(info.decl.doc)
        return text, span, info.decl.name.span

    def _param_doc(self, checked: CheckedSpec, span: Span) -> str:
        for info in checked.callables.values():
            for param in info.params:
                if param.decl.name.span == span:
                    return _doc(param.decl.doc)
        return ""

    def _global(
        self, checked: CheckedSpec, name: str, span: Span
    ) -> tuple[str, Span, Span | None] | None:
        if name in checked.callables:
            info = checked.callables[name]
            return _signature(info), span, info.decl.name.span
        if name in checked.records:
            record = checked.records[name]
            return _record_text(record), span, record.decl.name.span
        if name in checked.variants:
            variant = checked.variants[name]
            return _variant_text(variant), span, variant.decl.name.span
        if name in checked.enums:
            enum = checked.enums[name]
            members = ", ".join(enum.members)
            return _code(f"enum {name} {{ {members} }}"), span, enum.decl.name.span
        if name in checked.state:
            state = checked.state[name]
            text = _code(f"(state) {name}: {state.type}") + _doc(state.decl.doc)
            return text, span, state.decl.name.span
        if name in checked.consts:
            const = checked.consts[name]
            return _code(f"(const) {name}: {const.type}"), span, const.decl.name.span
        return None

    def _attribute(
        self, checked: CheckedSpec, node: ast.Attribute
    ) -> tuple[str, Span, Span | None] | None:
        receiver = checked.expr_types.get(id(node.obj))
        name = node.name.text
        if isinstance(receiver, t.TypeRefType) and isinstance(receiver.target, t.EnumType):
            enum = checked.enums.get(receiver.target.name)
            member = enum.members.get(name) if enum is not None else None
            if enum is not None and member is not None:
                value = f' = "{enum.json_value(name)}"' if member.json_value is not None else ""
                return (
                    _code(f"(member) {enum.name}.{name}{value}"),
                    node.name.span,
                    (member.name.span),
                )
        variant = _variant_of(checked, receiver)
        if isinstance(receiver, t.TypeRefType) and variant is not None:
            case = variant.cases.get(name)
            if case is not None:  # `PaymentMethod.gift_card`: the case
                return _record_text(case, "case"), node.name.span, case.decl.name.span
        elif variant is not None and name == variant.tag:
            text = _code(f"(tag) {variant.name}.{name}: str") + "\n\nthe name of the value's case"
            return text, node.name.span, variant.decl.tag.span
        elif isinstance(receiver, t.VariantType) and variant is not None:
            receiver = t.case_type(variant.name, next(iter(variant.cases)))  # a shared field
        record = _record_of(checked, receiver)
        if record is not None and name in record.fields:
            info = record.fields[name]
            text = _code(f"(field) {record.name}.{name}: {info.type}") + _doc(info.decl.doc)
            return text, node.name.span, info.decl.name.span
        if isinstance(receiver, t.InitialStateType) and name in checked.state:
            return self._global(checked, name, node.name.span)
        kind = checked.expr_types.get(id(node))
        return (_code(f"{name}: {kind}") if kind is not None else ""), node.name.span, None

    def _declared(
        self, checked: CheckedSpec, node: ast.Name, parent: object, path: list[object]
    ) -> tuple[str, Span, Span | None] | None:
        """A declaration's own name: show what it declares; it is its own definition."""
        owner = next((p for p in reversed(path) if isinstance(p, ast.RecordDecl)), None)
        variant = next((p for p in reversed(path) if isinstance(p, ast.VariantDecl)), None)
        if isinstance(parent, (ast.FieldDecl, ast.UniqueDecl)) and owner is not None:
            if isinstance(parent, ast.FieldDecl) and node is not parent.name:
                return None  # `on delete cascade`
            qualified = owner.name.text
            if variant is not None:
                qualified = f"{variant.name.text}.{qualified}"
            return self._field(checked, qualified, node, node.span)
        if isinstance(parent, ast.RecordDecl) and variant is not None:
            case = checked.records.get(f"{variant.name.text}.{node.text}")
            if case is not None:
                return _record_text(case, "case"), node.span, node.span
        if isinstance(parent, ast.Transition) and owner is not None:
            return self._transition_member(checked, owner, path, node)
        if isinstance(parent, ast.InitAssign):
            return self._global(checked, node.text, node.span)
        if isinstance(parent, ast.Param):
            return self._param_hover(checked, parent, node)
        if isinstance(parent, ast.EnumMember):
            owner_enum = next((p for p in reversed(path) if isinstance(p, ast.EnumDecl)), None)
            if owner_enum is not None:
                return _code(f"(member) {owner_enum.name.text}.{node.text}"), node.span, node.span
        if isinstance(parent, ast.TaskDecl):
            return _code(f"task {node.text}") + _doc(parent.doc), node.span, node.span
        found = self._global(checked, node.text, node.span)
        if found is not None and found[2] == node.span:
            return found
        return None

    def _transition_member(
        self, checked: CheckedSpec, owner: ast.RecordDecl, path: list[object], node: ast.Name
    ) -> tuple[str, Span, Span | None] | None:
        """A state in a field's `transitions { a -> b }`: a member of the field's enum."""
        field_decl = next((p for p in reversed(path) if isinstance(p, ast.FieldDecl)), None)
        record = checked.records.get(owner.name.text)
        info = record.fields.get(field_decl.name.text) if record and field_decl else None
        kind = info.type if info is not None else None
        kind = kind.inner if isinstance(kind, t.OptionalType) else kind
        enum = checked.enums.get(kind.name) if isinstance(kind, t.EnumType) else None
        member = enum.members.get(node.text) if enum is not None else None
        if enum is None or member is None:
            return None
        return _code(f"(member) {enum.name}.{node.text}"), node.span, member.name.span

    def _param_hover(
        self, checked: CheckedSpec, param: ast.Param, node: ast.Name
    ) -> tuple[str, Span, Span | None] | None:
        for info in checked.callables.values():
            for known in info.params:
                if known.decl is param:
                    text = _code(f"(parameter) {known.name}: {known.type}")
                    return text + _doc(param.doc), node.span, node.span
        return None

    # ---- completion -----------------------------------------------------------------------
    def completions(self, offset: int) -> list[Completion]:
        text = self.source.text
        typed = _IDENTIFIER_TAIL.search(text[:offset])
        word_start = typed.start() if typed is not None else offset
        if word_start > 0 and text[word_start - 1] == ".":
            return self._after_dot(word_start, offset)
        if self._in_solution(word_start):
            tools = [c for c in (self._checked.tools if self._checked else []) if not c.internal]
            return [Completion(c.name, "tool", _signature_line(c)) for c in tools]
        return []

    def _after_dot(self, word_start: int, offset: int) -> list[Completion]:
        text = self.source.text
        patched_text = text[:word_start] + PLACEHOLDER + text[offset:]
        patched = analyse(self.source.path, patched_text)
        checked = patched._checked
        if checked is None:
            return []
        attribute = next(
            (
                node
                for node in reversed(patched.path_at(word_start + 1))
                if isinstance(node, ast.Attribute) and node.name.span.start == word_start
            ),
            None,
        )
        if attribute is None:
            return []
        receiver = checked.expr_types.get(id(attribute.obj))
        if isinstance(receiver, t.TypeRefType) and isinstance(receiver.target, t.EnumType):
            enum = checked.enums.get(receiver.target.name)
            members = enum.members if enum is not None else {}
            return [Completion(name, "member", receiver.target.name) for name in members]
        variant = _variant_of(checked, receiver)
        if variant is not None:
            if isinstance(receiver, t.TypeRefType):
                return [Completion(case, "member", variant.name) for case in variant.cases]
            tag = [Completion(variant.tag, "field", "str")]
            if receiver is None or t.variant_of(t.strip_optional(receiver)) is None:  # shared
                first = next(iter(variant.cases.values()), None)
                shared = [n for n in (first.fields if first else {}) if variant.shared_field(n)]
                return tag + [
                    Completion(n, "field", str(first.fields[n].type)) for n in shared if first
                ]
            case = _record_of(checked, receiver)
            fields = case.fields.items() if case is not None else ()
            return tag + [Completion(n, "field", str(f.type)) for n, f in fields]
        record = _record_of(checked, receiver)
        if record is not None:
            return [Completion(n, "field", str(f.type)) for n, f in record.fields.items()]
        if isinstance(receiver, t.InitialStateType):
            return [Completion(n, "field", str(s.type)) for n, s in checked.state.items()]
        if receiver is not None:
            from envdsl.semantics.builtins import method_names

            return [Completion(name, "method", str(receiver)) for name in method_names(receiver)]
        return []

    def _in_solution(self, offset: int) -> bool:
        """Whether `offset` starts a step of a task's `solution { ... }` or `counterexample
        { ... }` (judged from the section words of the task's lines: the text need not
        parse)."""
        text = self.source.text
        line_start = text.rfind("\n", 0, offset) + 1
        before = text[line_start:offset].strip()
        if before and not re.fullmatch(r"let\s+[A-Za-z_]\w*\s*=", before):
            return False
        depth = 0
        for match in reversed(
            list(re.finditer(r"[{}]|\b(solution|counterexample|init|task|check)\b", text[:offset]))
        ):
            word = match.group()
            if word == "}":
                depth += 1
            elif word == "{":
                depth -= 1
            elif depth == -1:
                return word in ("solution", "counterexample")
            elif word in ("task", "check") and depth <= 0:
                return False
        return False

    # ---- symbols --------------------------------------------------------------------------
    def symbols(self) -> list[Symbol]:
        spec = self.result.spec
        if spec is None or spec.env is None:
            return []
        env = spec.env
        children = [symbol for member in env.members for symbol in _member_symbols(member)]
        kind = "module" if env.is_module else "env"
        return [Symbol(env.name.text, kind, env.span, env.name.span, tuple(children))]


def analyse(path: str, text: str, *, verify: bool = False) -> Analysis:
    source = SourceFile(path, text)
    return Analysis(source, check_source(source, verify=verify))


def _descend(node: object, file: str, offset: int, found: list[object]) -> bool:
    """Extend `found` with the path to the innermost node of `file` that holds `offset`;
    whether there is one under `node`."""
    span = getattr(node, "span", None)
    here = isinstance(span, Span) and span.file == file
    if here and not span.start <= offset <= span.end:  # type: ignore[union-attr]
        return False
    mark = len(found)
    if isinstance(span, Span):
        found.append(node)
    for child in child_nodes(node):
        if _descend(child, file, offset, found):
            return True  # siblings do not overlap: the first that holds the offset is the one
    if here:
        return True
    del found[mark:]  # a node of another file (or none) that holds nothing of this one
    return False


def child_nodes(node: object) -> Iterator[object]:
    if isinstance(node, (list, tuple)):
        yield from node
        return
    for name in getattr(node, "__dataclass_fields__", ()):
        value = getattr(node, name)
        if isinstance(value, (list, tuple)) or hasattr(value, "__dataclass_fields__"):
            yield value


def _record_of(checked: CheckedSpec, receiver: t.Type | None) -> RecordInfo | None:
    if isinstance(receiver, t.OptionalType):
        receiver = receiver.inner
    if isinstance(receiver, t.RecordType):
        return checked.records.get(receiver.name)
    if isinstance(receiver, t.RefType):
        return checked.records.get(receiver.entity)
    return None


def _variant_of(checked: CheckedSpec, receiver: t.Type | None) -> VariantInfo | None:
    """The variant of a variant value, of a narrowed case value, or of `Variant` itself."""
    if isinstance(receiver, t.TypeRefType):
        receiver = receiver.target
        if not isinstance(receiver, t.VariantType):
            return None
    receiver = t.strip_optional(receiver) if receiver is not None else None
    if isinstance(receiver, t.VariantType):
        return checked.variants.get(receiver.name)
    name = t.variant_of(receiver) if receiver is not None else None
    return checked.variants.get(name) if name is not None else None


def _variant_text(variant: VariantInfo) -> str:
    cases = "\n".join(
        f"  {case} {{ {', '.join(f'{n}: {f.type}' for n, f in record.fields.items())} }}"
        for case, record in variant.cases.items()
    )
    header = f"variant {variant.name} by {variant.tag}"
    return _code(f"{header} {{\n{cases}\n}}") + _doc(variant.decl.doc)


def _code(text: str) -> str:
    return f"```envdsl\n{text}\n```"


def _doc(text: ast.Text | None) -> str:
    return f"\n\n{text.value}" if text is not None else ""


def _signature_line(info: CallableInfo) -> str:
    params = ", ".join(f"{p.name}: {p.type}" for p in info.params)
    word = ("internal " if info.internal else "") + info.kind
    result = "" if info.result == t.VOID else f" -> {info.result}"
    return f"{word} {info.name}({params}){result}"


def _signature(info: CallableInfo) -> str:
    doc = info.decl.doc if isinstance(info.decl, ast.ToolDecl) else None
    return _code(_signature_line(info)) + _doc(doc)


def _record_text(record: RecordInfo, word: str | None = None) -> str:
    word = word or ("entity" if record.is_entity else "record")
    fields = "\n".join(f"  {name}: {info.type}" for name, info in record.fields.items())
    return _code(f"{word} {record.name} {{\n{fields}\n}}") + _doc(record.decl.doc)


def _member_symbols(member: ast.Decl) -> list[Symbol]:
    symbols: list[Symbol] = _OUTLINE.visit(member)
    return symbols


class _Outline(Visitor):
    """The document symbols of an env member: `visit_<Decl>(member) -> symbols`."""

    families = (DECLARATIONS,)

    def visit_VariantDecl(self, member: ast.VariantDecl) -> list[Symbol]:
        cases = tuple(
            Symbol(
                case.name.text,
                "record",
                case.span,
                case.name.span,
                tuple(Symbol(f.name.text, "field", f.span, f.name.span) for f in case.fields),
            )
            for case in member.cases
        )
        return [Symbol(member.name.text, "variant", member.span, member.name.span, cases)]

    def visit_EnumDecl(self, member: ast.EnumDecl) -> list[Symbol]:
        items = tuple(Symbol(m.name.text, "member", m.span, m.name.span) for m in member.members)
        return [Symbol(member.name.text, "enum", member.span, member.name.span, items)]

    def visit_RecordDecl(self, member: ast.RecordDecl) -> list[Symbol]:
        fields = tuple(Symbol(f.name.text, "field", f.span, f.name.span) for f in member.fields)
        kind = "entity" if member.is_entity else "record"
        return [Symbol(member.name.text, kind, member.span, member.name.span, fields)]

    def visit_StateDecl(self, member: ast.StateDecl) -> list[Symbol]:
        fields = tuple(Symbol(f.name.text, "state", f.span, f.name.span) for f in member.fields)
        return [Symbol("state", "namespace", member.span, member.span, fields)]

    def visit_ConstDecl(self, member: ast.ConstDecl) -> list[Symbol]:
        return [Symbol(member.name.text, "const", member.span, member.name.span)]

    def visit_FnDecl(self, member: ast.FnDecl) -> list[Symbol]:
        return [Symbol(member.name.text, "fn", member.span, member.name.span)]

    def visit_ToolDecl(self, member: ast.ToolDecl) -> list[Symbol]:
        return [Symbol(member.name.text, "tool", member.span, member.name.span)]

    def visit_TaskDecl(self, member: ast.TaskDecl) -> list[Symbol]:
        return [Symbol(member.name.text, "task", member.span, member.name.span)]

    def visit_InvariantDecl(self, member: ast.InvariantDecl) -> list[Symbol]:
        return [Symbol(member.text.value, "invariant", member.span, member.text.span)]


_OUTLINE = _Outline()
