"""`@node` and `@record`: slotted dataclasses made cheaply (the AST, types, diagnostics...).

`dataclasses.dataclass(frozen=True, slots=True)` compiles six functions per class (`__init__`,
`__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`) and, for a class without a
docstring, formats a signature with `inspect`: about 0.4 ms a class, 30 ms for the AST's 70
classes in every cold `envdsl check`. Here the dataclass machinery still records the fields
(so `dataclasses.fields`, `replace` and `is_dataclass` work as before) and makes the slots;
`__init__`, `__eq__` and `__hash__` are compiled in one `exec` per class, `__repr__`,
`__setattr__`, `__delattr__` and pickling are shared functions that read the field names.
Instances behave as the dataclass's: equal and hashed by their fields, the same repr,
assignment raises `FrozenInstanceError`, and they pickle and copy.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, TypeVar, dataclass_transform

NodeT = TypeVar("NodeT", bound=type[Any])

_set = object.__setattr__


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def node(cls: NodeT) -> NodeT:
    """As `@dataclass(frozen=True, slots=True)`."""
    return _make(cls, frozen=True)


@dataclass_transform(field_specifiers=(dataclasses.field,))
def record(cls: NodeT) -> NodeT:
    """As `@dataclass(slots=True)`: mutable, compared by its fields, unhashable."""
    return _make(cls, frozen=False)


def _make(cls: NodeT, frozen: bool) -> NodeT:
    if cls.__doc__ is None:
        cls.__doc__ = f"The `{cls.__name__}` class."  # else dataclass builds one with inspect
    made: Any = dataclasses.dataclass(init=False, repr=False, eq=False, slots=True)(cls)
    fields = dataclasses.fields(made)
    if any(f.hash is not None for f in fields):
        raise TypeError(f"@node does not support field(hash=...) ({cls.__name__})")
    for name, method in _compile_methods(made, fields, frozen).items():
        setattr(made, name, method)
    made._node_fields = tuple(f.name for f in fields)
    made._node_shown = tuple(f.name for f in fields if f.repr)
    made.__repr__ = _repr
    if frozen:
        made.__setattr__ = _frozen_setattr
        made.__delattr__ = _frozen_delattr
        made.__getstate__ = _getstate
        made.__setstate__ = _setstate
    else:
        made.__hash__ = None
    result: NodeT = made
    return result


class _Factory:
    """The default of a field with a `default_factory`: call the factory in `__init__`."""

    def __repr__(self) -> str:
        return "<factory>"  # as the dataclass's signature shows it


_FACTORY = _Factory()


def _compile_methods(
    cls: type[Any], fields: tuple[dataclasses.Field[Any], ...], frozen: bool
) -> dict[str, Any]:
    """`__init__`, `__eq__` and (frozen) `__hash__`, the code the dataclass would write, in
    one `exec`: they are called millions of times, so they stay specialised."""
    namespace: dict[str, Any] = {"_set": _set, "_FACTORY": _FACTORY}
    # not `self`: a field may have that name (dataclasses use `__dataclass_self__` likewise)
    me = "__node_self__"
    parameters, body = [], []
    for f in fields:
        if not f.init or f.kw_only:
            raise TypeError(f"@node does not support init=False or kw_only fields ({f.name})")
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            parameters.append(f"{f.name}=_default_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_factory_{f.name}"] = f.default_factory
            parameters.append(f"{f.name}=_FACTORY")
            body.append(f"    if {f.name} is _FACTORY: {f.name} = _factory_{f.name}()")
        else:
            parameters.append(f.name)
        if frozen:
            # the slot's own setter: `object.__setattr__` on a class that overrides
            # `__setattr__` takes a slow checked path, ~2.8x the cost of a plain store
            namespace[f"_set_{f.name}"] = _slot_setter(cls, f.name)
            body.append(f"    _set_{f.name}({me}, {f.name})")
        else:
            body.append(f"    {me}.{f.name} = {f.name}")
    if hasattr(cls, "__post_init__"):
        body.append(f"    {me}.__post_init__()")
    compared = [f.name for f in fields if f.compare]
    mine = "".join(f"{me}.{name}," for name in compared)
    theirs = "".join(f"other.{name}," for name in compared)
    source = [
        f"def __init__({me}, {', '.join(parameters)}):",
        *(body or ["    pass"]),
        f"def __eq__({me}, other):",
        f"    if other.__class__ is {me}.__class__:",
        f"        return ({mine}) == ({theirs})",
        "    return NotImplemented",
    ]
    if frozen:
        source += [f"def __hash__({me}):", f"    return hash(({mine}))"]
    exec("\n".join(source), namespace)
    methods: dict[str, Any] = {
        name: namespace[name] for name in ("__init__", "__eq__", "__hash__") if name in namespace
    }
    for name, method in methods.items():
        method.__qualname__ = f"{cls.__qualname__}.{name}"
    methods["__init__"].__annotations__ = {f.name: f.type for f in fields} | {"return": None}
    return methods


def _slot_setter(cls: type[Any], name: str) -> Any:
    """The `__set__` of the slot `name` (declared by `cls` or a base), else a function that
    sets it through `object.__setattr__`."""
    for klass in cls.__mro__:
        descriptor = klass.__dict__.get(name)
        if descriptor is not None:
            if isinstance(descriptor, types.MemberDescriptorType):
                return descriptor.__set__
            break
    return lambda instance, value: _set(instance, name, value)


def _repr(self: Any) -> str:
    values = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._node_shown)
    return f"{self.__class__.__qualname__}({values})"


def _frozen_setattr(self: Any, name: str, value: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Any, name: str) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> list[Any]:
    return [getattr(self, name) for name in self._node_fields]


def _setstate(self: Any, state: list[Any]) -> None:
    for name, value in zip(self._node_fields, state):
        _set(self, name, value)
