"""The Python names of one generated module, decided once from the checked spec."""

from __future__ import annotations

from envdsl.codegen import naming
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec

# Attributes of envdsl.runtime.Environment that a tool's typed method must not shadow.
_ENVIRONMENT_API = {
    "reset", "call", "evaluate", "snapshot", "restore", "state_json", "state_hash", "trace",
    "task", "solve", "called_with", "tool_schemas", "invoke_typed", "load_rows",
    "set_scalar_initial", "initial_state", "step_budget", "last_exception", "last_result",
    "NAME", "DESCRIPTION", "TOOLS", "TABLES", "SCALARS", "TASKS", "ROW_INVARIANTS",
    "ENV_INVARIANTS",
}  # fmt: skip


class Names:
    def __init__(self, checked: CheckedSpec) -> None:
        self.checked = checked
        self.types = {name: naming.type_name(name) for name in [*checked.enums, *checked.records]}
        self.env_class = naming.env_class_name(checked.env.name.text)
        while self.env_class in self.types.values():  # a record may be called `ShopEnv`
            self.env_class += "_"
        self.members = {
            (enum.name, member): naming.value_name(member)
            for enum in checked.enums.values()
            for member in enum.members
        }
        self.fields = {
            (record.name, field): naming.value_name(field)
            for record in checked.records.values()
            for field in record.fields
        }
        self.state = {
            name: ("t_" if isinstance(info.type, t.TableType) else "s_") + name
            for name, info in checked.state.items()
        }
        self.consts = {name: naming.constant_name(name) for name in checked.consts}
        # helpers are private (`_fn_`, `_impl_`): the public names belong to the tools
        self.callables: dict[str, str] = {
            info.name: f"_fn_{info.name}" if info.kind == "fn" else f"_impl_{info.name}"
            for info in checked.callables.values()
        }
        taken = _ENVIRONMENT_API | set(self.state.values()) | set(self.callables.values())
        public = [i.name for i in checked.callables.values() if i.is_tool and not i.internal]
        self.tool_methods: dict[str, str] = {}
        # tools whose own name is free keep it; the others are renamed around all of them
        for name in public:
            if naming.tool_method(name, taken) == name:
                self.tool_methods[name] = name
        taken |= set(self.tool_methods.values())
        for name in public:
            if name not in self.tool_methods:
                self.tool_methods[name] = naming.tool_method(name, taken)
                taken.add(self.tool_methods[name])

    def type_name(self, name: str) -> str:
        return self.types[name]

    def field(self, record: str, field: str) -> str:
        return self.fields[(record, field)]

    def member(self, enum: str, member: str) -> str:
        return self.members[(enum, member)]

    def table_of(self, entity: str) -> str:
        info = self.checked.records[entity]
        assert info.table is not None
        return info.table

    def key_attr(self, entity: str) -> str:
        key = self.checked.records[entity].key
        assert key is not None
        return self.field(entity, key.name)

    def py_type(self, value: t.Type) -> str:
        """The Python annotation for a DSL type."""
        if isinstance(value, t.Prim):
            return {
                "int": "int",
                "float": "float",
                "bool": "bool",
                "str": "str",
                "date": "datetime.date",
                "datetime": "datetime.datetime",
                "duration": "datetime.timedelta",
                "json": "Any",
            }[value.name]
        if isinstance(value, t.OptionalType):
            return f"{self.py_type(value.inner)} | None"
        if isinstance(value, t.ListType):
            return f"list[{self.py_type(value.elem)}]"
        if isinstance(value, t.SetType):
            return f"set[{self.py_type(value.elem)}]"
        if isinstance(value, t.MapType):
            return f"dict[{self.py_type(value.key)}, {self.py_type(value.value)}]"
        if isinstance(value, t.TupleType):
            return "tuple[" + ", ".join(self.py_type(item) for item in value.items) + "]"
        if isinstance(value, t.RefType):
            key = self.checked.records[value.entity].key
            return self.py_type(key.type) if key is not None else "Any"
        if isinstance(value, (t.EnumType, t.RecordType)):
            return self.type_name(value.name)
        if isinstance(value, t.TableType):
            return f"rt.Table[{self.type_name(value.entity)}]"
        if isinstance(value, (t.VoidType, t.NoneType)):
            return "None"
        return "Any"

    def spec(self, value: t.Type) -> str:
        """The runtime TypeSpec expression for a DSL type."""
        if isinstance(value, t.Prim):
            return f"rt.{value.name.upper()}"
        if isinstance(value, t.OptionalType):
            return f"rt.OptionalSpec({self.spec(value.inner)})"
        if isinstance(value, t.ListType):
            return f"rt.ListSpec({self.spec(value.elem)})"
        if isinstance(value, t.SetType):
            return f"rt.SetSpec({self.spec(value.elem)})"
        if isinstance(value, t.MapType):
            return f"rt.MapSpec({self.spec(value.key)}, {self.spec(value.value)})"
        if isinstance(value, t.RefType):
            key = self.checked.records[value.entity].key
            key_spec = self.spec(key.type) if key is not None else "rt.JSON"
            return f"rt.RefSpec({key_spec}, {value.entity!r}, {self.table_of(value.entity)!r})"
        if isinstance(value, (t.EnumType, t.RecordType)):
            return self.spec_name(self.type_name(value.name))
        if isinstance(value, t.VoidType):
            return "rt.VOID"
        return "rt.JSON"

    def spec_name(self, type_name: str) -> str:
        return f"SPEC_{type_name}"
