"""Loading generated environments in memory: `envdsl.load("spec.env")` returns the class."""

from __future__ import annotations

import os
import sys
import types
from envdsl.pipeline import CompileResult, compile_file
from envdsl.runtime import Environment


class CompileError(Exception):
    """The spec has errors; `result.diagnostics` says which."""

    def __init__(self, result: CompileResult) -> None:
        from envdsl.diagnostics.render_text import render_text

        super().__init__(render_text(result.diagnostics, result.sources))
        self.result = result


def load_module(source: str, name: str, *, register: bool = True) -> types.ModuleType:
    """Execute generated source as a module.

    It is in sys.modules while it runs (dataclasses look their module up); with register=False
    it is removed afterwards, so that checking thousands of specs does not keep them all.
    """
    module_name = f"envdsl_generated.{name}"
    module = types.ModuleType(module_name)
    module.__file__ = f"<envdsl:{name}>"
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module
    try:
        exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our output
    finally:
        if not register:
            if previous is not None:
                sys.modules[module_name] = previous
            else:
                del sys.modules[module_name]
    return module


def environment_class(module: types.ModuleType) -> type[Environment]:
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Environment) and value is not Environment:
            return value
    raise LookupError(f"module {module.__name__} defines no environment")


def load(path: str | os.PathLike[str]) -> type[Environment]:
    """Compile a spec in memory and return its environment class (raises CompileError)."""
    result = compile_file(path)
    if not result.ok or "module" not in result.artifacts:
        raise CompileError(result)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)
