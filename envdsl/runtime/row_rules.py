"""The failures of a touched row's rules at the end of an action, in one place.

`Environment._verify_touched` (the reference) and the compiler's `_rules_<table>` methods
(envdsl/codegen/row_writes.py) test the same rules in the same order; both build the failure
a broken rule gives here, so its text cannot drift between the two.
"""

from __future__ import annotations

from typing import Any

from envdsl.runtime.errors import Fail
from envdsl.runtime.table import Table, TableSchema


def refused_transition(schema: TableSchema, field_name: str, old: Any, new: Any) -> Fail:
    return Fail(
        f"cannot change {field_name} from {_show(old)} to {_show(new)}",
        rule=f"transitions: {schema.entity}.{field_name}",
    )


def shared_unique(
    table: Table[Any], fields: tuple[str, ...], value: tuple[Any, ...], key: Any
) -> Fail | None:
    """The failure of a row whose unique fields hold a value another row holds, or None."""
    holders = table.sharing(fields, value)
    if holders is None or len(holders) <= 1:
        return None
    schema = table.schema
    other = next(k for k in sorted(holders, key=str) if k != key)
    shown = ", ".join(f"{f}={_show(v)}" for f, v in zip(fields, value))
    return Fail(
        f"{schema.entity} {shown} is already used by {schema.entity} {other!r}",
        rule=f"unique: {schema.entity}.{'+'.join(fields)}",
    )


def missing_parent(schema: TableSchema, where: str, parent: Table[Any], parent_key: Any) -> Fail:
    """A ref (`where`: the field, or the path to a ref nested in a value) to no row."""
    return Fail(
        f"{where}: {parent.schema.entity} {parent_key!r} does not exist",
        rule=f"ref: {schema.entity}.{where}",
    )


def _show(value: Any) -> str:
    return str(getattr(value, "value", value))
