"""Running generated source: executing a module and finding its environment class.

Kept apart from `envdsl.generated.loader` (which compiles specs through the pipeline) so that the
pipeline's verification stage can load what codegen produced without importing the pipeline
back.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types

from envdsl.generated import module_cache as cache
from envdsl.runtime import Environment

# One module loads at a time: a second thread that found a module in sys.modules while a
# first was still executing it would get a module without its classes.
_loading = threading.RLock()


def load_module(source: str, name: str, *, register: bool = True) -> types.ModuleType:
    """Execute generated source as a module named after its content (see envdsl.generated.module_cache).

    Registered modules are written to the module cache and imported from it, so their classes
    pickle by name in other processes; the same source loaded twice is one module.  With
    register=False the module is run in memory and removed from sys.modules afterwards (it is
    there while it runs: dataclasses look their module up), so that checking thousands of
    specs neither keeps them all nor writes them to disk.  Thread-safe.
    """
    with _loading:
        return _load_module(source, name, register)


def _load_module(source: str, name: str, register: bool) -> types.ModuleType:
    module_name = cache.module_name(source, name)
    if register:
        existing = sys.modules.get(module_name)
        if existing is not None:
            return existing
        if cache.store(module_name, source):
            try:
                return importlib.import_module(module_name)
            except ImportError:
                pass  # a cache file removed meanwhile: run it in memory as below
    module = types.ModuleType(module_name)
    module.__file__ = f"<envdsl:{name}>"
    previous = sys.modules.get(module_name)
    sys.modules[module_name] = module
    try:
        exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our output
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    finally:
        if not register:
            if previous is not None:
                sys.modules[module_name] = previous
            else:
                sys.modules.pop(module_name, None)
    return module


def environment_class(module: types.ModuleType) -> type[Environment]:
    for value in vars(module).values():
        if isinstance(value, type) and issubclass(value, Environment) and value is not Environment:
            return value
    raise LookupError(f"module {module.__name__} defines no environment")
