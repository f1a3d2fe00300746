"""Bidirectional and invisible control characters in a spec (Trojan Source, CVE-2021-42574).

A right-to-left override or an isolate in a comment or string makes an editor show the text in
another order than the compiler reads it, and a zero-width character makes two names or
strings look the same; in a docstring or string they reach the tool schemas and MCP
descriptions an agent reads as they are.  Compilers (rustc, gcc, clang) warn about them; so
does `check`, once per line.  The text as written is all there is to scan: no string escape of
the DSL makes such a character.
"""

from __future__ import annotations

import re
import unicodedata

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast
from envdsl.util.source import SourceFile, SourceMap, Span

# the bidi embeddings, overrides and isolates and the marks (as rustc's lint lists them),
# then zero-width and other format characters that render as nothing
HIDDEN = re.compile(
    "[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
    "\u200b-\u200d\u2060-\u2064\ufeff\u00ad\u180e\u115f\u1160\u3164\uffa0]"
)


def spec_sources(checked: CheckedSpec, sources: SourceMap) -> list[SourceFile]:
    """The files of the env and its task files (not the stdlib modules it imports)."""
    env = checked.env
    paths = {env.span.file} | {task.span.file for task in env.of_type(ast.TaskDecl)}
    found = (sources.get(path) for path in sorted(paths))
    return [source for source in found if source is not None]


def describe(char: str) -> str:
    return f"U+{ord(char):04X} {unicodedata.name(char, 'FORMAT CHARACTER')}"


def check_hidden_characters(checked: CheckedSpec, sources: SourceMap, sink: DiagnosticSink) -> None:
    reported_lines: set[tuple[str, int]] = set()

    def report(span: Span, char: str, line: int) -> None:
        if (span.file, line) in reported_lines:
            return
        reported_lines.add((span.file, line))
        sink.report(
            codes.HIDDEN_CHARACTER,
            f"an invisible or bidirectional control character ({describe(char)})",
            span,
            help="it can make the text read differently than it looks; remove it, or write a "
            "visible escape where it is meant",
        )

    for source in spec_sources(checked, sources):
        text = source.text
        if text.isascii():
            continue  # the common case: one C-speed pass
        for match in HIDDEN.finditer(text):
            start = match.start()
            report(Span(source.path, start, start + 1), match.group(), text.count("\n", 0, start))
