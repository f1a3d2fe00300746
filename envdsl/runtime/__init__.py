"""envdsl.runtime: the only part of envdsl that generated environments import."""

from envdsl.runtime import helpers
from envdsl.runtime.environment import Environment, InvalidState
from envdsl.runtime.errors import BadValue, Fail
from envdsl.runtime.limits import store
from envdsl.runtime.places import Value
from envdsl.runtime.snapshots import Snapshot
from envdsl.runtime.specs import (
    ParamSpec,
    Result,
    ScalarSpec,
    TableSpec,
    TaskSpec,
    ToolSpec,
    TraceEntry,
)
from envdsl.runtime.table import RefField, Table, TableSchema
from envdsl.runtime.values import (
    BOOL,
    DATE,
    DATETIME,
    DURATION,
    FLOAT,
    INT,
    JSON,
    STR,
    VOID,
    EnumSpec,
    FieldSpec,
    ListSpec,
    MapSpec,
    OptionalSpec,
    RecordSpec,
    RefSpec,
    SetSpec,
    TypeSpec,
    VariantSpec,
)

__all__ = [
    "BOOL", "DATE", "DATETIME", "DURATION", "FLOAT", "INT", "JSON", "STR", "VOID",
    "BadValue", "EnumSpec", "Environment", "Fail", "FieldSpec", "InvalidState", "ListSpec",
    "MapSpec", "OptionalSpec", "ParamSpec", "RecordSpec", "RefField", "RefSpec", "Result",
    "ScalarSpec", "SetSpec", "Snapshot", "Table", "TableSchema", "TableSpec", "TaskSpec",
    "ToolSpec", "TraceEntry", "TypeSpec", "Value", "VariantSpec", "helpers", "store",
]  # fmt: skip
