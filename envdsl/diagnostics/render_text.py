"""Human-readable diagnostics in the rustc/Quint style: header, location, source line, carets.

```
error[E1003]: unknown field 'emial' on User
  --> examples/x.env:12:5
   |
12 |     u.emial = email
   |       ^^^^^
   = help: did you mean 'email'?
```

The renderer only reads diagnostics and source text; it never decides what is an error.
"""

from __future__ import annotations

import unicodedata
from typing import Sequence

from envdsl.diagnostics.codes import Severity
from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.util.frozen_node import node
from envdsl.util.source import SourceFile, SourceMap
from envdsl.util.terminal import printable

TAB_WIDTH = 4

_RESET = "\x1b[0m"
_BOLD = "\x1b[1m"
_RED = "\x1b[1;31m"
_YELLOW = "\x1b[1;33m"
_BLUE = "\x1b[1;34m"
_CYAN = "\x1b[1;36m"


@node
class _Style:
    """ANSI colouring, or none at all: one switch so the layout code never branches on it."""

    enabled: bool

    def paint(self, text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if self.enabled and text else text

    def severity(self, text: str, severity: Severity) -> str:
        return self.paint(text, _RED if severity is Severity.ERROR else _YELLOW)

    def gutter(self, text: str) -> str:
        return self.paint(text, _BLUE)

    def bold(self, text: str) -> str:
        return self.paint(text, _BOLD)

    def label(self, text: str) -> str:
        return self.paint(text, _CYAN)


def render_text(
    diagnostics: Sequence[Diagnostic], sources: SourceMap, *, color: bool = False
) -> str:
    """Render diagnostics in the given order, then one summary line (if there are any)."""
    if not diagnostics:
        return ""
    style = _Style(color)
    blocks = [_render_one(diagnostic, sources, style) for diagnostic in diagnostics]
    return "\n\n".join(blocks) + "\n\n" + summary_line(diagnostics, style=style) + "\n"


def summary_line(diagnostics: Sequence[Diagnostic], *, style: _Style | None = None) -> str:
    """`error: 2 errors, 1 warning in examples/x.env` (the files are those of the spans)."""
    style = style or _Style(False)
    errors = sum(1 for d in diagnostics if d.severity is Severity.ERROR)
    warnings = len(diagnostics) - errors
    parts = []
    if errors:
        parts.append(_plural(errors, "error"))
    if warnings:
        parts.append(_plural(warnings, "warning"))
    files = list(dict.fromkeys(d.span.file for d in diagnostics))
    where = files[0] if len(files) == 1 else f"{len(files)} files"
    severity = Severity.ERROR if errors else Severity.WARNING
    head = style.severity(severity.value, severity)
    return f"{head}{style.bold(': ' + ', '.join(parts) + ' in ' + where)}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _render_one(diagnostic: Diagnostic, sources: SourceMap, style: _Style) -> str:
    severity = diagnostic.severity
    header = style.severity(f"{severity.value}[{diagnostic.code.code}]", severity)
    # spec text (messages quote it, notes and source lines are it) never reaches the terminal
    # raw: an escape sequence in a string would be obeyed
    lines = [f"{header}{style.bold(': ' + printable(diagnostic.message, keep_tabs=False))}"]
    source = sources.get(diagnostic.span.file)
    snippet = _Snippet.build(diagnostic, source) if source is not None else None
    width = snippet.gutter_width if snippet is not None else 1
    pad = " " * width
    if snippet is None:
        # Without the text there are no lines and columns to show, only the file.
        lines.append(f"{pad}{style.gutter('-->')} {printable(diagnostic.span.file)}")
    else:
        lines.append(f"{pad}{style.gutter('-->')} {snippet.location}")
        lines.append(f"{pad} {style.gutter('|')}")
        for number, text in snippet.context:
            lines.append(_source_line(number, text, width, style))
        lines.append(_source_line(snippet.line, snippet.text, width, style))
        marker = "^" * snippet.caret_count + (f" {snippet.label}" if snippet.label else "")
        indent = " " * snippet.caret_indent
        lines.append(f"{pad} {style.gutter('|')} {indent}{style.severity(marker, severity)}")
    for note in diagnostic.notes:
        lines.append(_annotation("note", printable(note), width, style))
    if diagnostic.help:
        lines.append(_annotation("help", printable(diagnostic.help), width, style))
    for fix in diagnostic.fixes:
        lines.append(_annotation("fix", printable(fix.message), width, style))
    return "\n".join(lines)


def _source_line(number: int, text: str, width: int, style: _Style) -> str:
    gutter = style.gutter(f"{number:>{width}} |")
    return f"{gutter} {_expand_tabs(text)}".rstrip()


def _annotation(kind: str, text: str, width: int, style: _Style) -> str:
    """`= note: text`; later lines of a multi-line text (a traceback) are indented under it."""
    first, *rest = text.split("\n")
    indent = " " * (width + 1 + len(f"= {kind}: "))
    head = f"{' ' * (width + 1)}{style.bold('= ' + kind + ':')} {first}"
    return "\n".join([head.rstrip()] + [f"{indent}{line}".rstrip() for line in rest])


@node
class _Snippet:
    """Which source line to show and where the carets go, in display columns."""

    location: str  # path:line:col of the span start
    line: int
    text: str  # the line's text without its line break
    context: tuple[tuple[int, str], ...]  # lines shown before `line` (end-of-file only)
    caret_indent: int
    caret_count: int
    label: str
    gutter_width: int

    @staticmethod
    def build(diagnostic: Diagnostic, source: SourceFile) -> _Snippet:
        span = diagnostic.span
        length = len(source.text)
        start_offset = max(0, min(span.start, length))
        end_offset = max(start_offset, min(span.end, length))
        start = source.position(start_offset)
        raw = source.line_text(start.line).rstrip("\r")
        location = printable(f"{span.file}:{start.line}:{start.col}")
        # the line as shown, with control characters escaped, and the span's start in it
        text = printable(raw)
        start_index = len(printable(raw[: start.col - 1]))
        # The line of the last character covered: a span that ends with a newline ends on
        # the line that newline terminates, not on the next one.
        last_line = (
            source.position(end_offset - 1).line if end_offset > start_offset else start.line
        )
        label = ""
        context: tuple[tuple[int, str], ...] = ()
        if last_line > start.line:
            covered = max(1, _display_width(text[start_index:]))
            label = f"(this span continues to line {last_line})"
        elif end_offset > start_offset:
            segment = printable(raw[start.col - 1 : start.col - 1 + end_offset - start_offset])
            covered = max(1, _display_width(segment))
        else:
            covered = 1
        if start_offset == length:
            label = "end of file"
            # An empty last line says nothing: show the line before it too.
            if not text.strip() and start.line > 1:
                previous = printable(source.line_text(start.line - 1).rstrip("\r"))
                context = ((start.line - 1, previous),)
        numbers = [start.line] + [number for number, _ in context]
        return _Snippet(
            location=location,
            line=start.line,
            text=text,
            context=context,
            caret_indent=_display_width(text[:start_index]),
            caret_count=covered,
            label=label,
            gutter_width=len(str(max(numbers))),
        )


def _expand_tabs(text: str) -> str:
    return text.replace("\t", " " * TAB_WIDTH)


def _display_width(text: str) -> int:
    """Terminal columns of `text`: tabs as TAB_WIDTH, wide (CJK) characters as 2, marks as 0."""
    width = 0
    for char in text:
        if char == "\t":
            width += TAB_WIDTH
        elif unicodedata.combining(char):
            continue
        elif unicodedata.east_asian_width(char) in ("W", "F"):
            width += 2
        else:
            width += 1
    return width
