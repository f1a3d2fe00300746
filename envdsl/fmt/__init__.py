"""`envdsl fmt`: one canonical layout for a spec, from its syntax tree and its comments.

`format_source` is a pure function of the text. It formats only a spec that parses and
builds without errors (the builder drops what it reports, which the formatter would lose),
and it checks its own output before handing it back: the output must parse to the same syntax
tree (spans aside) and keep every comment and every string as written. An output that fails
that check is never written; the file is reported instead (a formatter bug, not the user's).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields, is_dataclass

from envdsl.diagnostics import DiagnosticSink
from envdsl.diagnostics.diagnostic import Diagnostic
from envdsl.fmt.comments import find_comments
from envdsl.fmt.layout import Layout
from envdsl.syntax import ast
from envdsl.util.source import SourceFile

WIDTH = 100


@dataclass(frozen=True, slots=True)
class Formatted:
    text: str | None  # the canonical text; None when the spec has errors or the check failed
    diagnostics: list[Diagnostic] = field(default_factory=list)  # why it was not formatted
    problem: str | None = None  # the formatter's own output failed its check

    @property
    def ok(self) -> bool:
        return self.text is not None


def format_source(source: SourceFile, width: int = WIDTH) -> Formatted:
    spec, diagnostics = _syntax_tree(source)
    if spec is None:
        return Formatted(None, diagnostics)
    text = Layout(spec, find_comments(source.text), width).file()
    problem = _compare(source, spec, text)
    if problem is not None:
        return Formatted(None, [], problem)
    return Formatted(text)


def _syntax_tree(source: SourceFile) -> tuple[ast.SpecFile | None, list[Diagnostic]]:
    from envdsl.syntax.build import build_ast
    from envdsl.syntax.parse import parse_file

    sink = DiagnosticSink()
    tree = parse_file(source, sink)
    if tree is None:
        return None, sink.sorted()
    expect_module = any(getattr(item, "data", "") == "module_decl" for item in tree.children)
    spec = build_ast(tree, source, sink, expect_module=expect_module)
    errors = [d for d in sink.sorted() if d.is_error]
    return (None, errors) if errors else (spec, [])


def _compare(original: SourceFile, spec: ast.SpecFile, text: str) -> str | None:
    """Why `text` is not a faithful layout of `original`, or None when it is."""
    formatted = SourceFile(original.path, text)
    again, diagnostics = _syntax_tree(formatted)
    if again is None:
        first = diagnostics[0].message if diagnostics else "no syntax tree"
        return f"the formatted text does not parse: {first}"
    if shape(again) != shape(spec):
        return "the formatted text means something else (its syntax tree differs)"
    if Counter(c.text for c in find_comments(text)) != Counter(
        c.text for c in find_comments(original.text)
    ):
        return "the formatted text lost or changed a comment"
    if _strings(formatted) != _strings(original):
        return "the formatted text lost or changed a string"
    return None


def shape(node: object) -> object:
    """A syntax tree without its spans and source text: what the spec means, not where."""
    if isinstance(node, (list, tuple)):
        return tuple(shape(item) for item in node)
    if is_dataclass(node) and not isinstance(node, type):
        return (type(node).__name__,) + tuple(
            shape(getattr(node, f.name))
            for f in fields(node)
            if f.name != "span"
            and not (isinstance(node, ast.SpecFile) and f.name in ("path", "text"))
        )
    return node


def _strings(source: SourceFile) -> Counter[str]:
    """Every string literal as written, with the lines of a multi-line one stripped (the
    formatter moves those lines with their indentation)."""
    from envdsl.syntax.parse import lex_tokens

    return Counter(
        "\n".join(line.strip() for line in value.split("\n"))
        for kind, value, _, _ in lex_tokens(source.text)
        if kind in ("STRING", "LONG_STRING", "FSTRING")
    )
