"""One tool's whole call as one function, written out from its specs.

`Environment._invoke` runs any tool by interpreting its plan on every call: read the arguments,
open the transaction (journal, step and size budgets), call the impl, run the end-of-call
checks of `_verify` (each of its loops over the tool's rule tables, most of them empty),
serialize and size-check the result, record the journal, append the trace entry and build the
envelope. This module writes that sequence out once per tool and class, with the tool's own
argument reading inlined (callplans.reader_source), the impl called by name, only the end-of-
call checks the tool has (none for a query; the touched rows' rules only when a touched row
changed a field some rule reads; its env invariants and per-row env invariants inline), its
result's serializer and size check inlined for a record result, and its name as a constant.

The source is built when a class first calls the tool, from the ToolSpec every generated class
carries, as the call plans and record serializers are: one writer for compiled/ modules and
`envdsl.load` alike, and no second copy of the transaction in every generated module. What
only the compiler knows goes into the generated code itself (the field writers of
codegen/statements.py).

It is the same transaction, statement for statement: a call function returns exactly what
`_invoke` returns for the same arguments, leaves the same state, trace, journal history,
`_last_result`, `last_failure` and `last_exception`, and fails through the same
`Environment._failed`; `_invoke` stays as the reference (tests/test_fast_paths.py runs both on
random call sequences of every example). It returns None, before anything runs, for arguments
it does not read (an unknown or missing one): the caller then takes the generic parser, whose
BadValue says which; a bad argument value raises the same BadValue as the plan's reader.
"""

from __future__ import annotations

import keyword
from typing import Any, Callable

from envdsl.runtime import limits
from envdsl.runtime.callplans import CHECK_NAMES, check_lines, reader_source
from envdsl.runtime.errors import Fail
from envdsl.runtime.specs import INSERTED, Result, ToolSpec, TraceEntry
from envdsl.runtime.values import RecordSpec, StrSpec, record_display

# (the environment, the JSON arguments) -> the call's result, or None for the generic path;
# the environment is typed Any: the function is built here from source, and this module is
# below the Environment class (which imports it)
CallFunction = Callable[[Any, dict[str, Any]], Result | None]


def call_function(
    guarded: dict[str, frozenset[str] | None], tool: ToolSpec, positional: bool
) -> CallFunction:
    """The whole call of `tool` in the environment class `owner` (see the module docstring).
    `positional`: the impl takes the params in order (generated impls do); otherwise it is
    called by keyword. `guarded`: the class's Environment._guarded_fields()."""
    env: dict[str, Any] = {
        "Fail": Fail,
        "budget": limits.budget,
        "TraceEntry": TraceEntry,
        "INSERTED": INSERTED,
        "GUARDED": guarded,
    }
    env.update(CHECK_NAMES)
    reading, values, traced = reader_source(tool, env)
    env["NAME"] = tool.name
    lines = [
        "def call(self, given):",
        *("    " + line for line in reading),
        f"    arguments = {traced}",
        "    journal = self._journal = []",
        "    self._steps = 0",
        "    self._last_result = None",
        "    budget.left = self.size_budget",
        "    try:",
        *("        " + line for line in _body(tool, positional, values, env)),
        "        self._last_result = result",
        "        if journal:  # a call that wrote nothing leaves the history as it is",
        "            self._world.record(journal)",
        "        self.trace.append(TraceEntry(NAME, arguments, True))",
        '        return {"success": True, "data": data}',
        "    except Exception as error:  # what each kind of failure gives: Environment._failed",
        "        outcome = self._failed(error)",
        "    finally:",
        "        budget.left = None",
        "        self._journal = None",
        "        if self._touched:",
        "            self._touched = {}",
        "        if self._saved:",
        "            self._saved = set()",
        "        if self._grown:",
        "            self._grown = set()",
        '    self.trace.append(TraceEntry(NAME, arguments, False, outcome["error"]))',
        "    return outcome",
    ]
    exec("\n".join(lines), env)  # noqa: S102 - source built here from the tool's specs
    function: CallFunction = env["call"]
    return function


def _body(tool: ToolSpec, positional: bool, values: str, env: dict[str, Any]) -> list[str]:
    """The statements inside the transaction, up to `result` and `data` (the result's JSON)."""
    lines = [f"result = {_impl_call(tool, positional, values, env)}"]
    if tool.kind == "action":
        lines.extend(_end_of_call_checks(tool, env))
    spec = tool.result
    if type(spec) is StrSpec:  # sent as it is, and a string is never size-checked here
        lines.append("data = result")
        return lines
    if isinstance(spec, RecordSpec):
        display = record_display(spec.fields, "result", env)
        lines.append(f"data = {display} if result is not None else None")
    else:
        env["to_json"] = spec.to_json
        lines.append("data = to_json(result) if result is not None else None")
    # the text the agent will be sent: one long string held 50,000 times is small in memory
    # and gigabytes as JSON; an int of 5,000 digits no peer reads (as in _invoke)
    checks = check_lines(spec, "raise Fail({})")
    if checks is None:
        env["result_problem"] = limits.result_problem
        checks = [
            "problem = result_problem(data, size_budget)",
            "if problem is not None: raise Fail(problem)",
        ]
    if isinstance(spec, RecordSpec):  # a dict (or None, which the checks refuse as _invoke's)
        return [*lines, "size_budget = self.size_budget", *checks]
    lines.append("if type(data) is not str:")
    lines.append("    size_budget = self.size_budget")
    lines.extend("    " + line for line in checks)
    return lines


def _impl_call(tool: ToolSpec, positional: bool, values: str, env: dict[str, Any]) -> str:
    method = f"self.{tool.impl}" if _is_name(tool.impl) else "getattr(self, IMPL)"
    env["IMPL"] = tool.impl
    if positional:
        return f"{method}({values})"
    attributes = [p.attribute for p in tool.params]
    if all(_is_name(a) for a in attributes):
        return f"{method}({', '.join(f'{a}=p{i}' for i, a in enumerate(attributes))})"
    env["ATTRIBUTES"] = tuple(attributes)
    return f"{method}(**dict(zip(ATTRIBUTES, ({values}))))"


def _end_of_call_checks(tool: ToolSpec, env: dict[str, Any]) -> list[str]:
    """Environment._verify for this tool, in its order: the touched rows' rules, the row
    invariants re-checked on every row, the env invariants, the per-row env invariants."""
    lines = [  # the rows' rules, unless every touched row changed only fields no rule reads
        "if self._touched:",
        "    for (touched_table, key), originals in self._touched.items():",
        "        read = GUARDED[touched_table]",
        "        if originals is INSERTED or read is None or not read.isdisjoint(originals):",
        "            self._verify_touched()",
        "            break",
    ]
    if tool.full_row_invariants:
        env["TOOL"] = tool
        lines.append("self._verify_full_rows(TOOL)")
    for index, method in enumerate(tool.env_invariants):
        if not _is_name(method):
            raise ValueError(f"not a method name: {method!r}")
        env[f"ENV_RULE_{index}"] = method
        lines.append(f"if not self.{method}():")
        lines.append(f"    self._env_invariant_failed(ENV_RULE_{index})")
    for index, (table, row_method, method) in enumerate(tool.row_env_invariants):
        if not _is_name(row_method):
            raise ValueError(f"not a method name: {row_method!r}")
        env[f"TABLE_{index}"] = table
        env[f"ROW_RULE_{index}"] = method
        lines.extend(
            [
                f"table = self._tables[TABLE_{index}]",
                "for touched_table, key in self._touched:",
                f"    row = table.get(key) if touched_table == TABLE_{index} else None",
                f"    if row is not None and not self.{row_method}(row):",
                f"        self._env_invariant_failed(ROW_RULE_{index})",
            ]
        )
    return lines


def _is_name(text: str) -> bool:
    return text.isidentifier() and not keyword.iskeyword(text)
