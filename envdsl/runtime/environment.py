"""The Environment base class: dispatch, transactions, integrity checks, state I/O, tasks.

Generated modules subclass it and fill in the class-level tables (tools, tables, scalars,
invariants, tasks) and one method per tool, fn, invariant and check.  Everything that has to
be true of every environment (the result envelope, argument validation, rollback, the step
budget, canonical JSON and hashes) lives here, once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import json
import operator
from enum import Enum
from typing import Any, Callable, ClassVar, Collection, Iterable, Iterator, Mapping, Self, TypeVar

from envdsl.runtime import limits
from envdsl.runtime.callplans import ToolPlan
from envdsl.runtime.errors import BadValue, Fail
from envdsl.runtime.limits import STATE_CHECK_STEPS_PER_ROW, clip, json_problem, store
from envdsl.runtime.loading import load_plainly
from envdsl.runtime.places import (
    IMMUTABLE_TYPES,
    Place,
    is_immutable,
    own_row_fields,
    owned_copy,
    place_of,
)
from envdsl.runtime.digests import reference_hash
from envdsl.runtime.frame import (
    Allowance,
    Footprint,
    TaskReference,
    collection_kind,
    first_violation,
    footprint,
)
from envdsl.runtime.grading import grade
from envdsl.runtime.row_rules import missing_parent, refused_transition, shared_unique
from envdsl.runtime.snapshots import Owner, Snapshot, World, undo_entry
from envdsl.runtime.specs import (
    INSERTED,
    ParamSpec,
    Result,
    ScalarSpec,
    TableSpec,
    TaskSpec,
    ToolSpec,
    TraceEntry,
)
from envdsl.runtime.table import RefField, Table, TableSchema, highest_auto_number
from envdsl.runtime.values import (
    RecordSpec,
    TypeSpec,
    holds_mutable,
    holds_ref,
    key_from_json,
    nested_refs,
    refs_in,
)

T = TypeVar("T")
DEFAULT_STEP_BUDGET = 100_000


class InvalidState(Exception):
    """An initial state (task init, JSON state) that breaks the schema or an invariant."""


class Environment:
    NAME: ClassVar[str] = "Environment"
    DESCRIPTION: ClassVar[str] = ""
    TOOLS: ClassVar[dict[str, ToolSpec]] = {}
    TABLES: ClassVar[dict[str, TableSpec]] = {}
    SCALARS: ClassVar[dict[str, ScalarSpec]] = {}
    TASKS: ClassVar[dict[str, TaskSpec]] = {}
    # tasks the compiler left out for errors of their own (name -> the first error, one line),
    # set where the module is loaded (envdsl.generated.loader): choosing one says why
    INVALID_TASKS: ClassVar[dict[str, str]] = {}
    ROW_INVARIANTS: ClassVar[dict[str, tuple[tuple[str, str], ...]]] = {}  # table -> (text, method)
    ENV_INVARIANTS: ClassVar[dict[str, str]] = {}  # method -> text
    # each `require` and `let ... else`: (tool or fn, spec line, kind, condition as written)
    SITES: ClassVar[tuple[tuple[str, int, str, str], ...]] = ()
    # fields tools keep current whatever else they do (`updated_at = now`, `version += 1`),
    # table -> fields ("" -> scalar fields): see envdsl/semantics/stamps.py and runtime/frame.py
    STAMPS: ClassVar[dict[str, frozenset[str]]] = {}
    # table -> the instance attribute the generated class reads it by (`t_users`): set with
    # every world entered, a dict lookup where a property would be a call on every lookup
    TABLE_ATTRIBUTES: ClassVar[dict[str, str]] = {}
    # made from the tables above on first use, per class (see _row_specs)
    _ROW_SPECS: ClassVar[dict[str, RecordSpec]]
    _SCALAR_SPECS: ClassVar[dict[str, TypeSpec]]
    _PLANS: ClassVar[dict[str, ToolPlan]]
    _GUARDED: ClassVar[dict[str, frozenset[str] | None]]
    _MUTABLE: ClassVar[dict[str, tuple[str, ...]]]
    _REF_SCALARS: ClassVar[tuple[tuple[str, TypeSpec], ...]]  # per class: see _ref_scalars
    _INCOMING: ClassVar[dict[str, list[RefField]]]  # per class: see _incoming_refs
    _REFERENCES: ClassVar[dict[str, TaskReference]]  # per class: see task_reference
    # calls run through each tool's whole-call method, which the compiler writes into the
    # generated class (ToolSpec.call, envdsl/codegen/tool_calls.py) from the first call on;
    # off, every call takes the reference path (the generic parser and `_invoke`)
    _CALL_FUNCTIONS: ClassVar[bool] = True
    # how many tasks' start states reset(task=...) keeps to restore instead of loading again
    # (tasks with one init share one)
    _TASK_STARTS_KEPT: ClassVar[int] = 4

    def __init__(
        self,
        *,
        step_budget: int = DEFAULT_STEP_BUDGET,
        size_budget: int = limits.DEFAULT_SIZE_BUDGET,
    ) -> None:
        self.step_budget = step_budget
        self.size_budget = size_budget
        # the state's JSON while evaluate() grades (None outside it): see _graded_state_json
        self._grading_json: dict[str, Any] | None = None
        self._grading = False
        self._steps = 0
        self._journal: list[tuple[Any, ...]] | None = None
        self._touched: dict[tuple[str, Any], dict[str, Any]] = {}
        # places whose value the current call already journaled: (id of the row, attribute)
        self._saved: set[tuple[int, str]] = set()
        # places whose list the call has only appended to: journaled as their old length
        self._grown: set[tuple[int, str]] = set()
        self._incoming = self._incoming_refs()
        self.trace: list[TraceEntry] = []
        self.task: str | None = None
        self.last_exception: BaseException | None = None
        self.last_failure: Fail | None = None
        # passes per `require`/`let ... else` site; None (not counting) except while exploring
        self.coverage: list[int] | None = None
        # the read-only state at reset(task) for `initial.`: (task, view), built on first use
        self._initial_view: tuple[str | None, Any] | None = None
        # replaying a solution with steps left out (see solve)
        self._leave_out: frozenset[int] | None = None
        self._after_step: Callable[[int], None] | None = None
        self._solution_step = 0
        self._owner = Owner()  # which snapshots are this environment's own
        # the state right after reset(task=...) loaded a task, by its init, the latest last:
        # see _remember_start
        self._task_starts: dict[tuple[str | None, str | None], Snapshot] = {}
        self._world: World
        self._blank: tuple[World, tuple[Any, ...]] | None  # see _cleared
        self._tables: dict[str, Table[Any]]
        self._scalars: dict[str, Any]
        self._clear()  # enters the first world

    def __getstate__(self) -> dict[str, Any]:
        """Pickling (spawn workers, Ray): the state, trace and task; not the caches."""
        state = dict(self.__dict__)
        state["_initial_view"] = None  # rebuilt on first use
        state["last_exception"] = None  # may hold a traceback's frames, which cannot pickle
        state["_task_starts"] = {}  # a cache: each would pickle a whole world
        return state

    # ---- state -----------------------------------------------------------------------------
    def _clear(self) -> None:
        """A new, empty world: snapshots of the old one keep it (it is no longer changed)."""
        tables: dict[str, Table[Any]] = {n: Table(s.schema) for n, s in self.TABLES.items()}
        world = World(tables, {}, [], self._owner)
        self._enter(world)
        for name, spec in self.SCALARS.items():
            self.set_scalar_initial(name, spec.default() if spec.default is not None else None)
        self._blank = (world, tuple(world.scalars.values()))

    def _cleared(self) -> None:
        """_clear, unless the world is the one _clear made last and nothing has touched it (no
        call, snapshot, row or scalar since): a new environment's first reset, whose world
        was made by __init__ (a second one was a tenth of a cold reset of 100 rows)."""
        if self._blank is None:
            self._clear()
            return
        world, scalars = self._blank
        if (
            world is not self._world
            or world.watched
            or world.trace
            or any([table._rows for table in world.tables.values()])
            or not all(map(operator.is_, world.scalars.values(), scalars))
        ):
            self._clear()

    def _enter(self, world: World) -> None:
        """Work on this world from now on (the only place the tables are set)."""
        self._blank = None  # (set again by _clear; never holds a world no longer entered)
        self._world = world
        self._tables = world.tables
        self._scalars = world.scalars
        self.trace = world.trace
        for name, attribute in self.TABLE_ATTRIBUTES.items():
            setattr(self, attribute, world.tables[name])

    def reset(self, task: str | None = None, state: Mapping[str, Any] | str | None = None) -> None:
        """Load a task's initial state, or a JSON state (dict or JSON text), or an empty one."""
        if task is not None and state is not None:
            raise ValueError("give a task or a state, not both")
        spec = self.TASKS.get(task) if task is not None else None
        start_key = (spec.init, spec.init_data) if spec is not None else None
        if start_key is not None and (start := self._task_starts.pop(start_key, None)) is not None:
            self.restore(start)  # a start loaded before: the episode's writes undone
            self.task = task
            self._task_starts[start_key] = start  # the latest last
            return
        self._cleared()
        self.task = task
        if task is not None:
            if spec is None:
                raise KeyError(self.unknown_task(task))
            if not self._load_task(spec):
                self._check_whole_state()
            assert start_key is not None
            self._remember_start(start_key)
            return
        if state is not None:
            self._load_state(state)
            return
        self._check_whole_state()

    def _remember_start(self, key: tuple[str | None, str | None]) -> None:
        """Keep the state a task's load ended in, for the next reset to a task with the same
        init (the same init method, or the same `init from` data, which tasks of one start
        share): an init is deterministic, so undoing an episode's writes gives what loading
        it again would, and costs what the episode wrote instead of what the state holds. A
        few starts are kept, the least recently used dropped first (each keeps its world)."""
        self._task_starts[key] = self.snapshot()
        while len(self._task_starts) > self._TASK_STARTS_KEPT:
            del self._task_starts[next(iter(self._task_starts))]

    @classmethod
    def unknown_task(cls, name: str) -> str:
        """Why `name` is no task of this environment: an invalid task's first error, or the
        tasks there are."""
        reason = cls.INVALID_TASKS.get(name)
        if reason is not None:
            return f"task {name!r} has errors and was left out of the environment: {reason}"
        return f"unknown task {name!r}; tasks: {', '.join(cls.TASKS) or 'none'}"

    def _load_task(self, spec: TaskSpec) -> bool:
        """Build the task's initial state; True when its rules are checked already (an `init
        from` file the bulk loader took, as `_load_state` loads a state)."""
        if spec.init is not None:
            getattr(self, spec.init)()
        elif spec.init_data is not None:
            data = json.loads(spec.init_data)
            if load_plainly(self, data, decoded=True):
                return True
            self._clear()  # the reference path, which says what is wrong
            self._load_json_state(data)
        return False

    def _load_state(self, state: Mapping[str, Any] | str) -> None:
        """A JSON state from outside: whatever is wrong with it is an InvalidState, and a
        failed load leaves an empty state, not half of the bad one."""
        try:
            if isinstance(state, str):
                fast = _decoded_fast(state)
                if fast is not _UNDECODED:
                    if load_plainly(self, fast, decoded=True):
                        return
                    self._clear()  # not plain: the text again, as it always was read
                data = _DECODER.decode(state)
            else:
                data = state
            # valid plain data, in bulk (envdsl/runtime/loading.py)
            if load_plainly(self, data, decoded=isinstance(state, str)):
                return
            self._clear()  # anything else: the reference path, which says what is wrong
            problem = json_problem(data)
            if problem is not None:
                raise InvalidState(f"the state is not a JSON state: {problem}")
            self._load_json_state(data)
            self._check_whole_state()
        except InvalidState:
            self._clear()
            raise
        except RecursionError:
            self._clear()
            raise InvalidState("the state is nested too deeply") from None
        except ValueError as error:  # bad JSON text, a number too long to read
            self._clear()
            raise InvalidState(f"the state is not valid JSON: {_short(error)}") from None

    def _load_json_state(self, data: Any) -> None:
        if not isinstance(data, dict):
            raise InvalidState("a state must be a JSON object with one key per state field")
        for name in data:
            if name not in self.TABLES and name not in self.SCALARS:
                known = ", ".join([*self.TABLES, *self.SCALARS])
                raise InvalidState(f"unknown state field {clip(name)} (fields: {known})")
        try:
            for name, spec in self.TABLES.items():
                if name in data:
                    self._load_json_table(name, spec, data[name])
            for name, scalar in self.SCALARS.items():
                if name in data:
                    self.set_scalar_initial(name, scalar.spec.from_json(data[name], name))
                elif scalar.default is None and not _is_optional(scalar.spec):
                    raise InvalidState(f"missing state field {name!r}")
        except BadValue as error:
            raise InvalidState(str(error)) from None

    def _load_json_table(self, name: str, spec: TableSpec, value: Any) -> None:
        key_spec = next(f for f in spec.row.fields if f.attribute == spec.schema.key)
        key_field = key_spec.name  # the JSON name (the attribute may be mangled: id -> id_)
        rows: list[tuple[str, Any]] = []
        if isinstance(value, list):
            rows = [(f"{name}[{i}]", row) for i, row in enumerate(value)]
        elif isinstance(value, dict):
            for key, row in value.items():
                where = f"{name}.{key if len(key) <= 40 else '<key>'}"
                if not isinstance(row, dict):
                    raise InvalidState(f"{where}: a row is an object")
                # the object key in its one canonical form ("1", not "01"): the row's key
                key_value = key_from_json(key_spec.spec, key, where)
                if key_field not in row:
                    row = {**row, key_field: key_value}
                elif key_spec.spec.from_json(row[key_field], where) != key_value:
                    raise InvalidState(
                        f"{where}: the row's {key_field} is {clip(row[key_field])}, "
                        f"not {clip(key)}"
                    )
                rows.append((where, row))
        else:
            raise InvalidState(f"{name}: a table is an array of rows or an object keyed by id")
        self.load_rows(name, [spec.row.from_json(row, path) for path, row in rows])

    def load_rows(self, name: str, rows: Iterable[Any]) -> None:
        """Add rows to a table while building an initial state (auto keys are filled)."""
        table = self._tables[name]
        schema = table.schema
        rows = list(rows)
        if schema.auto_prefix is not None:  # auto keys continue after the loaded ones
            keys = [getattr(row, schema.key) for row in rows]
            table.auto_counter = max(
                table.auto_counter, highest_auto_number(schema.auto_prefix, keys)
            )
        for row in rows:
            key = getattr(row, schema.key)
            if schema.auto_prefix is not None and key == "":
                key = self._next_auto_key(table)
                setattr(row, schema.key, key)
            if key in table:
                raise InvalidState(f"{name}: two rows have the key {clip(key)}")
            own_row_fields(name, row)
            table.add(key, row)
        self._world.digests.table_changed(name)

    def set_scalar_initial(self, name: str, value: Any) -> None:
        if type(value) not in IMMUTABLE_TYPES:  # (owned_copy keeps these as they are)
            value = owned_copy(value, Place(None, None, name))
        self._scalars[name] = value
        self._world.digests.scalar_changed(name)

    def _check_whole_state(self) -> None:
        """Check every integrity rule on every row: for initial states, not per call.

        Messages start with the table they are about (`users: ...`), so that a task's `init`
        error can point at the assignment of that table.
        """
        with self._whole_state_steps() as call_budget:
            try:
                for name, scalar in self.SCALARS.items():
                    if self._scalars[name] is None and not _is_optional(scalar.spec):
                        raise Fail(f"state field {name!r} has no value")
                for name, table in self._tables.items():
                    self._touched = {(name, key): INSERTED for key in table.keys()}
                    try:
                        self._verify_touched()
                    except Fail as error:
                        raise Fail(f"{name}: {error.message}") from None
                self._verify_scalar_refs()
                for method, text in self.ENV_INVARIANTS.items():
                    if not getattr(self, method)():
                        raise Fail(f"invariant violated: {text}")
            except Fail as error:
                if self._steps > self.step_budget:
                    raise InvalidState(self._over_state_budget(call_budget)) from None
                raise InvalidState(error.message) from None
            except OverflowError as error:  # a rule computing past the date or number range
                raise InvalidState(
                    f"a rule cannot be evaluated: a value is out of range ({error})"
                ) from None
            finally:
                self._touched = {}

    @contextlib.contextmanager
    def _whole_state_steps(self) -> Iterator[int]:
        """The step budget of a whole-state check, for its duration; yields a call's."""
        call_budget = self._start_whole_state_steps()
        try:
            yield call_budget
        finally:
            self.step_budget = call_budget

    def _start_whole_state_steps(self) -> int:
        """Give a whole-state check its step budget (STATE_CHECK_STEPS_PER_ROW more per row)
        and return a call's, for the caller to set back."""
        call_budget = self.step_budget
        self.step_budget = call_budget + STATE_CHECK_STEPS_PER_ROW * self._rows()
        self._steps = 0
        return call_budget

    def _rows(self) -> int:
        # (each table's dict read as Table.__len__ reads it: a Python call a table was most
        # of what this cost in a reset)
        return sum([len(table._rows) for table in self._tables.values()])

    def _over_state_budget(self, call_budget: int) -> str:
        return (
            f"checking the state's rules took more than {self.step_budget:,} steps "
            f"(the step budget, {call_budget:,}, and {STATE_CHECK_STEPS_PER_ROW} per row "
            f"of its {self._rows():,} rows): a rule that loops over a table for every row grows "
            "with the square of the state; a larger step_budget lets it load"
        )

    def snapshot(self) -> Snapshot:
        """The current state, trace and task, to come back to with `restore`: O(1), a
        position in the undo history (see envdsl/runtime/snapshots.py)."""
        return Snapshot(self._world, self.task)

    def restore(self, snapshot: Snapshot) -> None:
        """Go back to a snapshot's state, trace and task: O(writes since) for one of this
        environment's own; a copy for one of another environment."""
        self._enter(snapshot.world_for(self._owner))
        self.task = snapshot.task

    def fork(self) -> Self:
        """A new environment in this one's state, trace and task that shares nothing
        mutable with it (its snapshots are restored into the fork as copies)."""
        forked = object.__new__(type(self))
        Environment.__init__(forked, step_budget=self.step_budget, size_budget=self.size_budget)
        forked.restore(self.snapshot())
        forked.coverage = None if self.coverage is None else list(self.coverage)
        return forked

    def initial_state(self) -> Self:
        """A read-only view of the state at reset(task), for `initial.` in checks.

        Built on first use by running the task's init again (it is deterministic), so that a
        reset does not copy the state for checks that never read `initial.`; kept until the
        task changes: a check reads `initial.` once per element of a comprehension.
        """
        cached = self._initial_view
        if cached is not None and cached[0] == self.task:
            view: Self = cached[1]
            return view
        view = object.__new__(type(self))
        Environment.__init__(view, step_budget=self.step_budget)
        if self.task is not None:
            view._load_task(self.TASKS[self.task])
        self._initial_view = (self.task, view)
        return view

    def _graded_state_json(self) -> dict[str, Any]:
        """The state's JSON for grading: checks are pure, so while evaluate() runs the state
        stays as it is and every `mentions` of every check and the frame read one copy instead
        of building the whole state's JSON each (read only; outside evaluate(), a fresh one)."""
        if self._grading_json is not None:
            return self._grading_json
        state = self.state_json()
        if self._grading:
            self._grading_json = state
        return state

    def state_json(self) -> dict[str, Any]:
        """The canonical JSON state: fields sorted, tables keyed and in table order."""
        result: dict[str, Any] = {}
        for name in sorted([*self.TABLES, *self.SCALARS]):
            if name in self.TABLES:
                spec = self.TABLES[name]
                table = self._tables[name]
                result[name] = {
                    _key_json(key): spec.row.to_json(row)
                    for key, row in zip(table.keys(), table.rows())
                }
            else:
                value = self._scalars[name]
                result[name] = None if value is None else self.SCALARS[name].spec.to_json(value)
        return result

    def state_hash(self) -> str:
        """A digest of the canonical state (see envdsl/runtime/digests.py): equal states have
        equal hashes; after a call it costs the rows the call changed."""
        return self._world.digests.state_hash(
            self._tables, self._row_specs(), self._scalars, self._scalar_specs()
        )

    def reference_state_hash(self) -> str:
        """state_hash() computed from nothing, without the digests kept between calls."""
        return reference_hash(self._tables, self._row_specs(), self._scalars, self._scalar_specs())

    @classmethod
    def _row_specs(cls) -> dict[str, RecordSpec]:
        specs: dict[str, RecordSpec] | None = cls.__dict__.get("_ROW_SPECS")
        if specs is None:  # per generated class, made once
            specs = cls._ROW_SPECS = {name: spec.row for name, spec in cls.TABLES.items()}
        return specs

    @classmethod
    def _scalar_specs(cls) -> dict[str, TypeSpec]:
        specs: dict[str, TypeSpec] | None = cls.__dict__.get("_SCALAR_SPECS")
        if specs is None:
            specs = cls._SCALAR_SPECS = {name: spec.spec for name, spec in cls.SCALARS.items()}
        return specs

    # ---- tools -----------------------------------------------------------------------------
    def tool_schemas(self) -> list[dict[str, Any]]:
        """OpenAI function-calling schemas of the public tools."""
        schemas = []
        for tool in self.TOOLS.values():
            properties: dict[str, Any] = {}
            for param in tool.params:
                prop = dict(param.spec.schema())
                if param.description:
                    prop["description"] = param.description
                if param.default is not None:
                    prop["default"] = param.spec.to_json(param.default())
                properties[param.name] = prop
            schemas.append(
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": {
                            "type": "object",
                            "properties": properties,
                            "required": [p.name for p in tool.params if p.required],
                            "additionalProperties": False,
                        },
                    },
                }
            )
        return schemas

    def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> Result:
        """Call a tool with JSON arguments (a dict or JSON text): the agent's entry point."""
        self.last_failure = None  # a call rejected before it runs must not show the last one's
        self.last_exception = None
        parsed: Any = arguments
        if type(arguments) is not dict:  # (what most calls pass: nothing to decode or check)
            if isinstance(arguments, str):
                try:
                    parsed = _DECODER.decode(arguments) if arguments.strip() else {}
                except json.JSONDecodeError as error:
                    return self._rejected(name, {}, f"arguments are not valid JSON: {error.msg}")
                except RecursionError:
                    message = "arguments are not valid JSON: nested too deeply"
                    return self._rejected(name, {}, message)
                except ValueError as error:  # NaN, or a number of more than 4,300 digits
                    message = f"arguments are not valid JSON: {_short(error)}"
                    return self._rejected(name, {}, message)
            if parsed is None:
                parsed = {}
            if not isinstance(parsed, dict):
                return self._rejected(name, {}, "arguments must be a JSON object")
        plans = type(self).__dict__.get("_PLANS")  # as _plan, without its call
        plan = plans.get(name) if plans is not None and type(name) is str else None
        if plan is None:
            if not isinstance(name, str) or name not in self.TOOLS:
                shown = name if isinstance(name, str) and len(name) <= limits.MAX_NAME else ""
                close = difflib.get_close_matches(shown, list(self.TOOLS), n=1) if shown else []
                hint = f"; did you mean {close[0]!r}?" if close else ""
                return self._rejected(
                    shown or clip(name),
                    parsed,
                    f"unknown tool {clip(name)}{hint} (tools: {', '.join(self.TOOLS)})",
                )
            plan = self._plan(name)
        try:
            outcome = plan.call(self, parsed)
            if outcome is not None:
                return outcome
            read = self._read_generically(plan, parsed)
        except BadValue as error:
            return self._bad_arguments(plan.tool, parsed, error)
        return self._invoke(plan, *read)

    def _bad_arguments(self, tool: ToolSpec, given: dict[str, Any], error: BadValue) -> Result:
        """A call whose arguments did not read, traced as _traced_arguments keeps them."""
        message = _argument_error(error)
        self.trace.append(
            TraceEntry(tool.name, dict(_traced_arguments(tool, given, error)), False, message)
        )
        return {"success": False, "error": message}

    def _read_generically(
        self, plan: ToolPlan, given: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """What the plan reads, by the generic parser: for arguments the plan does not take
        (an unknown or missing one), whose BadValue says which."""
        values = self._parse_arguments(plan.tool, given)
        return _in_order(plan.tool, values), _as_called(plan.tool, values)

    @classmethod
    def _plan(cls, name: str) -> ToolPlan:
        """The call plan of a tool (envdsl/runtime/callplans.py), made on its first call."""
        plans: dict[str, ToolPlan] | None = cls.__dict__.get("_PLANS")
        if plans is None:  # per generated class
            plans = cls._PLANS = {}
        plan = plans.get(name)
        if plan is None:
            plan = plans[name] = ToolPlan(cls, cls.TOOLS[name])
            if plan.tool.json_arguments:  # the generated module's own, from the first call
                plan.typed_arguments = getattr(cls, plan.tool.json_arguments)
            if cls._CALL_FUNCTIONS and plan.tool.call:
                plan.call = getattr(cls, plan.tool.call)
        return plan

    def _parse_arguments(self, tool: ToolSpec, given: dict[str, Any]) -> dict[str, Any]:
        names = self._plan(tool.name).names
        for key in given:
            if key not in names:
                expected = ", ".join(p.name for p in tool.params) or "none"
                raise BadValue(
                    "", f"unexpected argument {clip(key)} for {tool.name} (parameters: {expected})"
                )
        values: dict[str, Any] = {}
        for param in tool.params:
            if param.name in given:
                values[param.name] = param.spec.from_json(given[param.name], param.name)
            elif param.required:
                raise BadValue("", f"missing required argument {param.name!r} for {tool.name}")
            elif param.default is not None:
                values[param.name] = param.default()
            else:
                values[param.name] = None
        return values

    def _rejected(self, name: str, arguments: Any, message: str) -> Result:
        self.trace.append(
            TraceEntry(name, dict(arguments) if isinstance(arguments, dict) else {}, False, message)
        )
        return {"success": False, "error": message}

    def invoke_typed(self, name: str, values: dict[str, Any]) -> Result:
        """Call a tool with Python values (the typed methods of generated classes).

        The values go through the JSON argument parser, as the agent's do: a typed method
        validates exactly like `call` (a wrong type is a failed call, never an exception)."""
        self.last_failure = None
        self.last_exception = None
        plan = self._plan(name)
        arguments = plan.typed_arguments(values)
        try:
            outcome = plan.call(self, arguments)
            if outcome is not None:
                return outcome
            read = self._read_generically(plan, arguments)
        except BadValue as error:
            return self._rejected(name, arguments, _argument_error(error))
        return self._invoke(plan, *read)

    def _invoke(self, plan: ToolPlan, values: tuple[Any, ...], arguments: dict[str, Any]) -> Result:
        """Run a tool on parsed arguments (`values` in the order of its params; `arguments`,
        a fresh dict, for the trace) as one transaction."""
        tool = plan.tool  # (the caller has cleared last_failure and last_exception)
        journal = self._journal = []  # `_touched`, `_saved` and `_grown` are empty between calls
        self._steps = 0
        self._last_result: Any = None
        outcome: Result
        budget = limits.per_thread.budget  # calls do not nest (solution steps run one by one)
        budget.left = self.size_budget
        try:
            if plan.positional:
                result = getattr(self, plan.impl)(*values)
            else:
                result = getattr(self, plan.impl)(**dict(zip(plan.attributes, values)))
            if plan.action:
                self._verify(tool)
            data = plan.write_result(result) if result is not None else None
            if type(data) is not str:
                # the text the agent will be sent: one long string held 50,000 times is
                # small in memory and gigabytes as JSON; an int of 5,000 digits no peer reads
                problem = plan.check_result(data, self.size_budget)
                if problem is not None:
                    raise Fail(problem)
            self._last_result = result
            if journal:  # a call that wrote nothing leaves the history as it is
                self._world.record(journal)
            self.trace.append(TraceEntry(tool.name, arguments, True))
            return {"success": True, "data": data}  # (after the `finally` below)
        except Exception as error:  # a runtime bug must not end the episode: see _failed
            outcome = self._failed(error)
        finally:
            budget.left = None  # outside a call only the per-value limits apply
            self._journal = None
            if self._touched:
                self._touched = {}
            if self._saved:
                self._saved = set()
            if self._grown:
                self._grown = set()
        self.trace.append(TraceEntry(tool.name, arguments, False, outcome["error"]))
        return outcome

    def _failed(self, error: Exception) -> Result:
        """A call that raised `error` inside its transaction: rolled back, what it says, and
        why in `last_failure` (a Fail, or a value out of range) or `last_exception`."""
        self._rollback()
        message: str
        if isinstance(error, Fail):
            # what it says, its site and rule are all anyone reads of it; its traceback would
            # keep the call's frames alive until the next call and, through them, make a
            # cycle with whoever holds the failure in a local
            error.__traceback__ = None
            self.last_failure = error
            message = error.message
        elif isinstance(error, RecursionError):
            self.last_exception = error
            message = "the call nested too deeply"
        elif isinstance(error, OverflowError):  # a date or number past its range, however reached
            self.last_failure = Fail(f"a value is out of range ({error})")
            message = self.last_failure.message
        elif isinstance(error, MemoryError):
            self.last_exception = error
            message = "the call ran out of memory"
        else:
            self.last_exception = error
            message = f"internal error: {type(error).__name__}: {error}"
        return {"success": False, "error": message}

    # ---- writes (called by generated code; every one journaled) -----------------------------
    def _write_log(self) -> list[tuple[Any, ...]]:
        if self._journal is None:  # building an initial state: nothing to undo
            return []
        return self._journal

    def _set(self, table_name: str, row: Any, field_name: str, value: Any) -> None:
        old = getattr(row, field_name)
        if old == value and type(old) is type(value):
            return  # assigning the current value is not a change
        store(value)
        table = self._tables[table_name]
        key = getattr(row, table.schema.key)
        if not (type(old) in IMMUTABLE_TYPES or isinstance(old, Enum)):  # is_immutable, inline
            # a local may still alias the old value and change it later in this call: the
            # undo keeps a copy of the value as it was (once per place and call)
            saved = _saved_key(row, field_name)
            if saved not in self._saved:
                self._saved.add(saved)
                old = owned_copy(old, Place(table_name, row, field_name))
        self._journal_field(table_name, key, row, field_name, old)
        if table.get(key) is row:
            table.reindex_field(key, row, field_name, old, value)
        if not (type(value) in IMMUTABLE_TYPES or isinstance(value, Enum)):
            # stored as a copy of its own: places never share values
            value = owned_copy(value, Place(table_name, row, field_name))
        setattr(row, field_name, value)

    def _journal_field(
        self, table_name: str, key: Any, row: Any, field_name: str, old: Any
    ) -> None:
        """`_set`'s journaling, for the generated writer of a field whose values are immutable
        (it has compared and checked the new value; no owned copies are needed): the undo
        entry, and the field's value before the call for the end-of-call check."""
        journal = self._journal
        if journal is not None:  # None while building an initial state: nothing to undo
            journal.append(("field", table_name, key, row, field_name, old))
        originals = self._touched.setdefault((table_name, key), {})
        if originals is not INSERTED:
            originals.setdefault(field_name, old)

    def _reindex(self, table_name: str, row: Any, field_name: str, old: Any, new: Any) -> None:
        """A unique or ref field of a row is about to change: move the row in the indexes
        (a row no longer in its table, deleted earlier in the call, is in none)."""
        table = self._tables[table_name]
        key = getattr(row, table.schema.key)
        if table.get(key) is row:
            table.reindex_field(key, row, field_name, old, new)

    def _set_scalar(self, name: str, value: Any) -> None:
        store(value)
        old = self._scalars[name]
        if not is_immutable(old) and _saved_key(None, name) not in self._saved:
            self._saved.add(_saved_key(None, name))  # as in _set: the old value may still change
            old = owned_copy(old, Place(None, None, name))
        self._write_log().append(("scalar", name, old))
        self._scalars[name] = owned_copy(value, Place(None, None, name))

    def _mut(self, value: object) -> None:
        """Journal the place of a value about to change in place (`xs.append(x)`,
        `item.price = p`, `m[k] = v`), reached by any path; a value that is not in state
        (a fresh local) has no place and needs no undo."""
        place = place_of(value)
        if place is None:
            return
        saved = _saved_key(place.row, place.attr)
        if saved in self._saved:
            return  # the value before the call is already journaled: that is what undo restores
        self._saved.add(saved)
        if place.table is None:
            current = self._scalars[place.attr]
            self._write_log().append(("scalar", place.attr, owned_copy(current, place)))
            return
        table = self._tables[place.table]
        row = place.row
        _refuse_immutable(table.schema, place.attr)
        key = getattr(row, table.schema.key)
        if self._inserted_by_this_call(place.table, key, row):
            return  # undoing the insert removes it whole
        old = owned_copy(getattr(row, place.attr), place)
        self._write_log().append(("field", place.table, key, row, place.attr, old))
        originals = self._touched.setdefault((place.table, key), {})
        if originals is not INSERTED:
            originals.setdefault(place.attr, old)

    def _inserted_by_this_call(self, table_name: str, key: Any, row: Any) -> bool:
        return (
            self._touched.get((table_name, key)) is INSERTED
            and self._tables[table_name].get(key) is row
        )

    def _own(self, container: object, value: T) -> T:
        """`value` as stored into `container`: an owned copy when the container is in state.

        Every store is counted against the size budget, and a collection may not grow past
        its limit, in state or not: this is where a loop that appends grows one."""
        store(value)
        if isinstance(container, (list, set, dict)) and len(container) >= limits.MAX_ITEMS:
            limits.check_items(len(container) + 1)
        place = place_of(container)
        if place is None or is_immutable(value):
            return value
        return owned_copy(value, place)

    def _grow(self, value: object) -> None:
        """Journal the place of a list about to be appended to or extended: O(1) when the
        list is the place's whole value, as the old length undoes it."""
        place = self._growing_place(value)
        if place is None or not isinstance(value, list):
            return
        saved = _saved_key(place.row, place.attr)
        if saved not in self._grown:
            self._grown.add(saved)
            self._write_log().append(("grow", place, len(value)))

    def _set_add(self, container: set[T], element: T) -> None:
        """`s.add(x)`: journaled as the element to discard again (O(1)) when it is new."""
        if element not in container:
            place = self._growing_place(container)
            if place is not None:
                self._write_log().append(("discard", place, element))
        container.add(element)

    def _put(self, container: dict[Any, T], key: Any, value: T) -> None:
        """`m[k] = v`: journaled as the entry it replaces (O(1), a copy of the old value when
        that can still change through an alias), not as a copy of the map."""
        place = self._growing_place(container)
        if place is not None:
            if key not in container:
                self._write_log().append(("unput", place, key))
            else:
                old = container[key]
                if not is_immutable(old):
                    old = owned_copy(old, place)
                self._write_log().append(("reput", place, key, old))
        container[key] = value

    def _growing_place(self, value: object) -> Place | None:
        """The place of a collection about to change by one element, when that change needs
        its own O(1) undo entry: None when nothing needs journaling (not in state, journaled
        whole already, inserted by this call), and also after journaling the place whole
        through `_mut` when the collection is only a part of the place's value."""
        place = place_of(value)
        if place is None or _saved_key(place.row, place.attr) in self._saved:
            return None
        if place.table is None:
            current = self._scalars[place.attr]
        else:
            current = getattr(place.row, place.attr)
            table = self._tables[place.table]
            _refuse_immutable(table.schema, place.attr)
            key = getattr(place.row, table.schema.key)
            if self._inserted_by_this_call(place.table, key, place.row):
                return None  # undoing the insert removes it whole
        if current is not value:
            self._mut(value)
            return None
        if place.table is not None:  # the row is touched: its invariants are re-checked
            self._touched.setdefault((place.table, key), {})
        return place

    def _next_auto_key(self, table: Table[Any]) -> str:
        prefix = table.schema.auto_prefix
        while True:
            table.auto_counter += 1
            candidate = f"{prefix}-{table.auto_counter:04d}"
            if candidate not in table:
                return candidate

    def _insert(self, table_name: str, row: T) -> T:
        table = self._tables[table_name]
        schema = table.schema
        key = getattr(row, schema.key)
        log = self._write_log()
        if schema.auto_prefix is not None and key == "":
            log.append(("counter", table_name, table.auto_counter))
            key = self._next_auto_key(table)
            setattr(row, schema.key, key)
        if key in table:
            raise Fail(f"{schema.entity} {key!r} already exists", rule=f"key: {schema.entity}")
        limits.charge(limits.stored_size(row))
        own_row_fields(table_name, row, self._mutable_fields()[table_name])
        table.add(key, row)
        log.append(("insert", table_name, key))
        self._touched[(table_name, key)] = INSERTED
        return row

    def _delete(self, table_name: str, key: Any) -> None:
        table = self._tables[table_name]
        if key not in table:
            raise Fail(f"{table.schema.entity} {key!r} not found")
        self._steps += 1
        if self._steps > self.step_budget:
            raise Fail("the call exceeded its step budget")
        for ref in self._incoming[table_name]:
            child = self._tables[ref.child_table]
            children = child.children(ref.field, key)
            if not children:
                continue
            if ref.on_delete == "cascade":
                for child_key in children:
                    if child_key in child:
                        self._delete(ref.child_table, child_key)
            elif ref.on_delete == "none":
                for child_key in children:
                    self._set(ref.child_table, child.get(child_key), ref.field, None)
            else:
                raise Fail(
                    f"cannot delete {table.schema.entity} {key!r}: "
                    f"{child.schema.entity} {children[0]!r} refers to it ({ref.field})",
                    rule=f"ref: {child.schema.entity}.{ref.field}",
                )
        for child_name, spec in self.TABLES.items():
            if table_name not in spec.nested_parents:
                continue
            for child_row in self._tables[child_name].rows():
                for where, parent_table, parent_key in nested_refs(spec.row, child_row):
                    if parent_table == table_name and parent_key == key:
                        child_key = getattr(child_row, spec.schema.key)
                        raise Fail(
                            f"cannot delete {table.schema.entity} {key!r}: "
                            f"{spec.schema.entity} {child_key!r} refers to it ({where})"
                        )
        row, seq = table.remove(key)
        self._write_log().append(("delete", table_name, key, row, seq))
        self._touched.pop((table_name, key), None)

    def _rollback(self) -> None:
        """Undo the call's journal, the newest entry first."""
        tables, scalars = self._tables, self._scalars
        for entry in reversed(self._journal or []):
            undo_entry(tables, scalars, entry)
        self._journal = []

    # ---- integrity at the end of an action --------------------------------------------------
    def _verify(self, tool: ToolSpec) -> None:
        self._verify_touched()
        if self._journal:  # a call that wrote and deleted nothing left every ref as it was
            self._verify_scalar_refs()
        self._verify_full_rows(tool)
        for method in tool.env_invariants:
            if not getattr(self, method)():
                self._env_invariant_failed(method)
        for table_name, row_method, method in tool.row_env_invariants:
            table = self._tables[table_name]
            for touched_table, key in self._touched:
                row = table.get(key) if touched_table == table_name else None
                if row is not None and not getattr(self, row_method)(row):
                    self._env_invariant_failed(method)

    def _verify_scalar_refs(self) -> None:
        """Every ref a scalar state field holds (`current: ref Req?`, `queue: list[ref Req]`)
        points at an existing row: after an action, whatever it wrote or deleted, and in a
        whole state. (A row's refs are its table's rules, in _verify_touched.)"""
        for name, spec in self._ref_scalars():
            for where, table_name, key in refs_in(spec, self._scalars[name], name):
                table = self._tables[table_name]
                if key is not None and key not in table:
                    raise Fail(
                        f"{where}: {table.schema.entity} {key!r} does not exist",
                        rule=f"ref: {name}",
                    )

    @classmethod
    def _incoming_refs(cls) -> dict[str, list[RefField]]:
        """table -> the refs of other tables (and its own) pointing at it; made once per class
        (every environment made reads the same, and none changes it)."""
        found: dict[str, list[RefField]] | None = cls.__dict__.get("_INCOMING")
        if found is None:
            found = {name: [] for name in cls.TABLES}
            for spec in cls.TABLES.values():
                for ref in spec.schema.refs:
                    found[ref.parent_table].append(ref)
            cls._INCOMING = found
        return found

    @classmethod
    def _ref_scalars(cls) -> tuple[tuple[str, TypeSpec], ...]:
        """The scalar state fields whose values can hold refs, with their types."""
        found: tuple[tuple[str, TypeSpec], ...] | None = cls.__dict__.get("_REF_SCALARS")
        if found is None:
            found = tuple((n, s.spec) for n, s in cls.SCALARS.items() if holds_ref(s.spec))
            cls._REF_SCALARS = found
        return found

    def _verify_full_rows(self, tool: ToolSpec) -> None:
        """The row invariants that read other tables the tool writes, on every row."""
        for table_name, method in tool.full_row_invariants:
            text = dict((m, t) for t, m in self.ROW_INVARIANTS.get(table_name, ()))[method]
            for row in self._tables[table_name].rows():
                if not getattr(self, method)(row):
                    self._row_invariant_failed(table_name, row, text)

    def _env_invariant_failed(self, method: str) -> None:
        text = self.ENV_INVARIANTS[method]
        raise Fail(text, rule=f"invariant: {text}")

    def _verify_touched(self) -> None:
        guarded = self._guarded_fields()
        for (table_name, key), originals in list(self._touched.items()):
            if originals is not INSERTED:
                read_by_rules = guarded[table_name]
                if read_by_rules is not None and read_by_rules.isdisjoint(originals):
                    continue  # no rule of the table reads a field the call changed in the row
            table = self._tables[table_name]
            row = table.get(key)
            if row is None:
                continue
            schema = table.schema
            if originals is not INSERTED:
                for field_name, allowed in schema.transitions.items():
                    if field_name not in originals:
                        continue
                    old, new = originals[field_name], getattr(row, field_name)
                    if old != new and new not in allowed.get(old, frozenset()):
                        raise refused_transition(schema, field_name, old, new)
            for fields in table.unique_index:
                if originals is not INSERTED and originals.keys().isdisjoint(fields):
                    continue  # none of its fields changed: it cannot have become a duplicate
                value = tuple(getattr(row, f) for f in fields)
                if None in value:
                    continue
                failure = shared_unique(table, fields, value, key)
                if failure is not None:
                    raise failure
            for ref in schema.refs:
                if originals is not INSERTED and ref.field not in originals:
                    continue  # unchanged, so still pointing at a row (deletes check children)
                parent = getattr(row, ref.field)
                if parent is not None and parent not in self._tables[ref.parent_table]:
                    raise missing_parent(schema, ref.field, self._tables[ref.parent_table], parent)
            if self.TABLES[table_name].nested_parents:
                self._verify_nested_refs(table_name, row)
            for text, method in self.ROW_INVARIANTS.get(table_name, ()):
                if not getattr(self, method)(row):
                    self._row_invariant_failed(table_name, row, text)

    def _verify_nested_refs(self, table_name: str, row: Any) -> None:
        """Every ref nested in the row's values (`items: list[ref Product]`) points at a row."""
        spec = self.TABLES[table_name]
        for where, parent_table, parent_key in nested_refs(spec.row, row):
            if parent_key is not None and parent_key not in self._tables[parent_table]:
                raise missing_parent(spec.schema, where, self._tables[parent_table], parent_key)

    @classmethod
    def _guarded_fields(cls) -> dict[str, frozenset[str] | None]:
        """Per table, the fields that its transitions, unique and ref rules read, or None when
        a change of any field must be checked (row invariants, refs nested in values): a row
        changed only in other fields needs no end-of-call check."""
        guarded: dict[str, frozenset[str] | None] | None = cls.__dict__.get("_GUARDED")
        if guarded is None:  # per generated class, made once
            guarded = {}
            for name, spec in cls.TABLES.items():
                schema = spec.schema
                if cls.ROW_INVARIANTS.get(name) or spec.nested_parents:
                    guarded[name] = None
                    continue
                fields = set(schema.transitions)
                fields.update(f for unique in schema.uniques for f in unique)
                fields.update(ref.field for ref in schema.refs)
                guarded[name] = frozenset(fields)
            cls._GUARDED = guarded
        return guarded

    @classmethod
    def _mutable_fields(cls) -> dict[str, tuple[str, ...]]:
        """Per table, the row fields whose type can hold a mutable value (a list, set, map,
        record, json): the only ones an inserted row needs owned copies of."""
        fields: dict[str, tuple[str, ...]] | None = cls.__dict__.get("_MUTABLE")
        if fields is None:  # per generated class, made once
            fields = cls._MUTABLE = {
                name: tuple(f.attribute for f in spec.row.fields if holds_mutable(f.spec))
                for name, spec in cls.TABLES.items()
            }
        return fields

    def _row_invariant_failed(self, table_name: str, row: Any, text: str) -> None:
        schema = self._tables[table_name].schema
        raise Fail(
            f"{text} ({schema.entity} {getattr(row, schema.key)!r})", rule=f"invariant: {text}"
        )

    # ---- reading helpers for generated code --------------------------------------------------
    def _table(self, name: str) -> Table[Any]:
        return self._tables[name]

    def _it(self, items: Iterable[T]) -> Iterator[T]:
        """Iterate under the step budget: every loop and comprehension goes through here."""
        for item in items:
            self._steps += 1
            if self._steps > self.step_budget:
                raise Fail("the call exceeded its step budget")
            yield item

    def _hit(self, site: int) -> None:
        """A `require`/`let ... else` at this site passed (counted only while exploring)."""
        if self.coverage is not None:
            self.coverage[site] += 1

    def _range(self, *bounds: int) -> range:
        """`range(...)` that cannot be larger than what the step budget allows."""
        span = range(*bounds)
        if len(span) > self.step_budget:
            raise Fail(f"range of {len(span)} numbers exceeds the step budget")
        return span

    # ---- tasks -------------------------------------------------------------------------------
    def solve(
        self,
        task: str,
        *,
        leave_out: Collection[int] = (),
        after_step: Callable[[int], None] | None = None,
    ) -> list[Result]:
        """Reset to the task and replay its solution, stopping at the first failed call (then
        the last result has `success: False`).

        `leave_out` (0-based step indices) replays the solution without those steps, as
        verification does to see whether the checks notice each step. Then a failed call, or
        one that passes on data of a step that did not run, does not stop the replay: what
        the remaining steps still achieve is what is being measured. `after_step(index)` is
        called after each successful step (verification reads the state between steps).
        """
        spec = self.TASKS[task]
        self.reset(task=task)
        results: list[Result] = []
        self._leave_out = frozenset(leave_out) if leave_out else None
        self._after_step = after_step
        self._solution_step = 0
        try:
            if spec.solve is not None:
                getattr(self, spec.solve)(results)
        except Fail:
            pass
        except Exception:  # noqa: BLE001 - data of a left-out step used in an expression
            if self._leave_out is None:
                raise
        finally:
            self._leave_out = None
            self._after_step = None
        return results

    def run_counterexample(self, task: str, index: int) -> list[Result]:
        """Reset to the task and make the calls of its `index`-th counterexample, as an agent
        would: a failed call is part of the run (it changed nothing) and the next one is
        made; a later call that passes on data of a failed one is skipped."""
        method = self.TASKS[task].counterexamples[index]
        self.reset(task=task)
        results: list[Result] = []
        self._leave_out = frozenset()  # replay on past failed calls, leaving nothing out
        try:
            getattr(self, method)(results)
        except Exception:  # noqa: BLE001 - a Fail, or data of a failed call in an expression
            pass
        finally:
            self._leave_out = None
        return results

    def _solution_call(self, results: list[Result], name: str, values: dict[str, Any]) -> Any:
        step = self._solution_step
        self._solution_step += 1
        if self._leave_out is not None and (step in self._leave_out or _needs_left_out(values)):
            return LEFT_OUT
        outcome = self.invoke_typed(name, values)
        results.append(outcome)
        if not outcome["success"]:
            if self._leave_out is not None:
                return LEFT_OUT
            raise Fail(f"solution step {len(results)} ({name}) failed: {outcome['error']}")
        if self._after_step is not None:
            self._after_step(step)
        return self._last_result

    def called_with(self, name: str, values: dict[str, Any]) -> int:
        """How many successful calls of `name` the trace has with these argument values."""
        tool = self.TOOLS[name]
        specs = {p.name: p.spec for p in tool.params}
        arguments = {k: (specs[k].to_json(v) if v is not None else None) for k, v in values.items()}
        count = 0
        for entry in self.trace:
            if entry.name != name or not entry.success:
                continue
            if all(entry.arguments.get(k) == v for k, v in arguments.items()):
                count += 1
        return count

    def evaluate(self, answer: str = "") -> dict[str, Any]:
        """Grade the agent's run of the current task: each check's result and kind (progress
        or guard), the frame (held, or the first collateral change), `reward` and `success`,
        by the one rule of envdsl/runtime/grading.py.

        Checks read the state, `initial.`, the trace and `answer`, the agent's final message
        to the user (empty when it said nothing); the frame compares the state with the
        reference solution's footprint (computed once per task and class, see
        `task_reference`), which is all the grading knows of the solution.
        """
        if self.task is None:
            raise ValueError("evaluate() needs a task: call reset(task=...) first")
        if not isinstance(answer, str):
            raise TypeError(f"answer must be a str (the agent's final message), not {answer!r}")
        reference = self.task_reference(self.task)
        self._grading = True
        try:
            results = self._run_checks(answer)
            frame: dict[str, Any] | None = None
            if reference.footprint is not None:
                violation = None
                # an unchanged state fits every frame; the hash after calls costs the rows
                # they changed, the JSON of the whole state is built only when something did
                if self.state_hash() != reference.start_hash:
                    violation = first_violation(
                        reference.start,
                        self._graded_state_json(),
                        reference.footprint,
                        reference.kinds,
                        reference.allowance,
                        self.STAMPS,
                    )
                frame = {"checked": True, "held": violation is None, "violation": violation}
        finally:
            self._grading, self._grading_json = False, None
        return {"task": self.task, "answer": answer, "checks": results} | grade(
            results, reference.guards, frame
        )

    def _run_checks(self, answer: str) -> list[dict[str, Any]]:
        """Each check of the current task on the current state: text, passed, a reason where
        it could not be decided."""
        assert self.task is not None
        results = []
        for text, method in self.TASKS[self.task].checks:
            self._steps = 0
            reason: str | None = None
            try:
                passed = bool(getattr(self, method)(answer))
            except Fail as failure:
                passed, reason = False, failure.message
            except OverflowError as error:  # a date or number past its range
                passed, reason = False, f"a value is out of range ({error})"
            except Exception as error:  # a check must never crash the evaluation
                passed, reason = False, f"internal error: {type(error).__name__}: {error}"
            entry: dict[str, Any] = {"check": text, "passed": passed}
            if reason is not None:
                entry["reason"] = reason
            results.append(entry)
        return results

    @classmethod
    def task_reference(cls, task: str) -> TaskReference:
        """What grading knows of a task besides its checks: which checks are guards (true at
        the start), the start state and the reference solution's footprint (None without a
        solution, or when it fails). Computed on first use by replaying the task's init and
        solution on a fresh environment, which is deterministic, so every process (a Ray
        worker, a server) finds the same; kept per class."""
        cache: dict[str, TaskReference] | None = cls.__dict__.get("_REFERENCES")
        if cache is None:
            cache = {}
            cls._REFERENCES = cache
        known = cache.get(task)
        if known is None:
            known = cache[task] = cls._replay_reference(task)
        return known

    @classmethod
    def _replay_reference(cls, task: str) -> TaskReference:
        spec = cls.TASKS[task]
        env = cls()
        env.reset(task=task)
        guards = frozenset(i for i, r in enumerate(env._run_checks("")) if r["passed"])
        start, start_hash = env.state_json(), env.state_hash()
        kinds = cls._collection_kinds()
        prints: Footprint | None = None
        if spec.solve is not None:
            try:
                results = env.solve(task)
            except Exception:  # noqa: BLE001 - a broken solution gives no frame, not a crash
                results = [{"success": False}]
            if not results or results[-1]["success"]:
                prints = footprint(start, env.state_json(), kinds)
        elif spec.counterexamples:  # a refusal without a solution: doing nothing is its reference
            prints = Footprint()
        allowance = Allowance.parse(spec.allow)
        return TaskReference(guards, start, start_hash, prints, kinds, allowance)

    @classmethod
    def _collection_kinds(cls) -> dict[str, dict[str, str]]:
        """Which fields hold collections, compared element by element by the frame: table ->
        field -> LIST or MAP, "" -> the scalar fields."""
        kinds: dict[str, dict[str, str]] = {
            name: {f.name: k for f in spec.row.fields if (k := collection_kind(f.spec))}
            for name, spec in cls.TABLES.items()
        }
        kinds[""] = {n: k for n, s in cls.SCALARS.items() if (k := collection_kind(s.spec))}
        return kinds


class _LeftOut:
    """What a solution step binds when it did not run (left out, or failed while steps are
    left out). Reading a field of it gives itself, so a later step that passes its data on
    is recognised and skipped instead of crashing the replay."""

    __slots__ = ()

    def __getattr__(self, name: str) -> _LeftOut:
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __getitem__(self, key: Any) -> _LeftOut:
        return self

    def __repr__(self) -> str:
        return "<left out>"


LEFT_OUT = _LeftOut()


def _needs_left_out(value: Any) -> bool:
    if value is LEFT_OUT:
        return True
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a record argument
        return any(_needs_left_out(getattr(value, f.name)) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return any(_needs_left_out(v) for v in value.values())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_needs_left_out(v) for v in value)
    return False


def _saved_key(row: Any, attr: str) -> tuple[int, str]:
    """What `_saved`/`_grown` know a journaled place by: the row object (None for a scalar
    state field) and the attribute; one form for every writer, or one would miss another's."""
    return (0 if row is None else id(row), attr)


def _refuse_immutable(schema: TableSchema, attr: str) -> None:
    """An `immutable` field changed in place through a fn's or internal tool's parameter (the
    checker sees writes on paths; a parameter may be any value of its type)."""
    if attr in schema.immutable:
        raise Fail(
            f"{attr} of {schema.entity} is immutable: it is set when the row is inserted and "
            "never changes",
            rule=f"immutable: {schema.entity}.{attr}",
        )


_NESTED = (list, dict)


def _argument_error(error: BadValue) -> str:
    """A bad argument's message, naming the argument (or part of it) when there is one."""
    return error.message if not error.path else f"invalid argument {error.path}: {error.message}"


def _as_called(tool: ToolSpec, values: dict[str, Any]) -> dict[str, Any]:
    """The arguments a call's trace keeps: every parameter as the tool received it, in its
    canonical JSON. `called("close", note="")` then grades an agent that left `note` to its
    default like the solution that passed it, and `"...+00:00"` like `"...Z"`."""
    return {
        p.name: None if values[p.name] is None else p.spec.to_json(values[p.name])
        for p in tool.params
    }


def _in_order(tool: ToolSpec, values: dict[str, Any]) -> tuple[Any, ...]:
    """Parsed arguments (by JSON name) in the order of the tool's params."""
    return tuple(values[p.name] for p in tool.params)


def _traced_arguments(tool: ToolSpec, given: dict[str, Any], error: BadValue) -> dict[str, Any]:
    """The arguments a rejected call's trace keeps: not an unknown name (it may be megabytes
    long), not a value that is no JSON (nested 100,000 deep, NaN: whoever dumps the trace
    would fail). Accepted arguments passed their types, which are JSON by construction."""
    kept = given
    if not error.path:  # unexpected or missing arguments
        names = {p.name for p in tool.params}
        kept = {k: v for k, v in given.items() if k in names}
    for value in kept.values():
        kind = type(value)
        if not (kind is str and value.isascii() or value is None or kind is bool):
            return kept if json_problem(kept) is None else {}  # the full walk, rarely
    return kept


def _reject_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


# one decoder for every call: json.loads with an option builds a new one each time
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


_UNDECODED: Any = object()
_from_json: Callable[..., Any] | None = None


def _decoded_fast(text: str) -> Any:
    """The JSON text decoded by pydantic_core's parser (Rust; mcp depends on pydantic), or
    _UNDECODED where it refuses the text or is not installed. At 100 rows of sleep_tracking it
    decodes in 71 us what json takes 117 for, at 10,000 in 16 ms what json takes 19.5 for. It
    gives json's values for every text both read (a test compares them, floats included), and
    refuses NaN, lone surrogates and ints of over 4,300 digits; but it reads some texts json
    does not (nesting json's recursion stops), so only a state the plain loader takes keeps
    its values: anything else is decoded again by json, whose errors the messages quote."""
    global _from_json
    if _from_json is None:
        try:  # on first use: importing it costs 17 ms
            from pydantic_core import from_json
        except ImportError:
            return _UNDECODED
        _from_json = from_json
    try:
        # its cache of strings for keys alone: a value string is rarely repeated in a state
        # (an enum's is read into its member), and caching each cost more than it saved (100
        # rows of sleep_tracking 485-515 -> 469-484 us a reset; the state held 2% larger)
        return _from_json(text, allow_inf_nan=False, cache_strings="keys")
    except Exception:  # noqa: BLE001 - json says what is wrong with the text
        return _UNDECODED


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= 120 else text[:117] + "..."


def _key_json(key: Any) -> str:
    return str(key)


def _is_optional(spec: TypeSpec) -> bool:
    """May the field hold none? An optional, and `json`: null is a JSON value (`x: json =
    none` checked clean and then failed every reset with 'has no value')."""
    from envdsl.runtime.values import JsonSpec, OptionalSpec

    return isinstance(spec, (OptionalSpec, JsonSpec))
