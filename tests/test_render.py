"""The text and JSON renderers, on diagnostics built by hand (independent of the checker)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from envdsl.diagnostics.codes import REGISTRY
from envdsl.diagnostics.diagnostic import Diagnostic, DiagnosticSink, Edit, Fix
from envdsl.diagnostics.render_json import render_json
from envdsl.diagnostics.render_text import render_text
from envdsl.pipeline import CompileResult
from envdsl.util.source import SourceFile, SourceMap, Span

SCHEMA = json.loads((Path(__file__).parent / "diagnostics.schema.json").read_text("utf-8"))
ANSI = re.compile(r"\x1b\[[0-9;]*m")

SPEC = "".join(f"# line {n}\n" for n in range(1, 12)) + "    u.emial = email\n}\n"


def source_map(*files: SourceFile) -> SourceMap:
    sources = SourceMap()
    for source in files:
        sources.add(source)
    return sources


def diag(code: str, message: str, span: Span, **extra: Any) -> Diagnostic:
    return Diagnostic(REGISTRY[code], message, span, **extra)


def span_of(source: SourceFile, needle: str, occurrence: int = 0) -> Span:
    start = -1
    for _ in range(occurrence + 1):
        start = source.text.index(needle, start + 1)
    return source.span(start, start + len(needle))


# ---- text ------------------------------------------------------------------------------------


def test_single_line_span_matches_the_rustc_layout() -> None:
    source = SourceFile("examples/x.env", SPEC)
    d = diag(
        "E1003",
        "unknown field 'emial' on User",
        span_of(source, "emial"),
        notes=("User declares: user_id, name, email",),
        help="did you mean 'email'?",
    )
    assert render_text([d], source_map(source)) == (
        "error[E1003]: unknown field 'emial' on User\n"
        "  --> examples/x.env:12:7\n"
        "   |\n"
        "12 |     u.emial = email\n"
        "   |       ^^^^^\n"
        "   = note: User declares: user_id, name, email\n"
        "   = help: did you mean 'email'?\n"
        "\n"
        "error: 1 error in examples/x.env\n"
    )


def test_caret_sits_under_the_span_column() -> None:
    text = "env X {\n  state { count: int = 0 }\n  query q() -> int { return cuont }\n}\n"
    source = SourceFile("x.env", text)
    span = span_of(source, "cuont")
    out = render_text([diag("E1001", "unknown name 'cuont'", span)], source_map(source))
    lines = out.splitlines()
    code_line = next(line for line in lines if line.startswith("3 |"))
    caret_line = lines[lines.index(code_line) + 1]
    assert caret_line.index("^") == code_line.index("cuont")
    assert caret_line.count("^") == len("cuont")
    assert " --> x.env:3:29" in out


def test_empty_span_gets_one_caret_at_its_position() -> None:
    source = SourceFile("x.env", "env X {\n  query q() {\n}\n")
    at = source.text.index("{\n}") + 1
    out = render_text([diag("E0001", "unexpected", Span("x.env", at, at))], source_map(source))
    assert "--> x.env:2:14" in out
    assert "  |              ^\n" in out
    assert out.count("^") == 1


def test_span_at_end_of_file_without_final_newline() -> None:
    source = SourceFile("x.env", "env X {")
    end = len(source.text)
    out = render_text(
        [diag("E0001", "unexpected end", Span("x.env", end, end))], source_map(source)
    )
    assert "--> x.env:1:8" in out
    assert "1 | env X {\n  |        ^ end of file\n" in out


def test_span_at_end_of_file_after_final_newline_shows_the_last_line_too() -> None:
    source = SourceFile("x.env", "env X {\n")
    end = len(source.text)
    out = render_text(
        [diag("E0001", "unexpected end", Span("x.env", end, end))], source_map(source)
    )
    assert "--> x.env:2:1" in out
    assert "1 | env X {\n2 |\n  | ^ end of file\n" in out


def test_multi_line_span_underlines_the_first_line_to_its_end_and_says_so() -> None:
    text = "env X {\n  query q() -> int {\n    return 1\n  }\n}\n"
    source = SourceFile("x.env", text)
    start = text.index("query")
    end = text.index("  }\n") + 3
    out = render_text(
        [diag("E3004", "missing return", Span("x.env", start, end))], source_map(source)
    )
    assert "2 |   query q() -> int {\n" in out
    assert "  |   " + "^" * len("query q() -> int {") + " (this span continues to line 4)" in out


def test_span_ending_with_a_newline_stays_on_its_line() -> None:
    source = SourceFile("x.env", "env X {\n  let\n}\n")
    start = source.text.index("\n", 8)  # the newline that ends line 2
    out = render_text(
        [diag("E0001", "unexpected", Span("x.env", start, start + 1))], source_map(source)
    )
    assert "continues" not in out
    assert "2 |   let\n  |      ^\n" in out


def test_crlf_line_endings_do_not_leak_into_the_output() -> None:
    source = SourceFile("x.env", "env X {\r\n  bad\r\n}\r\n")
    out = render_text([diag("E0001", "unexpected", span_of(source, "bad"))], source_map(source))
    assert "\r" not in out
    assert "2 |   bad\n  |   ^^^\n" in out


def test_tabs_and_wide_characters_keep_carets_aligned() -> None:
    source = SourceFile("x.env", '\tfail "日本" + oops\n')
    out = render_text([diag("E1001", "unknown name", span_of(source, "oops"))], source_map(source))
    code_line, caret_line = out.splitlines()[3:5]
    assert code_line == '1 |     fail "日本" + oops'
    # the two wide characters take two columns each on a terminal
    assert caret_line == "  |" + " " * (1 + 4 + len('fail "') + 4 + len('" + ')) + "^^^^"


def test_warning_header_and_summary() -> None:
    source = SourceFile("x.env", "env X {\n  query q() -> int { return 1 }\n}\n")
    d = diag("W5001", "query 'q' has no docstring", span_of(source, "q", 1))
    out = render_text([d], source_map(source))
    assert out.startswith("warning[W5001]: query 'q' has no docstring\n")
    assert out.endswith("\nwarning: 1 warning in x.env\n")


def test_summary_counts_errors_and_warnings() -> None:
    source = SourceFile("examples/x.env", "env X {\n  a\n  b\n  c\n}\n")
    ds = [
        diag("E1001", "unknown name 'a'", span_of(source, "a")),
        diag("E1001", "unknown name 'b'", span_of(source, "b")),
        diag("W5005", "unused 'c'", span_of(source, "c")),
    ]
    out = render_text(ds, source_map(source))
    assert out.endswith("\n\nerror: 2 errors, 1 warning in examples/x.env\n")
    assert out.count("error[E1001]") == 2
    blocks = out.split("\n\n")
    assert len(blocks) == 4  # three diagnostics and the summary, separated by blank lines


def test_no_diagnostics_render_nothing() -> None:
    assert render_text([], SourceMap()) == ""


def test_multi_line_note_is_indented_under_its_label() -> None:
    source = SourceFile("x.env", "env X {\n}\n")
    traceback = 'Traceback (most recent call last):\n  File "a.py", line 1\nKeyError: 3'
    d = diag(
        "E9001",
        "internal compiler error in stage 'semantics': KeyError: 3",
        Span("x.env", 0, 0),
        notes=(traceback,),
        help="please report this with the spec that triggers it",
    )
    out = render_text([d], source_map(source))
    assert (
        "  = note: Traceback (most recent call last):\n"
        '            File "a.py", line 1\n'
        "          KeyError: 3\n"
        "  = help: please report this\n"
    ) in out.replace(" with the spec that triggers it", "")


def test_fixes_are_listed() -> None:
    source = SourceFile("x.env", "u.emial\n")
    span = span_of(source, "emial")
    fix = Fix("replace 'emial' with 'email'", (Edit(span, "email"),))
    out = render_text([diag("E1003", "unknown field", span, fixes=(fix,))], source_map(source))
    assert "  = fix: replace 'emial' with 'email'\n" in out


def test_span_in_a_file_without_source_shows_only_the_file() -> None:
    d = diag("E1007", "unknown module", Span("stdlib/gone.env", 3, 5))
    out = render_text([d], SourceMap())
    assert out.splitlines()[:2] == ["error[E1007]: unknown module", " --> stdlib/gone.env"]


def test_colour_adds_ansi_codes_and_nothing_else() -> None:
    source = SourceFile("examples/x.env", SPEC)
    d = diag("E1003", "unknown field", span_of(source, "emial"), help="did you mean 'email'?")
    plain = render_text([d], source_map(source))
    coloured = render_text([d], source_map(source), color=True)
    assert "\x1b[" not in plain
    assert "\x1b[1;31m" in coloured
    assert ANSI.sub("", coloured) == plain


# ---- JSON ------------------------------------------------------------------------------------


def result_with(source: SourceFile, *diagnostics: Diagnostic) -> CompileResult:
    sink = DiagnosticSink()
    for d in diagnostics:
        sink.report(d.code, d.message, d.span, help=d.help, notes=d.notes, fixes=d.fixes)
    return CompileResult(source.path, source_map(source), sink)


def test_json_document_shape_and_positions() -> None:
    source = SourceFile("examples/x.env", SPEC)
    span = span_of(source, "emial")
    fix = Fix("replace 'emial' with 'email'", (Edit(span, "email"),))
    d = diag(
        "E1003", "unknown field 'emial' on User", span, help="did you mean 'email'?", fixes=(fix,)
    )
    document = render_json([result_with(source, d)])
    jsonschema.validate(document, SCHEMA)
    position = {"line": 12, "col": 7, "offset": span.start}
    end = {"line": 12, "col": 12, "offset": span.end}
    span_json = {"file": "examples/x.env", "start": position, "end": end}
    assert document == {
        "version": 1,
        "ok": False,
        "diagnostics": [
            {
                "code": "E1003",
                "slug": "unknown-field",
                "severity": "error",
                "message": "unknown field 'emial' on User",
                "span": span_json,
                "notes": [],
                "help": "did you mean 'email'?",
                "fixes": [
                    {
                        "message": "replace 'emial' with 'email'",
                        "edits": [{"span": span_json, "replacement": "email"}],
                    }
                ],
            }
        ],
    }
    assert json.loads(json.dumps(document)) == document


def test_json_ok_ignores_warnings_and_keeps_file_order() -> None:
    first = SourceFile("b.env", "env B {\n}\n")
    second = SourceFile("a.env", "env A {\n}\n")
    warning = diag("W5001", "no docstring", first.span(4, 5))
    error = diag("E0001", "unexpected", second.span(0, 3))
    only_warnings = render_json([result_with(first, warning)])
    assert only_warnings["ok"] is True
    both = render_json([result_with(first, warning), result_with(second, error)])
    jsonschema.validate(both, SCHEMA)
    assert both["ok"] is False
    assert [d["span"]["file"] for d in both["diagnostics"]] == ["b.env", "a.env"]
    assert [d["severity"] for d in both["diagnostics"]] == ["warning", "error"]


def test_json_with_no_results_or_no_diagnostics_is_ok() -> None:
    assert render_json([]) == {"version": 1, "ok": True, "diagnostics": []}
    clean = render_json([result_with(SourceFile("x.env", "env X {\n}\n"))])
    assert clean == {"version": 1, "ok": True, "diagnostics": []}


def test_json_end_of_file_and_unknown_file_positions() -> None:
    source = SourceFile("x.env", "env X {\n")
    eof = diag("E0001", "unexpected end", source.span(8, 8))
    elsewhere = diag("E1007", "unknown module", Span("stdlib/gone.env", 3, 5))
    document = render_json([result_with(source, eof, elsewhere)])
    jsonschema.validate(document, SCHEMA)
    spans = {d["code"]: d["span"] for d in document["diagnostics"]}
    assert spans["E0001"]["start"] == {"line": 2, "col": 1, "offset": 8}
    assert spans["E1007"]["start"] == {"line": 0, "col": 0, "offset": 3}


@pytest.mark.parametrize("code", sorted(REGISTRY))
def test_every_code_fits_the_schema(code: str) -> None:
    source = SourceFile("x.env", "env X {\n}\n")
    d = diag(code, REGISTRY[code].summary, source.span(0, 3), notes=("a note",))
    jsonschema.validate(render_json([result_with(source, d)]), SCHEMA)
