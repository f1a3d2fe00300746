"""Formatting of generated code with black, in-process, with a pinned mode."""

from __future__ import annotations

import black
from black.mode import Mode, TargetVersion

_MODE = Mode(line_length=100, target_versions={TargetVersion.PY311})


def format_python(source: str) -> str:
    return black.format_str(source, mode=_MODE)
