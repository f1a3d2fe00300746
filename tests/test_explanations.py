"""Every registered code has an explanation whose examples go through the real checker.

The examples are what `envdsl explain CODE` teaches, so they must be true: the `wrong` spec
(written to a file and checked like any spec) reports its code and nothing else, since one
mistake gives one diagnostic; the `right` spec reports nothing at all, not even a warning.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

import pytest

from envdsl.diagnostics.codes import REGISTRY, Stage
from envdsl.diagnostics.explanations import EXPLANATIONS
from envdsl.pipeline import check_file

WITH_EXAMPLES = sorted(code for code, e in EXPLANATIONS.items() if e.wrong)


def check_example(
    text: str, path: Path, files: Mapping[str, str] | None = None
) -> list[tuple[int, str, str]]:
    """Check one example spec (or task file) from a file, with the other files it names next
    to it: (line, code, message) of every diagnostic."""
    for name, content in (files or {}).items():
        (path.parent / name).write_text(content, encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    result = check_file(path)
    return [
        (
            result.sources.get(d.span.file).position(d.span.start).line,
            d.code.code,
            d.message,
        )
        for d in result.diagnostics
    ]


def test_explanations_and_registry_are_in_step() -> None:
    assert sorted(EXPLANATIONS) == sorted(REGISTRY)


def test_only_internal_errors_lack_examples() -> None:
    without = {code for code, e in EXPLANATIONS.items() if not (e.wrong and e.right)}
    assert without == {code for code, c in REGISTRY.items() if c.stage is Stage.INTERNAL}
    assert "E9001" in without


@pytest.mark.parametrize("code", sorted(EXPLANATIONS))
def test_text_is_a_short_paragraph(code: str) -> None:
    text = EXPLANATIONS[code].text
    sentences = len(re.findall(r"[.!?](?:\s|$)", text))
    assert 2 <= sentences <= 6, text
    assert "\n" not in text and "  " not in text


@pytest.mark.parametrize("code", sorted(EXPLANATIONS))
def test_text_names_only_registered_codes(code: str) -> None:
    mentioned = set(re.findall(r"\b[EW]\d{4}\b", EXPLANATIONS[code].text))
    assert mentioned <= set(REGISTRY), mentioned - set(REGISTRY)


@pytest.mark.parametrize("code", WITH_EXAMPLES)
def test_examples_are_small_complete_specs(code: str) -> None:
    explanation = EXPLANATIONS[code]
    for spec in (explanation.wrong, explanation.right):
        assert re.search(r'^(env \w+|tasks for "[\w./]+") {$', spec, re.MULTILINE), spec
        assert spec.endswith("}\n")
        assert 3 <= len(spec.splitlines()) <= 22
    assert explanation.wrong != explanation.right


@pytest.mark.parametrize("code", WITH_EXAMPLES)
def test_wrong_example_reports_its_code_and_nothing_else(code: str, tmp_path: Path) -> None:
    explanation = EXPLANATIONS[code]
    reported = check_example(explanation.wrong, tmp_path / "wrong.env", explanation.files)
    assert [c for _, c, _ in reported] == [code], reported


@pytest.mark.parametrize("code", WITH_EXAMPLES)
def test_right_example_is_clean(code: str, tmp_path: Path) -> None:
    # Not even a warning: the repaired spec is what `envdsl explain` teaches.
    explanation = EXPLANATIONS[code]
    assert check_example(explanation.right, tmp_path / "right.env", explanation.files) == []


def test_explanation_files_out_of_format_are_refused() -> None:
    from envdsl.diagnostics.explanations import ExplanationFileError, parse_explanation

    good = "# W5001\n\nA rule. It matters.\n\n## wrong\n\n```env\nenv A {}\n```\n\n## right\n\n(none)\n"
    parsed = parse_explanation(good, "W5001")
    assert (parsed.text, parsed.wrong, parsed.right) == ("A rule. It matters.", "env A {}\n", "")
    for broken in (
        good.replace("# W5001", "# W5002"),  # heading names another code
        good.replace("## right\n\n(none)\n", ""),  # no right section
        good.replace("```env\nenv A {}\n```", "env A {}"),  # example outside a fence
    ):
        with pytest.raises(ExplanationFileError):
            parse_explanation(broken, "W5001")
