"""The Python names of one generated module, decided once from the checked spec."""

from __future__ import annotations

import functools

from envdsl import runtime as rt
from envdsl.codegen import naming
from envdsl.semantics import types as t
from envdsl.semantics.model import CheckedSpec

# Class attributes the generated environment class defines in its body, before the methods:
# a type named so would be read instead of the class in `TABLES` (`NAME.active`).
_CLASS_BODY = {"NAME", "DESCRIPTION", "TABLES", "SCALARS", "TOOLS", "TASKS", "ROW_INVARIANTS",
               "ENV_INVARIANTS", "SITES", "TABLE_ATTRIBUTES"}  # fmt: skip


@functools.cache
def _environment_api() -> frozenset[str]:
    """Attributes of envdsl.runtime.Environment (class and instance) that a tool's typed method
    must not shadow: read from the class itself, so new runtime attributes are covered too."""
    return frozenset(dir(rt.Environment)) | frozenset(vars(rt.Environment())) | _CLASS_BODY


class Names:
    def __init__(self, checked: CheckedSpec) -> None:
        self.checked = checked
        # module level: imports, types, their SPEC_ objects, constants, the environment class
        module = naming.Namespace(naming.PY_RESERVED | naming.MODULE_NAMES | _CLASS_BODY)
        # a variant case's class is `Variant_case`; the variant itself is their union's alias
        self.types = {
            name: module.claim(name.replace(".", "_"))
            for name in [*checked.enums, *checked.variants, *checked.records]
        }
        self.specs = {py: module.claim(f"SPEC_{py}") for py in self.types.values()}
        self.consts = {name: module.claim(f"C_{name}") for name in checked.consts}
        self.env_class = module.claim(f"{checked.env.name.text.lstrip('_')}Env")
        self.module = module
        self.writers: set[str] = set()  # generated private methods named so far
        self.members: dict[tuple[str, str], str] = {}
        for enum in checked.enums.values():
            space = naming.Namespace(naming.PY_RESERVED | naming.ENUM_RESERVED)
            for member in enum.members:
                self.members[(enum.name, member)] = space.claim(member)
        # a class body sees module names: a field called like a type would hide the type from
        # the defaults of the fields after it (`Status: Status = Status.active`)
        self.fields: dict[tuple[str, str], str] = {}
        for record in checked.records.values():
            space = module.child()
            space.taken |= {"_owner"}  # rt.Value's slot
            for field in record.fields:
                self.fields[(record.name, field)] = space.claim(field)
        # a variant's tag: one class attribute of every case, clear of all their fields
        self.tags: dict[str, str] = {}
        for variant in checked.variants.values():
            space = module.child()
            space.taken |= {"_owner"}
            space.taken |= {
                self.fields[(c.name, f)] for c in variant.cases.values() for f in c.fields
            }
            self.tags[variant.name] = space.claim(variant.tag)
        self.state = {
            name: ("t_" if isinstance(info.type, t.TableType) else "s_") + name
            for name, info in checked.state.items()
        }
        # helpers are private (`_fn_`, `_impl_`): the public names belong to the tools
        self.callables: dict[str, str] = {
            info.name: f"_fn_{info.name}" if info.kind == "fn" else f"_impl_{info.name}"
            for info in checked.callables.values()
        }
        # parameters: one namespace per callable, under the module's
        self.params: dict[tuple[str, str], str] = {}
        for info in checked.callables.values():
            space = module.child()
            for param in info.params:
                self.params[(info.name, param.name)] = space.claim(param.name)
        taken = set(_environment_api()) | set(self.state.values()) | set(self.callables.values())
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

    def locals(self) -> naming.Namespace:
        """The namespace a generated function starts with: every module-level name."""
        return self.module.child()

    def param(self, callable_name: str, param: str) -> str:
        return self.params[(callable_name, param)]

    def type_name(self, name: str) -> str:
        return self.types[name]

    def field(self, record: str, field: str) -> str:
        return self.fields[(record, field)]

    def factory(self, record: str) -> str:
        """The module function that makes a record by keyword (Lowerer.factory_lines)."""
        return f"_new_{self.type_name(record)}"

    def tag(self, variant: str) -> str:
        """The class attribute holding a variant case's name (its JSON tag)."""
        return self.tags[variant]

    def member(self, enum: str, member: str) -> str:
        return self.members[(enum, member)]

    def table_of(self, entity: str) -> str:
        info = self.checked.records[entity]
        assert info.table is not None
        return info.table

    def writer_method(self, table: str, attr: str) -> str:
        """The name of the method that writes one row field (BodyTranslator.field_writer):
        `_write_<table>_<attribute>`, numbered where two fields would share one."""
        return self.private_method(f"_write_{table}_{attr}")

    def inserter_method(self, table: str) -> str:
        """The name of the method that inserts a row into a table (Translator.inserter):
        `_insert_<table>`."""
        return self.private_method(f"_insert_{table}")

    def private_method(self, base: str) -> str:
        """A generated method's name, numbered where it would be taken (by another such
        method or by the runtime's Environment)."""
        taken = self.writers
        name = base
        count = 1
        while name in taken or name in _environment_api():
            count += 1
            name = f"{base}_{count}"
        taken.add(name)
        return name

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
        if isinstance(value, (t.EnumType, t.RecordType, t.VariantType)):
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
        if isinstance(value, (t.EnumType, t.RecordType, t.VariantType)):
            return self.spec_name(self.type_name(value.name))
        if isinstance(value, t.VoidType):
            return "rt.VOID"
        return "rt.JSON"

    def spec_name(self, type_name: str) -> str:
        return self.specs[type_name]
