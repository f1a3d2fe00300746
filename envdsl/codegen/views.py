"""View models: everything the module template needs, already lowered to Python text."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ShapeView:
    """What the written-out readers and writers need of a type (codegen/shapes.py)."""

    kind: str  # str int bool float date datetime duration json enum list set map record void
    spec: str  # the spec its JSON is read by, without its optional (a ref's: its key's)
    optional: bool
    element: ShapeView | None = None  # of a list or set; a map's values
    record: str = ""  # the record class of a record
    ref: bool = False  # a ref's key (read and written by its key's spec)
    key: ShapeView | None = None  # a map's keys


@dataclass
class EnumView:
    name: str
    members: list[tuple[str, str]]  # (python attribute, JSON value)
    spec: str
    doc: str | None


@dataclass
class FieldView:
    attr: str
    json_name: str
    annotation: str
    default: str | None  # Python code after `=` in the dataclass, or None
    spec: str
    required: bool
    description: str | None
    shape: ShapeView | None = None
    # the expression making a missing member's value (what the dataclass default makes), or
    # None where a member may not be left out
    default_value: str | None = None


@dataclass
class RecordView:
    name: str
    doc: str | None
    fields: list[FieldView]
    spec: str
    base: str  # the base class ('' for none)
    # the function making one by keyword (Names.factory; Lowerer.factory_lines): its lines
    factory_lines: list[str] = field(default_factory=list)
    # the body of the record's stored size (runtime/limits.py; Lowerer.size_lines)
    size_lines: list[str] = field(default_factory=list)
    # its JSON writers (codegen/serializers.py): the functions' names and bodies
    to_json: str = ""
    to_json_body: list[str] = field(default_factory=list)
    json_repr: str = ""
    json_repr_body: list[str] = field(default_factory=list)
    # a variant case's tag: the class attribute and its value (the case's JSON tag)
    tag: tuple[str, str] | None = None


@dataclass
class VariantView:
    name: str  # the alias of the union of the case classes
    tag: str  # the JSON tag field
    cases: list[tuple[str, str, str]]  # (JSON tag, class, spec) in declaration order
    spec: str


@dataclass
class MethodView:
    name: str
    params: list[str]
    result: str
    body: list[str]
    doc: str | None = None


@dataclass
class ParamView:
    name: str
    attr: str
    annotation: str
    spec: str
    required: bool
    default: str | None  # a lambda producing the default, or None
    description: str | None
    shape: ShapeView | None = None
    default_value: str | None = None  # the default's expression (what the lambda returns)
    line: int | None = None  # its line in the spec


@dataclass
class ToolView:
    name: str
    method: str
    impl: str
    kind: str
    description: str
    params: list[ParamView]
    result_spec: str
    env_invariants: list[str]
    full_row_invariants: list[tuple[str, str]]
    row_env_invariants: list[tuple[str, str, str]]
    # the class method reading a typed call's values into JSON arguments, and its body
    json_method: str = ""
    json_body: list[str] = field(default_factory=list)
    result_shape: ShapeView | None = None
    # the method running the tool's whole call (codegen/tool_calls.py), and its body
    call_method: str = ""
    call_body: list[str] = field(default_factory=list)
    arguments_constant: str = ""  # the module constant holding its argument names
    # what an action writes (the effects' names: tables, `table.field`, scalars; cascades
    # included), and whether a touched row's rules can be broken by it (Lowerer.tool_calls)
    writes: list[str] = field(default_factory=list)
    checks_rows: bool = True


@dataclass
class TableView:
    name: str
    entity: str
    accessor: str
    annotation: str
    schema: str  # the rt.TableSchema(...) expression
    spec: str
    nested_parents: list[str]  # tables that refs nested in records/collections point at
    loader: str = "None"  # the rt.TableSpec's loader: its _RowLoader(...) (codegen/loaders.py)
    # what the written-out insert and end-of-call rules need (codegen/row_writes.py)
    row_class: str = ""
    key: str = ""  # the key field's attribute
    auto_prefix: str | None = None  # the key's auto("LOG") prefix
    mutable_fields: list[str] = field(default_factory=list)  # attributes: owned copies on insert
    # the rules a touched row is checked against, in the schema's order: each transition
    # field, each unique's fields and whether one may be none, each ref (field, its table,
    # whether it may be none)
    transitions: list[str] = field(default_factory=list)
    uniques: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)
    refs: list[tuple[str, str, bool]] = field(default_factory=list)


@dataclass
class FunctionView:
    """A module-level function (the state loaders: codegen/loaders.py)."""

    name: str
    params: list[str]
    result: str
    body: list[str]
    doc: str


@dataclass
class ScalarView:
    name: str
    accessor: str
    annotation: str
    spec: str
    default: str | None


@dataclass
class TaskView:
    name: str
    instruction: str
    init: str | None
    init_data: str | None  # the module constant (InitFileView) holding an `init from` state
    solve: str | None
    checks: list[tuple[str, str]]
    answer: str | None  # the reference answer of the solution's `answer "..."` step
    allow: list[str]  # the `allow` clauses, as runtime/frame.py's Allowance.parse reads them
    counterexamples: list[str]  # the methods replaying the `counterexample` blocks


@dataclass
class InitFileView:
    """An `init from` file's state, embedded once however many tasks start from it."""

    name: str  # the module-level constant holding the JSON text
    file: str  # the file's name, for the comment
    text: str
    tasks: list[str] = field(default_factory=list)

    @property
    def comment(self) -> str:
        count = len(self.tasks)
        return f"{self.file}: the initial state of {count} task{'s' if count != 1 else ''}"


@dataclass
class SpecConstantView:
    """A spec built once by the module (`rt.ListSpec(SPEC_Item)`), for the calls and writers
    that read values of its type and the FieldSpecs and ToolSpecs that name it."""

    name: str
    value: str
    type: str  # the DSL type, for the comment


@dataclass
class ConstView:
    name: str
    annotation: str
    value: str


@dataclass
class ModuleView:
    source: str
    env_name: str
    env_class: str
    description: str
    enums: list[EnumView] = field(default_factory=list)
    records: list[RecordView] = field(default_factory=list)
    variants: list[VariantView] = field(default_factory=list)
    consts: list[ConstView] = field(default_factory=list)
    spec_constants: list[SpecConstantView] = field(default_factory=list)
    # the state loaders (codegen/loaders.py) and the constants they name
    loader_constants: list[ConstView] = field(default_factory=list)
    loaders: list[FunctionView] = field(default_factory=list)
    inserts: bool = False  # some table has an inserter method (codegen/row_writes.py)
    inserts_owned: bool = False  # one of them gives a row's mutable fields owned copies
    rule_failures: list[str] = field(default_factory=list)  # what the row rules raise
    tables: list[TableView] = field(default_factory=list)
    scalars: list[ScalarView] = field(default_factory=list)
    tools: list[ToolView] = field(default_factory=list)
    typed_methods: bool = True  # each tool's typed method (`env.get_order(order_id=...)`)
    methods: list[MethodView] = field(default_factory=list)
    row_invariants: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    env_invariants: list[tuple[str, str]] = field(default_factory=list)
    tasks: list[TaskView] = field(default_factory=list)
    init_files: list[InitFileView] = field(default_factory=list)
    sites: list[tuple[str, int, str, str]] = field(default_factory=list)
    stamps: list[tuple[str, list[str]]] = field(default_factory=list)  # see semantics/stamps.py
