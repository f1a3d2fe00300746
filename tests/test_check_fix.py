"""`envdsl check --fix`: the diagnostics' machine fixes, applied round after round."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from envdsl.cli.apply_fixes import apply_edits, choose_fixes, fix_source
from envdsl.diagnostics import codes
from envdsl.diagnostics.diagnostic import Diagnostic, Edit, Fix
from envdsl.pipeline import check_source
from envdsl.util.source import SourceFile, Span

ROOT = Path(__file__).resolve().parent.parent

BROKEN = """env Shop {
  entity Item {
    key id: str
    qty: int
  }
  state {
    items: table Item
  }
  query total() -> int {
    \"\"\"Units in stock.\"\"\"
    let n = 0
    for i in itmes {
      n += i.qty
    }
    return n
  }
  query pick(x: int) -> int {
    \"\"\"A number.\"\"\"
    if x > 1 {
      return 1
    } else if x > 0 {
      return 2
    }
    return lenn("ab")
  }
}
"""


def _diagnostic(start: int, end: int, replacement: str, *fixes: Fix) -> Diagnostic:
    edit = Edit(Span("a.env", start, end), replacement)
    own = fixes or (Fix(f"write {replacement}", (edit,)),)
    return Diagnostic(codes.UNKNOWN_NAME, "m", Span("a.env", start, end), fixes=own)


def test_overlapping_and_ambiguous_fixes_are_not_applied_together() -> None:
    first = _diagnostic(0, 4, "abcd")
    overlapping = _diagnostic(2, 6, "x")
    same_place = _diagnostic(0, 0, "y")
    apart = _diagnostic(8, 9, "z")
    other_file = Diagnostic(
        codes.UNKNOWN_NAME,
        "m",
        Span("a.env", 10, 11),
        fixes=(Fix("f", (Edit(Span("b", 1, 2), "q"),)),),
    )
    choices = _diagnostic(
        12, 13, "", Fix("one", (Edit(Span("a.env", 12, 13), "1"),)), Fix("two", ())
    )
    chosen = choose_fixes([apart, overlapping, first, same_place, other_file, choices], "a.env")
    assert [d for d, _ in chosen] == [first, apart]


def test_edits_apply_from_the_end() -> None:
    edits = [Edit(Span("a", 0, 1), "AA"), Edit(Span("a", 4, 5), "E"), Edit(Span("a", 2, 2), "-")]
    assert apply_edits("abcde", edits) == "AAb-cdE"


def test_fixes_are_applied_until_the_spec_is_clean() -> None:
    outcome = fix_source(SourceFile("shop.env", BROKEN))
    # the syntax error hides the rest: its fix comes first, then the next check's
    assert [fix.code for fix in outcome.applied] == ["E0001", "E1001", "E1005"]
    assert "} elif x > 0 {" in outcome.text and "in items {" in outcome.text
    assert 'return len("ab")' in outcome.text
    assert check_source(SourceFile("shop.env", outcome.text), verify=False).ok
    assert outcome.applied[1].line == 12


def test_a_clean_spec_is_left_alone() -> None:
    text = (ROOT / "examples" / "sleep_tracking.env").read_text(encoding="utf-8")
    outcome = fix_source(SourceFile("sleep.env", text))
    assert outcome.applied == [] and outcome.text == text


def test_cli_fixes_in_place_and_reports(tmp_path: Path) -> None:
    spec = tmp_path / "shop.env"
    spec.write_text(BROKEN, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "envdsl", "check", "--fix", "--no-verify", str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"fixed {spec}:12:14: E1001 replace 'itmes' with 'items'" in result.stderr
    assert "applied 3 fixes in 1 file" in result.stderr
    assert "lenn" not in spec.read_text(encoding="utf-8")
    again = subprocess.run(
        [sys.executable, "-m", "envdsl", "check", "--fix", "--no-verify", str(spec)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert again.returncode == 0 and "fixed" not in again.stderr
