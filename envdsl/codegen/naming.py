"""Python names for spec names: validated and mangled so a spec can never inject code.

Spec identifiers already match `[A-Za-z_][A-Za-z0-9_]*` (the lexer guarantees it); what is left
is to keep them from colliding with Python keywords, builtins, the names generated modules
use themselves, and the Environment API.
"""

from __future__ import annotations

import builtins
import keyword
import re

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Names the generated module binds at top level or uses unqualified.
_MODULE_NAMES = {
    "annotations", "datetime", "enum", "dataclass", "field", "Any", "cast", "rt", "h", "b",
    "self", "row", "results", "copy",
}  # fmt: skip
_PY_RESERVED = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))


def check_identifier(name: str) -> str:
    """Reject anything that is not a plain identifier (defence in depth: the lexer already does)."""
    if not _IDENTIFIER.match(name):
        raise ValueError(f"not an identifier: {name!r}")
    return name


def value_name(name: str) -> str:
    """A local, parameter, field or enum member name."""
    check_identifier(name)
    if name in _PY_RESERVED or name in _MODULE_NAMES or name.startswith("__"):
        return f"{name}_"
    return name


def type_name(name: str) -> str:
    """An enum, record or entity class name (never one of the module's own SPEC_/C_ names)."""
    check_identifier(name)
    if name in _PY_RESERVED or name in _MODULE_NAMES or name.startswith(("_", "SPEC_", "C_")):
        return f"{name}_"
    return name


def env_class_name(name: str) -> str:
    return f"{type_name(name).rstrip('_')}Env"


def module_name(name: str) -> str:
    """SleepTracking -> sleep_tracking (the generated file's name)."""
    check_identifier(name)
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
    return snake if not keyword.iskeyword(snake) else f"{snake}_"


def tool_method(name: str, taken: set[str]) -> str:
    """The typed public method of a tool; renamed when it would shadow the Environment API."""
    check_identifier(name)
    candidate = name
    if name in taken or name in _PY_RESERVED or name.startswith("_"):
        candidate = f"tool_{name}"
    index = 1
    while candidate in taken:  # `tool_reset` may itself be a tool's name
        index += 1
        candidate = f"tool_{name}_{index}"
    return candidate


def constant_name(name: str) -> str:
    return f"C_{check_identifier(name)}"
