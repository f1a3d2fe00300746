"""Per-tool call plans: what a call of one tool needs, looked up once per class.

The reference path of a call (`Environment._parse_arguments`, `_invoke`) interprets a tool's
ParamSpecs and TypeSpecs on every call; the plan keeps what it looks up (the impl, how it is
called, the result's writer and check, the typed values' conversions). The fast path is no
part of the runtime: the compiler writes each tool's whole call into the generated module
(envdsl/codegen/tool_calls.py), and the plan's `call` points at it.
"""

from __future__ import annotations

import inspect
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from envdsl.runtime import typed
from envdsl.runtime.limits import result_problem
from envdsl.runtime.values import (
    BoolSpec,
    IntSpec,
    OptionalSpec,
    RecordSpec,
    RefSpec,
    StrSpec,
    TypeSpec,
)

if TYPE_CHECKING:
    from envdsl.runtime.specs import ToolSpec

_PLAIN_JSON = (StrSpec, IntSpec, BoolSpec)  # the value the tool receives is its JSON


def _unwrapped(spec: TypeSpec) -> TypeSpec:
    return spec.inner if isinstance(spec, OptionalSpec) else spec


def _plain(spec: TypeSpec) -> TypeSpec:
    """The spec whose JSON a value is read by (a ref is read as its key)."""
    return spec.key if isinstance(spec, RefSpec) else spec


def result_writer(spec: TypeSpec) -> Callable[[Any], Any]:
    """The tool result's to_json, without the dispatch through the spec where it can go."""
    if isinstance(spec, RecordSpec):
        return spec.serializer()
    if type(spec) is StrSpec:  # a str is sent as it is
        return _same
    return spec.to_json


def _same(value: Any) -> Any:
    return value


def _reference_path(env: Any, given: dict[str, Any]) -> None:
    """A call function that runs nothing: the caller takes the generic parser and `_invoke`."""
    return None


class ToolPlan:
    """What a call of one tool needs, looked up once per class instead of once per call."""

    __slots__ = (
        "tool",
        "names",
        "impl",
        "attributes",
        "positional",
        "action",
        "write_result",
        "check_result",
        "typed_params",
        "call",
        "typed_arguments",
    )

    def __init__(self, owner: type[Any], tool: ToolSpec) -> None:
        self.tool = tool
        # the tool's whole call (the generated class's ToolSpec.call method), set by
        # Environment._plan; this default sends every call down the reference path
        self.call: Callable[[Any, dict[str, Any]], dict[str, Any] | None] = _reference_path
        self.names = frozenset(p.name for p in tool.params)
        self.impl = tool.impl
        # generated impls take the params in order; anything else is called by keyword
        method = getattr(owner, tool.impl, None)
        self.attributes = tuple(p.attribute for p in tool.params)
        self.positional = (
            method is not None
            and tuple(inspect.signature(method).parameters)[1:] == self.attributes
        )
        self.action = tool.kind == "action"
        self.write_result = result_writer(tool.result)
        # the generic walk: the generated whole call writes a record's check out itself
        self.check_result: Callable[[Any, int], str | None] = result_problem
        # a typed method's values back to JSON (envdsl/runtime/typed.py): (name, default,
        # conversion), None where a value of the param's type is its own JSON
        self.typed_params = tuple(
            (
                p.name,
                p.default,
                (
                    None
                    if isinstance(_plain(_unwrapped(p.spec)), _PLAIN_JSON)
                    else partial(typed.to_json, p.spec)
                ),
            )
            for p in tool.params
        )
        # the same written out for this tool by the compiler (ToolSpec.json_arguments), set by
        # Environment._plan; this default (the reference) interprets typed_params
        self.typed_arguments: Callable[[dict[str, Any]], dict[str, Any]] = partial(
            _typed_arguments, self.typed_params
        )


def _typed_arguments(
    params: tuple[tuple[str, Any, Any], ...], values: dict[str, Any]
) -> dict[str, Any]:
    """A typed method's values as the JSON arguments `call` takes (ToolPlan.typed_params)."""
    arguments: dict[str, Any] = {}
    for name, default, to_json in params:
        value = values.get(name)
        if value is None and default is not None:
            value = default()
        arguments[name] = value if to_json is None else to_json(value)
    return arguments
