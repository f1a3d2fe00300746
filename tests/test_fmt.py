"""`envdsl fmt`: canonical, idempotent, meaning-preserving, comments and docstrings kept.

The property runs over every example, every fixture that parses and builds, and mutated
specs (tests/spec_mutations.py). `format_source` checks its own output (same syntax tree,
same comments, same strings) and refuses to hand back one that fails; these tests also
compare what the compiler makes of both texts, independently of that check.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from spec_mutations import MUTATIONS, mutant

from envdsl.codegen.emit import generate
from envdsl.fmt import _syntax_tree, format_source, shape
from envdsl.fmt.comments import find_comments
from envdsl.pipeline import check_source
from envdsl.semantics.model import CheckedSpec
from envdsl.util.source import SourceFile

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.env"))
FIXTURES = sorted((ROOT / "tests" / "fixtures").rglob("*.env"))
STDLIB = sorted((ROOT / "stdlib").rglob("*.env"))


def _format(text: str, path: str = "spec.env") -> str:
    result = format_source(SourceFile(path, text))
    assert result.problem is None, result.problem
    assert result.text is not None, [d.message for d in result.diagnostics]
    return result.text


def _assert_canonical(text: str, path: str) -> str:
    formatted = _format(text, path)
    assert _format(formatted, path) == formatted, "formatting is not idempotent"
    assert sorted(c.text for c in find_comments(formatted)) == sorted(
        c.text for c in find_comments(text)
    )
    return formatted


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_an_example_formats_to_the_same_module(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    formatted = _assert_canonical(text, str(path))
    before, after = _module(str(path), text), _module(str(path), formatted)
    assert _without_positions(after) == _without_positions(before)
    long_lines = [line for line in formatted.splitlines() if len(line) > 100 and "#" not in line]
    assert not [line for line in long_lines if '"' not in line]  # only a long string may overrun


# A require / let-else coverage site in a generated module: (owner, source line, kind, the
# condition as written). Lines move and redundant parentheses go; nothing else may change.
_SITE = re.compile(r"^(\s*\('\w+', )\d+(, '[\w-]+', )(.*)\),$", re.MULTILINE)


def _without_positions(module: str) -> str:
    return _SITE.sub(lambda m: m[1] + "0" + m[2] + re.sub(r"[\s(),]", "", m[3]) + "),", module)


def _module(path: str, text: str) -> str:
    """The generated module (the tasks are not run: that is the examples' own test)."""
    result = check_source(SourceFile(path, text), verify=False)
    assert result.ok and isinstance(result.checked, CheckedSpec)
    return generate(result.checked, formatted=False)


def _parses(path: Path) -> bool:
    """Whether `format_source` formats the file without diagnostics: the syntax tree it starts
    from is all that decides it (its diagnostics are the tree's), so collection builds the tree
    alone, not the layout and its check, which the test itself runs."""
    _, diagnostics = _syntax_tree(SourceFile(str(path), path.read_text(encoding="utf-8")))
    return not diagnostics


PARSING_FIXTURES = [path for path in FIXTURES + STDLIB if _parses(path)]


def test_most_fixtures_parse() -> None:
    assert len(PARSING_FIXTURES) > len(FIXTURES) // 2


@pytest.mark.parametrize(
    "path", PARSING_FIXTURES, ids=lambda p: str(p.relative_to(ROOT)).replace("/", ":")
)
def test_a_fixture_formats_canonically(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    formatted = _assert_canonical(text, str(path))
    # the inline expectations (`# E: E2001`) are comments and survive
    assert re.findall(r"# [EW]: [EW]\d{4}", formatted) or not re.findall(r"# [EW]: ", text)


@pytest.mark.parametrize("seed", range(16))
def test_a_mutated_spec_formats_canonically_or_not_at_all(seed: int) -> None:
    example, mutations, text = mutant(random.Random(f"fmt:{seed}"))
    result = format_source(SourceFile("mutant.env", text))
    assert result.problem is None, (example, mutations, result.problem)
    if result.text is None:
        assert result.diagnostics, (example, mutations)  # not formatted: errors say why
        return
    assert _format(result.text, "mutant.env") == result.text, (example, mutations)


def test_layout_is_canonical() -> None:
    messy = (
        "# head\n\n\n"
        "env   Shop{\n"
        '    """Doc."""\n'
        "    const  N :int=3   # three\n"
        "    enum Color {red,green}\n"
        "    record Point { x: int, y: int }\n"
        "    query f( a:int ,b:int=2 )->int {\n"
        "        let s=(a+b)*2\n"
        "        if s>N{ return s }\n"
        "        elif s<0 {return -s}\n"
        "        else { return 0 }\n"
        "    }\n"
        "}\n"
    )
    assert _format(messy) == (
        "# head\n"
        "\n"
        "env Shop {\n"
        '  """Doc."""\n'
        "  const N: int = 3  # three\n"
        "  enum Color { red, green }\n"
        "\n"
        "  record Point {\n"
        "    x: int\n"
        "    y: int\n"
        "  }\n"
        "\n"
        "  query f(a: int, b: int = 2) -> int {\n"
        "    let s = (a + b) * 2\n"
        "    if s > N {\n"
        "      return s\n"
        "    } elif s < 0 {\n"
        "      return -s\n"
        "    } else {\n"
        "      return 0\n"
        "    }\n"
        "  }\n"
        "}\n"
    )


def test_parentheses_that_matter_are_kept_and_others_dropped() -> None:
    spec = (
        "env E {\n"
        "  fn f(a: int, b: int, c: int) -> int = a - (b - c) + ((a * b)) - (-a) ** 2\n"
        "  fn g(a: bool, b: bool) -> bool = not (a and b) or (a or b)\n"
        "  fn h(a: int) -> set[int] = {a}\n"
        "  query q(a: int) -> int {\n"
        '    require ({a}).contains(a) else "x"\n'
        "    return a if a > 0 else -a\n"
        "  }\n"
        "}\n"
    )
    formatted = _format(spec)
    assert "a - (b - c) + a * b - (-a) ** 2" in formatted
    assert "not (a and b) or (a or b)" in formatted  # the AST nests to the right here
    assert "fn h(a: int) -> set[int] = {a}\n" in formatted
    assert 'require ({a}.contains(a)) else "x"' in formatted  # a `{` there would open a block


def test_a_long_condition_breaks_inside_parentheses() -> None:
    names = [f"argument_number_{i}" for i in range(8)]
    params = ", ".join(f"{n}: bool" for n in names)
    spec = f"env E {{\n  query q({params}) -> bool {{\n    return {' and '.join(names)}\n  }}\n}}\n"
    formatted = _format(spec)
    assert "    return (\n      argument_number_0\n      and argument_number_1\n" in formatted
    assert all(len(line) <= 100 for line in formatted.splitlines())


def test_comments_inside_a_call_stay_with_their_argument() -> None:
    spec = (
        "env E {\n"
        "  query q(a: int, b: int) -> int { return a }\n"
        "  task t {\n"
        "    solution {\n"
        "      q(a=1,  # the first\n"
        "        # about b\n"
        "        b=2)\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
    formatted = _format(spec)
    assert "      q(\n        a=1,  # the first\n        # about b\n        b=2,\n      )\n" in (
        formatted
    )


def test_comments_everywhere_are_kept_near_their_code() -> None:
    path = ROOT / "tests" / "fmt_specs" / "comments_everywhere.env"
    formatted = _assert_canonical(path.read_text(encoding="utf-8"), str(path))
    for line in [
        "import std.time  # trailing import",
        "env E {  # after env brace",
        "    red,  # red",
        "    # own line in enum",
        '    "a": 1,  # one',
        "      red -> green,  # only",
        "    a: int,  # first param",
        ") -> int {  # body",
        "    let x = a + b  # mid expression",  # a comment inside an expression trails it
        "    # end of block",
        "  }  # after task",
        "}  # after env",
        "# trailing file comment",
    ]:
        assert line in formatted.splitlines() or line.strip() in formatted, line


def test_a_spec_with_syntax_errors_is_not_formatted() -> None:
    result = format_source(SourceFile("bad.env", "env E {\n  const x: int = \n}\n"))
    assert result.text is None and result.diagnostics
    assert result.diagnostics[0].code.code == "E0001"


def test_shape_ignores_spans_only() -> None:
    a = format_source(SourceFile("a.env", "env E { const x: int = 1 }\n"))
    assert a.text is not None
    from envdsl.fmt import _syntax_tree

    one, _ = _syntax_tree(SourceFile("a.env", "env E { const x: int = 1 }"))
    two, _ = _syntax_tree(SourceFile("a.env", "env E {\n  const x: int = 1\n}\n"))
    three, _ = _syntax_tree(SourceFile("a.env", "env E { const x: int = 2 }"))
    assert shape(one) == shape(two) != shape(three)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "envdsl", "fmt", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )


def test_cli_check_diff_and_write(tmp_path: Path) -> None:
    spec = tmp_path / "s.env"
    spec.write_text("env E {\n    const x:int=1\n}\n", encoding="utf-8")
    checked = _cli("--check", str(tmp_path))
    assert checked.returncode == 1 and "would reformat" in checked.stderr
    diffed = _cli("--diff", str(spec))
    assert diffed.returncode == 0 and "+  const x: int = 1" in diffed.stdout
    assert spec.read_text(encoding="utf-8") == "env E {\n    const x:int=1\n}\n"
    written = _cli(str(spec))
    assert written.returncode == 0 and "reformatted" in written.stderr
    assert spec.read_text(encoding="utf-8") == "env E {\n  const x: int = 1\n}\n"
    assert _cli("--check", str(spec)).returncode == 0


def test_cli_reports_a_spec_with_errors_and_leaves_it(tmp_path: Path) -> None:
    spec = tmp_path / "bad.env"
    spec.write_text("env E {\n  const x: int =\n}\n", encoding="utf-8")
    result = _cli(str(spec))
    assert result.returncode == 1 and "E0001" in result.stderr
    assert "Traceback" not in result.stderr
    assert spec.read_text(encoding="utf-8") == "env E {\n  const x: int =\n}\n"
    missing = _cli(str(tmp_path / "none.env"))
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_every_mutation_is_exercised() -> None:
    assert MUTATIONS  # the mutants above draw from these
