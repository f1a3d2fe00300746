"""Per-tool call plans: the argument reading of one tool as one function made for its params.

`Environment._parse_arguments` interprets a tool's ParamSpecs and TypeSpecs on every call, and
`_as_called` walks them again for the trace. A plan is the same work written out once per tool
(source built here from the specs and compiled, as values._record_serializer does for records):
one function that checks the argument names, converts each argument from JSON and builds the
trace's canonical form, with the common cases (short ASCII strings, 64-bit ints, booleans, enum
values) inlined as type tests and everything else through the param's own spec.

A plan accepts exactly what the generic parser accepts, with the same values, and raises the
same BadValue for a bad value (whatever its inline test does not take goes through the spec's
own from_json, with the param's name as the path, params in the same order); for an unknown or
missing argument it returns None and the caller runs the generic parser, which says which. So
the messages of bad calls have one source.

The reading's source (reader_source) and the result check's (check_lines) are also what
envdsl/runtime/toolcalls.py inlines into each tool's whole call, which `env.call` runs; the
plan's own functions are the same source compiled alone (tests compare them with the generic
parser and the generic walk).
"""

from __future__ import annotations

import datetime as dt
import inspect
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from envdsl.runtime import typed
from envdsl.runtime.limits import INT_RESULT, MAX_INT, MIN_INT, result_problem
from envdsl.runtime.values import (
    BoolSpec,
    DateSpec,
    DateTimeSpec,
    DurationSpec,
    EnumSpec,
    FloatSpec,
    IntSpec,
    ListSpec,
    OptionalSpec,
    RecordSpec,
    RefSpec,
    StrSpec,
    TypeSpec,
    format_datetime,
)

if TYPE_CHECKING:
    from envdsl.runtime.specs import ToolSpec

_PLAIN_JSON = (StrSpec, IntSpec, BoolSpec)  # the value the tool receives is its JSON


def _unwrapped(spec: TypeSpec) -> TypeSpec:
    return spec.inner if isinstance(spec, OptionalSpec) else spec


def _plain(spec: TypeSpec) -> TypeSpec:
    """The spec whose JSON a value is read by (a ref is read as its key)."""
    return spec.key if isinstance(spec, RefSpec) else spec


def _convert(index: int, spec: TypeSpec, name: str, env: dict[str, Any]) -> tuple[list[str], str]:
    """Lines that read `a{index}` (the JSON value given, not null) into `p{index}` (the value
    the tool receives), and the expression of `p{index}`'s canonical JSON for the trace
    (`spec` is neither optional nor a ref). The inline test is the spec's own fast case;
    whatever it does not take goes to the spec's from_json, which converts it or raises the
    generic parser's BadValue."""
    a, p = f"a{index}", f"p{index}"
    kind = type(spec)
    env[f"spec{index}"] = spec
    generic = f"{p} = spec{index}.from_json({a}, {name!r})"
    if kind is StrSpec:  # StrSpec.from_json's own fast test
        test = f"type({a}) is str and len({a}) <= 64 and {a}.isascii()"
    elif kind is IntSpec:
        test = f"type({a}) is int and MIN_INT <= {a} <= MAX_INT"
    elif kind is BoolSpec:
        test = f"type({a}) is bool"
    elif isinstance(spec, EnumSpec):
        env[f"members{index}"] = spec.by_value
        lines = [
            f"{p} = members{index}.get({a}) if type({a}) is str else None",
            f"if {p} is None: {generic}",
        ]
        return lines, f"{p}._value_"
    elif kind is DateTimeSpec:
        # text already in the canonical UTC form (`2024-05-01T09:00:00Z`, what agents and
        # solutions send) is read by fromisoformat alone and is its own trace text: it parses
        # only with digits between the separators, so it is what format_datetime writes
        c = f"c{index}"  # set False before the argument is looked up (see reader_source)
        shape = (
            f"type({a}) is str and len({a}) == 20 and {a}[10] == 'T' and {a}[19] == 'Z' "
            f"and {a}[4] == {a}[7] == '-' and {a}[13] == {a}[16] == ':'"
        )
        lines = [
            f"{c} = {shape}",
            f"{p} = None",
            f"if {c}:",
            f"    try: {p} = fromisoformat({a})",
            "    except ValueError: pass",
            f"if {p} is None: {generic}",
        ]
        return lines, f"{a} if {c} else format_datetime({p})"
    else:
        return [generic], f"spec{index}.to_json({p})"
    return [f"if {test}: {p} = {a}", f"else: {generic}"], p


def reader_source(tool: ToolSpec, env: dict[str, Any]) -> tuple[list[str], str, str]:
    """The argument reading of one tool as source: lines that read the dict `given` into
    `p0, p1, ...` (`return None` where an argument is unknown or missing; BadValue, as
    `_parse_arguments`, for a bad value), the tuple of the values (`p0, p1, `) and the dict
    display of the trace's arguments; the names they use are added to `env`."""
    env.update(
        MIN_INT=MIN_INT,
        MAX_INT=MAX_INT,
        format_datetime=format_datetime,
        fromisoformat=dt.datetime.fromisoformat,
        names=frozenset(p.name for p in tool.params),
        MISSING=object(),
    )
    body = ["if not given.keys() <= names: return None"]
    traced = []
    for index, param in enumerate(tool.params):
        a, p = f"a{index}", f"p{index}"
        optional = isinstance(param.spec, OptionalSpec)
        spec = _plain(_unwrapped(param.spec))
        convert, as_json = _convert(index, spec, param.name, env)
        if isinstance(spec, _PLAIN_JSON):
            traced.append(f"{param.name!r}: {p}")  # None stays None
        else:
            traced.append(f"{param.name!r}: None if {p} is None else {as_json}")
        if optional:
            convert = [f"if {a} is None: {p} = None", "else:", *("    " + x for x in convert)]
        if type(spec) is DateTimeSpec:
            body.append(f"c{index} = False")  # the canonical-text flag of _convert
        body.append(f"{a} = given.get({param.name!r}, MISSING)")
        if param.required:
            body.append(f"if {a} is MISSING: return None")
            body.extend(convert)
            continue
        if param.default is not None:
            env[f"default{index}"] = param.default
            missing = f"{p} = default{index}()"
        else:
            missing = f"{p} = None"
        body.extend([f"if {a} is MISSING: {missing}", "else:", *("    " + x for x in convert)])
    values = "".join(f"p{i}, " for i in range(len(tool.params)))
    return body, values, f"{{{', '.join(traced)}}}"


def result_writer(spec: TypeSpec) -> Callable[[Any], Any]:
    """The tool result's to_json, without the dispatch through the spec where it can go."""
    if isinstance(spec, RecordSpec):
        return spec.serializer()
    if type(spec) is StrSpec:  # a str is sent as it is
        return _same
    return spec.to_json


def _same(value: Any) -> Any:
    return value


_TEXT = (StrSpec, EnumSpec, DateTimeSpec, DateSpec)  # sent as a string: its length counts
_NUMBER = (BoolSpec, FloatSpec, DurationSpec)  # sent as a number in range: adds nothing


def check_lines(spec: TypeSpec, problem: str) -> list[str] | None:
    """limits.result_problem written out for a record result of plain fields (what most
    results are), to the same count: lines that read the dict `data` and end in `problem`
    (a statement format with one hole, the message's expression) where the result has a
    problem, or fall through when it has none (its strings' lengths and its ints' ranges,
    read by name, against `size_budget`); None for results that take the generic walk."""
    if not isinstance(spec, RecordSpec):
        return None
    total = [str(len(spec.fields))]  # the count's terms; the strings always there inline
    lines = []
    for field in spec.fields:
        optional = isinstance(field.spec, OptionalSpec)
        member = _plain(_unwrapped(field.spec))
        inner = _plain(member.inner) if isinstance(member, ListSpec) else None  # and SetSpec
        if type(member) in _NUMBER:
            continue
        if type(member) in _TEXT and not optional:
            total.append(f"len(data[{field.name!r}])")
            continue
        if type(member) in _TEXT:
            add = "total += len(v)"
        elif type(member) is IntSpec:  # one `if`: a compound statement cannot follow `if ...:`
            guard = "v is not None and " if optional else ""
            lines.append(f"v = data[{field.name!r}]")
            lines.append(f"if {guard}not MIN_INT <= v <= MAX_INT: {problem.format('INT_RESULT')}")
            continue
        elif inner is not None and type(inner) in _NUMBER:
            add = "total += len(v)"
        elif inner is not None and type(inner) in _TEXT:
            add = "total += len(v) + sum(map(len, v))"
        else:
            return None
        lines.append(f"v = data[{field.name!r}]")
        lines.append(f"if v is not None: {add}" if optional else add)
    lines.append(f"if total > size_budget: {problem.format('TOO_LARGE % total')}")
    return [f"total = {' + '.join(total)}", *lines]


# what the written-out checks name
CHECK_NAMES: dict[str, Any] = {
    "MIN_INT": MIN_INT,
    "MAX_INT": MAX_INT,
    "INT_RESULT": INT_RESULT,
    "TOO_LARGE": "the result is too large (%d characters and elements)",
}


def result_checker(spec: TypeSpec) -> Callable[[Any, int], str | None]:
    """The result check of one tool: check_lines as a function, or the generic walk."""
    lines = check_lines(spec, "return {}")
    if lines is None:
        return result_problem
    lines.append("return None")
    source = "\n".join(["def check(data, size_budget):", *("    " + x for x in lines)])
    env = dict(CHECK_NAMES)
    exec(source, env)  # noqa: S102 - source built here from the record's fields
    check: Callable[[Any, int], str | None] = env["check"]
    return check


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
        # the tool's whole call (envdsl/runtime/toolcalls.py), set by Environment._plan; this
        # default sends every call down the reference path
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
        self.check_result = result_checker(tool.result)
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
