"""envdsl: a typed DSL and compiler for tool-interaction environments of LLM agents."""

from typing import TYPE_CHECKING

__version__ = "0.1.0"


def load(
    path: "str | os.PathLike[str]", task_files: "Sequence[str | os.PathLike[str]]" = ()
) -> "type[Environment]":
    """Compile a spec (or a task file: its env and its tasks) in memory, with the tasks of
    `task_files` too, and return its environment class (see envdsl.generated.loader)."""
    from envdsl.generated.loader import load as _load

    return _load(path, task_files)


if TYPE_CHECKING:
    import os
    from typing import Sequence

    from envdsl.runtime import Environment
