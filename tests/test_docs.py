"""docs/language.md is what the LLM authoring loop learns from: its complete examples must be
clean (no error, no warning), and it must stay compact enough for a prompt."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envdsl.pipeline import check_source
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent
LANGUAGE = REPO / "docs" / "language.md"
BLOCKS = re.findall(r"```envdsl\n(.*?)```", LANGUAGE.read_text("utf-8"), flags=re.S)


def test_the_reference_has_complete_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_every_envdsl_block_checks_clean(number: int) -> None:
    result = check_source(SourceFile(f"language.md#block{number}", BLOCKS[number]))
    assert [(d.code.code, d.message) for d in result.diagnostics] == []


def test_the_reference_fits_a_prompt() -> None:
    # DESIGN.md: "about 25 KB at most"; a little slack, but it must not keep growing
    assert LANGUAGE.stat().st_size <= 27_000
