"""What a checked spec declares, as plain JSON for the report: entities and records with their
fields, refs and transitions, enums, scalar state, tools (parameters and effects), rules and
tasks with their source text.

Only the semantic model and the AST are read (never the generated code), so a spec whose tasks
could not be verified is still drawn. Every string here may come from an LLM: the renderers
escape it; nothing in this module trusts it either (it is data, never markup).
"""

from __future__ import annotations

import textwrap
from typing import Any

from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec, FieldInfo, RecordInfo
from envdsl.syntax import ast
from envdsl.util.source import Span

Json = dict[str, Any]


def describe_spec(checked: CheckedSpec) -> Json:
    """The declarations of `checked` that the spec page shows."""
    source = _Source(checked.spec)
    records = [info for info in checked.records.values() if info.module is None]
    return {
        "env": checked.env.name.text,
        "doc": _text(checked.env.doc),
        "entities": [_record(checked, info, source) for info in records if info.is_entity],
        "records": [_record(checked, info, source) for info in records if not info.is_entity],
        "enums": [
            {"name": info.name, "members": list(info.members), "doc": _text(info.decl.doc)}
            for info in checked.enums.values()
            if info.module is None
        ],
        "scalars": [
            {"name": info.name, "type": str(info.type), "doc": _text(info.decl.doc)}
            for info in checked.state.values()
            if not isinstance(info.type, t.TableType)
        ],
        "tools": [_tool(checked, name, source) for name in _tool_names(checked)],
        "rules": _rules(checked),
        "tasks": [_task(task, source) for task in checked.env.of_type(ast.TaskDecl)],
    }


class _Source:
    """The source text of spans in the spec or in its merged task files."""

    def __init__(self, spec: ast.SpecFile) -> None:
        self.spec = spec

    def text(self, span: Span) -> str:
        return self.spec.text_of(span)[span.start : span.end]

    def block(self, span: Span) -> str:
        """The text of a multi-line construct as it would stand at column 1: its first line
        is cut at the span's start, so the others lose the indentation it had."""
        whole = self.spec.text_of(span)
        column = span.start - (whole.rfind("\n", 0, span.start) + 1)
        return textwrap.dedent(" " * column + self.text(span))


def _text(doc: ast.Text | None) -> str | None:
    return doc.value if doc is not None else None


def _record(checked: CheckedSpec, info: RecordInfo, source: _Source) -> Json:
    return {
        "name": info.name,
        "table": info.table,
        "doc": _text(info.decl.doc),
        "fields": [_field(checked, field, source) for field in info.fields.values()],
        "invariants": [invariant.text.value for invariant in info.decl.invariants],
        "unique_together": [[name.text for name in unique.fields] for unique in info.decl.uniques],
    }


def _field(checked: CheckedSpec, field: FieldInfo, source: _Source) -> Json:
    declared = field.type
    optional = isinstance(declared, t.OptionalType)
    inner = declared.inner if isinstance(declared, t.OptionalType) else declared
    decl = field.decl
    transitions = None
    if field.transitions is not None:
        transitions = [
            [member, target]
            for member, targets in field.transitions.items()
            for target in sorted(targets)
        ]
    return {
        "name": field.name,
        "type": str(declared),
        "key": field.is_key,
        "unique": decl.unique,
        "optional": optional,
        "ref": inner.entity if isinstance(inner, t.RefType) else None,
        "enum": inner.name if isinstance(inner, t.EnumType) else None,
        "members": (
            list(checked.enums[inner.name].members)
            if isinstance(inner, t.EnumType) and inner.name in checked.enums
            else None
        ),
        "on_delete": decl.on_delete.text if decl.on_delete is not None else None,
        "default": source.text(decl.default.span) if decl.default is not None else None,
        "doc": _text(decl.doc),
        "transitions": transitions,
    }


def _tool_names(checked: CheckedSpec) -> list[str]:
    return [info.name for info in checked.tools if info.module is None]


def _tool(checked: CheckedSpec, name: str, source: _Source) -> Json:
    info = checked.callables[name]
    assert isinstance(info.decl, ast.ToolDecl)
    effects = checked.effects.get(name)
    return {
        "name": name,
        "kind": info.kind,
        "internal": info.internal,
        "doc": _text(info.decl.doc),
        "params": [
            {
                "name": param.name,
                "type": str(param.type),
                "doc": _text(param.decl.doc),
                "default": (
                    source.text(param.decl.default.span) if param.decl.default is not None else None
                ),
            }
            for param in info.params
        ],
        "result": str(info.result),
        "reads": sorted(effects.reads) if effects is not None else [],
        "writes": sorted(effects.writes) if effects is not None else [],
        "calls": sorted(effects.calls) if effects is not None else [],
    }


def _rules(checked: CheckedSpec) -> list[Json]:
    """The declarative rules every action is checked against (the guards inside tools are
    listed by the coverage report, with which tasks pass and provoke them)."""
    rules: list[Json] = [
        {"kind": "invariant", "owner": checked.env.name.text, "text": decl.text.value}
        for decl in checked.env.of_type(ast.InvariantDecl)
    ]
    for info in checked.records.values():
        if not info.is_entity or info.module is not None:
            continue
        for invariant in info.decl.invariants:
            rules.append(
                {"kind": "row invariant", "owner": info.name, "text": invariant.text.value}
            )
        for field in info.fields.values():
            if field.decl.unique:
                rules.append({"kind": "unique", "owner": info.name, "text": field.name})
            if field.transitions is not None:
                allowed = ", ".join(
                    f"{a} -> {b}"
                    for a, targets in field.transitions.items()
                    for b in sorted(targets)
                )
                rules.append(
                    {"kind": "transitions", "owner": f"{info.name}.{field.name}", "text": allowed}
                )
        for unique in info.decl.uniques:
            names = ", ".join(name.text for name in unique.fields)
            rules.append({"kind": "unique together", "owner": info.name, "text": names})
    return rules


def _task(task: ast.TaskDecl, source: _Source) -> Json:
    init: str | None = None
    if isinstance(task.init, ast.InitFrom):
        init = f'from "{task.init.path.value}"'
    elif isinstance(task.init, ast.InitBlock):
        init = source.block(task.init.span)
    return {
        "name": task.name.text,
        "file": task.span.file,
        "doc": _text(task.doc),
        "init": init,
        "solution": (
            [source.text(step.span) for step in task.solution]
            if task.solution is not None
            else None
        ),
        "answer": source.text(task.answer.span) if task.answer is not None else None,
        "checks": [
            {"text": check.text.value, "condition": source.text(check.cond.span)}
            for check in task.checks
        ],
    }
