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
from envdsl.util.source import SourceFile
from envdsl.util.terminal import printable

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


def test_run_and_explore_escape_tool_names_arguments_messages_and_check_texts(
    tmp_path: Path,
) -> None:
    """`run` echoes the agent's tool names and arguments and the spec's failure messages and
    check texts; `explore` prints failure messages and condition texts: all escaped."""
    spec = tmp_path / "spec.env"
    spec.write_text(
        f"""env Counter {{
  \"\"\"A counter.\"\"\"
  state {{ n: int = 0 }}
  action bump(by: int) -> int {{
    \"\"\"Bump.\"\"\"
    require by > 0 else "bad step{TITLE}"
    n += by
    return n
  }}
  action greet(name: str) -> str {{
    \"\"\"Greet.\"\"\"
    require name != "{TITLE}" else "no"
    return name
  }}
  task once {{
    \"\"\"Bump it once.\"\"\"
    solution {{ bump(by=1) }}
    check "bumped{CLEAR}": n == 1
  }}
}}
""",
        encoding="utf-8",
    )
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        '{"name": "bump", "arguments": {"by": 0}}\n'
        '{"name": "bu\\u001b[2Jmp\\u202e", "arguments": {"by\\u009b": "\\u202e"}}\n',
        encoding="utf-8",
    )
    runs = CliRunner().invoke(main, ["run", str(spec), "--task", "once", "--calls", str(calls)])
    explored = CliRunner().invoke(main, ["explore", str(spec), "--max-calls", "40"])
    for result in (runs, explored):
        assert result.exit_code == 0, result.output
        for raw in ("\x1b", "\x07", "\x9b", RLO):
            assert raw not in result.output, (raw, result.output)
    assert "bad step\\u001b]0;pwned\\u0007" in runs.output and "bumped\\x1b[2J" in runs.output
    assert "bu\\x1b[2Jmp\\u202e" in runs.output
    assert "\\x1b]0;pwned" in explored.output
