"""Python names for spec names: validated and mangled so that no spec name can capture another.

Spec identifiers already match `[A-Za-z_][A-Za-z0-9_]*` (the lexer guarantees it); what is left
is to keep them apart from Python keywords and builtins, from the names the generated module
binds itself, from the machinery of `enum`, dataclasses and the Environment, and from each other.

Every Python name is claimed in a `Namespace`: a name already taken there (a reserved word, a
generated name, another spec name) gets a suffix instead, so the mapping is injective within the
namespace whatever the spec calls things.  Python looks names up through nested scopes, so a
function's namespace starts with every module-level name: a local can never shadow a class, a
constant or a helper module.
"""

from __future__ import annotations

import builtins
import enum
import keyword
import re
import sys
from collections.abc import Iterable

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Names the generated module binds at top level or uses unqualified (imports, and the fixed
# parameters of generated methods: `self`, `b` and `answer` of checks, `row` of row
# invariants, `results`).
MODULE_NAMES = frozenset({
    "annotations", "datetime", "enum", "dataclass", "field", "Any", "ClassVar", "cast", "rt",
    "h", "b", "self", "row", "results", "answer", "copy", "cls", "values",
})  # fmt: skip
PY_RESERVED = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
# Attributes that Enum gives every enum class; a member named so breaks the class (`mro`).
ENUM_RESERVED = frozenset(dir(enum.Enum)) | frozenset(dir(type)) | {"mro", "name", "value"}


def check_identifier(name: str) -> str:
    """Reject anything that is not a plain identifier (defence in depth: the lexer already does)."""
    if not _IDENTIFIER.match(name):
        raise ValueError(f"not an identifier: {name!r}")
    return name


class Namespace:
    """Python names already bound in one scope; `claim` hands out a free one for a spec name."""

    def __init__(self, taken: Iterable[str] = ()) -> None:
        self.taken = set(taken)

    def child(self) -> Namespace:
        return Namespace(self.taken)

    def claim(self, name: str) -> str:
        """`name` itself when free, else `name_`, `name_2`, ...  A leading underscore becomes
        `u_`: `__x` would be mangled by Python inside a class, `_x_` is reserved by `enum`, and
        the generator's own temporaries (`_tmp1`) and methods (`_fn_f`) start with one."""
        check_identifier(name)
        base = f"u{name}" if name.startswith("_") else name
        candidate, index = base, 1
        while candidate in self.taken:
            index += 1
            candidate = f"{base}_" if index == 2 else f"{base}_{index}"
        self.taken.add(candidate)
        return candidate

    def reserve(self, name: str) -> str:
        """A generated name (not from the spec): taken as it is."""
        self.taken.add(name)
        return name


# Modules a generated module or envdsl itself imports, or that a program next to the output is
# likely to: a file `datetime.py` or `envdsl.py` in the output directory would shadow them for
# every sibling module (the directory of the running script comes first on sys.path).
_SHADOWED = frozenset(sys.stdlib_module_names) | {
    "envdsl", "envdsl_generated", "lark", "jinja2", "markupsafe", "click", "black", "openai",
    "pytest", "hypothesis", "mypy", "jsonschema", "typing_extensions", "test", "tests",
}  # fmt: skip


def module_name(name: str) -> str:
    """SleepTracking -> sleep_tracking (the generated file's name); never a keyword, and never
    the name of a module it could shadow (`Datetime` -> `datetime_env`)."""
    check_identifier(name)
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
    if snake.lstrip("_") == "" or snake.split(".")[0] in _SHADOWED or keyword.iskeyword(snake):
        return f"{snake}_env"
    return snake


def tool_method(name: str, taken: set[str]) -> str:
    """The typed public method of a tool; renamed when it would shadow the Environment API."""
    check_identifier(name)
    candidate = name
    if name in taken or name in PY_RESERVED or name.startswith("_"):
        candidate = f"tool_{name}"
    index = 1
    while candidate in taken:  # `tool_reset` may itself be a tool's name
        index += 1
        candidate = f"tool_{name}_{index}"
    return candidate
