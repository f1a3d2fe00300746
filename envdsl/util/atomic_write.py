"""Replacing a spec on disk in one step: a reader sees the old text or the new, never half."""

from __future__ import annotations

from pathlib import Path


def write_text_atomically(path: str, text: str) -> None:
    """Write `text` (UTF-8) to a sibling temporary file, then rename it over `path`.
    Raises OSError; the temporary file is removed when the rename fails."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.envdsl-tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(target)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
