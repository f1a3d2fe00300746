"""Stage 6: lints for what LLM-written specs typically get wrong (warnings, W5xx)."""

from __future__ import annotations

import re

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast

_ACTION_VERBS = re.compile(
    r"^(update|set|delete|remove|create|add|insert|cancel|change|modify|assign|register|"
    r"approve|reject|close|open|archive|restore|reset|enable|disable|mark|move|transfer)_"
)


def lint(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    env = checked.env
    for tool in env.of_type(ast.ToolDecl):
        if tool.doc is None and not tool.internal:
            sink.report(
                codes.MISSING_DESCRIPTION,
                f"tool '{tool.name.text}' has no description",
                tool.name.span,
                help='the agent sees the docstring: start the body with """What it does."""',
            )
        if tool.kind == "query" and _ACTION_VERBS.match(tool.name.text):
            sink.report(
                codes.QUERY_NAMED_LIKE_ACTION,
                f"query '{tool.name.text}' is named like an action but cannot change state",
                tool.name.span,
                help="declare it as an `action`, or rename it (`get_...`, `list_...`, `find_...`)",
            )
    for task in env.of_type(ast.TaskDecl):
        if task.doc is None:
            sink.report(
                codes.MISSING_DESCRIPTION,
                f"task '{task.name.text}' has no instruction",
                task.name.span,
                help='start the task with the instruction the agent gets: """..."""',
            )
    _json_types(checked, sink)
    _unused(checked, sink)


def _json_types(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    places: list[tuple[str, t.Type, ast.Name]] = []
    for record in checked.records.values():
        if record.module is None:
            places += [(f"field '{f.name}'", f.type, f.decl.name) for f in record.fields.values()]
    for info in checked.callables.values():
        if info.module is None:
            places += [(f"parameter '{p.name}'", p.type, p.decl.name) for p in info.params]
    places += [(f"state field '{s.name}'", s.type, s.decl.name) for s in checked.state.values()]
    for what, value_type, name in places:
        if _mentions_json(value_type):
            sink.report(
                codes.JSON_TYPE,
                f"{what} has the untyped `json` type",
                name.span,
                help="declare a record for its shape: the compiler can then check every use",
            )


def _mentions_json(value_type: t.Type) -> bool:
    if value_type == t.JSON:
        return True
    if isinstance(value_type, (t.ListType, t.SetType, t.OptionalType)):
        inner = value_type.elem if not isinstance(value_type, t.OptionalType) else value_type.inner
        return _mentions_json(inner)
    if isinstance(value_type, t.MapType):
        return _mentions_json(value_type.key) or _mentions_json(value_type.value)
    return False


def _unused(checked: CheckedSpec, sink: DiagnosticSink) -> None:
    candidates: list[tuple[str, str, ast.Name]] = []
    candidates += [
        ("enum", e.name, e.decl.name) for e in checked.enums.values() if e.module is None
    ]
    candidates += [
        ("entity" if r.is_entity else "record", r.name, r.decl.name)
        for r in checked.records.values()
        if r.module is None and r.variant is None
    ]
    candidates += [
        ("variant", v.name, v.decl.name) for v in checked.variants.values() if v.module is None
    ]
    candidates += [("constant", c.name, c.decl.name) for c in checked.consts.values()]
    candidates += [
        ("fn" if c.kind == "fn" else f"internal {c.kind}", c.name, c.decl.name)
        for c in checked.callables.values()
        if c.module is None and (c.kind == "fn" or c.internal)
    ]
    for kind, name, at in candidates:
        if name not in checked.used:
            sink.report(
                codes.UNUSED_DECLARATION,
                f"{kind} '{name}' is never used",
                at.span,
                help="remove it, or use it where it was meant to be used",
            )
