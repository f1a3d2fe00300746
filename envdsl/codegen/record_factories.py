"""Each record's factory, written into the generated module: `_new_<Record>(*, field=...)`,
what the record's dataclass __init__ does, which the generated code calls to make one
(`R(f=v, ...)` in a spec, a tool's new row, a task's init).
"""

from __future__ import annotations

from envdsl.codegen.views import RecordView


def factory_lines(record: RecordView, name: str) -> list[str]:
    """`def <name>(*, field=..., ...)`: what the record's dataclass __init__ does (each field
    set, its default where it is left out), as a module function. A class called by keyword
    goes through type.__call__, which packs the keywords into a dict for __init__; a
    function takes them as they are, in half the time (what a tool that builds a row pays on
    every call)."""
    # no field's attribute or spec name starts with an underscore (naming.Namespace.claim),
    # and its parameters shadow no name the body reads (fields are claimed clear of every
    # module-level name and builtin)
    made = "_made"
    params = []
    body = [f"{made} = object.__new__({record.name})"]
    for field in record.fields:
        param = f"{field.attr}: {field.annotation}"
        if field.default is None:
            body.append(f"{made}.{field.attr} = {field.attr}")
        elif field.default.startswith("field(default_factory="):
            # made afresh for each record, as the dataclass's default_factory makes it
            param += " = _MISSING"
            body.append(
                f"{made}.{field.attr} = {field.default_value} "
                f"if {field.attr} is _MISSING else {field.attr}"
            )
        else:
            param += f" = {field.default}"
            body.append(f"{made}.{field.attr} = {field.attr}")
        params.append(param)
    star = ["*", *params] if params else []
    signature = f"def {name}({', '.join(star)}) -> {record.name}:"
    return [signature, *(f"    {line}" for line in body), f"    return {made}"]
