"""One tool's whole call, written into the generated module as a method `_call_<tool>`.

`Environment._invoke` runs any tool by interpreting its plan on every call: read the arguments
(the generic parser), open the transaction (journal, step and size budgets), call the impl,
run the end-of-call checks of `_verify` (each of its loops over the tool's rule tables, most
of them empty), serialize and size-check the result, record the journal, append the trace
entry and build the envelope. The compiler writes that sequence out once per tool: the tool's
own argument reading (common cases as inline type tests, the rest through the param's spec),
the impl called by keyword, only the end-of-call checks the tool has (none for a query; the
touched rows' rules only when a touched row changed a field some rule reads; its env
invariants and per-row env invariants inline), its result's serializer and size check inlined
for a record result, and its name as a constant.

It is the same transaction, statement for statement: the method returns exactly what `_invoke`
returns for the same arguments, leaves the same state, trace, journal history, `_last_result`,
`last_failure` and `last_exception`, and fails as `Environment._failed` does (its Fail case
written out, the others through it); `_invoke` stays as the reference (tests/test_fast_paths.py
compares them on random call sequences of every example). It returns None, before anything
runs, for arguments it does not read (an unknown or missing one): the caller then takes the
generic parser, whose BadValue says which; a bad argument value raises the same BadValue as the
generic parser (whatever an inline test does not take goes through the spec's from_json, with
the param's name as the path, params in the same order).

Everything here is built from the view models the template renders (ToolView, ParamView,
RecordView and their ShapeViews): one description of the tool, two renderings. Every spec
they name is a name: a compound one (`rt.ListSpec(SPEC_Item)`) is a module constant.
"""

from __future__ import annotations

from envdsl.codegen import shapes
from envdsl.codegen.names import Names
from envdsl.codegen.serializers import record_display
from envdsl.codegen.views import ParamView, RecordView, ShapeView, ToolView

# the names the generated module imports for the calls (envdsl/runtime/call_support.py)
MISSING, MIN_INT, MAX_INT = "_MISSING", "_MIN_INT", "_MAX_INT"


def call_method_name(tool: str) -> str:
    return f"_call_{tool}"


class ToolCallWriter:
    """The body of `_call_<tool>(self, given)` for each tool of one module."""

    def __init__(
        self,
        names: Names,
        records: dict[str, RecordView],
        source: str,
        invariant_lines: dict[str, int],
        scalar_refs: bool,
        verify_rows: str | None,
    ) -> None:
        self.names = names
        self.records = records  # by class name
        self.source = source  # the spec file's name, for the `# file:line` comments
        self.invariant_lines = invariant_lines  # env invariant method -> its spec line
        self.scalar_refs = scalar_refs  # some scalar state field can hold a ref
        self.verify_rows = verify_rows  # the touched rows' rules (codegen/row_writes.py)

    def where(self, line: int | None) -> str:
        """The comment at a failure site: the spec line it comes from."""
        return f"  # {self.source}:{line}" if line else ""

    def body(self, tool: ToolView) -> list[str]:
        return _ToolCall(self, tool).lines()


class _ToolCall:
    """The whole call of one tool (see the module docstring)."""

    def __init__(self, writer: ToolCallWriter, tool: ToolView) -> None:
        self.writer = writer
        self.tool = tool
        self.space = space = writer.names.locals()  # never shadow a module name
        for fixed in _FIXED_LOCALS:
            space.reserve(fixed)
        self.values = [space.claim(p.attr) for p in tool.params]
        self.raws = [space.claim(f"given_{p.attr}") for p in tool.params]
        # whether a datetime argument was already in its canonical text (its own trace text)
        self.canonicals = [space.claim(f"canonical_{p.attr}") for p in tool.params]

    def lines(self) -> list[str]:
        tool = self.tool
        lines = [
            f"if not {tool.arguments_constant}.issuperset(given):" if tool.params else "if given:",
            "    return None  # an unknown argument: the generic parser says which",
        ]
        traced = []
        for index, param in enumerate(tool.params):
            lines += self.reading(index, param)
            traced.append(f"{param.name!r}: {self.traced(index, param)}")
        lines.append(f"arguments: dict[str, Any] = {{{', '.join(traced)}}}")
        lines += [
            "journal: list[tuple[Any, ...]] = []",
            "self._journal = journal",
            "self._steps = 0",
            "self._last_result = None",
            "budget = _per_thread.budget  # this thread's (limits.per_thread)",
            "budget.left = self.size_budget",
            "data: Any",
            "try:",
            *_indent(self.transaction()),
            "    self._last_result = result",
            "    if journal:  # a call that wrote nothing leaves the history as it is",
            "        self._world.record(journal)",
            f"    self.trace.append(rt.TraceEntry({tool.name!r}, arguments, True))",
            '    return {"success": True, "data": data}',
            "except rt.Fail as error:  # Environment._failed's first case, written out",
            "    if journal:  # (what _rollback would undo)",
            "        self._rollback()",
            "    error.__traceback__ = None  # (see _failed)",
            "    self.last_failure = error",
            '    outcome: rt.Result = {"success": False, "error": error.message}',
            "except Exception as error:  # what each other kind of failure gives: _failed",
            "    outcome = self._failed(error)",
            "finally:",
            "    budget.left = None",
            "    self._journal = None",
            "    if self._touched:",
            "        self._touched = {}",
            "    if self._saved:",
            "        self._saved = set()",
            "    if self._grown:",
            "        self._grown = set()",
            f'self.trace.append(rt.TraceEntry({tool.name!r}, arguments, False, outcome["error"]))',
            "return outcome",
        ]
        return lines

    # ---- arguments -----------------------------------------------------------------------
    def param_spec(self, index: int) -> str:
        """The spec the argument's JSON is read by (not its optional; a ref's key's): a name,
        the module's constant where it would be built (Lowerer.spec)."""
        shape = self.tool.params[index].shape
        assert shape is not None
        return shape.spec

    def reading(self, index: int, param: ParamView) -> list[str]:
        """Lines that read the argument into its value (annotated as the impl's parameter):
        one `if`/`elif` chain over left out, null and the conversion's cases."""
        shape = param.shape
        assert shape is not None
        value, raw = self.values[index], self.raws[index]
        lines = [f"{value}: {param.annotation}"]
        if shape.kind == "datetime":
            lines.append(f"{self.canonical(index)} = False  # the argument is its own trace text")
        lines.append(f"{raw} = given.get({param.name!r}, {MISSING})")
        clauses: list[tuple[str | None, list[str]]] = []
        if param.required:
            lines += [f"if {raw} is {MISSING}:", "    return None  # the generic parser says so"]
        else:
            missing = param.default_value if param.default_value is not None else "None"
            clauses.append((f"{raw} is {MISSING}", [f"{value} = {missing}"]))
        if shape.optional:
            clauses.append((f"{raw} is None", [f"{value} = None"]))
        clauses += self.convert(index, param, shape)
        return lines + _chain(clauses)

    def canonical(self, index: int) -> str:
        return self.canonicals[index]

    def convert(
        self, index: int, param: ParamView, shape: ShapeView
    ) -> list[tuple[str | None, list[str]]]:
        """The clauses that read the JSON value (not null) into the value: the spec's own
        fast case as an inline test, anything else through its from_json (which converts it
        or raises the generic parser's BadValue: a failure site of the call)."""
        value, raw = self.values[index], self.raws[index]
        spec = self.param_spec(index)
        generic = f"{value} = {spec}.from_json({raw}, {param.name!r})"
        generic += self.writer.where(param.line)
        kind = shape.kind
        if kind == "str":  # StrSpec.from_json's own fast test
            test = f"type({raw}) is str and len({raw}) <= 64 and {raw}.isascii()"
        elif kind == "int":
            test = f"type({raw}) is int and {MIN_INT} <= {raw} <= {MAX_INT}"
        elif kind == "bool":
            test = f"type({raw}) is bool"
        elif kind == "enum":
            # a string that is no member's value is EnumSpec.from_json's mismatch, raised here
            member = self.space.claim(f"member_{param.attr}")
            where = self.writer.where(param.line)
            read = [
                f"{member} = {spec}.by_value.get({raw}) if type({raw}) is str else None",
                f"if {member} is not None:",
                f"    {value} = {member}",
                f"elif type({raw}) is str:",
                f"    raise {spec}.mismatch({raw}, {param.name!r}){where}",
                "else:",
                f"    {generic}",
            ]
            return [(None, read)]
        elif kind == "datetime":
            # text already in the canonical UTC form (`2024-05-01T09:00:00Z`, what agents and
            # solutions send) is read by fromisoformat alone and is its own trace text: it
            # parses only with digits between the separators, so it is what format_datetime
            # writes
            shaped = (
                f"type({raw}) is str and len({raw}) == 20 and {raw}[10] == 'T' "
                f"and {raw}[19] == 'Z' and {raw}[4] == {raw}[7] == '-' "
                f"and {raw}[13] == {raw}[16] == ':'"
            )
            canonical = [
                "try:",
                f"    {value} = _fromisoformat({raw})",
                f"    {self.canonical(index)} = True",
                "except ValueError:",
                f"    {generic}",
            ]
            return [(shaped, canonical), (None, [generic])]
        else:
            return [(None, [generic])]
        return [(test, [f"{value} = {raw}"]), (None, [generic])]

    def may_be_none(self, param: ParamView) -> bool:
        shape = param.shape
        assert shape is not None
        left_out = not param.required and param.default_value is None
        return shape.optional or left_out or shape.kind in ("json", "other")

    def traced(self, index: int, param: ParamView) -> str:
        """The argument's canonical JSON for the trace (None stays None)."""
        shape = param.shape
        assert shape is not None
        value = self.values[index]
        if shape.kind in shapes.PLAIN:
            return value
        if shape.kind == "enum":
            shown = f"{value}._value_"
        elif shape.kind == "datetime":
            shown = f"{self.raws[index]} if {self.canonical(index)} else _format_datetime({value})"
        else:
            shown = f"{self.param_spec(index)}.to_json({value})"
        return f"None if {value} is None else {shown}" if self.may_be_none(param) else shown

    # ---- the transaction -----------------------------------------------------------------
    def transaction(self) -> list[str]:
        """The statements inside the transaction, up to `result` and `data` (its JSON)."""
        tool = self.tool
        arguments = ", ".join(f"{p.attr}={v}" for p, v in zip(tool.params, self.values))
        shape = tool.result_shape
        assert shape is not None
        call = f"self.{tool.impl}({arguments})"
        void = shape.kind == "void" and not shape.optional
        lines = [call, "result = None"] if void else [f"result = {call}"]
        if tool.kind == "action":
            lines += self.end_of_call_checks()
        if void:  # None is sent as it is, and has no size
            return [*lines, "data = None"]
        if shape.kind == "str" and not shape.optional:  # sent as it is, never size-checked
            return [*lines, "data = result"]
        record = self.writer.records.get(shape.record) if shape.kind == "record" else None
        if record is not None and not shape.optional:
            display = record_display(record, "result", self.datetime_text)
            lines.append(f"data = {display} if result is not None else None")
            checks = check_lines(record)
            if checks is not None:
                return [*lines, "size_budget = self.size_budget", *checks]
        else:
            spec = tool.result_spec  # a name (Lowerer.spec)
            lines.append(f"data = {spec}.to_json(result) if result is not None else None")
        # the text the agent will be sent: one long string held 50,000 times is small in
        # memory and gigabytes as JSON; an int of 5,000 digits no peer reads (as in _invoke)
        return [
            *lines,
            "if type(data) is not str:",
            "    problem = _result_problem(data, self.size_budget)",
            "    if problem is not None:",
            "        raise rt.Fail(problem)",
        ]

    def datetime_text(self, read: str) -> str:
        """A datetime of the result as text: where it is the very datetime an argument was
        read into from its canonical text (a row made from the arguments, returned), that
        text; otherwise format_datetime's (which hashes a datetime it has not seen, a third
        of a microsecond for an aware one, and formats it, twice that)."""
        shown = f"_format_datetime({read})"
        for index in reversed(range(len(self.tool.params))):
            shape = self.tool.params[index].shape
            if shape is not None and shape.kind == "datetime":
                value, raw, canonical = self.values[index], self.raws[index], self.canonical(index)
                shown = f"{raw} if {read} is {value} and {canonical} else {shown}"
        return shown if shown.startswith("_format_datetime(") else f"({shown})"

    def end_of_call_checks(self) -> list[str]:
        """Environment._verify for this tool, in its order: the touched rows' rules, the refs
        scalar state fields hold, the row invariants re-checked on every row, the env
        invariants, the per-row env invariants."""
        tool = self.tool
        where = self.writer.where
        lines = []
        if self.writer.verify_rows is not None and tool.checks_rows:  # the touched rows' rules
            lines += ["if self._touched:", f"    self.{self.writer.verify_rows}()"]
        if self.writer.scalar_refs:
            # a call that wrote and deleted nothing left every ref as it was
            lines += ["if journal:", "    self._verify_scalar_refs()"]
        if tool.full_row_invariants:
            lines.append(f"self._verify_full_rows(self.TOOLS[{tool.name!r}])")
        for method in tool.env_invariants:
            lines += [
                f"if not self.{method}():",
                f"    self._env_invariant_failed({method!r})"
                + where(self.writer.invariant_lines.get(method)),
            ]
        for table, row_method, method in tool.row_env_invariants:
            lines += [
                f"table = self._tables[{table!r}]",
                "for touched_table, key in self._touched:",
                f"    row = table._rows.get(key) if touched_table == {table!r} else None",
                f"    if row is not None and not self.{row_method}(row):",
                f"        self._env_invariant_failed({method!r})"
                + where(self.writer.invariant_lines.get(method)),
            ]
        return lines


# the names the call's own statements bind: no param's value may take one
_FIXED_LOCALS = (
    "given", "arguments", "journal", "budget", "result", "data", "error", "outcome",
    "problem", "size_budget", "total", "v", "table", "row", "touched_table", "key",
    "originals", "read",
)  # fmt: skip


def check_lines(record: RecordView) -> list[str] | None:
    """limits.result_problem written out for a record result of plain fields (what most
    results are), to the same count: lines that read the dict `data` and raise the Fail
    `_invoke` raises where the result has a problem, or fall through when it has none (its
    ints' ranges, its lists' lengths and their strings', its strings' lengths, read by name,
    against `size_budget`); None for results that take the generic walk. No string is
    longer than MAX_STR (limits.check_str, wherever one is made or stored), so the record's
    own strings are counted only where as many of them at that length could take the total
    over the budget (never, at the default budget, for fewer than ten)."""
    lines = []
    texts: list[tuple[str, bool]] = []  # the string members: (name, optional)
    for field in record.fields:
        shape = field.shape
        assert shape is not None
        name = repr(field.json_name)
        element = shape.element if shape.kind in ("list", "set") else None
        if shape.kind in shapes.NUMBER:
            continue
        if shape.kind in shapes.TEXT:
            texts.append((name, shape.optional))
            continue
        if shape.kind == "int":
            guard = "v is not None and " if shape.optional else ""
            lines += [
                f"v = data[{name}]",
                f"if {guard}not {MIN_INT} <= v <= {MAX_INT}:",
                "    raise rt.Fail(_INT_RESULT)",
            ]
            continue
        if element is None or element.optional:
            return None
        if element.kind in shapes.NUMBER:
            add = ["total += len(v)"]
        elif element.kind in shapes.TEXT:
            add = ["total += len(v)", "if v:", "    total += sum(map(len, v))"]
        else:
            return None
        lines.append(f"v = data[{name}]")
        lines += ["if v is not None:", *_indent(add)] if shape.optional else add
    too_large = ["if total > size_budget:", "    raise rt.Fail(_TOO_LARGE % total)"]
    if texts:
        plain = [f"len(data[{name}])" for name, optional in texts if not optional]
        counted = [f"total += {' + '.join(plain)}"] if plain else []
        for name, optional in texts:
            if optional:
                counted += [f"v = data[{name}]", "if v is not None:", "    total += len(v)"]
        lines += [f"if total + {len(texts)} * _MAX_STR > size_budget:", *_indent(counted)]
        too_large = _indent(too_large)
    return [f"total = {len(record.fields)}", *lines, *too_large]


def _chain(clauses: list[tuple[str | None, list[str]]]) -> list[str]:
    """`if`/`elif`/`else` over (condition, statements), the last one's condition None."""
    if len(clauses) == 1:
        return clauses[0][1]
    lines = []
    for index, (condition, statements) in enumerate(clauses):
        if condition is None:
            lines.append("else:")
        else:
            lines.append(f"{'if' if index == 0 else 'elif'} {condition}:")
        lines += _indent(statements)
    return lines


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]
