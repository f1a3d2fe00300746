"""The writes of whole rows, written into the generated module per table.

`Environment._insert` works out on every call what a table's insert needs: the table's
schema, whether its key is made by `auto(...)`, which fields can hold a mutable value (each
given an owned copy), the row's sizer. The compiler knows all of that, so it writes one
`_insert_<table>(row)` per table the spec inserts into, statement for statement what
`_insert` does: the same journal entries, the same failure, the same size charged, the row
marked inserted for the end-of-call rules. The same goes for `Environment._verify_touched`,
the rules a touched row is checked against at the end of an action: `_verify_rows` over the
touched rows, with a branch per table with rules, only its own rules in their order. Both
look rows up in the table's dict (`table._rows`) rather than through Table's methods, a
Python call each. `_insert` and `_verify_touched` stay as the reference
(tests/test_fast_paths.py compares the two sides on random call sequences of every
example).
"""

from __future__ import annotations

from envdsl.codegen.names import Names
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
    entity = table.entity
    duplicate = [
        "if key in table._rows:  # (Table.__contains__ without its call)",
        f'    raise rt.Fail(f"{entity} {{key!r}} already exists", rule={f"key: {entity}"!r})',
    ]
    if table.auto_prefix is not None:
        # Environment._next_auto_key written out; the key it makes is in no row
        prefix = repr(f"{table.auto_prefix}-")
        body += [
            'if key == "":  # the key left to auto(...)',
            "    counter = table.auto_counter",
            "    if journal is not None:",
            f'        journal.append(("counter", {name}, counter))',
            "    while True:",
            "        counter += 1",
            f'        key = {prefix} + f"{{counter:04d}}"',
            "        if key not in table._rows:",
            "            break",
            "    table.auto_counter = counter",
            f"    row.{key} = key",
            "else:",
            *("    " + line for line in duplicate),
        ]
    else:
        body += duplicate
    body += [
        "size = row._stored_size()  # limits.stored_size of a row: its class's sizer",
        "budget = _per_thread.budget  # limits.charge, written out",
        "left = budget.left",
        "if left is not None:",
        "    left -= size",
        "    budget.left = left",
        "    if left < 0:",
        "        raise rt.Fail(_OVER_BUDGET)",
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


# the runtime's failures of broken rules (envdsl/runtime/row_rules.py), as the module imports them
RULE_FAILURES = ("missing_parent", "refused_transition", "shared_unique")


def row_rule_methods(
    tables: list[TableView], row_invariants: dict[str, list[tuple[str, str]]], names: Names
) -> tuple[str | None, list[MethodView]]:
    """`Environment._verify_touched` written out: one method over the touched rows (its name,
    None where no table has a rule) with a branch per table with rules (transitions,
    uniques, refs, refs nested in values, row invariants), each rule tested where the call
    changed a field it reads."""
    dispatch: list[str] = []
    for table in tables:
        body = _rules(table, row_invariants.get(table.name, []))
        if body is None:
            continue
        keyword = "elif" if dispatch else "if"
        dispatch += [
            f"    {keyword} table_name == {table.name!r}:",
            *(f"        {b}" for b in body),
        ]
    if not dispatch:
        return None, []
    verify = names.private_method("_verify_rows")
    # (no rule changes what the call touched: the loop reads the dict as it is)
    body = ["for (table_name, key), originals in self._touched.items():", *dispatch]
    if any(table.uniques for table in tables):  # the tables' uniques have their own lengths
        body.insert(0, "value: tuple[Any, ...]")
    doc = "Environment._verify_touched for this spec's tables: each touched row's rules."
    return verify, [MethodView(verify, [], "None", body, doc)]


def checked_fields(table: TableView, invariants: list[tuple[str, str]]) -> frozenset[str] | None:
    """The attributes of the table's rows whose change its rules check (empty: it has no
    rule); None where a change of any field is checked (row invariants, refs nested in
    values): what `_rules` tests per touched row, known per table."""
    if invariants or table.nested_parents:
        return None
    fields = [*table.transitions, *(f for fields, _ in table.uniques for f in fields)]
    return frozenset([*fields, *(field for field, _, _ in table.refs)])


def _rules(table: TableView, invariants: list[tuple[str, str]]) -> list[str] | None:
    """One table's branch of `_verify_rows` (in the loop over the touched rows: `continue`
    leaves the row), in _verify_touched's order; None for a table with no rule."""
    name = repr(table.name)
    every_change = bool(invariants or table.nested_parents)  # any field may break one
    guarded = [*table.transitions, *(f for fields, _ in table.uniques for f in fields)]
    guarded += [field for field, _, _ in table.refs]
    if not every_change and not guarded:
        return None
    body: list[str] = []
    if not every_change:  # a row changed only in fields no rule reads needs no check
        body += [
            f"if originals is not _INSERTED and {_changed(sorted(set(guarded)), negated=True)}:",
            "    continue",
        ]
    body += [
        f"table = self._tables[{name}]",
        "row = table._rows.get(key)  # (Table.get without its call)",
        "if row is None:",
        "    continue  # deleted later in the call",
    ]
    for field in table.transitions:
        body += [
            f"if originals is not _INSERTED and {field!r} in originals:",
            f"    old, new = originals[{field!r}], row.{field}",
            f"    if old != new and new not in table.schema.transitions[{field!r}].get("
            "old, frozenset()):",
            f"        raise _refused_transition(table.schema, {field!r}, old, new)",
        ]
    for fields, may_be_none in table.uniques:
        value = f"({''.join(f'row.{f}, ' for f in fields)})"
        body += [
            f"if originals is _INSERTED or {_changed(list(fields))}:",
            f"    value = {value}",
        ]
        test = "failure = _shared_unique(table, " + f"{fields!r}, value, key)"
        if may_be_none:
            body += [
                "    if None not in value:",
                f"        {test}",
                "        if failure is not None:",
                "            raise failure",
            ]
        else:
            body += [f"    {test}", "    if failure is not None:", "        raise failure"]
    for field, parent_table, may_be_none in table.refs:
        held = "parent is not None and " if may_be_none else ""
        body += [
            f"if originals is _INSERTED or {field!r} in originals:",
            f"    parent = row.{field}",
            f"    if {held}parent not in self._tables[{parent_table!r}]._rows:",
            f"        raise _missing_parent(table.schema, {field!r}, "
            f"self._tables[{parent_table!r}], parent)",
        ]
    if table.nested_parents:
        body.append(f"self._verify_nested_refs({name}, row)")
    for text, method in invariants:
        body += [
            f"if not self.{method}(row):",
            f"    self._row_invariant_failed({name}, row, {text!r})",
        ]
    return body


def _changed(fields: list[str], negated: bool = False) -> str:
    """Whether the call changed one of these fields of the row (`originals`: its old values)."""
    if len(fields) == 1:
        return f"{fields[0]!r} {'not in' if negated else 'in'} originals"
    test = f"originals.keys().isdisjoint({tuple(fields)!r})"
    return test if negated else f"not {test}"
