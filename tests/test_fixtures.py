"""The golden diagnostics corpus: `tests/fixtures/<stage>/*.env`, each a small invalid spec.

A fixture states what the checker must report with mypy-style inline expectations: a comment at
the end of the line where a diagnostic starts, `# E: E1003` (errors) or `# W: W5005` (warnings),
several codes separated by spaces. Where no comment can go on that line (inside a multi-line
string, or past the end of the file), `# E@+N: CODE` / `# E@-N: CODE` point N lines below or above
the comment's line. Every other line must stay silent, so a fixture checks both that the mistake
is found on the right line and that nothing else is reported.

A fixture whose first line is `# XFAIL: <reason>` shows a known checker bug: it is expected to
fail (strictly, so that a fix turns it into an alert to remove the mark).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

import envdsl.pipeline
from envdsl.diagnostics.codes import REGISTRY, Stage
from envdsl.diagnostics.explanations import EXPLANATIONS
from envdsl.pipeline import check_file

FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_FILES = sorted(FIXTURES.glob("*/*.env"))
STAGE_DIRS = {"syntax", "names", "types", "effects", "tasks", "lints"}
INTERNAL_CODES = {code for code, entry in REGISTRY.items() if entry.stage is Stage.INTERNAL}

_EXPECTATION = re.compile(r"#\s*([EW])(?:@([+-]\d+))?:\s*([EW]\d{4}(?:[ \t]+[EW]\d{4})*)")
_XFAIL = re.compile(r"^#\s*XFAIL:\s*(\S.*)$")

Expected = Counter[tuple[int, str]]


@dataclass(frozen=True)
class Fixture:
    path: Path
    expected: Expected
    xfail_reason: str | None


def parse_fixture(path: Path) -> Fixture:
    """Read the expectations of one fixture: a multiset of (1-based line, code)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    expected: Expected = Counter()
    for number, text in enumerate(lines, start=1):
        for tag, offset, codes in _EXPECTATION.findall(text):
            line = number + (int(offset) if offset else 0)
            assert 1 <= line <= len(lines) + 1, f"{path.name}:{number}: offset points outside"
            for code in codes.split():
                assert code in REGISTRY, f"{path.name}:{number}: unknown code {code}"
                assert code[0] == tag, f"{path.name}:{number}: {code} listed under '# {tag}:'"
                expected[(line, code)] += 1
    match = _XFAIL.match(lines[0]) if lines else None
    return Fixture(path, expected, match.group(1) if match else None)


def reported(path: Path) -> tuple[Expected, dict[tuple[int, str], list[str]]]:
    """What the checker says about a fixture: (line, code) pairs and their messages. A task
    file's fixture names an env fixture, whose diagnostics are that fixture's business."""
    result = check_file(path)
    actual: Expected = Counter()
    messages: dict[tuple[int, str], list[str]] = {}
    for diagnostic in result.diagnostics:
        if diagnostic.span.file != str(path):
            continue
        source = result.sources.get(diagnostic.span.file)
        line = source.position(diagnostic.span.start).line
        actual[(line, diagnostic.code.code)] += 1
        messages.setdefault((line, diagnostic.code.code), []).append(diagnostic.message)
    return actual, messages


def describe_difference(
    path: Path, expected: Expected, actual: Expected, messages: dict[tuple[int, str], list[str]]
) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()

    def source_line(line: int) -> str:
        return lines[line - 1].strip() if 1 <= line <= len(lines) else "<end of file>"

    out = [f"{path.relative_to(FIXTURES)}: diagnostics differ from the expectations"]
    for (line, code), n in sorted((expected - actual).items()):
        out.append(f"  missing    line {line:3} {code} (x{n}): {source_line(line)}")
    for (line, code), n in sorted((actual - expected).items()):
        said = "; ".join(messages.get((line, code), []))
        out.append(f"  unexpected line {line:3} {code} (x{n}): {source_line(line)}")
        out.append(f"             message: {said}")
    return "\n".join(out)


def _params() -> list[object]:
    params: list[object] = []
    for path in FIXTURE_FILES:
        fixture = parse_fixture(path)
        marks = []
        if fixture.xfail_reason is not None:
            marks.append(pytest.mark.xfail(reason=fixture.xfail_reason, strict=True))
        params.append(pytest.param(fixture, id=str(path.relative_to(FIXTURES)), marks=marks))
    return params


@pytest.mark.parametrize("fixture", _params())
def test_fixture(fixture: Fixture) -> None:
    actual, messages = reported(fixture.path)
    if actual != fixture.expected:
        pytest.fail(
            describe_difference(fixture.path, fixture.expected, actual, messages), pytrace=False
        )


# ---- the corpus itself ----------------------------------------------------------------------


def test_corpus_is_large_enough_and_well_placed() -> None:
    assert len(FIXTURE_FILES) >= 70
    assert {path.parent.name for path in FIXTURE_FILES} <= STAGE_DIRS
    stray = [p for p in FIXTURES.rglob("*.env") if p.parent.parent != FIXTURES]
    assert stray == [], "fixtures live exactly one level below tests/fixtures/"


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture_expects_something_of_its_stage(path: Path) -> None:
    """A fixture shows at least one diagnostic of the stage its directory names."""
    fixture = parse_fixture(path)
    stages = {REGISTRY[code].stage.value for _, code in fixture.expected}
    assert path.parent.name in stages, f"expects only {sorted(stages)}"
    assert 5 <= len(path.read_text(encoding="utf-8").splitlines()) <= 25


def test_every_code_has_a_fixture() -> None:
    covered = {code for path in FIXTURE_FILES for _, code in parse_fixture(path).expected}
    missing = sorted(set(REGISTRY) - INTERNAL_CODES - covered)
    assert missing == [], f"codes without a fixture: {missing}"


def test_every_code_has_an_explanation() -> None:
    assert sorted(EXPLANATIONS) == sorted(REGISTRY)
    for code, explanation in EXPLANATIONS.items():
        assert explanation.text.strip(), code


def test_expectation_syntax(tmp_path: Path) -> None:
    """The comment parser itself: offsets, several codes, both severities, the XFAIL mark."""
    path = tmp_path / "probe.env"
    path.write_text(
        "# XFAIL: the checker misses it\n"
        "env Demo {  # E: E0001\n"
        '  """doc\n'
        '  more"""  # E@-1: E0003 E0008\n'
        "}  # W: W5004  # E@+1: E0004\n",
        encoding="utf-8",
    )
    fixture = parse_fixture(path)
    assert fixture.expected == Counter(
        {(2, "E0001"): 1, (3, "E0003"): 1, (3, "E0008"): 1, (5, "W5004"): 1, (6, "E0004"): 1}
    )
    assert fixture.xfail_reason == "the checker misses it"


# ---- E9001: a crash in a stage becomes one diagnostic -----------------------------------------


def test_internal_error_is_a_diagnostic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import envdsl.semantics.analyze

    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    # pipeline.py imports `analyze` from the module at call time, so patch the module attribute.
    monkeypatch.setattr(envdsl.semantics.analyze, "analyze", explode)
    spec = tmp_path / "ok.env"
    spec.write_text(
        "env Demo {\n  state {\n    count: int = 0\n  }\n  query get_count() -> int {\n"
        '    """Return the counter."""\n    return count\n  }\n}\n',
        encoding="utf-8",
    )
    result = envdsl.pipeline.check_file(spec)
    assert [d.code.code for d in result.diagnostics] == ["E9001"]
    diagnostic = result.diagnostics[0]
    assert "boom" in diagnostic.message and "semantics" in diagnostic.message
    assert diagnostic.notes and "RuntimeError" in diagnostic.notes[0]
    assert not result.ok
