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


def test_no_file_holds_merge_conflict_markers() -> None:
    """A conflict resolved by committing both sides' markers (it happened to README.md) still
    renders, and every test that reads the file around it may pass: look for the markers."""
    import subprocess

    listed = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    marker = re.compile(r"^(<<<<<<< |>>>>>>> )", re.M)
    found = []
    for name in listed.stdout.splitlines():
        path = REPO / name
        if path.suffix in {".gz", ".png", ".pickle"} or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found += [f"{name}:{text.count(chr(10), 0, m.start()) + 1}" for m in marker.finditer(text)]
    assert found == []
