"""Loading generated environments in memory: `envdsl.load("spec.env")` returns the class."""

from __future__ import annotations

import os
import warnings
from typing import Sequence

from envdsl.generated.modules import environment_class, load_module
from envdsl.pipeline import CompileResult, compile_file
from envdsl.runtime import Environment

__all__ = ["CompileError", "environment_class", "environment_of", "load", "load_module"]


class CompileError(Exception):
    """The spec has errors; `result.diagnostics` says which."""

    def __init__(self, result: CompileResult) -> None:
        from envdsl.diagnostics.render_text import render_text

        super().__init__(render_text(result.diagnostics, result.sources))
        self.result = result


def load(
    path: str | os.PathLike[str], task_files: Sequence[str | os.PathLike[str]] = ()
) -> type[Environment]:
    """Compile a spec in memory and return its environment class (raises CompileError).

    `task_files` add their tasks; `path` may be a task file alone (its env and its tasks)."""
    # only executed: black would add nothing
    result = compile_file(path, formatted=False, task_files=task_files)
    if "module" not in result.artifacts:
        raise CompileError(result)
    if result.invalid_tasks:  # the other tasks are usable (issue 23, point 8)
        left_out = "; ".join(f"{name}: {why}" for name, why in result.invalid_tasks.items())
        warnings.warn(f"{path}: tasks left out for their errors: {left_out}", stacklevel=2)
    return environment_of(result)


def environment_of(result: CompileResult) -> type[Environment]:
    """The environment class of a compile result with a module; tasks the compiler left out
    are its INVALID_TASKS, so that choosing one says why."""
    env_class = environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))
    env_class.INVALID_TASKS = dict(result.invalid_tasks)
    return env_class
