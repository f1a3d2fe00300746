"""Each table's bulk row loaders and the nested readers of its records, lists and maps, written
into the generated module (runtime/loading.py runs them; runtime/load_support.py holds what
they name, imported under private names).

A table's loader `_load_rows_<table>` reads a list of its rows from JSON as RecordSpec.from_json
would (the same rows, their mutable fields owned as Environment.load_rows owns them), or raises
`_Slow` at anything it does not take, and the state is loaded the reference way instead; a
table given as an object of rows keyed by their keys goes through the same loader
(runtime/loading.py makes the list). One loop with the statements inline, no call per row,
written once a table (three near-copies of it, for one row, a list and an object, were a
sixth of a generated module). The common cases
are inline exact type tests (short ASCII strings, 64-bit ints, enum values, ISO datetimes,
lists of those); a record, a list of records or a map goes through a nested reader
`_read_<n>(raw, place, depth)`, which builds the owned value at its place in one pass, or
raises `_NotPlain` and that field alone is read the reference way. Anything else goes through
`_read_field(spec, raw)`: the JSON walk and the spec's own from_json.

Written from the RecordViews the template renders (their FieldViews, ShapeViews and the
missing fields' default expressions); tests/test_fast_paths.py compares every load with the
reference path's.
"""

from __future__ import annotations

import dataclasses

from envdsl.codegen.views import ConstView, FieldView, FunctionView, RecordView, ShapeView

_PLAIN_KINDS = ("str", "int", "bool")  # kinds whose JSON is their value, tested exactly
_NEVER_MUTABLE = ("enum", "datetime", "date")  # converted, but never owned
_PLAIN_ITEMS = {"str": "_plain_strs", "int": "_plain_ints", "bool": "_plain_bools"}
_NESTED = ("record", "list", "set", "map")
_PLACE = "_place_new(_Place, ({table!r}, row, {attr!r}))"


def _plain_test(shape: ShapeView, name: str) -> str | None:
    """An expression true when the raw value is already the field's value (no conversion) and
    one the spec and the JSON walk both accept; None for kinds that convert. (A ref's shape
    is its key's.)"""
    if shape.kind == "str":
        return f"type({name}) is str and {name}.isascii() and len({name}) <= 64"
    if shape.kind == "int":
        return f"type({name}) is int and _MIN_INT <= {name} <= _MAX_INT"
    if shape.kind == "bool":
        return f"{name} is True or {name} is False"
    return None


def _plain_element(shape: ShapeView) -> ShapeView | None:
    """The element of a list (not a set) of values the row loader takes as they are."""
    element = shape.element
    if shape.kind != "list" or element is None or element.optional:
        return None
    return element if element.kind in _PLAIN_KINDS else None


def _strip(shape: ShapeView) -> ShapeView:
    return dataclasses.replace(shape, optional=False) if shape.optional else shape


class LoaderWriter:
    """The loaders of one module: the tables' and the nested readers they share (one per
    type, so that a recursive record reuses its own), with the constants they name."""

    def __init__(self, records: dict[str, RecordView]) -> None:
        self.records = records
        self.functions: list[FunctionView] = []
        self.constants: list[ConstView] = []
        self._constant_names: set[str] = set()
        self._readers: dict[str, str | None] = {}
        self._table = ""  # the table whose loaders are being written

    def constant(self, name: str, annotation: str, value: str) -> str:
        if name not in self._constant_names:
            self._constant_names.add(name)
            self.constants.append(ConstView(name, annotation, value))
        return name

    def members(self, shape: ShapeView) -> str:
        """The module constant mapping an enum's JSON values to its members."""
        return self.constant(f"_BY_VALUE_{shape.spec}", "dict[Any, Any]", f"{shape.spec}.by_value")

    # ---- a table's rows -------------------------------------------------------------------

    def table(self, table: str, record: RecordView, key: str) -> str:
        """Writes the table's loaders; returns the `_RowLoader(...)` its TableSpec holds."""
        self._table = table
        known = self.constant(
            f"_KNOWN_{record.name}",
            "frozenset[str]",
            f"frozenset({sorted(f.json_name for f in record.fields)!r})",
        )
        lines: list[str] = []
        owning: list[str] = []
        stores: list[str] = []
        for index, field in enumerate(record.fields):
            shape = field.shape
            assert shape is not None
            target = f"f{index}"
            reader = self.field_reader(shape)
            if reader is not None:  # read once the row exists: its values owned at its place
                owning.extend(self._nested_field(reader, field, target))
                continue
            lines.extend(self._read(field, target))
            stores.append(f"row.{field.attr} = {target}")
            owning.extend(self._owning(field, target))
        lines.append(f"row: {record.name} = _new({record.name})")
        lines.extend(stores)
        lines.extend(owning)
        many = f"_load_rows_{table}"
        self.functions.append(
            FunctionView(
                many,
                ["values: Any", "decoded: bool"],
                f"list[{record.name}]",
                self._table_loop(record, self._members(record, known) + lines),
                f"The rows of {table} from a list of {len(record.fields)}-field objects, or _Slow.",
            )
        )
        # a table given as an object of rows keyed by their keys is read by the same loop
        # (runtime/loading.py gives each row its key where it leaves it out): the key's JSON
        # name where the object's keys are the rows' keys as they are, a str
        key_name = next(
            (
                f.json_name
                for f in record.fields
                if f.attr == key
                and f.shape is not None
                and (f.shape.kind, f.shape.optional, f.shape.ref) == ("str", False, False)
            ),
            None,
        )
        return f"_RowLoader({many}, {key_name!r})"

    def _table_loop(self, record: RecordView, each_row: list[str]) -> list[str]:
        """A body reading every row of `values` with the statements `each_row`, after checking
        in C that every one is an object and every name of a member of one an exact str
        (`decoded`: the rows come from JSON text, whose names are: the check was a fifth of a
        100-row load): a row whose names are all fields is then taken by its size and a
        subscript each (_members)."""
        return [
            f"rows: list[{record.name}] = []",
            "append = rows.append",
            "if values and (",
            "    set(map(type, values)) != _DICT_ONLY",
            "    or not (decoded or set(map(type, _chain(values))) <= _STR_ONLY)",
            "):",
            "    raise _Slow",
            "for value in values:",
            *("    " + line for line in each_row),
            "    append(row)",
            "return rows",
        ]

    def _members(self, record: RecordView, known: str) -> list[str]:
        """Statements taking the raw members of the row in `value`, a dict whose names are
        exact strs, into f0, f1, ... (_MISSING where missing), or raising _Slow for a member
        that is no field."""
        count = len(record.fields)
        subscripts = [f"    f{i} = value[{f.json_name!r}]" for i, f in enumerate(record.fields)]
        # `count` names, each a field's, is every field: a subscript each
        lines = [f"if len(value) == {count}:", "    try:", *("    " + s for s in subscripts)]
        lines += ["    except KeyError:  # a name that is no field's", "        raise _Slow"]
        lines += ["else:", "    for name in value:", f"        if name not in {known}:"]
        lines += ["            raise _Slow"]
        lines.append("    get = value.get")
        lines += [f"    f{i} = get({f.json_name!r}, _MISSING)" for i, f in enumerate(record.fields)]
        return lines

    def _other(self, field: FieldView, raw: str) -> str:
        """The field's value from a raw value the inline tests did not take: a missing field's
        default (_Slow where it has none), else the reference reading."""
        read = f"_read_field({field.spec}, {raw})"
        if field.default_value is None:
            return read
        return f"{field.default_value} if {raw} is _MISSING else {read}"

    def _read(self, field: FieldView, target: str) -> list[str]:
        """Statements that turn the raw JSON value in `target` into the field's value in place,
        with the common case inline and anything else through _other."""
        shape = field.shape
        assert shape is not None
        other = [f"    {target} = {self._other(field, target)}"]
        test = _plain_test(shape, target)
        if shape.optional:
            if test is not None:
                return [f"if {target} is None or {test}:", "    pass", "else:", *other]
            converted = self._converting(field, _strip(shape), target)
            if converted is not None:
                return [f"if {target} is not None:", *("    " + line for line in converted)]
            return [f"if {target} is not None:", *other]
        if test is not None:
            return [f"if not ({test}):", *other]
        converted = self._converting(field, shape, target)
        if converted is None:
            return [other[0].strip()]
        if _plain_element(shape) is not None:  # owned once the row exists (_owning)
            converted += [f"if type({target}) is list:", f"    {target} = _OwnedList({target})"]
        return converted

    def _converting(self, field: FieldView, shape: ShapeView, name: str) -> list[str] | None:
        """Statements converting a raw value of the common form (enum value, ISO text), falling
        back to _other; None for kinds with no inline form."""
        other = f"{name} = {self._other(field, name)}"
        if shape.kind == "enum":
            members = self.members(shape)
            return [
                f"if type({name}) is str and {name} in {members}:",
                f"    {name} = {members}[{name}]",
                "else:",
                f"    {other}",
            ]
        read_raw = f"_read_field({field.spec}, raw)"  # a str: never missing
        if shape.kind == "datetime":  # values.parse_datetime, inline
            return [
                f"if type({name}) is str and {name}.isascii() and ('T' in {name} or ' ' in {name}):",
                "    raw = " + name,
                "    try:",
                f"        {name} = _datetime_from(raw)",
                f"        if {name}.tzinfo is not _UTC:  # (a Z or +00:00 is UTC itself)",
                f"            if {name}.tzinfo is None:",
                f"                {name} = {name}.replace(tzinfo=_UTC)",
                "            else:",
                f"                {name} = {name}.astimezone(_UTC)",
                "    except (ValueError, OverflowError):",
                f"        {name} = {read_raw}",
                "else:",
                f"    {other}",
            ]
        if shape.kind == "date":
            return [
                f"if type({name}) is str and len({name}) == 10 and {name}.isascii():",
                "    raw = " + name,
                "    try:",
                f"        {name} = _date_from(raw)",
                "    except ValueError:",
                f"        {name} = {read_raw}",
                "else:",
                f"    {other}",
            ]
        element = _plain_element(shape)  # not a set: a set is built from its elements
        if element is not None:
            return [
                f"if not (type({name}) is list and len({name}) <= _MAX_ITEMS",
                f"        and (not {name} or {_PLAIN_ITEMS[element.kind]}({name}))):",
                f"    {other}",
            ]
        return None

    def _owning(self, field: FieldView, target: str) -> list[str]:
        """Statements giving the row's mutable value of this field its owned copy, as
        places.own_row_fields does (a list of plain items: an OwnedList of them)."""
        shape = field.shape
        assert shape is not None
        place = _PLACE.format(table=self._table, attr=field.attr)
        if not shape.optional and _plain_element(shape) is not None:  # made owned as read
            return [
                f"if type({target}) is _OwnedList:",
                f"    {target}._owner = {place}",
                "else:",
                f"    row.{field.attr} = _owned_copy({target}, {place})",
            ]
        if shape.kind in _PLAIN_KINDS or shape.kind in _NEVER_MUTABLE:
            return []
        return [  # (the value stored is the one read)
            f"if type({target}) not in _IMMUTABLE_TYPES:",
            f"    row.{field.attr} = _owned_copy({target}, {place})",
        ]

    # ---- nested values: records, lists of them, maps, sets --------------------------------
    #
    # A field holding a record, a list of records or a map went through the JSON walk, its
    # spec's from_json and owned_copy: three passes and a path string per level. A nested
    # reader does the three in one: exact type tests at each level (the JSON walk's checks and
    # the spec's, at once), the owned value built directly at its place.

    def _nested_field(self, reader: str, field: FieldView, target: str) -> list[str]:
        """Statements reading the field (raw in `target`) through its nested reader into the
        row, its value owned at the row's place; a missing field gets its default, owned."""
        shape = field.shape
        assert shape is not None
        attr = field.attr
        place = _PLACE.format(table=self._table, attr=attr)
        optional = shape.optional
        return [
            *([f"if {target} is None:", f"    row.{attr} = None"] if optional else []),
            f"{'elif' if optional else 'if'} {target} is _MISSING:",
            f"    row.{attr} = _owned_copy({field.default_value or self._other(field, target)}, {place})",
            "else:",
            f"    place = {place}",
            "    try:",
            f"        row.{attr} = {reader}({target}, place, _FIELD_DEPTH)",
            "    except _NotPlain:",
            f"        read = _read_field({field.spec}, {target})",
            "        if type(read) not in _IMMUTABLE_TYPES:",
            "            read = _owned_copy(read, place)",
            f"        row.{attr} = read",
        ]

    def field_reader(self, shape: ShapeView) -> str | None:
        """The reader of a row field of this shape, where it has one (an optional's inner)."""
        shape = _strip(shape)
        if _plain_element(shape) is not None:
            return None  # the row loader reads lists of plain values inline already
        if shape.kind not in _NESTED:
            return None
        return self.reader(shape)

    def reader(self, shape: ShapeView) -> str | None:
        """The nested reader of values of this (not optional) shape, written once: a function
        `(raw, place, depth)` returning the owned value spec.from_json then owned_copy would
        make of a raw value `depth` deep in the state (depth bounds it as the JSON walk does),
        or raising _NotPlain. None for a shape it does not take."""
        key = f"{shape.kind} {shape.spec}"
        if key in self._readers:
            return self._readers[key]
        name = f"_read_{len(self._readers)}"
        self._readers[key] = name  # before the body: a record may hold lists of itself
        if shape.kind == "record":
            body = self._record(shape)
        elif shape.kind == "map":
            body = self._map(shape)
        elif shape.kind in ("list", "set"):
            body = self._list(shape)
        else:
            body = None
        if body is None:
            self._readers[key] = None
            return None
        lines = body
        if any("_BY_VALUE_" in line for line in body):
            lines = [
                "try:",
                *("    " + line for line in body),
                "except KeyError:  # an enum element that is no member's value",
                "    raise _NotPlain from None",
            ]
        doc = f"A nested {shape.kind} read and owned at its place (codegen/loaders.py)."
        self.functions.append(
            FunctionView(name, ["raw: Any", "place: _Place", "depth: int"], "Any", lines, doc)
        )
        return name

    def plain(self, shape: ShapeView, value: str) -> str | None:
        """A test that the raw value is already the element's value (and its JSON fine)."""
        if shape.optional:
            return None
        if shape.kind == "str":
            return (
                f"(type({value}) is str and ({value}.isascii() and len({value}) <= _MAX_STR "
                f"or _long_str({value})))"
            )
        if shape.kind == "float":  # a float, or an int kept as one (FloatSpec.from_json)
            return (
                f"(type({value}) is float and -_INF < {value} < _INF "
                f"or type({value}) is int and _MIN_INT <= {value} <= _MAX_INT)"
            )
        test = _plain_test(shape, value)
        return None if test is None else f"({test})"

    def converted(self, shape: ShapeView, value: str) -> str | None:
        """An expression converting a raw element (raising _NotPlain), or None."""
        if shape.optional:
            return None
        if shape.kind == "float":  # not plain: an int out of range, FloatSpec's to read
            return "_not_plain()"
        if shape.kind == "enum":
            members = self.members(shape)
            return f"({members}[{value}] if type({value}) is str else _not_plain())"
        if shape.kind == "datetime":
            return f"_nested_datetime({value})"
        if shape.kind == "date":
            return f"_nested_date({value})"
        if shape.kind in _NESTED:
            reader = self.reader(shape)
            return None if reader is None else f"{reader}({value}, place, depth + 1)"
        return None

    def _container(self, kind: str) -> list[str]:
        return [
            f"if type(raw) is not {kind} or depth >= _MAX_JSON_DEPTH or len(raw) > _MAX_ITEMS:",
            "    raise _NotPlain",
        ]

    def _list(self, shape: ShapeView) -> list[str] | None:
        owned = "_OwnedSet" if shape.kind == "set" else "_OwnedList"
        element = shape.element
        assert element is not None
        lines = self._container("list")
        test = self.plain(element, "item")
        if test is not None:
            lines += [f"if not all({test} for item in raw):", "    raise _NotPlain"]
            lines.append(f"value = {owned}(raw)")
        else:
            converted = self.converted(element, "item")
            if converted is None:
                return None
            lines.append(f"value = {owned}([{converted} for item in raw])")
        return [*lines, "value._owner = place", "return value"]

    def _map(self, shape: ShapeView) -> list[str] | None:
        key, element = shape.key, shape.element
        assert key is not None and element is not None
        if key.kind != "str" or key.optional:
            return None  # numbers and enums as keys: read the reference way
        lines = self._container("dict")
        key_test = self.plain(key, "key")
        lines += [f"if not all({key_test} for key in raw):", "    raise _NotPlain"]
        test = self.plain(element, "item")
        if test is not None:
            lines += [f"if not all({test} for item in raw.values()):", "    raise _NotPlain"]
            lines.append("value = _OwnedDict(raw)")
        else:
            converted = self.converted(element, "item")
            if converted is None:
                return None
            lines.append(f"value = _OwnedDict({{key: {converted} for key, item in raw.items()}})")
        return [*lines, "value._owner = place", "return value"]

    def _record(self, shape: ShapeView) -> list[str] | None:
        record = self.records.get(shape.record)
        if record is None or record.base != "rt.Value":
            return None  # (only records hold their place; a row is never nested in a value)
        known = self.constant(
            f"_KNOWN_{record.name}",
            "frozenset[str]",
            f"frozenset({sorted(f.json_name for f in record.fields)!r})",
        )
        lines = [
            "if type(raw) is not dict or depth >= _MAX_JSON_DEPTH:",
            "    raise _NotPlain",
            "for key in raw:",
            f"    if type(key) is not str or key not in {known}:",
            "        raise _NotPlain",
            "get = raw.get",
            f"record: {record.name} = _new({record.name})",
        ]
        for field in record.fields:
            assert field.shape is not None
            inner = _strip(field.shape)
            test = self.plain(inner, "item")
            converted = self.converted(inner, "item")
            if test is None and converted is None:
                return None
            lines.append(f"item = get({field.json_name!r}, _MISSING)")
            lines.append("if item is _MISSING:")
            if field.default_value is None:
                lines.append("    raise _NotPlain")
            else:
                lines.append(f"    item = _owned_copy({field.default_value}, place)")
            if field.shape.optional:
                lines += ["elif item is None:", "    pass"]
            if test is not None:
                otherwise = "raise _NotPlain" if converted is None else f"item = {converted}"
                lines += [f"elif not {test}:", f"    {otherwise}"]
            else:
                lines += ["else:", f"    item = {converted}"]
            lines.append(f"record.{field.attr} = item")
        return [*lines, "record._owner = place", "return record"]
