"""Where the packaged grammar, stdlib and prompt documents live: inside the wheel, or at the top
of a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # envdsl/, this file is in envdsl/util
_REPO_DIR = _PACKAGE_DIR.parent


def _find(packaged: str, in_repo: str) -> Path:
    # A wheel carries envdsl/_grammar and envdsl/_stdlib; an editable install or a checkout
    # reads the top-level directories directly, so edits take effect without reinstalling.
    candidate = _PACKAGE_DIR / packaged
    return candidate if candidate.is_dir() else _REPO_DIR / in_repo


def grammar_path() -> Path:
    return _find("_grammar", "grammar") / "envdsl.lark"


def stdlib_dir() -> Path:
    return _find("_stdlib", "stdlib")


def _find_file(packaged: str, in_repo: str) -> Path:
    candidate = _PACKAGE_DIR / packaged
    return candidate if candidate.is_file() else _REPO_DIR / in_repo


def language_reference() -> str:
    """docs/language.md, the reference the LLM authoring loop puts in its prompt."""
    return _find_file("_docs/language.md", "docs/language.md").read_text(encoding="utf-8")


def prompt_example() -> str:
    """examples/sleep_tracking.env: a short complete spec with tasks, the few-shot example."""
    path = _find_file("_docs/sleep_tracking.env", "examples/sleep_tracking.env")
    return path.read_text(encoding="utf-8")
