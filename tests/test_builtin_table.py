"""The builtin table (semantics/builtin_table.py) is complete: every builtin the checker accepts
is documented in docs/language.md, and a spec calling it checks, compiles and runs to the value
Python's own semantics give (issue 24, point 3b).

A builtin added to the table without an example here, or without its row in the reference,
fails these tests; one without a generated form or a rule cannot be written in the table."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import compile_source
from envdsl.runtime import Environment
from envdsl.semantics.builtin_table import ENUM_VALUES, FUNCTIONS, METHODS
from envdsl.util.source import SourceFile

REFERENCE = (Path(__file__).resolve().parent.parent / "docs" / "language.md").read_text("utf-8")

# builtin -> (result type, tool body, the result's JSON); worked out by hand from Python's rules
FUNCTION_EXAMPLES: dict[str, tuple[str, str, Any]] = {
    "len": ("int", "return len([1, 2, 3])", 3),
    "abs": ("int", "return abs(-4)", 4),
    "round": ("int", "return round(2.7)", 3),
    "min": ("str", 'return min(["bb", "a", "ccc"], key=lambda s: len(s))', "a"),
    "max": ("int", "return max([3, 8, 5], default=0)", 8),
    "sum": ("float", "return sum([1.5, 2.25])", 3.75),
    "count": ("int", "return count(x for x in [1, 5, 7] if x > 2)", 2),
    "all": ("bool", "return all(x > 0 for x in [1, 2])", True),
    "any": ("bool", "return any(x > 5 for x in [1, 2])", False),
    "sorted": ("list[int]", "return sorted({3, 1, 2}, reverse=true)", [3, 2, 1]),
    "first": ("int?", "return first(x for x in [4, 5, 6] if x > 4)", 5),
    "set": ("int", "return len(set([2, 1, 2]))", 2),
    "list": ("list[int]", "return list({3, 1})", [1, 3]),
    "range": ("list[int]", "return [i * i for i in range(1, 4)]", [1, 4, 9]),
    "zip": ("list[int]", "return [a + b for a, b in zip([1, 2], [10, 20])]", [11, 22]),
    "enumerate": ("list[int]", "return [i * x for i, x in enumerate([5, 6, 7])]", [0, 6, 14]),
    "str": ("str", 'return str(12) + "!"', "12!"),
    "int": ("int", 'return int("42") + int(2.9)', 44),
    "float": ("float", 'return float("1.5") + float(2)', 3.5),
    "lower": ("str", 'return lower("AbC")', "abc"),
    "upper": ("str", 'return upper("abc")', "ABC"),
    "strip": ("str", 'return strip("  x ")', "x"),
    "startswith": ("bool", 'return startswith("hello", "he")', True),
    "endswith": ("bool", 'return endswith("hello", "el")', False),
    "contains": ("bool", 'return contains("hello", "ell")', True),
    "split": ("list[str]", 'return split("a,b,,c", ",")', ["a", "b", "", "c"]),
    "replace": ("str", 'return replace("a-b-c", "-", "+")', "a+b+c"),
    "days": ("duration", "return days(2)", 2 * 86400),
    "hours": ("duration", "return hours(1.5)", 5400),
    "minutes": ("duration", "return minutes(3)", 180),
    "seconds": ("duration", "return seconds(45)", 45),
    "date_of": ("date", 'return date_of(datetime("2024-05-01T23:30:00Z"))', "2024-05-01"),
    "datetime_of": ("int", 'return minutes_between(datetime_of(date("2024-05-01")), '
                    'datetime("2024-05-01T01:00:00Z"))', 60),  # fmt: skip
    "days_between": ("int", 'return days_between(date("2024-05-01"), date("2024-05-31"))', 30),
    "minutes_between": ("int", 'return minutes_between(datetime("2024-05-01T09:00:00Z"), '
                        'datetime("2024-05-01T10:30:00Z"))', 90),  # fmt: skip
    "add_months": ("date", 'return add_months(date("2024-01-31"), 1)', "2024-02-29"),
    "weekday": ("int", 'return weekday(date("2024-05-01"))', 2),  # a Wednesday
    "total_minutes": ("int", "return total_minutes(hours(2))", 120),
    "total_seconds": ("int", "return total_seconds(minutes(2))", 120),
    "date": ("date", 'return date("2024-05-01")', "2024-05-01"),
    "datetime": ("int", 'return weekday(datetime("2024-05-05T12:00:00Z"))', 6),  # a Sunday
    "same_items": ("bool", "return same_items([1, 2, 3], {3, 2, 1})", True),
    "auto": ("str", 'return items.insert(Item(name="x")).item_id', "IT-0001"),
}
# builtins only a task's check may call: each must hold after the task's solution
CHECK_EXAMPLES = {
    "mentions": "mentions(answer, 7)",
    "called": 'called("probe_len") and not called("probe_abs")',
    "calls": 'calls("probe_len") == 1',
}
# the string functions called as methods: `s.lower()` is `lower(s)`
STRING_METHOD_EXAMPLES: dict[str, tuple[str, str, Any]] = {
    "lower": ("str", 'return "AbC".lower()', "abc"),
    "upper": ("str", 'return "abc".upper()', "ABC"),
    "strip": ("str", 'return " x  ".strip()', "x"),
    "startswith": ("bool", 'return "hello".startswith("lo")', False),
    "endswith": ("bool", 'return "hello".endswith("lo")', True),
    "contains": ("bool", 'return "hello".contains("x")', False),
    "split": ("list[str]", 'return "a b  c".split()', ["a", "b", "c"]),
    "replace": ("str", 'return "a-b".replace("-", "")', "ab"),
}
_ROW = 'items.insert(Item(name="x"))\n'
METHOD_EXAMPLES: dict[tuple[str, str], tuple[str, str, Any]] = {
    ("str", "join"): ("str", 'return ", ".join(["a", "b"])', "a, b"),
    ("str", "count"): ("int", 'return "banana".count("an")', 2),
    ("str", "find"): ("int", 'return "banana".find("nan") + "banana".find("x")', 2 - 1),
    ("list", "append"): ("list[int]", "let xs = [1]\nxs.append(2)\nreturn xs", [1, 2]),
    ("list", "remove"): ("list[int]", "let xs = [1, 2, 1]\nxs.remove(1)\nreturn xs", [2, 1]),
    ("list", "extend"): ("list[int]", "let xs = [1]\nxs.extend([2, 3])\nreturn xs", [1, 2, 3]),
    ("list", "count"): ("int", "return [1, 2, 1].count(1)", 2),
    ("list", "index"): ("int", "return [5, 6, 7].index(7)", 2),
    ("list", "contains"): ("bool", "return [1, 2].contains(2)", True),
    ("set", "add"): ("int", "let s = {1}\ns.add(3)\ns.add(1)\nreturn len(s)", 2),
    ("set", "remove"): ("bool", "let s = {1, 2}\ns.remove(1)\nreturn 1 in s", False),
    ("set", "discard"): ("int", "let s = {1, 2}\ns.discard(5)\nreturn len(s)", 2),
    ("set", "contains"): ("bool", "return {1, 2}.contains(3)", False),
    ("map", "get"): ("int", 'return {"a": 1}.get("b", 7)', 7),
    ("map", "keys"): ("list[str]", 'return {"a": 1, "b": 2}.keys()', ["a", "b"]),
    ("map", "values"): ("list[int]", 'return {"a": 1, "b": 2}.values()', [1, 2]),
    ("map", "items"): ("list[str]", 'return [k + str(v) for k, v in {"a": 1, "b": 2}.items()]',
                       ["a1", "b2"]),  # fmt: skip
    ("map", "remove"): ("int", 'let m = {"a": 1, "b": 2}\nm.remove("a")\nreturn len(m)', 1),
    ("map", "contains"): ("bool", 'return {"a": 1}.contains("a")', True),
    ("table", "get"): ("str", _ROW + 'let it = items.get("IT-0001") else "none"\nreturn it.name',
                       "x"),  # fmt: skip
    ("table", "insert"): ("str", _ROW + 'return items.insert(Item(name="y")).item_id', "IT-0002"),
    ("table", "delete"): ("int", _ROW + 'items.delete("IT-0001")\nreturn len(items)', 0),
    ("table", "values"): ("list[str]", _ROW + "return [i.name for i in items.values()]", ["x"]),
    ("table", "keys"): ("list[ref Item]", _ROW + "return items.keys()", ["IT-0001"]),
    ("table", "contains"): ("bool", _ROW + 'return items.contains("IT-0002")', False),
    ("enum", "values"): ("list[str]", "return [str(c) for c in Color.values()]",
                         ["red", "green"]),  # fmt: skip
}


def _tool_name(key: str | tuple[str, str]) -> str:
    return "probe_" + (key if isinstance(key, str) else "_".join(key))


def _all_examples() -> dict[str, tuple[str, str, Any]]:
    probes = {_tool_name(k): v for k, v in FUNCTION_EXAMPLES.items()}
    probes |= {_tool_name(("str_method", k)): v for k, v in STRING_METHOD_EXAMPLES.items()}
    probes |= {_tool_name(k): v for k, v in METHOD_EXAMPLES.items()}
    return probes


def _spec() -> str:
    tools = "\n".join(
        f"action {name}() -> {result} {{\n  \"\"\"Probe.\"\"\"\n{textwrap.indent(body, '  ')}\n}}"
        for name, (result, body, _) in _all_examples().items()
    )
    checks = "\n".join(f"  check {name!r}: {cond}" for name, cond in CHECK_EXAMPLES.items())
    checks = checks.replace("'", '"')
    return f'''env Probe {{
  """Every builtin called once."""
  enum Color {{ red, green }}
  entity Item {{
    key item_id: str = auto("IT")
    name: str
  }}
  state {{
    items: table Item
  }}
{textwrap.indent(tools, "  ")}
  task asked {{
    """Find out the length and tell it."""
    solution {{
      probe_len()
      answer "it is 7"
    }}
{checks}
  }}
}}
'''


@pytest.fixture(scope="module")
def probe_class() -> type[Environment]:
    result = compile_source(SourceFile("probe.env", _spec()))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)


def test_every_entry_has_an_example() -> None:
    assert set(FUNCTION_EXAMPLES) | set(CHECK_EXAMPLES) == set(FUNCTIONS)
    assert not set(FUNCTION_EXAMPLES) & set(CHECK_EXAMPLES)
    string_functions = {name for name, entry in FUNCTIONS.items() if entry.string_method}
    assert set(STRING_METHOD_EXAMPLES) == string_functions
    methods = {(kind, name) for kind, table in METHODS.items() for name in table}
    assert set(METHOD_EXAMPLES) == methods | {("enum", ENUM_VALUES.name)}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_function_has_its_row_in_the_reference(name: str) -> None:
    doc = FUNCTIONS[name].doc
    assert re.search(rf"(?<![\w.]){name}\(", doc), f"the row {doc!r} does not show {name}()"
    assert doc in REFERENCE, f"docs/language.md has no {doc!r} (the row of {name})"


@pytest.mark.parametrize(
    "kind, name", [(kind, name) for kind, table in METHODS.items() for name in table]
)
def test_every_method_has_its_row_in_the_reference(kind: str, name: str) -> None:
    doc = METHODS[kind][name].doc
    assert f".{name}(" in doc, f"the row {doc!r} does not show .{name}()"
    assert doc in REFERENCE, f"docs/language.md has no {doc!r} (the row of {kind}.{name})"


def test_the_reference_lists_no_function_the_table_lacks() -> None:
    table = REFERENCE.split("| Function | Result |")[1].split("\n\n")[0]
    shown = set(re.findall(r"`([a-z_]+)\(", table))
    assert shown and shown <= set(FUNCTIONS), shown - set(FUNCTIONS)


@pytest.mark.parametrize("tool", sorted(_all_examples()))
def test_every_builtin_checks_compiles_and_runs(probe_class: type[Environment], tool: str) -> None:
    _, _, expected = _all_examples()[tool]
    env = probe_class()
    env.reset()
    result = env.call(tool, {})
    assert result == {"success": True, "data": expected}


def test_the_check_only_builtins_grade(probe_class: type[Environment]) -> None:
    env = probe_class()
    env.reset(task="asked")
    env.call("probe_len", {})
    right = env.evaluate(answer="it is 7")
    assert [c["passed"] for c in right["checks"]] == [True, True, True]
    env.call("probe_len", {})  # a second call: `calls(...) == 1` fails, `called` still holds
    wrong = env.evaluate(answer="it is 8")
    assert [c["passed"] for c in wrong["checks"]] == [False, True, False]
