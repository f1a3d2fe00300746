"""Every registered code has an explanation whose examples go through the real checker:
the `wrong` spec reports the code, the `right` spec reports nothing at all."""

from __future__ import annotations

import re

import pytest

from envdsl.diagnostics.codes import REGISTRY, Stage
from envdsl.diagnostics.explanations import EXPLANATIONS
from envdsl.pipeline import check_source
from envdsl.source import SourceFile

WITH_EXAMPLES = sorted(code for code, e in EXPLANATIONS.items() if e.wrong)


def codes_reported(text: str, name: str) -> list[str]:
    return [d.code.code for d in check_source(SourceFile(name, text)).diagnostics]


def test_explanations_and_registry_are_in_step() -> None:
    assert sorted(EXPLANATIONS) == sorted(REGISTRY)


def test_only_internal_errors_lack_examples() -> None:
    without = {code for code, e in EXPLANATIONS.items() if not (e.wrong and e.right)}
    assert without == {code for code, c in REGISTRY.items() if c.stage is Stage.INTERNAL}


@pytest.mark.parametrize("code", sorted(EXPLANATIONS))
def test_text_is_a_short_paragraph(code: str) -> None:
    text = EXPLANATIONS[code].text
    sentences = len(re.findall(r"[.!?](?:\s|$)", text))
    assert 2 <= sentences <= 6, text
    assert "\n" not in text and "  " not in text


@pytest.mark.parametrize("code", WITH_EXAMPLES)
def test_examples_are_small_complete_specs(code: str) -> None:
    explanation = EXPLANATIONS[code]
    for spec in (explanation.wrong, explanation.right):
        assert re.search(r"^env \w+ {$", spec, re.MULTILINE), spec
        assert spec.endswith("}\n")
        assert 3 <= len(spec.splitlines()) <= 22
    assert explanation.wrong != explanation.right


@pytest.mark.parametrize("code", WITH_EXAMPLES)
def test_wrong_example_reports_its_code(code: str) -> None:
    assert code in codes_reported(EXPLANATIONS[code].wrong, "wrong.env")


@pytest.mark.parametrize("code", WITH_EXAMPLES)
def test_right_example_is_clean(code: str) -> None:
    # Not even a warning: the repaired spec is what `envdsl explain` teaches.
    assert codes_reported(EXPLANATIONS[code].right, "right.env") == []
