"""Renaming a spec's own name (a field, tool, parameter, entity, enum, member, state field,
constant, fn, local or task) everywhere it is written: in the spec and in its task files.

The places are found with the checker's own answer to "what does this word declare or refer
to" (Analysis.target_of, the one hover and go-to-definition use): every identifier of the
merged syntax tree whose declaration is the renamed one is rewritten, and so are the names
checks give as strings (`called("set_status", status=...)`, `calls("set_status")`). A rename
is refused when the new name is no identifier or when the renamed files would have more errors
than before (a clash with another name, a reserved word, an `init from` JSON file that names
the old name): it is checked before it is offered. Docstrings, comments and JSON files are not
rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Sequence, TypeVar

from envdsl.lsp.analysis import Analysis, child_nodes
from envdsl.pipeline import CompileResult, check_source
from envdsl.semantics.builtin_table import called_builtin
from envdsl.semantics.model import CallableInfo, CheckedSpec
from envdsl.syntax import ast
from envdsl.util.source import SourceFile, Span

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class RenameError(ValueError):
    """A rename that cannot be done; str() says why, in one line."""


@dataclass(frozen=True, slots=True)
class Occurrences:
    name: str  # the name as declared
    declaration: Span
    spans: tuple[Span, ...]  # every place it is written, the declaration's included, in order


def bundle_analysis(spec: SourceFile, task_files: Sequence[SourceFile]) -> Analysis:
    """A spec checked with its task files (the static stages), as one analysis."""
    return Analysis(spec, check_source(spec, verify=False, task_files=task_files))


def occurrences(analysis: Analysis, file: str, offset: int) -> Occurrences | None:
    """The renamable name at `offset` of `file` (one of the analysis's files) and where it is
    written; None when the word there is not one of the spec's own names (a keyword, a
    builtin, a stdlib name)."""
    path = analysis.path_at(offset, file)
    target = analysis.target_of(path)
    declaration = target[2] if target is not None else _traced_tool(analysis, path)
    if declaration is None:
        return None
    declared = analysis.result.sources.get(declaration.file)
    if declared is None or analysis.result.spec is None:
        return None  # declared in a stdlib module: not the spec's to rename
    if declaration.file not in _bundle_files(analysis):
        return None
    spans = {declaration}
    for path in _identifier_paths(analysis.result.spec):
        found = analysis.target_of(path)
        if found is not None and found[2] == declaration:
            spans.add(found[1])
    spans |= set(_trace_references(analysis, declaration))
    name = declared.text[declaration.start : declaration.end]
    ordered = sorted(spans, key=lambda span: (span.file, span.start))
    return Occurrences(name, declaration, tuple(ordered))


def rename(
    spec: SourceFile, task_files: Sequence[SourceFile], file: str, offset: int, new_name: str
) -> dict[str, list[tuple[Span, str]]]:
    """The edits, by file, that rename the name at `offset` of `file` to `new_name`; raises
    RenameError when that is not possible or would break the spec."""
    if not IDENTIFIER.match(new_name):
        raise RenameError(f"'{new_name}' is not a name (letters, digits and _, not first a digit)")
    analysis = bundle_analysis(spec, task_files)
    found = occurrences(analysis, file, offset)
    if found is None:
        raise RenameError("there is no name of this spec here to rename")
    edits: dict[str, list[tuple[Span, str]]] = {}
    for span in found.spans:
        edits.setdefault(span.file, []).append((span, new_name))
    if new_name != found.name:
        _refuse_if_broken(analysis, spec, task_files, edits, found.name, new_name)
    return edits


def apply_edits(text: str, edits: Sequence[tuple[Span, str]]) -> str:
    for span, replacement in sorted(edits, key=lambda edit: edit[0].start, reverse=True):
        text = text[: span.start] + replacement + text[span.end :]
    return text


def _refuse_if_broken(
    before: Analysis,
    spec: SourceFile,
    task_files: Sequence[SourceFile],
    edits: dict[str, list[tuple[Span, str]]],
    old: str,
    new: str,
) -> None:
    """Check the renamed files as they were checked before. An `init from` JSON file is not
    rewritten, and what it holds is only compared with the schema when the tasks run: then
    both versions are checked with their tasks too."""
    renamed = [
        SourceFile(source.path, apply_edits(source.text, edits.get(source.path, [])))
        for source in (spec, *task_files)
    ]
    _compare(
        before.result, check_source(renamed[0], verify=False, task_files=renamed[1:]), old, new
    )
    if before.result.spec is not None and any(_nodes(before.result.spec, ast.InitFrom)):
        full = check_source(spec, task_files=task_files)
        _compare(full, check_source(renamed[0], task_files=renamed[1:]), old, new)


def _compare(before: CompileResult, after: CompileResult, old: str, new: str) -> None:
    errors_before = [d for d in before.diagnostics if d.is_error]
    errors_after = [d for d in after.diagnostics if d.is_error]
    if len(errors_after) > len(errors_before):
        known = {(d.code.code, d.message) for d in errors_before}
        first = next((d for d in errors_after if (d.code.code, d.message) not in known), None)
        why = f": {first.code.code} {first.message}" if first is not None else ""
        raise RenameError(f"renaming '{old}' to '{new}' would break the spec{why}")


def _bundle_files(analysis: Analysis) -> set[str]:
    spec = analysis.result.spec
    files = {analysis.source.path}
    if spec is not None:
        files.add(spec.path)
        files |= {task.span.file for task in _tasks(spec)}
    return files


def _tasks(spec: ast.SpecFile) -> Iterator[ast.TaskDecl]:
    if spec.env is not None:
        yield from spec.env.of_type(ast.TaskDecl)


def _identifier_paths(root: object) -> Iterator[list[object]]:
    """The path (root first) to every name and name reference of the tree."""
    stack: list[tuple[object, list[object]]] = [(root, [])]
    while stack:
        node, path = stack.pop()
        if isinstance(getattr(node, "span", None), Span):
            path = [*path, node]
        if isinstance(node, (ast.Name, ast.NameRef)):
            yield path
        stack.extend((child, path) for child in child_nodes(node))


def _trace_references(analysis: Analysis, declaration: Span) -> Iterator[Span]:
    """Tool names and their parameters in `called("tool", param=...)` and `calls("tool")`."""
    spec = analysis.result.spec
    if spec is None:
        return
    for call in _nodes(spec, ast.Call):
        tool = _trace_tool(analysis, call)
        if tool is None:
            continue
        literal = call.args[0]
        source = analysis.result.sources.get(literal.span.file)
        written = source.text[literal.span.start : literal.span.end] if source else ""
        if tool.decl.name.span == declaration and written == f'"{tool.name}"':
            yield Span(literal.span.file, literal.span.start + 1, literal.span.end - 1)
        for keyword in call.kwargs:
            param = next((p for p in tool.params if p.name == keyword.name.text), None)
            if param is not None and param.decl.name.span == declaration:
                yield keyword.name.span


def _trace_tool(analysis: Analysis, call: ast.Call) -> CallableInfo | None:
    """The tool a `called("tool", ...)` or `calls("tool")` of a check names."""
    checked = analysis.result.checked
    if not isinstance(checked, CheckedSpec):
        return None
    builtin = called_builtin(call, checked)  # not a helper of that name
    if not (
        builtin is not None
        and builtin.reads_trace
        and call.args
        and isinstance(call.args[0], ast.StrLit)
    ):
        return None
    tool = checked.callables.get(call.args[0].value)
    return tool if tool is not None and tool.is_tool else None


def _traced_tool(analysis: Analysis, path: list[object]) -> Span | None:
    """The declaration of the tool whose name string in a check holds the offset."""
    if len(path) < 2 or not isinstance(path[-1], ast.StrLit) or not isinstance(path[-2], ast.Call):
        return None
    call = path[-2]
    tool = _trace_tool(analysis, call) if call.args and call.args[0] is path[-1] else None
    return tool.decl.name.span if tool is not None else None


NodeT = TypeVar("NodeT")


def _nodes(root: object, kind: type[NodeT]) -> Iterator[NodeT]:
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, kind):
            yield node
        stack.extend(child_nodes(node))
