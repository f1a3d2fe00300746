"""The writes of whole rows, written into the generated module per table.

`Environment._insert` works out on every call what a table's insert needs: the table's
schema, whether its key is made by `auto(...)`, which fields can hold a mutable value (each
given an owned copy), the row's sizer. The compiler knows all of that, so it writes one
`_insert_<table>(row)` per table the spec inserts into, statement for statement what
`_insert` does: the same journal entries, the same failure, the same size charged, the row
marked inserted for the end-of-call rules. `_insert` stays as the reference
(tests/test_fast_paths.py compares the two on random call sequences of every example).
"""

from __future__ import annotations

from envdsl.codegen.views import MethodView, TableView


def inserter(table: TableView, method: str) -> MethodView:
    """`<table>.insert(row)`: Environment._insert for this table."""
    name = repr(table.name)
    key = table.key
    body = [
        f"table = self._tables[{name}]",
        "journal = self._journal  # None while building an initial state: nothing to undo",
        f"key = row.{key}",
    ]
    if table.auto_prefix is not None:
        body += [
            'if key == "":  # the key left to auto(...)',
            "    if journal is not None:",
            f'        journal.append(("counter", {name}, table.auto_counter))',
            "    key = self._next_auto_key(table)",
            f"    row.{key} = key",
        ]
    entity = table.entity
    body += [
        "if key in table:",
        f'    raise rt.Fail(f"{entity} {{key!r}} already exists", rule={f"key: {entity}"!r})',
        "_charge(row._stored_size())  # limits.stored_size of a row: its class's sizer",
    ]
    if table.mutable_fields:
        fields = "".join(f"{f!r}, " for f in table.mutable_fields)
        body.append(f"_own_row_fields({name}, row, ({fields}))")
    body += [
        "table.add(key, row)",
        "if journal is not None:",
        f'    journal.append(("insert", {name}, key))',
        f"self._touched[({name}, key)] = _INSERTED",
        "return row",
    ]
    doc = f"`{table.name}.insert(row)`, journaled (Environment._insert for {table.name})."
    return MethodView(method, [f"row: {table.row_class}"], table.row_class, body, doc)
