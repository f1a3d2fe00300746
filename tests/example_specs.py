"""The example specs: examples/*.env without the task files beside them.

`examples/<name>.tasks.env` holds more tasks for `examples/<name>.env` (`tasks for "<name>.env"
{ ... }`); it is no spec of its own, so the tests that take every example spec leave it out.
"""

from __future__ import annotations

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"
TASK_FILE_SUFFIX = ".tasks.env"


def example_specs() -> list[Path]:
    return sorted(p for p in EXAMPLES_DIR.glob("*.env") if not p.name.endswith(TASK_FILE_SUFFIX))
