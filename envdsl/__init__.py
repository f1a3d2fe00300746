"""envdsl: a typed DSL and compiler for tool-interaction environments of LLM agents."""

from typing import TYPE_CHECKING

__version__ = "0.1.0"


def load(path: "str | os.PathLike[str]") -> "type[Environment]":
    """Compile a spec in memory and return its environment class (see envdsl.loader)."""
    from envdsl.loader import load as _load

    return _load(path)


if TYPE_CHECKING:
    import os

    from envdsl.runtime import Environment
