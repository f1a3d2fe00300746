"""Input limits (envdsl/syntax/size_limits.py, docs/language.md §8): one diagnostic at once past
them, time linear below them, never a RecursionError or an internal error.

The inputs are the ones the reliability fuzzing (issue 14) found: each took seconds to minutes,
gigabytes, or crashed the compiler before the limits existed.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from envdsl.pipeline import check_source
from envdsl.util.source import SourceFile

TOOL = 'env A {{\n  """d"""\n  query q() -> int {{\n    """d"""\n{body}\n  }}\n}}\n'


def codes(text: str, seconds: float = 2.0) -> list[str]:
    started = time.perf_counter()
    result = check_source(SourceFile("big.env", text))
    elapsed = time.perf_counter() - started
    assert elapsed < seconds, f"{elapsed:.1f} s"
    return [d.code.code for d in result.diagnostics]


def nested_blocks(count: int) -> str:
    opening = "".join(f"for x{i} in range(1) {{\n" for i in range(count))
    return "let n = 0\n" + opening + "n += 1\n" + "}\n" * count + "return n"


INPUTS = {
    "5 MB string then a syntax error": ('env A {\n const S: str = "' + "a" * 5_000_000 + '" x', "E0020"),
    "5 MB of newlines": ("\n" * 5_000_000, "E0020"),
    "2.6 million nested parentheses": ("(" * 2_600_000 + ")" * 2_600_000, "E0020"),
    "a line over 10,000 characters": ('env A {\n """' + "x" * 20_000 + '"""\n}', "E0020"),
    "201 nested brackets": (TOOL.format(body="return " + "(" * 201 + "1" + ")" * 201), "E0021"),
    "90 nested calls": (TOOL.format(body="return " + "abs(" * 90 + "1" + ")" * 90), "E0021"),
    "1,000 nots": (TOOL.format(body="return 1 if " + "not " * 1000 + "true else 0"), "E0021"),
    "201 minus signs": (TOOL.format(body="return " + "-" * 201 + "1"), "E0021"),
    "494-long attribute chain": (TOOL.format(body="return a" + ".b" * 494), "E0021"),
    "21 nested for": (TOOL.format(body=nested_blocks(21)), "E0021"),
    "98 nested if": (TOOL.format(body="if true {\n" * 98 + "}\n" * 98 + "return 1"), "E0021"),
    "a 5,000-digit integer": (TOOL.format(body="return " + "7" * 5000), "E0022"),
    "deep nesting in an f-string hole": (
        TOOL.format(body='return len(f"{' + "not " * 500 + 'true}")'),
        "E0021",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", INPUTS)
def test_past_a_limit_one_diagnostic_at_once(name: str) -> None:
    text, code = INPUTS[name]
    assert codes(text) == [code]


def test_just_below_the_limits_the_code_compiles_and_runs() -> None:
    deep = "1 if " + "not " * 37 + "true else 0"
    assert codes(TOOL.format(body=nested_blocks(11))) == []
    assert codes(TOOL.format(body=f"return {deep}")) == []
    # 1,000 digits pass the syntax limit (E0022); as an `int` they are out of range (issue 27)
    assert codes(TOOL.format(body="return " + "9" * 1000)) == ["E2014"]
    assert codes(TOOL.format(body="return " + "9" * 19)) == ["E2014"]
    assert codes(TOOL.format(body="return " + "9" * 18)) == []


def test_below_the_file_limit_time_is_linear() -> None:
    """A 900 KB string or 900,000 newlines before a syntax error: no super-linear help text."""
    string = 'env A {\n const S: str = """' + ("a" * 9000 + "\n") * 100 + '"""\n x y }'
    assert codes(string) == ["E0001"]
    assert codes("\n" * 900_000 + "env }") == ["E0001"]


def test_an_open_long_string_ending_in_a_backslash_is_quick() -> None:
    """The bracket scan read such a string by backtracking through every way to cut its text
    into chunks: 40 characters took minutes."""
    started = time.process_time()
    assert codes('env X {\n  """' + "ab " * 200 + "\\") == ["E0002"]
    assert time.process_time() - started < 2


@pytest.mark.parametrize(
    "text",
    [
        "(" * 65,
        "(" * 64,
        ")" * 3 + "(" * 64,
        '"(((" ' + "(" * 64,
        "# (((\n" + "[" * 64,
        '"""\n((( """' + "{" * 64,
        '"""((((\\' + "(" * 70,
        "'a\\'(' " + "(" * 63,
        '"\n' + "(" * 65,
        "(" * 40 + ")" * 50 + "(" * 64,
    ],
)
def test_the_quick_bracket_count_agrees_with_the_scan(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check_text's C-speed count of the bracket depth says `within the limit` only where
    its scan finds no bracket too deep (a text it cannot tell, it scans)."""
    from envdsl.diagnostics import DiagnosticSink
    from envdsl.syntax import size_limits

    for whole in (text, text + ")" * 70, "x = " + text):
        quick = size_limits._brackets_within_limit(whole)
        with monkeypatch.context() as patched:  # the scan alone
            patched.setattr(size_limits, "_brackets_within_limit", lambda _text: False)
            scanned = size_limits.check_text(whole, SourceFile("a.env", whole), 0, DiagnosticSink())
        assert scanned or not quick


def test_a_byte_order_mark_is_accepted() -> None:
    assert codes("\ufeff" + TOOL.format(body="return 1")) == []


def test_cr_line_endings_read_the_same_in_process_and_through_the_cli(tmp_path: Path) -> None:
    text = TOOL.format(body="let x = 1\nreturn x +\n  y")
    for newline in ("\r", "\r\n"):
        path = tmp_path / "spec.env"
        path.write_bytes(text.replace("\n", newline).encode())
        in_process = check_source(SourceFile(str(path), text.replace("\n", newline)))
        cli = subprocess.run(
            [sys.executable, "-m", "envdsl", "check", "--format", "json", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert [d.code.code for d in in_process.diagnostics] == ["E1001"]
        position = in_process.sources.get(str(path)).position(in_process.diagnostics[0].span.start)
        assert '"E1001"' in cli.stdout and f'"line": {position.line}' in cli.stdout
