"""Running generated source: executing a module and finding its environment class.

Kept apart from `envdsl.loader` (which compiles specs through the pipeline) so that the
pipeline's verification stage can load what codegen produced without importing the pipeline
back.
"""

from __future__ import annotations

import sys
import types

from envdsl.runtime import Environment


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
