"""Generated code that reads like hand-written code (issue 24, point 5): keyword arguments in
the declarations, flat boolean chains, only the imported declarations a spec uses, and an
`init from` state shared by several tasks written once."""

from __future__ import annotations

import ast
from pathlib import Path

from envdsl.diagnostics.render_text import render_text
from envdsl.generated.modules import environment_class, load_module
from envdsl.pipeline import CompileResult, compile_file, compile_source
from envdsl.runtime import Environment
from envdsl.util.source import SourceFile

CHAINS = '''
env Chains {
  """Boolean chains."""
  state {
    a: int = 0
    b: int = 0
    c: int = 0
  }
  query all_positive() -> bool {
    """All three above zero."""
    return a > 0 and b > 0 and c > 0
  }
  query any_negative() -> bool {
    """Any below zero."""
    return a < 0 or (b < 0 or c < 0)
  }
  query mixed() -> bool {
    """One of two pairs."""
    return a > 0 and b > 0 or not c > 0
  }
  action set(x: int, y: int, z: int) {
    """Set all three."""
    require x != 0 and y != 0 and z != 0 else "zero"
    a = x
    b = y
    c = z
  }
}
'''


def _compiled(text: str, path: str = "spec.env") -> CompileResult:
    result = compile_source(SourceFile(path, text))
    assert result.ok, render_text(result.diagnostics, result.sources)
    return result


def _env(result: CompileResult) -> Environment:
    module = load_module(result.artifacts["module"], result.artifacts["name"], register=False)
    return environment_class(module)()


def _function(source: str, name: str) -> str:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.get_source_segment(source, node) or ""
    raise AssertionError(f"no function {name}")


def test_a_chain_of_one_operator_is_flat_and_computes_the_same() -> None:
    result = _compiled(CHAINS)
    source = result.artifacts["module"]
    assert "return self.s_a > 0 and self.s_b > 0 and self.s_c > 0" in _function(
        source, "_impl_all_positive"
    )
    # the spec's own parentheses around an `or` inside an `or` are not kept either
    assert "self.s_a < 0 or self.s_b < 0 or self.s_c < 0" in _function(source, "_impl_any_negative")
    # a different operator inside keeps its parentheses: `and` within `or`
    assert "(self.s_a > 0 and self.s_b > 0) or not (self.s_c > 0)" in _function(
        source, "_impl_mixed"
    )
    env = _env(result)
    for values in [(1, 2, 3), (-1, 2, 3), (1, -2, -3), (5, 0, 1)]:
        call = env.call("set", dict(zip("xyz", values)))
        x, y, z = values if call["success"] else (0, 0, 0)
        if call["success"] is False:
            assert 0 in values and call["error"] == "zero"
            continue
        assert env.call("all_positive", {})["data"] == (x > 0 and y > 0 and z > 0)
        assert env.call("any_negative", {})["data"] == (x < 0 or y < 0 or z < 0)
        assert env.call("mixed", {})["data"] == ((x > 0 and y > 0) or not z > 0)


def test_declarations_are_written_with_keyword_arguments() -> None:
    source = _compiled(CHAINS).artifacts["module"]
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "rt"
            and node.func.attr
            in ("ToolSpec", "ParamSpec", "TaskSpec", "TableSpec", "ScalarSpec", "FieldSpec")
        ):
            assert node.args == [], f"rt.{node.func.attr} with positional arguments"
            assert node.keywords


TIME_SPEC = '''
import std.time

env Calendar {
  """Meetings."""
  state {
    now: datetime
  }
  query USE() -> RESULT {
    """Uses one helper of std.time."""
    return CALL
  }
}
'''


def _time_source(use: str, result: str, call: str) -> str:
    text = TIME_SPEC.replace("USE", use).replace("RESULT", result).replace("CALL", call)
    return str(_compiled(text).artifacts["module"])


def test_only_the_std_time_declarations_a_spec_uses_are_emitted() -> None:
    source = _time_source("clash", "bool", "overlaps(now, now, now, now)")
    assert "def _fn_overlaps(" in source
    for unused in ("class Weekday", "class Interval", "_fn_is_weekend", "_fn_add_days"):
        assert unused not in source


def test_what_a_used_declaration_needs_comes_with_it() -> None:
    # intervals_overlap calls overlaps and takes Intervals; weekday_of returns a Weekday
    source = _time_source(
        "clash",
        "bool",
        "intervals_overlap(Interval(start=now, end=now), Interval(start=now, end=now))",
    )
    assert "def _fn_intervals_overlap(" in source and "def _fn_overlaps(" in source
    assert "class Interval" in source and "class Weekday" not in source
    source = _time_source("day", "Weekday", "weekday_of(date_of(now))")
    assert "class Weekday" in source and "class Interval" not in source


def test_a_spec_that_imports_std_time_and_uses_none_of_it() -> None:
    source = _time_source("clock", "datetime", "now")
    assert "class Weekday" not in source and "_fn_overlaps" not in source
    env = _env(
        _compiled(
            TIME_SPEC.replace("USE", "clock").replace("RESULT", "datetime").replace("CALL", "now")
        )
    )
    env.reset(state={"now": "2024-05-01T09:00:00Z"})
    assert env.call("clock", {}) == {"success": True, "data": "2024-05-01T09:00:00Z"}


SHARED = '''
env Counter {
  """A counter."""
  state {
    count: int = 0
  }
  action add(n: int) {
    """Add n to the counter."""
    count += n
  }
  task TASK_A {
    """Add five."""
    init from "FILE_A"
    solution { add(n=5) }
    check "five more": count == initial.count + 5
  }
  task TASK_B {
    """Add two."""
    init from "FILE_B"
    solution { add(n=2) }
    check "two more": count == initial.count + 2
  }
  task TASK_C {
    """Add one."""
    init from "FILE_A"
    solution { add(n=1) }
    check "one more": count == initial.count + 1
  }
}
'''


def _shared(tmp_path: Path, file_a: str, file_b: str) -> CompileResult:
    (tmp_path / "start.json").write_text('{"count": 10}', encoding="utf-8")
    (tmp_path / "other.json").write_text('{"count": 20}', encoding="utf-8")
    (tmp_path / "same-as-start.json").write_text('{ "count" : 10 }', encoding="utf-8")
    text = SHARED.replace("FILE_A", file_a).replace("FILE_B", file_b)
    text = text.replace("TASK_A", "plus_five").replace("TASK_B", "plus_two")
    text = text.replace("TASK_C", "plus_one")
    spec = tmp_path / "counter.env"
    spec.write_text(text, encoding="utf-8")
    result = compile_file(str(spec))
    assert result.ok, render_text(result.diagnostics, result.sources)
    return result


def test_an_init_file_shared_by_tasks_is_written_once(tmp_path: Path) -> None:
    result = _shared(tmp_path, "start.json", "other.json")
    source = result.artifacts["module"]
    assert source.count('"count": 10') == 1 and source.count('"count": 20') == 1
    assert source.count("init_data=INIT_START,") == 2
    assert source.count("init_data=INIT_OTHER,") == 1
    env = _env(result)
    for task, start, step in [("plus_one", 10, 1), ("plus_two", 20, 2), ("plus_five", 10, 5)]:
        env.reset(task=task)
        assert env.state_json()["count"] == start
        env.call("add", {"n": step})
        assert env.evaluate()["success"] is True
    # a state of the same content from another file is the same constant
    source = _shared(tmp_path, "start.json", "same-as-start.json").artifacts["module"]
    assert "INIT_SAME_AS_START" not in source
    assert source.count("init_data=INIT_START,") == 3


def test_an_init_constant_never_takes_a_spec_name(tmp_path: Path) -> None:
    (tmp_path / "start.json").write_text('{"count": 3}', encoding="utf-8")
    text = (
        SHARED.replace("FILE_A", "start.json")
        .replace("FILE_B", "start.json")
        .replace("TASK_A", "a")
        .replace("TASK_B", "b")
        .replace("TASK_C", "c")
        .replace("  state {", "  record INIT_START { n: int }\n  state {")
        .replace("    count += n", "    count += INIT_START(n=n).n")
    )
    spec = tmp_path / "counter.env"
    spec.write_text(text, encoding="utf-8")
    result = compile_file(str(spec))
    assert result.ok, render_text(result.diagnostics, result.sources)
    source = result.artifacts["module"]
    assert "class INIT_START" in source and "init_data=INIT_START_," in source
    env = _env(result)
    env.reset(task="b")
    assert env.call("add", {"n": 2}) == {"success": True, "data": None}
    assert env.state_json()["count"] == 5
