"""The runs mutation testing tries on a task: plausible wrong runs derived from the reference
solution's calls, and plausible right runs that must still get the full reward.

Everything here works on the reference's calls as the trace records them (tool name and JSON
arguments) and on the task's start state as `state_json()` gives it, so a mutant is a list of
calls that `envdsl run --calls` replays as it is. Each list is built in a fixed order (steps,
then parameters, then tables and rows in the order of the start state) and cut at a fixed
number, so the same task gives the same mutants on every run.

Wrong runs (each must score below 1.0):
- swap: a state-changing step's tool replaced by another public action that takes the same key
  arguments (the destructive `delete_participant` for the targeted `remove_participant`);
- argument: one argument of a state-changing step set to another existing value of its kind
  (another key of the same table, another enum member, the other boolean, or the value of the
  same-named field in another row);
- extra: the reference followed by one write on a row its calls name by key (a tool that takes
  that row's key, e.g. its delete, or one that sets a field to another row's value);
- answer: for a question, an empty answer, one listing every candidate of the asked kinds found
  in the state, one negating each asked value ("not 7.5"), and one offering each number it
  states with the next ("2 or 3").
The fourth kind of the issue, a step left out, is verify.py's leave-one-out (W5011), counted in
the score without running it again.

Right runs (each must score 1.0):
- reorder: two adjacent state-changing steps in the other order;
- list-order: a list argument of a state-changing step in reverse order (a list of names:
  strings, enum members, keys; a list of numbers is a series whose order is data).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from envdsl.runtime import Environment
from envdsl.runtime.specs import ToolSpec
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
    RefSpec,
    SetSpec,
    StrSpec,
    TypeSpec,
)

Call = tuple[str, dict[str, Any]]

# kinds whose values are exact (a number, a time): another one is another outcome
_EXACT = (IntSpec, FloatSpec, DateSpec, DateTimeSpec, DurationSpec)

# bounds, per task: a few dozen runs at most (the examples' check time depends on them)
MAX_SWAPS_PER_STEP = 3
MAX_SWAPS = 8
MAX_VALUES_PER_ARGUMENT = 2
MAX_ARGUMENTS = 12
MAX_EXTRA_ROWS = 4
MAX_EXTRA_PER_ROW = 3
MAX_EXTRA = 10
MAX_CANDIDATES_LISTED = 40  # values in the "every candidate" answer
MAX_RIGHT = 6


@dataclass(frozen=True)
class Mutant:
    """One run tried on a task: its calls (from the task's start state) and its answer."""

    kind: str  # wrong: swap, argument, extra, answer; right: reorder, list-order
    description: str
    calls: tuple[Call, ...]
    answer: str
    step: int | None = None  # the 0-based solution step it changes, for the diagnostic's span
    right: bool = False

    def calls_text(self) -> list[str]:
        return [f"{name}({_arguments_text(arguments)})" for name, arguments in self.calls]


@dataclass
class StartFacts:
    """What mutants draw their values from: the start state and the tools."""

    tools: dict[str, ToolSpec]
    key_fields: dict[str, str]  # table -> its key field
    start: dict[str, Any]  # the canonical JSON start state
    rows_by_table: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def of(cls, env: Environment) -> StartFacts:
        tables = {name: spec.schema.key for name, spec in env.TABLES.items()}
        start = env.state_json()
        rows = {name: start[name] for name in tables if isinstance(start.get(name), dict)}
        return cls(dict(env.TOOLS), tables, start, rows)

    def actions(self) -> list[ToolSpec]:
        return [tool for tool in self.tools.values() if tool.kind == "action"]

    def table_of(self, param_name: str, spec: TypeSpec, value: Any) -> str | None:
        """The table whose key a parameter holds: a `ref E`, a parameter named like exactly
        one table's key field, or (for a plain value) the one table that has it as a key."""
        spec = _unwrap(spec)
        if isinstance(spec, RefSpec):
            return spec.table
        named = [t for t, key in self.key_fields.items() if key == param_name]
        if len(named) == 1:
            return named[0]
        if isinstance(value, str):
            holding = [t for t, rows in self.rows_by_table.items() if value in rows]
            if len(holding) == 1:
                return holding[0]
        return None

    def field_values(self, name: str, excluded: Any) -> list[Any]:
        """Values of the field `name` in rows of the start state, other than `excluded`, in
        table and row order, each once."""
        found: list[Any] = []
        for rows in self.rows_by_table.values():
            for row in rows.values():
                if isinstance(row, dict) and name in row:
                    value = row[name]
                    if value != excluded and value not in found and _scalar(value):
                        found.append(value)
        return found


def wrong_runs(
    facts: StartFacts, reference: list[Call], action_steps: list[int], answer: str, question: bool
) -> list[Mutant]:
    """Every wrong run tried on the task, in a fixed order."""
    mutants = [
        *_cut(_swaps(facts, reference, action_steps), MAX_SWAPS),
        *_cut(_arguments(facts, reference, action_steps, answer), MAX_ARGUMENTS),
        *_cut(_extra_writes(facts, reference, answer), MAX_EXTRA),
    ]
    if question:
        mutants.extend(_answers(facts, reference, answer))
    return mutants


def right_runs(
    facts: StartFacts, reference: list[Call], action_steps: list[int], answer: str
) -> list[Mutant]:
    """Runs that do the task as the reference does, in another order: adjacent state-changing
    steps swapped (the caller keeps those that end in the reference's state), and list
    arguments reversed."""
    found: list[Mutant] = []
    for first, second in zip(action_steps, action_steps[1:]):
        if second != first + 1:
            continue
        calls = list(reference)
        calls[first], calls[second] = calls[second], calls[first]
        found.append(
            Mutant(
                "reorder",
                f"steps {first + 1} and {second + 1} in the other order",
                tuple(calls),
                answer,
                step=first,
                right=True,
            )
        )
    for index in action_steps:
        name, arguments = reference[index]
        tool = facts.tools.get(name)
        for param in tool.params if tool is not None else ():
            value = arguments.get(param.name)
            if not _list_of_names(param.spec):
                continue
            if not isinstance(value, list) or list(reversed(value)) == value:
                continue
            changed = dict(arguments, **{param.name: list(reversed(value))})
            found.append(
                Mutant(
                    "list-order",
                    f"step {index + 1} with {param.name} in another order",
                    _replaced(reference, index, (name, changed)),
                    answer,
                    step=index,
                    right=True,
                )
            )
    return found[:MAX_RIGHT]


# ---- wrong runs ------------------------------------------------------------------------------
def _swaps(facts: StartFacts, reference: list[Call], action_steps: list[int]) -> Iterator[Mutant]:
    for index in action_steps:
        name, arguments = reference[index]
        tool = facts.tools.get(name)
        if tool is None:
            continue
        keys = _key_params(facts, tool, arguments)
        made = 0
        for other in facts.actions():
            if made == MAX_SWAPS_PER_STEP:
                break
            if other.name == name:
                continue
            required = [p.name for p in other.params if p.required]
            other_keys = _key_params(facts, other, arguments)
            # the same key arguments: everything it requires is given, and it takes a key
            # the step names (a tool that takes none is not "the same row, another tool")
            if not set(required) <= set(arguments) or not other_keys & keys:
                continue
            given = {p.name: arguments[p.name] for p in other.params if p.name in arguments}
            made += 1
            yield Mutant(
                "swap",
                f"step {index + 1} with {other.name} instead of {name}",
                _replaced(reference, index, (other.name, given)),
                "",
                step=index,
            )


def _arguments(
    facts: StartFacts, reference: list[Call], action_steps: list[int], answer: str
) -> Iterator[Mutant]:
    for index in action_steps:
        name, arguments = reference[index]
        tool = facts.tools.get(name)
        if tool is None:
            continue
        for param in tool.params:
            if param.name not in arguments:
                continue
            value = arguments[param.name]
            for other in _other_values(facts, param.name, param.spec, value):
                changed = dict(arguments, **{param.name: other})
                yield Mutant(
                    "argument",
                    f"step {index + 1} with {param.name}={_value_text(other)} instead of "
                    f"{_value_text(value)}",
                    _replaced(reference, index, (name, changed)),
                    answer,
                    step=index,
                )


def _other_values(facts: StartFacts, name: str, spec: TypeSpec, value: Any) -> list[Any]:
    """Other existing values of a parameter's kind, at most MAX_VALUES_PER_ARGUMENT."""
    inner = _unwrap(spec)
    if value is None or not _scalar(value):
        return []
    table = facts.table_of(name, inner, value)
    if table is not None:
        keys = [_key_value(k, value) for k in facts.rows_by_table.get(table, {})]
        others = [k for k in keys if k is not None and k != value]
    elif isinstance(inner, EnumSpec):
        others = [v for v in inner.by_value if v != value]
    elif isinstance(inner, BoolSpec):
        others = [not value]
    elif isinstance(inner, _EXACT):
        others = facts.field_values(name, value)
        if not others and isinstance(inner, (IntSpec, FloatSpec)) and not isinstance(value, bool):
            others = [value + 1]
    else:
        # free text: another wording may be right, and a text no check reads is W5012's
        others = []
    return others[:MAX_VALUES_PER_ARGUMENT]


def _extra_writes(facts: StartFacts, reference: list[Call], answer: str) -> Iterator[Mutant]:
    """One write after the reference on each row it names or changes: every action taking
    that row's key, called with its other required parameters from the row itself, and, for a
    parameter named like a field, once with another row's value of that field."""
    calls_made = {_call_key(call) for call in reference}
    for table, key in _rows_touched(facts, reference)[:MAX_EXTRA_ROWS]:
        row = facts.rows_by_table.get(table, {}).get(_key_text(key))
        made = 0
        for tool in facts.actions():
            if made >= MAX_EXTRA_PER_ROW:
                break
            for call in _calls_on_row(facts, tool, table, key, row):
                if _call_key(call) in calls_made:
                    continue
                made += 1
                yield Mutant(
                    "extra",
                    f"one more call, {call[0]} on {table}[{_value_text(key)}]",
                    (*reference, call),
                    answer,
                )
                break  # one call per tool and row


def _calls_on_row(
    facts: StartFacts, tool: ToolSpec, table: str, key: Any, row: dict[str, Any] | None
) -> Iterator[Call]:
    key_param = next(
        (p for p in tool.params if facts.table_of(p.name, p.spec, None) == table), None
    )
    if key_param is None:
        return
    base: dict[str, Any] = {key_param.name: key}
    settable: list[str] = []
    for param in tool.params:
        if param is key_param:
            continue
        if row is not None and param.name in row and _scalar(row[param.name]):
            base[param.name] = row[param.name]
            settable.append(param.name)
        elif param.required:
            return  # nothing plausible to pass
    for name in settable:
        for other in facts.field_values(name, base[name])[:1]:
            yield tool.name, dict(base, **{name: other})
    if not settable:
        yield tool.name, base


def _rows_touched(facts: StartFacts, reference: list[Call]) -> list[tuple[str, Any]]:
    """Rows of the start state that the reference's calls name by key, in call order."""
    found: list[tuple[str, Any]] = []
    for name, arguments in reference:
        tool = facts.tools.get(name)
        for param in tool.params if tool is not None else ():
            value = arguments.get(param.name)
            if value is None or not _scalar(value):
                continue
            table = facts.table_of(param.name, param.spec, value)
            if table is None or _key_text(value) not in facts.rows_by_table.get(table, {}):
                continue
            if (table, value) not in found:
                found.append((table, value))
    return found


def _answers(facts: StartFacts, reference: list[Call], answer: str) -> list[Mutant]:
    """Answers that game a text check: nothing, every candidate, the asked values negated."""
    asked = _asked_values(facts, answer)
    mutants = [Mutant("answer", "an empty answer", tuple(reference), "")]
    candidates = _every_candidate(facts, asked)
    if candidates:
        text = ", ".join(_plain(v) for v in candidates[:MAX_CANDIDATES_LISTED])
        mutants.append(
            Mutant("answer", "an answer listing every candidate", tuple(reference), text)
        )
    # each asked value negated where it stands: "not T2, not bo" ("not 7.5")
    negated = ", ".join(f"not {_plain(v)}" for _, v in asked) if asked else f"not {answer}"
    mutants.append(Mutant("answer", f"the negated answer {negated!r}", tuple(reference), negated))
    # each number the answer states, offered with the next one: "2 or 3" names no count
    choices = [
        f"{number} or {above}"
        for number in (str(v) for column, v in asked if column is None)
        if (above := _number_above(number)) is not None
    ]
    if choices:
        hedged = ", ".join(choices)
        mutants.append(Mutant("answer", f"the hedged answer {hedged!r}", tuple(reference), hedged))
    return [m for m in mutants if m.answer != answer]


def _number_above(number: str) -> str | None:
    """One more than a number the answer states (`7.5` -> `8.5`, `1,500` -> `1501`); None for
    what is no one number (a version, `1.2.3`)."""
    digits = number.replace(",", "")
    if re.fullmatch(r"\d+", digits):
        return str(int(digits) + 1)
    if re.fullmatch(r"\d+\.\d+", digits):
        return str(float(digits) + 1)
    return None


def _asked_values(facts: StartFacts, answer: str) -> list[tuple[tuple[str, str] | None, Any]]:
    """The values the reference answer gives, in its order: ((table, field) or None, value)
    for each key or field value of the start state it mentions (strings of two characters or
    more, numbers as whole words), then each other number it states."""
    lowered = answer.lower()
    found: list[tuple[tuple[str, str] | None, Any]] = []
    seen: set[str] = set()
    for table, rows in facts.rows_by_table.items():
        for key_text, row in rows.items():
            if not isinstance(row, dict):
                continue
            for name, value in row.items():
                if not _scalar(value) or isinstance(value, bool) or value is None:
                    continue
                text = _plain(value)
                if text in seen or not _mentions(lowered, text):
                    continue
                seen.add(text)
                found.append(((table, name), value))
    # numbers standing alone: not the digits of an id (D01, REV-0002) or of a date
    for number in re.findall(r"(?<![\w.,-])\d+(?:[.,]\d+)*(?![\w-])", answer):
        if number not in seen:
            seen.add(number)
            found.append((None, number))
    found.sort(key=lambda item: lowered.find(_plain(item[1]).lower()))
    return found


def _every_candidate(
    facts: StartFacts, asked: list[tuple[tuple[str, str] | None, Any]]
) -> list[Any]:
    """Every value of the columns the answer draws from, in table and row order."""
    columns = [column for column, _ in asked if column is not None]
    values: list[Any] = []
    for table, name in dict.fromkeys(columns):
        for row in facts.rows_by_table.get(table, {}).values():
            value = row.get(name) if isinstance(row, dict) else None
            if value is not None and value not in values:
                values.append(value)
    return values if len(values) > len(set(_plain(v) for _, v in asked)) else []


# ---- helpers ---------------------------------------------------------------------------------
def _key_params(facts: StartFacts, tool: ToolSpec, arguments: dict[str, Any]) -> set[str]:
    return {
        p.name
        for p in tool.params
        if facts.table_of(p.name, p.spec, arguments.get(p.name)) is not None
    }


def _replaced(reference: list[Call], index: int, call: Call) -> tuple[Call, ...]:
    calls = list(reference)
    calls[index] = call
    return tuple(calls)


def _cut(mutants: Iterator[Mutant], limit: int) -> list[Mutant]:
    found: list[Mutant] = []
    for mutant in mutants:
        if len(found) == limit:
            break
        found.append(mutant)
    return found


def _list_of_names(spec: TypeSpec) -> bool:
    """A list of things that name (tags, categories, ids, enum members): usually a set in the
    task's meaning. A list of numbers is most often a series (scores per page) whose order is
    data, as W5021 judges it too; a set has no order to change."""
    spec = _unwrap(spec)
    if not isinstance(spec, ListSpec) or isinstance(spec, SetSpec):
        return False
    return isinstance(_unwrap(spec.inner), (StrSpec, EnumSpec, RefSpec))


def _unwrap(spec: TypeSpec) -> TypeSpec:
    return spec.inner if isinstance(spec, OptionalSpec) else spec


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _mentions(lowered_answer: str, text: str) -> bool:
    if len(text) < 2 and not text.isdigit():
        return False
    if re.fullmatch(r"[\w.]+", text):  # ids and numbers as whole words: "7" is not in "17"
        return (
            re.search(rf"(?<![\w.]){re.escape(text.lower())}(?![\w])", lowered_answer) is not None
        )
    return text.lower() in lowered_answer


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _key_text(key: Any) -> str:
    """A key as `state_json()` writes it: tables are objects, so their keys are strings."""
    return key if isinstance(key, str) else json.dumps(key)


def _key_value(text: str, like: Any) -> Any:
    """A `state_json()` key back as a value of the argument's type (None if it is none)."""
    if isinstance(like, str):
        return text
    return int(text) if isinstance(like, int) and re.fullmatch(r"-?\d+", text) else None


def _call_key(call: Call) -> str:
    return json.dumps([call[0], call[1]], sort_keys=True, default=str)


def _value_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _arguments_text(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{name}={_value_text(value)}" for name, value in arguments.items())
