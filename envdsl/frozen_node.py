"""`@node` and `@record`: slotted dataclasses made cheaply (the AST, types, diagnostics...).

`dataclasses.dataclass(frozen=True, slots=True)` compiles six functions per class (`__init__`,
`__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`) and, for a class without a
docstring, formats a signature with `inspect`: about 0.4 ms a class, 30 ms for the AST's 70
classes in every cold `envdsl check`. Here the dataclass machinery still records the fields
(so `dataclasses.fields`, `replace` and `is_dataclass` work as before) and makes the slots; only
`__init__` is compiled per class, the other methods are shared and read the class's field
names. Instances behave as the dataclass's: equal and hashed by their fields, the same repr,
assignment raises `FrozenInstanceError`, and they pickle and copy.
"""

from __future__ import annotations

import dataclasses
from operator import attrgetter
from typing import Any, Callable, TypeVar, dataclass_transform

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
    made.__init__ = _make_init(made, fields)
    made._node_fields = tuple(f.name for f in fields)
    made._node_shown = tuple(f.name for f in fields if f.repr)
    made._node_values = staticmethod(_getter(tuple(f.name for f in fields if f.compare)))
    made.__eq__ = _eq
    made.__repr__ = _repr
    if frozen:
        made.__hash__ = _hash
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


def _make_init(cls: type[Any], fields: tuple[dataclasses.Field[Any], ...]) -> Any:
    namespace: dict[str, Any] = {"_set": _set, "_FACTORY": _FACTORY}
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
        body.append(f"    _set(__node_self__, {f.name!r}, {f.name})")
    if hasattr(cls, "__post_init__"):
        body.append("    __node_self__.__post_init__()")
    # not `self`: a field may have that name (as dataclasses, which use `__dataclass_self__`)
    source = f"def __init__(__node_self__, {', '.join(parameters)}):\n" + "\n".join(
        body or ["    pass"]
    )
    exec(source, namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = {f.name: f.type for f in fields} | {"return": None}
    return init


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The values that equality and the hash compare, always as a tuple (as the dataclass's)."""
    if len(names) > 1:
        return attrgetter(*names)
    if names:
        get = attrgetter(names[0])
        return lambda self: (get(self),)
    return lambda self: ()


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is self.__class__:
        return bool(self._node_values(self) == self._node_values(other))
    return NotImplemented


def _hash(self: Any) -> int:
    return hash(self._node_values(self))


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
