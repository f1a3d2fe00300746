"""The machine-readable diagnostics document (`envdsl check --format json`).

This is what an LLM repairs from, so its shape is a contract: docs/diagnostics-json.md describes
it and tests/diagnostics.schema.json pins it. A breaking change bumps JSON_FORMAT_VERSION.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from envdsl.diagnostics.diagnostic import Diagnostic, Edit, Fix
from envdsl.util.source import SourceMap, Span

if TYPE_CHECKING:  # the pipeline imports the whole front end; the renderer needs only the type
    from envdsl.pipeline import CompileResult

JSON_FORMAT_VERSION = 1

JsonObject = dict[str, Any]


def render_json(results: Sequence[CompileResult]) -> JsonObject:
    """One document for all files: `ok` is false when any file has an error."""
    diagnostics = [
        diagnostic_json(diagnostic, result.sources)
        for result in results
        for diagnostic in result.diagnostics
    ]
    ok = all(result.ok for result in results)
    return {"version": JSON_FORMAT_VERSION, "ok": ok, "diagnostics": diagnostics}


def diagnostic_json(diagnostic: Diagnostic, sources: SourceMap) -> JsonObject:
    return {
        "code": diagnostic.code.code,
        "slug": diagnostic.code.slug,
        "severity": diagnostic.severity.value,
        "message": diagnostic.message,
        "span": span_json(diagnostic.span, sources),
        "notes": list(diagnostic.notes),
        "help": diagnostic.help,
        "fixes": [_fix_json(fix, sources) for fix in diagnostic.fixes],
    }


def span_json(span: Span, sources: SourceMap) -> JsonObject:
    return {
        "file": span.file,
        "start": _position_json(span.file, span.start, sources),
        "end": _position_json(span.file, span.end, sources),
    }


def _position_json(path: str, offset: int, sources: SourceMap) -> JsonObject:
    source = sources.get(path)
    if source is None:
        # Never the case for files the compiler read; 0 says "unknown" rather than guessing.
        return {"line": 0, "col": 0, "offset": offset}
    position = source.position(offset)
    return {"line": position.line, "col": position.col, "offset": position.offset}


def _fix_json(fix: Fix, sources: SourceMap) -> JsonObject:
    return {"message": fix.message, "edits": [_edit_json(edit, sources) for edit in fix.edits]}


def _edit_json(edit: Edit, sources: SourceMap) -> JsonObject:
    return {"span": span_json(edit.span, sources), "replacement": edit.replacement}
