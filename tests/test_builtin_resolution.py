"""A call does in generated code what the checker resolved it to.

Two ways it did not: a generator argument `f(x for x in xs)`, which the checker types as the
list it yields, was generated as a Python generator for every callee, so `len(gen)` and a
spec's own fn taking a list failed at run time (an internal error) and `str(gen)` returned
`<generator object ... at 0x...>`, a different text each run; and the later stages matched
builtins by name, so a spec's own `fn all(...)` made its invariant a per-row check of the
generator's element, and a spec's own `fn called(...)` made a check count as a guard on the
trace. Every stage now asks the builtin table (`called_builtin`, `lazy_argument`).
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest

from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import compile_source
from envdsl.runtime import Environment
from envdsl.semantics.builtin_table import FUNCTIONS
from envdsl.util.source import SourceFile

# a tool body calling one callee with a generator argument -> (result type, the result's JSON)
# over the rows n = 3, 1, 2 (a table is read in the order its rows came)
GENERATOR_ARGUMENTS: dict[str, tuple[str, str, Any]] = {
    "len": ("int", "return len(u.n for u in us if u.n > 1)", 2),
    "str": ("str", "return str(u.n for u in us if u.n > 2)", "[3]"),
    "own_fn": ("int", "return total(u.n for u in us)", 6),
    "sum": ("int", "return sum(u.n for u in us)", 6),
    "count": ("int", "return count(u for u in us if u.n > 1)", 2),
    "min": ("int", "return min(u.n for u in us)", 1),
    "max": ("int", "return max(u.n for u in us)", 3),
    "all": ("bool", "return all(u.n > 0 for u in us)", True),
    "any": ("bool", "return any(u.n > 2 for u in us)", True),
    "first": ("int?", "return first(u.n for u in us if u.n < 3)", 1),
    "sorted": ("list[int]", "return sorted(u.n for u in us)", [1, 2, 3]),
    "set": ("int", "return len(set(u.n for u in us))", 3),
    "list": ("list[int]", "return list(u.n for u in us)", [3, 1, 2]),
    "enumerate": ("list[int]", "return [i for i, n in enumerate(u.n for u in us)]", [0, 1, 2]),
    "extend": ("list[int]", "let xs = [0]\nxs.extend(u.n for u in us)\nreturn xs", [0, 3, 1, 2]),
}


def _compile(source: str) -> type[Environment]:
    result = compile_source(SourceFile("probe.env", source))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)


def _generators_spec() -> str:
    tools = "\n".join(
        f'query probe_{name}() -> {result} {{\n  """Probe."""\n'
        f"{textwrap.indent(body, '  ')}\n}}"
        for name, (result, body, _) in GENERATOR_ARGUMENTS.items()
    )
    return f"""env Generators {{
  entity U {{
    key id: str
    n: int
  }}
  state {{
    us: table U
  }}
  fn total(xs: list[int]) -> int = sum(xs) + 0 * len(xs)
{textwrap.indent(tools, "  ")}
}}
"""


@pytest.fixture(scope="module")
def generators_class() -> type[Environment]:
    return _compile(_generators_spec())


@pytest.mark.parametrize("name", sorted(GENERATOR_ARGUMENTS))
def test_a_generator_argument_gives_what_its_list_gives(
    generators_class: type[Environment], name: str
) -> None:
    env = generators_class()
    env.reset(state={"us": [{"id": "c", "n": 3}, {"id": "a", "n": 1}, {"id": "b", "n": 2}]})
    assert env.call(f"probe_{name}", {}) == {
        "success": True,
        "data": GENERATOR_ARGUMENTS[name][2],
    }


def test_only_a_lazy_callee_gets_a_python_generator() -> None:
    source = compile_source(SourceFile("probe.env", _generators_spec())).artifacts["module"]
    assert "all(((u.n > 0) for u in" in source  # stops at the first false row
    assert "len([u.n for u in" in source and "total(xs=[u.n for u in" in source
    lazy = {name for name, entry in FUNCTIONS.items() if entry.lazy_argument}
    assert lazy <= set(GENERATOR_ARGUMENTS), "each lazy builtin is run with a generator above"


_SHADOWING = """env Shadowing {
  entity U {
    key id: str
    n: int
  }
  state {
    us: table U
  }
  fn all(xs: list[bool]) -> bool = len(xs) < 3
  fn called(tool: str) -> bool = len(us) > 0
  invariant "fewer than three users": all(u.n > 0 for u in us)
  action add(id: str, n: int) -> U {
    \"\"\"Add a user.\"\"\"
    let u = U(id=id, n=n)
    us.insert(u)
    return u
  }
  task grow {
    \"\"\"Add user b with n 2.\"\"\"
    init {
      us = [U(id="a", n=1)]
    }
    solution {
      add(id="b", n=2)
    }
    check "b is there": us.get("b") != none and us["b"].n == 2
    check "not a trace guard": called("add")
  }
}
"""


def test_a_specs_own_all_is_not_a_per_row_invariant() -> None:
    env = _compile(_SHADOWING)()
    env.reset(state={"us": [{"id": "a", "n": -1}, {"id": "b", "n": -2}]})
    # the spec's `all` counts the rows: a negative n breaks nothing, a third row does
    assert env.call("add", {"id": "c", "n": -3})["success"] is False
    assert env.call("add", {"id": "c", "n": 5})["success"] is False
    env.reset(state={"us": [{"id": "a", "n": -1}]})
    assert env.call("add", {"id": "b", "n": -7})["success"] is True


def test_a_specs_own_called_is_no_trace_guard() -> None:
    result = compile_source(SourceFile("shadowing.env", _SHADOWING))
    text = render_text(result.diagnostics, result.sources)
    # true before the agent acts, by its value: the trace guard's exemption does not apply
    assert "W5006" in text and "not a trace guard" in text, text
