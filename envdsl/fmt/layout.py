"""Declarations and statements, one per line, at two spaces an indentation level.

The `Writer` puts out whole lines. Before each line-level item (a declaration, a field, a
statement, a task section) it writes the comments that come before the item in the source: a
comment that had code before it on its line trails the last line written, any other gets a
line of its own. A blank line in the source before an item or a comment is kept (one at most);
declarations of an env that take more than one line always have a blank line around them.

A new kind of declaration or statement is one `visit_<NodeClass>` method (tests/test_visitor.py
asks for it); a new top-level form also joins the items `Layout.file` collects.
"""

from __future__ import annotations

from typing import Sequence

from envdsl.fmt.comments import Comment
from envdsl.fmt.doc import LINE, Doc, group, indent, render
from envdsl.fmt.expressions import CommentQueue, ExpressionPrinter, type_text
from envdsl.syntax import ast
from envdsl.syntax.visitor import DECLARATIONS, STATEMENTS, TOP_LEVEL, Visitor

INDENT = "  "


class Writer:
    def __init__(self, text: str, comments: CommentQueue, width: int) -> None:
        self.text = text
        self.comments = comments
        self.width = width
        self.lines: list[str] = []
        self.level = 0
        self.at_container_start = True

    # ---- comments and blank lines ---------------------------------------------------------
    def comments_before(self, offset: int) -> None:
        for comment in self.comments.take_before(offset):
            self.comment(comment)

    def comment(self, comment: Comment) -> None:
        last = self.lines[-1].strip() if self.lines else ""
        if not comment.own_line and last and not last.startswith("#"):
            self.lines[-1] += "  " + comment.text  # it trailed code in the source too
            return
        self.blank_if_source_has_one(comment.start)
        self.lines.append(INDENT * self.level + comment.text)
        self.at_container_start = False

    def blank_if_source_has_one(self, offset: int) -> None:
        if self.at_container_start or not self.lines or not self.lines[-1].strip():
            return
        line_start = self.text.rfind("\n", 0, offset) + 1
        if self.text[line_start:offset].strip():
            return  # the item shares its source line with the one before
        previous_end = line_start - 1
        previous_start = self.text.rfind("\n", 0, max(previous_end, 0)) + 1
        if previous_end > 0 and not self.text[previous_start:previous_end].strip():
            self.lines.append("")

    # ---- lines ----------------------------------------------------------------------------
    def item(self, start: int, doc: Doc) -> int:
        """Write one line-level item that starts at `start` in the source; returns the index of
        its first line (after the comments before it)."""
        self.comments_before(start)
        self.blank_if_source_has_one(start)
        first = len(self.lines)
        self.write(doc)
        return first

    def write(self, doc: Doc) -> None:
        rendered = render(doc, self.width, len(INDENT) * self.level)
        self.lines.extend((INDENT * self.level + rendered).split("\n"))
        self.at_container_start = False

    def open(self, start: int, header: Doc) -> int:
        """A header line ending in `{`: what follows is one level deeper."""
        first = self.item(start, [header, " {"])
        self.level += 1
        self.at_container_start = True
        return first

    def close(self, end: int, closer: Doc = "}") -> None:
        """Close the innermost `{`, whose `}` is at `end` in the source."""
        self.comments_before(end)
        self.level -= 1
        if closer == "}" and self.at_container_start and self.lines[-1].endswith("{"):
            self.lines[-1] += "}"  # `{}`: nothing inside
            self.at_container_start = False
        else:
            self.write(closer)

    def reopen(self, end: int, header: Doc) -> None:
        """`} elif cond {` / `} else {`: close a block and open the next on one line."""
        self.close(end, [header, " {"])
        self.level += 1
        self.at_container_start = True

    def ensure_blank_before(self, index: int) -> None:
        if index > 0 and self.lines[index - 1].strip() and not self.lines[index - 1].endswith("{"):
            self.lines.insert(index, "")


class Layout(Visitor):
    """A file laid out line by line: `visit_<Decl>(decl) -> first line` for the top-level
    forms and the declarations, `visit_<Stmt>(stmt)` for statements."""

    families = (TOP_LEVEL, DECLARATIONS, STATEMENTS)

    def __init__(self, spec: ast.SpecFile, comments: Sequence[Comment], width: int) -> None:
        self.spec = spec
        self.text = spec.text
        queue = CommentQueue(comments)
        self.out = Writer(self.text, queue, width)
        self.exprs = ExpressionPrinter(self.text, queue)

    def file(self) -> str:
        items: list[object] = [*self.spec.imports]
        if self.spec.env is not None:
            items.append(self.spec.env)
        if self.spec.tasks_for is not None:
            items.append(self.spec.tasks_for)
        items.sort(key=lambda item: getattr(item, "span").start)
        previous: object = None
        for item in items:
            first = self.declaration(item)
            if previous is not None and type(previous) is not type(item):
                self.out.ensure_blank_before(self._group_start(first))
            previous = item
        for comment in self.out.comments.take_all():
            self.out.comment(comment)
        return "\n".join(self.out.lines).rstrip("\n") + "\n" if self.out.lines else ""

    def declaration(self, decl: object) -> int:
        """Lay out a top-level form or an env member (`visit_<Decl>`); returns the index of
        its first line."""
        first: int = self.visit(decl)
        return first

    def visit_Import(self, item: ast.Import) -> int:
        return self.out.item(item.span.start, f"import {item.dotted}")

    def _group_start(self, first: int) -> int:
        """The first of the comment lines directly above line `first`."""
        lines = self.out.lines
        while first > 0 and lines[first - 1].lstrip().startswith("#"):
            first -= 1
        return first

    # ---- env ------------------------------------------------------------------------------
    def visit_EnvDecl(self, env: ast.EnvDecl) -> int:
        word = "module" if env.is_module else "env"
        first = self.out.open(env.span.start, f"{word} {env.name.text}")
        members: list[ast.Decl | ast.Text] = [*env.members]
        if env.doc is not None:
            members.append(env.doc)
        members.sort(key=lambda member: member.span.start)
        previous_multi_line = False
        for index, member in enumerate(members):
            start_line = len(self.out.lines)
            member_first = (
                self.docstring(member) if isinstance(member, ast.Text) else self.declaration(member)
            )
            multi_line = len(self.out.lines) - member_first > 1
            if index and (multi_line or previous_multi_line):
                self.out.ensure_blank_before(self._group_start(max(member_first, start_line)))
            previous_multi_line = multi_line
        self.out.close(env.span.end - 1)
        return first

    def visit_TasksFor(self, block: ast.TasksFor) -> int:
        target = self.text[block.target.span.start : block.target.span.end]  # as quoted
        first = self.out.open(block.span.start, f"tasks for {target}")
        for index, task in enumerate(block.tasks):
            task_first = self.declaration(task)
            if index:
                self.out.ensure_blank_before(self._group_start(task_first))
        self.out.close(block.span.end - 1)
        return first

    def docstring(self, text: ast.Text) -> int:
        return self.out.item(text.span.start, self.long_string(text))

    def long_string(self, node: ast.Text | ast.StrLit) -> str:
        """A string as written; the lines of a multi-line one move with its indentation (its
        value strips the common indentation, so it stays the same)."""
        raw = self.text[node.span.start : node.span.end]
        if "\n" not in raw:
            return raw
        line_start = self.text.rfind("\n", 0, node.span.start) + 1
        source_line = self.text[line_start : node.span.start]
        shift = len(INDENT) * self.out.level - (len(source_line) - len(source_line.lstrip(" ")))
        lines = raw.split("\n")
        rest = lines[1:]
        if shift == 0 or any(
            line.strip() == "" and line or (line.strip() and "\t" in _margin(line)) for line in rest
        ):
            return raw
        if shift < 0 and any(line.strip() and len(_margin(line)) < -shift for line in rest):
            return raw
        moved = [
            (" " * shift + line if shift > 0 else line[-shift:]) if line.strip() else line
            for line in rest
        ]
        return "\n".join([lines[0], *moved])

    def visit_ConstDecl(self, decl: ast.ConstDecl) -> int:
        self.out.comments_before(decl.span.start)
        header = f"const {decl.name.text}: {type_text(decl.type)} = "
        return self.out.item(decl.span.start, [header, self.exprs.root(decl.value)])

    def visit_EnumDecl(self, decl: ast.EnumDecl) -> int:
        members = []
        for member in decl.members:
            value = f" = {self.exprs.source(member.json_value)}" if member.json_value else ""
            members.append((member, member.name.text + value))
        self.out.comments_before(decl.span.start)
        body = self.exprs.bracketed("{", members, "}", decl.span.end, padded=True)
        return self.out.item(decl.span.start, [f"enum {decl.name.text} ", body])

    def visit_RecordDecl(
        self, decl: ast.RecordDecl, word: str | None = None, name: str | None = None
    ) -> int:
        """A record or an entity; with word "", a variant's case (`gift_card { ... }`)."""
        if word is None:
            word = "entity" if decl.is_entity else "record"
        first = self.out.open(decl.span.start, f"{word} {name or decl.name.text}".lstrip())
        items: list[ast.FieldDecl | ast.RowInvariant | ast.UniqueDecl | ast.Text] = [
            *decl.fields,
            *decl.invariants,
            *decl.uniques,
        ]
        if decl.doc is not None:
            items.append(decl.doc)
        for item in sorted(items, key=lambda item: item.span.start):
            if isinstance(item, ast.FieldDecl):
                self.field(item)
            elif isinstance(item, ast.RowInvariant):
                self.labelled("invariant", item.text, item.cond, item.span.start)
            elif isinstance(item, ast.UniqueDecl):
                self.out.comments_before(item.span.start)  # before the names take theirs
                names = [(name, name.text) for name in item.fields]
                body = self.exprs.bracketed("(", names, ")", item.span.end)
                self.out.item(item.span.start, ["unique", body])
            else:
                self.docstring(item)
        self.out.close(decl.span.end - 1)
        return first

    def visit_VariantDecl(self, decl: ast.VariantDecl) -> int:
        first = self.out.open(decl.span.start, f"variant {decl.name.text} by {decl.tag.text}")
        items: list[ast.RecordDecl | ast.Text] = [*decl.cases]
        if decl.doc is not None:
            items.append(decl.doc)
        for item in sorted(items, key=lambda item: item.span.start):
            if isinstance(item, ast.Text):
                self.docstring(item)
                continue
            name = item.name.text
            if item.json_tag is not None:
                name += f" = {self.exprs.source(item.json_tag)}"
            if not item.fields and not item.invariants and item.doc is None:
                self.out.comments_before(item.span.start)
                self.out.item(item.span.start, name)  # a case with no fields
            elif _plain_fields(item):  # on one line when it fits: `gift_card { id: str }`
                self.out.comments_before(item.span.start)
                fields = [(f, f"{f.name.text}: {type_text(f.type)}") for f in item.fields]
                body = self.exprs.bracketed("{", fields, "}", item.span.end, padded=True)
                self.out.item(item.span.start, [f"{name} ", body])
            else:
                self.visit_RecordDecl(item, word="", name=name)
        self.out.close(decl.span.end - 1)
        return first

    def field(self, field: ast.FieldDecl) -> None:
        self.out.comments_before(field.span.start)
        parts: list[Doc] = ["key " if field.is_key else "", field.name.text, ": "]
        parts.append(type_text(field.type))
        parts.append(" unique" if field.unique else "")
        parts.append(" immutable" if field.immutable else "")
        if field.on_delete is not None:
            parts.append(f" on delete {field.on_delete.text}")
        parts.extend(self.doc_and_default(field.default, field.doc))
        if field.transitions is not None:
            steps = [(t, f"{t.source.text} -> {t.target.text}") for t in field.transitions]
            parts.extend([" transitions ", self.transitions(steps, field.span.end)])
        self.out.item(field.span.start, parts)

    def transitions(self, steps: list[tuple[ast.Transition, str]], end: int) -> Doc:
        return self.exprs.bracketed("{", steps, "}", end, padded=True)

    def doc_and_default(self, default: ast.Expr | None, doc: ast.Text | None) -> list[Doc]:
        """` "doc" = default`: the description next to the type, as docs/language.md writes
        parameters (the grammar takes it on either side of the default)."""
        parts: list[Doc] = []
        if doc is not None:
            parts.extend([" ", self.long_string(doc)])
        if default is not None:
            parts.extend([" = ", self.exprs.root(default)])
        return parts

    def labelled(self, word: str, text: ast.Text, cond: ast.Expr, start: int) -> int:
        """`invariant "text": cond` and `check "text": cond`: the condition goes to the next
        line when the whole does not fit."""
        self.out.comments_before(start)
        label = f"{word} {self.long_string(text)}:"
        return self.out.item(start, group(label, indent(LINE, self.exprs.root(cond))))

    def visit_StateDecl(self, decl: ast.StateDecl) -> int:
        first = self.out.open(decl.span.start, "state")
        for state_field in decl.fields:
            self.out.comments_before(state_field.span.start)
            parts: list[Doc] = [f"{state_field.name.text}: {type_text(state_field.type)}"]
            parts.extend(self.doc_and_default(state_field.default, state_field.doc))
            self.out.item(state_field.span.start, parts)
        self.out.close(decl.span.end - 1)
        return first

    def visit_InvariantDecl(self, decl: ast.InvariantDecl) -> int:
        return self.labelled("invariant", decl.text, decl.cond, decl.span.start)

    def params(self, params: Sequence[ast.Param], end: int) -> Doc:
        items = []
        for param in params:
            parts: list[Doc] = [f"{param.name.text}: {type_text(param.type)}"]
            parts.extend(self.doc_and_default(param.default, param.doc))
            items.append((param, parts))
        return self.exprs.bracketed("(", items, ")", end)

    def visit_FnDecl(self, decl: ast.FnDecl) -> int:
        self.out.comments_before(decl.span.start)
        body_start = decl.body.span.start
        header: list[Doc] = [f"fn {decl.name.text}", self.params(decl.params, body_start)]
        header.append(f" -> {type_text(decl.result)}")
        if isinstance(decl.body, ast.Block):
            first = self.out.open(decl.span.start, header)
            self.block_body(decl.body)
            return first
        return self.out.item(decl.span.start, [*header, " = ", self.exprs.root(decl.body)])

    def visit_ToolDecl(self, decl: ast.ToolDecl) -> int:
        self.out.comments_before(decl.span.start)
        words = ("internal " if decl.internal else "") + f"{decl.kind} {decl.name.text}"
        header: list[Doc] = [words, self.params(decl.params, decl.body.span.start)]
        if decl.result is not None:
            header.append(f" -> {type_text(decl.result)}")
        first = self.out.open(decl.span.start, header)
        if decl.doc is not None:
            self.docstring(decl.doc)
        self.block_body(decl.body)
        return first

    # ---- tasks ----------------------------------------------------------------------------
    def visit_TaskDecl(self, decl: ast.TaskDecl) -> int:
        first = self.out.open(decl.span.start, f"task {decl.name.text}")
        sections: list[object] = [*decl.checks, *decl.counterexamples]
        sections.extend(self._allow_clauses(decl.allows))
        for part in (decl.doc, decl.init):
            if part is not None:
                sections.append(part)
        solution_start: int | None = None
        if decl.solution is not None or decl.answer is not None:
            solution_start = self._solution_start(decl)
            sections.append(("solution", solution_start))
        for section in sorted(sections, key=_section_start):
            if isinstance(section, ast.Text):
                self.docstring(section)
            elif isinstance(section, ast.InitFrom):
                self.out.item(section.span.start, f"init from {self.exprs.source(section.path)}")
            elif isinstance(section, ast.InitBlock):
                self.out.open(section.span.start, "init")
                for assign in section.assigns:
                    self.out.comments_before(assign.span.start)
                    value = self.exprs.root(assign.value)
                    self.out.item(assign.span.start, [f"{assign.name.text} = ", value])
                self.out.close(section.span.end - 1)
            elif isinstance(section, ast.Check):
                self.labelled("check", section.text, section.cond, section.span.start)
            elif isinstance(section, ast.Counterexample):
                self.calls_block("counterexample", section.span.start, section.steps)
                self.out.close(section.span.end - 1)
            elif isinstance(section, list):
                self.out.comments_before(section[0].span.start)
                targets = ", ".join(_allow_text(a) for a in section)
                self.out.item(section[0].span.start, f"allow {targets}")
            else:
                self.solution(decl, solution_start or 0)
        self.out.close(decl.span.end - 1)
        return first

    def _solution_start(self, decl: ast.TaskDecl) -> int:
        """The AST keeps the steps, not the section: its `solution` word is the last one
        before the first step (no string or comment lies between them)."""
        first = [step.span.start for step in decl.solution or ()]
        if decl.answer is not None:
            first.append(decl.answer.span.start)
        where = min(first) if first else decl.span.end
        return max(self.text.rfind("solution", decl.span.start, where), decl.span.start)

    def _allow_clauses(self, allows: tuple[ast.Allow, ...]) -> list[list[ast.Allow]]:
        """The `allow` targets grouped as written: one clause per `allow` word (the AST keeps
        the targets; those of one clause are separated by a comma alone)."""
        clauses: list[list[ast.Allow]] = []
        for allow in allows:
            if clauses and self.text[clauses[-1][-1].span.end : allow.span.start].strip() == ",":
                clauses[-1].append(allow)
            else:
                clauses.append([allow])
        return clauses

    def solution(self, decl: ast.TaskDecl, start: int) -> None:
        steps: list[ast.SolutionStep | ast.Text] = [*(decl.solution or ())]
        if decl.answer is not None:
            steps.append(decl.answer)
        end = self.calls_block("solution", start, steps)
        self.out.close(self.text.find("}", end))

    def calls_block(
        self, word: str, start: int, steps: Sequence[ast.SolutionStep | ast.Text]
    ) -> int:
        """A block of tool calls (a solution, a counterexample), opened and not closed;
        returns where its last call ends."""
        self.out.open(start, word)
        end = start
        for step in sorted(steps, key=lambda step: step.span.start):
            end = max(end, step.span.end)
            if isinstance(step, ast.Text):
                self.out.item(step.span.start, f"answer {self.long_string(step)}")
                continue
            self.out.comments_before(step.span.start)
            bind = f"let {step.bind.text} = " if step.bind is not None else ""
            self.out.item(step.span.start, [bind, self.exprs.root(step.call, lead=True)])
        return end

    # ---- statements -----------------------------------------------------------------------
    def block_body(self, block: ast.Block) -> None:
        """The statements of a block already opened; closes it."""
        for stmt in block.stmts:
            self.statement(stmt)
        self.out.close(block.span.end - 1)

    def statement(self, stmt: ast.Stmt) -> None:
        self.out.comments_before(stmt.span.start)
        self.visit(stmt)

    def visit_Let(self, stmt: ast.Let) -> None:
        root = self.exprs.root
        typed = f": {type_text(stmt.type)}" if stmt.type is not None else ""
        parts: list[Doc] = [f"let {stmt.name.text}{typed} = "]
        parts.append(root(stmt.value, before_else=stmt.else_message is not None))
        if stmt.else_message is not None:
            parts.append(_else(root(stmt.else_message, lead=True)))
        self.out.item(stmt.span.start, group(*parts))

    def visit_Assign(self, stmt: ast.Assign) -> None:
        target = self.exprs.expr(stmt.target, 0)
        self.out.item(stmt.span.start, [target, f" {stmt.op} ", self.exprs.root(stmt.value)])

    def visit_Require(self, stmt: ast.Require) -> None:
        cond = self.exprs.root(stmt.cond, lead=True, before_else=True)
        message = _else(self.exprs.root(stmt.message, lead=True))
        self.out.item(stmt.span.start, group("require ", cond, message))

    def visit_Fail(self, stmt: ast.Fail) -> None:
        self.out.item(stmt.span.start, ["fail ", self.exprs.root(stmt.message, lead=True)])

    def visit_Return(self, stmt: ast.Return) -> None:
        value: list[Doc] = [" ", self.exprs.root(stmt.value)] if stmt.value is not None else []
        self.out.item(stmt.span.start, ["return", *value])

    def visit_For(self, stmt: ast.For) -> None:
        targets = ", ".join(target.text for target in stmt.targets)
        iterable = self.exprs.root(stmt.iterable, lead=True)
        self.out.open(stmt.span.start, [f"for {targets} in ", iterable])
        self.block_body(stmt.body)

    def visit_Break(self, stmt: ast.Break) -> None:
        self.out.item(stmt.span.start, "break")

    def visit_Continue(self, stmt: ast.Continue) -> None:
        self.out.item(stmt.span.start, "continue")

    def visit_ExprStmt(self, stmt: ast.ExprStmt) -> None:
        self.out.item(stmt.span.start, self.exprs.root(stmt.expr, lead=True))

    def visit_If(self, stmt: ast.If) -> None:
        first, *others = stmt.branches
        self.out.open(stmt.span.start, ["if ", self.exprs.root(first.cond, lead=True)])
        body = first.body
        for branch in others:
            for inner in body.stmts:
                self.statement(inner)
            cond = self.exprs.root(branch.cond, lead=True)
            self.out.reopen(branch.span.start, ["} elif ", cond])
            body = branch.body
        if stmt.orelse is not None:
            for inner in body.stmts:
                self.statement(inner)
            self.out.reopen(stmt.orelse.span.start, "} else")
            body = stmt.orelse
        self.block_body(body)


def _else(message: Doc) -> Doc:
    """` else message`, on the next line when the statement does not fit (a line may start
    with `else`: the post-lexer joins it to the one before)."""
    return indent(LINE, "else ", message)


def _allow_text(allow: ast.Allow) -> str:
    if allow.kind == "field" and allow.field is not None:
        return f"{allow.table.text}.{allow.field.text}"
    if allow.kind in ("delete", "insert"):
        return f"{allow.kind} {allow.table.text}"
    return allow.table.text


def _section_start(section: object) -> int:
    if isinstance(section, tuple):
        return int(section[1])
    if isinstance(section, list):  # an `allow` clause's targets

        return int(section[0].span.start)
    return int(getattr(section, "span").start)


def _margin(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _plain_fields(case: ast.RecordDecl) -> bool:
    """A case of fields that are a name and a type each, and nothing else."""
    return not (case.invariants or case.uniques or case.doc) and all(
        f.default is None
        and f.doc is None
        and not (f.is_key or f.unique or f.immutable or f.on_delete or f.transitions)
        for f in case.fields
    )
