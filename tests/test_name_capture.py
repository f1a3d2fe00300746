"""Spec names that collide with the generated module's own names compile and compute right.

Each spec here once miscompiled (a wrong result, no error) or failed at import with an internal
error: generated names are now claimed in namespaces (envdsl/codegen/naming.py) so no spec name
can capture another.
"""

from __future__ import annotations

from typing import Any

import pytest

from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import compile_source
from envdsl.runtime import Environment
from envdsl.util.source import SourceFile


def env_of(text: str) -> Environment:
    result = compile_source(SourceFile("spec.env", text))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)()


def call(env: Environment, tool: str, **arguments: Any) -> Any:
    result = env.call(tool, arguments)
    assert result["success"], result
    return result["data"]


def wrap(body: str) -> str:
    return f'env Names {{\n  """Spec names that collide with generated ones."""\n{body}\n}}\n'


def test_fields_class_and_class_underscore_in_one_record() -> None:
    env = env_of(wrap('''
  record R { class: int, class_: int }
  query both() -> list[int] {
    """Both."""
    let r = R(class=1, class_=2)
    return [r.class, r.class_]
  }'''))
    assert call(env, "both") == [1, 2]


@pytest.mark.parametrize("member", ["mro", "_x_", "name", "value", "__y"])
def test_enum_member_named_like_enum_machinery(member: str) -> None:
    env = env_of(wrap(f'''
  enum E {{ a, {member} }}
  query pick(which: E) -> E {{
    """Echo."""
    return which
  }}
  query named() -> str {{
    """The member."""
    return str(E.{member})
  }}'''))
    assert call(env, "pick", which=member) == member
    assert call(env, "named") == member


@pytest.mark.parametrize("name", ["NAME", "TABLES", "SITES", "SPEC_X", "rt", "h"])
def test_enum_named_like_a_generated_attribute(name: str) -> None:
    env = env_of(wrap(f'''
  enum {name} {{ a, b }}
  entity T {{
    key id: str
    s: {name} = {name}.b transitions {{ b -> a }}
  }}
  enum X {{ z }}
  state {{ ts: table T }}
  query get() -> list[str] {{
    """Read."""
    return [str(t.s) for t in ts] + [str({name}.a), str(X.z)]
  }}'''))
    env.reset(state={"ts": [{"id": "1"}]})
    assert call(env, "get") == ["b", "a", "z"]


def test_field_named_like_its_own_type() -> None:
    env = env_of(wrap('''
  enum Status { on, off }
  record R { Status: Status = Status.off, other: Status = Status.on }
  query get() -> list[str] {
    """Read."""
    let r = R()
    return [str(r.Status), str(r.other)]
  }'''))
    assert call(env, "get") == ["off", "on"]


def test_dunder_field_and_parameter_names() -> None:
    env = env_of(wrap('''
  record R { __x: int }
  fn twice(__y: int) -> int = __y * 2
  query get(__z: int) -> int {
    """Read."""
    return R(__x=twice(__z)).__x + 1
  }'''))
    assert call(env, "get", __z=4) == 9


def test_tool_named_sites_leaves_the_sites_table_alone() -> None:
    env = env_of(wrap('''
  query SITES(n: int) -> int {
    """Echo."""
    require n > 0 else "positive"
    return n
  }'''))
    assert call(env, "SITES", n=3) == 3
    assert type(env).SITES[0][0] == "SITES"  # the coverage sites are still the table


def test_parameter_named_like_a_generated_constant() -> None:
    env = env_of(wrap('''
  const RATE: int = 10
  query get(C_RATE: int) -> list[int] {
    """Read."""
    return [RATE, C_RATE]
  }'''))
    assert call(env, "get", C_RATE=3) == [10, 3]


def test_parameter_named_inf_next_to_an_infinite_literal() -> None:
    env = env_of(wrap('''
  query get(inf: float) -> list[bool] {
    """Read."""
    return [1e999 > 1e300, inf == 2.0]
  }'''))
    assert call(env, "get", inf=2.0) == [True, True]


def test_local_named_like_a_generator_temporary() -> None:
    env = env_of(wrap('''
  entity T { key id: str, n: int }
  state { ts: table T }
  action bump(k: str) -> int {
    """Bump."""
    let _tmp1 = 100
    let _tmp2 = 200
    ts[k].n += 1
    ts[k].n += 1
    return _tmp1 + _tmp2
  }'''))
    env.reset(state={"ts": [{"id": "a", "n": 0}]})
    assert call(env, "bump", k="a") == 300
    assert env.state_json()["ts"] == {"a": {"id": "a", "n": 2}}


def test_loop_variable_named_like_a_record() -> None:
    env = env_of(wrap('''
  record P { v: int }
  query get() -> int {
    """Read."""
    let total = 0
    for P in [1, 2] { total += P }
    return P(v=total).v
  }'''))
    assert call(env, "get") == 3


def test_local_named_like_a_const_and_a_type() -> None:
    env = env_of(wrap('''
  const K: int = 5
  record C_K { v: int }
  query get() -> list[int] {
    """Read."""
    let C_K_ = 1
    let SPEC_C_K = 2
    return [K, C_K(v=3).v, C_K_, SPEC_C_K]
  }'''))
    assert call(env, "get") == [5, 3, 1, 2]


def test_a_key_field_with_a_mangled_name_is_not_reported_as_unchecked() -> None:
    """W5012 compared the key's Python attribute (`type_`) with JSON field names (`type`)."""
    text = wrap('''
  entity Item { key type: str, label: str }
  state { items: table Item }
  action add(type: str, label: str) -> Item {
    """Add an item."""
    return items.insert(Item(type=type, label=label))
  }
  task add_one {
    """Add the item A, labelled first."""
    init { items = [] }
    solution { add(type="A", label="first") }
    check "A is labelled first": items["A"].label == "first"
  }''')
    result = compile_source(SourceFile("spec.env", text))
    assert [d.code.code for d in result.diagnostics] == []
