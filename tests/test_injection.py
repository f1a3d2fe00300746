"""A spec can never inject Python: hostile names and strings compile to inert code.

Names that are Python keywords or names the generated module uses itself (`class`, `self`,
`import`, `def`, `rt`, `h`, `cast`, `field`, `datetime`, ...) are valid spec names; strings
with quotes, backslashes, newlines, braces, NUL and Python payloads are valid spec strings.
They must compile, import, type-check, come back verbatim, and execute nothing: every payload
would create a marker file, and none may exist afterwards.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import CompileResult, compile_source
from envdsl.runtime import Environment
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent


def payload(marker_dir: Path, tag: str) -> str:
    """Python that creates a marker file if it is ever executed."""
    return f"__import__('os').system('touch {marker_dir}/PWNED_{tag}')"


def hostile_strings(marker_dir: Path) -> list[str]:
    return [
        '"""',
        "'''",
        "\\",
        "\\n (a backslash and an n)",
        "a\nb\r\tc",
        "{}",
        "{{x}}",
        "{x!r:>{y}}",
        "\x00",
        "ends with a backslash \\",
        payload(marker_dir, "LITERAL"),
        f'"); {payload(marker_dir, "BREAKOUT")} #',
        f"'''; {payload(marker_dir, 'TRIPLE')}; '''",
        f'"""\n{payload(marker_dir, "NEWLINE")}\n"""',
        f"\n# comment\n{payload(marker_dir, 'COMMENT')}",
        "\u00e9\u4e2d\U0001f600",
    ]


def dsl(text: str) -> str:
    """A one-line spec string literal for `text` (the language's escapes)."""
    escaped = (
        text.replace("\\", "\\\\")
        .replace('"', '\\"')
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("\t", "\\t")
        .replace("\x00", "\\0")
    )
    return f'"{escaped}"'


def hostile_spec(marker_dir: Path) -> str:
    strings = hostile_strings(marker_dir)
    doc = f"Env doc \\\"\\\"\\\" ''' \\\\ {{x}} {payload(marker_dir, 'DOC')}"
    return f'''
env Hostile {{
  """{doc}"""
  enum Kind {{ self, import, def, rt, h, cast, field, datetime, b, row, results, copy, class,
               enum, dataclass, Any, annotations, lambda_ = "lambda", weird = {dsl(strings[1] + strings[0] + strings[2])} }}
  record Def {{ import: str, self: int, rt: str }}
  entity Item {{
    key self: str {dsl("key desc " + strings[0] + payload(marker_dir, "FIELD_DOC"))}
    class: Kind = Kind.self
    def: Def?
    cast: list[str] = []
    field: str = {dsl(strings[1])}
    datetime: datetime?
    h: int = 0
    invariant {dsl("row inv " + strings[0] + payload(marker_dir, "INV"))}: h >= 0
  }}
  state {{
    rt: table Item
    h: str = {dsl(strings[0] + payload(marker_dir, "STATE"))}
  }}
  invariant {dsl("env inv " + strings[1] + "{}" + strings[2])}: len(h) < 1000
  query echo(self: str {dsl("param " + strings[0] + " {}")},
             class: Kind = Kind.import, cast: int = 3, import: str = {dsl(strings[13])}) -> str {{
    """Echo {dsl(strings[0])[1:-1]} {payload(marker_dir, "TOOL_DOC")}"""
    return self
  }}
  query defaults(class: Kind = Kind.import, cast: int = 3, import: str = {dsl(strings[13])}) -> str {{
    """The defaults, joined."""
    return str(class) + "|" + str(cast) + "|" + import
  }}
  query payloads() -> list[str] {{
    """Every hostile literal."""
    return [{", ".join(dsl(s) for s in strings)}]
  }}
  query fstrings(x: str) -> str {{
    """An f-string with literal braces, quotes and backslashes around a hole."""
    return f"{{{{}}}}\\\\'\\"{{x}}{{{{x}}}}" + f"{{h}}"
  }}
  action store(self: str, def: str = "x", h: int = 0) -> Item {{
    """Store a row."""
    return rt.insert(Item(self=self, field=def, class=Kind.weird, h=h))
  }}
  query member(m: Kind) -> str {{
    """An enum member's JSON value."""
    return str(m)
  }}
  task cast {{
    """Task {dsl(strings[0])[1:-1]} {payload(marker_dir, "TASK")}"""
    init {{
      rt = [Item(self={dsl(strings[1])}, field={dsl(strings[0])})]
    }}
    solution {{
      store(self={dsl(strings[5])})
    }}
    check {dsl("check " + strings[0] + payload(marker_dir, "CHECK"))}: len(rt) == 2
  }}
}}
'''


@pytest.fixture(scope="module")
def marker_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("markers")


@functools.lru_cache(maxsize=None)
def compile_text(text: str) -> CompileResult:
    return compile_source(SourceFile("hostile.env", text))


@pytest.fixture(scope="module")
def hostile(marker_dir: Path) -> tuple[CompileResult, type[Environment]]:
    result = compile_text(hostile_spec(marker_dir))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return result, environment_class(module)


def assert_nothing_ran(marker_dir: Path) -> None:
    assert list(marker_dir.iterdir()) == [], "a payload was executed"


def test_hostile_spec_compiles_imports_and_runs_nothing(
    hostile: tuple[CompileResult, type[Environment]], marker_dir: Path
) -> None:
    result, env_class = hostile
    env = env_class()
    env.solve("cast")
    assert env.evaluate()["success"] is True
    for name in env_class.TOOLS:
        env.call(name, {"self": "s", "x": "x", "m": "weird"})
    env.tool_schemas()
    env.state_json()
    assert_nothing_ran(marker_dir)


def test_generated_code_holds_payloads_only_as_string_constants(
    hostile: tuple[CompileResult, type[Environment]],
) -> None:
    source = hostile[0].artifacts["module"]
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            assert name not in ("__import__", "system", "eval", "exec"), ast.unparse(node)
        if isinstance(node, ast.Name):
            assert node.id not in ("os", "__import__"), ast.unparse(node)
    # the payload text is there, but only inside string constants
    constants = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
    assert any("PWNED_LITERAL" in c for c in constants if isinstance(c, str))


def test_strings_round_trip_exactly(
    hostile: tuple[CompileResult, type[Environment]], marker_dir: Path
) -> None:
    env = hostile[1]()
    env.reset(state={})
    strings = hostile_strings(marker_dir)
    assert env.call("payloads", {}) == {"success": True, "data": strings}
    for text in strings:
        assert env.call("echo", {"self": text}) == {"success": True, "data": text}
        assert env.call("echo", json.dumps({"self": text})) == {"success": True, "data": text}
    weird = "'''" + '"""' + "\\"
    assert env.call("member", {"m": weird}) == {"success": True, "data": weird}
    assert env.call("member", {"m": "weird"})["success"] is False  # the name is not the value
    assert env.call("member", {"m": "lambda"})["data"] == "lambda"
    assert env.call("member", {"m": "class"})["data"] == "class"
    assert env.call("defaults", {}) == {"success": True, "data": "import|3|" + strings[13]}
    assert env.state_json()["h"] == '"""' + payload(marker_dir, "STATE")
    assert_nothing_ran(marker_dir)


def test_fstrings_with_braces_quotes_and_backslashes(
    hostile: tuple[CompileResult, type[Environment]], marker_dir: Path
) -> None:
    env = hostile[1]()
    env.reset(state={})
    hole = "{y}" + payload(marker_dir, "HOLE")
    result = env.call("fstrings", {"x": hole})
    expected = "{}\\'\"" + hole + "{x}" + '"""' + payload(marker_dir, "STATE")
    assert result == {"success": True, "data": expected}
    assert_nothing_ran(marker_dir)


def test_descriptions_and_texts_round_trip(
    hostile: tuple[CompileResult, type[Environment]], marker_dir: Path
) -> None:
    env_class = hostile[1]
    assert env_class.DESCRIPTION == ("Env doc \"\"\" ''' \\ {x} " + payload(marker_dir, "DOC"))
    schemas = {s["function"]["name"]: s["function"] for s in env_class().tool_schemas()}
    echo = schemas["echo"]
    assert echo["description"] == 'Echo """ ' + payload(marker_dir, "TOOL_DOC")
    assert echo["parameters"]["properties"]["self"]["description"] == 'param """ {}'
    assert echo["parameters"]["properties"]["import"]["default"] == hostile_strings(marker_dir)[13]
    assert echo["parameters"]["required"] == ["self"]
    assert env_class.TASKS["cast"].instruction == 'Task """ ' + payload(marker_dir, "TASK")
    assert [text for text, _ in env_class.TASKS["cast"].checks] == [
        'check """' + payload(marker_dir, "CHECK")
    ]
    assert list(env_class.ENV_INVARIANTS.values()) == ["env inv '''{}\\"]
    row_texts = [text for text, _ in env_class.ROW_INVARIANTS["rt"]]
    assert row_texts == ['row inv """' + payload(marker_dir, "INV")]
    json.dumps(env_class().tool_schemas())  # plain JSON all the way


def test_hostile_invariant_text_is_the_failure_message(
    hostile: tuple[CompileResult, type[Environment]], marker_dir: Path
) -> None:
    env = hostile[1]()
    env.reset(task="cast")
    before = env.state_hash()
    result = env.call("store", {"self": "new", "h": -1})
    assert result["success"] is False
    assert result["error"].startswith('row inv """' + payload(marker_dir, "INV"))
    assert env.state_hash() == before
    assert_nothing_ran(marker_dir)


def test_hostile_names_work_through_call_and_state(
    hostile: tuple[CompileResult, type[Environment]],
) -> None:
    env = hostile[1]()
    env.reset(task="cast")
    result = env.call("store", {"self": "k2", "def": "value of def"})
    assert result == {
        "success": True,
        "data": {
            "cast": [],
            "class": "'''\"\"\"\\",
            "datetime": None,
            "def": None,
            "field": "value of def",
            "h": 0,
            "self": "k2",
        },
    }
    state = env.state_json()
    assert list(state) == ["h", "rt"]
    assert list(state["rt"]) == ["'''", "k2"]
    assert state["rt"]["k2"]["self"] == "k2"


def test_state_with_a_mangled_key_name_round_trips(
    hostile: tuple[CompileResult, type[Environment]],
) -> None:
    env = hostile[1]()
    env.reset(task="cast")
    copy = hostile[1]()
    copy.reset(state=env.state_json())
    assert copy.state_hash() == env.state_hash()


def test_backslash_before_a_brace_round_trips() -> None:
    env = build(spec('''
  query q() -> list[str] {
    """Backslashes right before braces."""
    return ["a\\\\{b", "c\\\\}d", "e\\\\\\\\{f"]
  }'''))()
    env.reset(state={})
    assert env.call("q", {}) == {"success": True, "data": ["a\\{b", "c\\}d", "e\\\\{f"]}


def test_typed_methods_take_the_mangled_names(
    hostile: tuple[CompileResult, type[Environment]],
) -> None:
    """`self`, `class`, `import` cannot be Python parameters: the ParamSpec says what to use."""
    env_class = hostile[1]
    env = env_class()
    env.reset(state={})
    attrs = {p.name: p.attribute for p in env_class.TOOLS["echo"].params}
    assert attrs["self"] != "self" and attrs["class"] != "class" and attrs["import"] != "import"
    result = getattr(env, "echo")(**{attrs["self"]: "typed"})
    assert result == {"success": True, "data": "typed"}


def test_hostile_module_passes_mypy_strict(
    hostile: tuple[CompileResult, type[Environment]], tmp_path: Path, marker_dir: Path
) -> None:
    result = hostile[0]
    (tmp_path / f"{result.artifacts['name']}.py").write_text(
        result.artifacts["module"], encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull]
        + [f"{result.artifacts['name']}.py"],
        cwd=tmp_path,
        env=dict(os.environ, MYPYPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_ran(marker_dir)


# ---- names that collide with what the generated module defines -----------------------------------


def build(text: str) -> type[Environment]:
    result = compile_text(text)
    assert result.ok, render_text(result.diagnostics, result.sources)
    return environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))


def spec(members: str) -> str:
    return 'env Clash {\n  """Names that collide."""\n' + members + "\n}\n"


def test_tool_named_like_the_environment_api() -> None:
    env_class = build(spec('''
  query reset() -> int {
    """Shadow reset."""
    return 1
  }
  query state_json() -> int {
    """Shadow state_json."""
    return 2
  }
  query trace() -> int {
    """Shadow trace."""
    return 3
  }'''))
    env = env_class()
    env.reset(state={})  # still the Environment's reset
    assert env.state_json() == {}
    assert env.call("reset", {}) == {"success": True, "data": 1}
    assert env.call("state_json", {}) == {"success": True, "data": 2}
    assert env.call("trace", {}) == {"success": True, "data": 3}
    assert isinstance(env.trace, list) and len(env.trace) == 3


BUILTIN_TYPE_NAMES = '''
  enum format { plain, rich }
  record type { f: format }
  enum class { a, b }
  query q(v: format, c: class) -> type {
    """Types named like Python builtins and keywords."""
    return type(f=v)
  }'''


def test_types_named_like_python_builtins_and_keywords() -> None:
    env = build(spec(BUILTIN_TYPE_NAMES))()
    env.reset(state={})
    assert env.call("q", {"v": "rich", "c": "a"}) == {"success": True, "data": {"f": "rich"}}


def test_record_named_like_the_environment_class() -> None:
    env = build(spec('''
  record ClashEnv { a: int }
  query q() -> ClashEnv {
    """Build the record."""
    return ClashEnv(a=1)
  }'''))()
    env.reset(state={})
    assert env.call("q", {}) == {"success": True, "data": {"a": 1}}
    assert env.last_exception is None


@pytest.mark.parametrize(
    "members",
    [
        '''
  record A { a: int }
  record SPEC_A { b: int }
  query q() -> SPEC_A {
    """Both records."""
    return SPEC_A(b=A(a=2).a)
  }''',
        '''
  const X: int = 2
  record C_X { b: int }
  query q() -> C_X {
    """The constant inside a record named like it."""
    return C_X(b=X)
  }''',
    ],
    ids=["SPEC_prefix", "C_prefix"],
)
def test_types_named_like_generated_globals(members: str) -> None:
    env = build(spec(members))()
    env.reset(state={})
    assert env.call("q", {}) == {"success": True, "data": {"b": 2}}
    assert env.last_exception is None


def test_typed_methods_do_not_collide() -> None:
    env_class = build(spec('''
  fn x() -> int = 1
  query fn_x() -> int {
    """Calls fn x."""
    return x() + 10
  }
  query reset() -> int {
    """Named like Environment.reset."""
    return 2
  }
  query tool_reset() -> int {
    """Named like reset's renamed method."""
    return 3
  }'''))
    env = env_class()
    env.reset(state={})
    assert env.call("fn_x", {}) == {"success": True, "data": 11}
    typed = {
        name: getattr(env, method)()
        for name, method in [("fn_x", "fn_x"), ("tool_reset", "tool_reset")]
    }
    assert typed["fn_x"] == {"success": True, "data": 11}
    assert typed["tool_reset"] == {"success": True, "data": 3}
    reset_methods = [
        m for m in dir(env_class) if m != "reset" and "reset" in m and not m.startswith("_")
    ]
    assert len(reset_methods) == 2, reset_methods  # one typed method per tool
