"""Control characters and escape sequences from spec strings never reach the terminal raw.

A check text could retitle the terminal (`ESC ] 0 ; ... BEL`), clear it or hide text; a bidi
override could make a line read differently. Text output shows them as escapes instead.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from envdsl.cli import main
from envdsl.diagnostics.render_text import render_text
from envdsl.pipeline import check_source
from envdsl.source import SourceFile
from envdsl.terminal import printable

TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
RLO = "\u202e"


def test_printable_escapes_controls_and_keeps_text() -> None:
    assert printable(f"a{TITLE}b") == "a\\x1b]0;pwned\\x07b"
    assert printable(f"x{RLO}y\u200bz") == "x\\u202ey\\u200bz"
    assert printable("line 1\nline 2\tté 字") == "line 1\nline 2\tté 字"
    assert printable("\x9b31m") == "\\x9b31m"  # the one-byte CSI


def test_a_diagnostic_never_prints_a_raw_escape_and_carets_still_line_up() -> None:
    text = f'env A {{\n  """d"""\n  const S: str = "{TITLE}{CLEAR}" + nope\n}}\n'
    result = check_source(SourceFile("a.env", text))
    rendered = render_text(result.diagnostics, result.sources)
    assert "\x1b" not in rendered and "\x07" not in rendered
    source_line = next(line for line in rendered.splitlines() if "+ nope" in line)
    caret_line = next(line for line in rendered.splitlines() if line.strip().endswith("^^^^"))
    assert source_line.index("nope") == caret_line.index("^")


def test_envdsl_tasks_escapes_instructions_and_check_texts(tmp_path: Path) -> None:
    spec = tmp_path / "spec.env"
    spec.write_text(
        f"""env Counter {{
  \"\"\"A counter.\"\"\"
  state {{ n: int = 0 }}
  action bump() -> int {{
    \"\"\"Bump.\"\"\"
    n += 1
    return n
  }}
  task once {{
    \"\"\"Bump it{CLEAR} once.\"\"\"
    solution {{ bump() }}
    check "bumped{TITLE}": n == 1
  }}
}}
""",
        encoding="utf-8",
    )
    for command in ("tasks", "verify"):
        output = CliRunner().invoke(main, [command, str(spec)]).output
        assert "\x1b" not in output and "\x07" not in output, (command, output)
    listing = CliRunner().invoke(main, ["tasks", str(spec)]).output
    assert "\\x1b[2J" in listing and "\\x1b]0;pwned\\x07" in listing
