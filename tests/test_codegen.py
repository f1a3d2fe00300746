"""Code generation: generated modules are typed, formatted, self-contained and compute right.

The examples are generated afresh (not read from compiled/) and checked with `mypy --strict`
in one run; a purpose-made spec with one query per group of expressions pins down what the
translated Python computes (Python semantics where the language says "as Python").
"""

from __future__ import annotations

import ast
import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import black
import example_specs
import pytest
from test_examples_e2e import compiled

from envdsl.codegen.emit import generate
from envdsl.codegen.module_uses import used_module_names
from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import CompileResult, compile_source
from envdsl.runtime import Environment
from envdsl.semantics.model import CheckedSpec
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = example_specs.EXAMPLES  # the specs, without task files
NAMES = [path.stem for path in EXAMPLES]


def compiled_example(name: str) -> CompileResult:
    result = compiled(name)  # freshly generated, once per session (shared with the e2e tests)
    assert result.ok, render_text(result.diagnostics, result.sources)
    return result


@functools.lru_cache(maxsize=None)
def compiled_text(text: str, path: str = "spec.env") -> CompileResult:
    result = compile_source(SourceFile(path, text))
    assert result.ok, render_text(result.diagnostics, result.sources)
    return result


def env_class_of(result: CompileResult) -> type[Environment]:
    return environment_class(load_module(result.artifacts["module"], result.artifacts["name"]))


EXPR = '''
env Expr {
  """Purpose-made spec: one query per group of expressions."""
  enum Level { low, mid = "middle", high }
  record P { name: str, score: int }
  entity Row {
    key id: str
    n: int
    tag: str?
  }
  state {
    rows: table Row
    m: map[str, int] = {"b": 2, "a": 1}
  }
  const BASE: int = 7
  fn people() -> list[P] = [P(name="ann", score=3), P(name="bob", score=9), P(name="cy", score=5)]
  query arith() -> list[int] {
    """Compute."""
    return [7 // 2, -7 // 2, 7 % 3, -7 % 3, 2 ** 10, abs(-4), round(2.5), round(3.5), BASE * 2 - 1]
  }
  query floats() -> list[float] {
    """Compute."""
    return [7 / 2, round(2.675, 2), 1 + 0.5, float(3)]
  }
  query strings() -> list[str] {
    """Compute."""
    return ["ab" + "cd", upper("x"), " pad ".strip(), "a,b,c".split(",")[1], replace("aaa", "a", "b"), str(Level.mid), f"{3.14159:.2f}|{BASE:03d}|{Level.high}", "-".join(["x", "y"]), str(true), str(none), "é".upper()]
  }
  query bools() -> list[bool] {
    """Compute."""
    return ["ell" in "hello", startswith("hello", "he"), endswith("hello", "lo"), 1 < 2 <= 2, 3 in [1, 2, 3], "a" in m, "z" not in m, none == none, all(x > 0 for x in [1, 2]), any(x > 5 for x in [1, 2]), not true or true, "ROW1" in rows]
  }
  query collections() -> list[int] {
    """Compute."""
    let xs = [5, 3, 8, 1]
    return [xs[-1], len(xs), min(xs), max(xs), sum(xs), count(x for x in xs if x > 2), sorted(xs)[0], sorted(xs, reverse=true)[0], len(xs[1:3]), xs.index(8), xs.count(3), len(set([1, 1, 2]))]
  }
  query keyed() -> list[str] {
    """Compute."""
    let ps = people()
    let p4 = first(p.name for p in ps if p.score > 4) else "none?"
    return [max(ps, key=lambda p: p.score).name, min(ps, key=lambda p: p.score).name, sorted(ps, key=lambda p: p.score, reverse=true)[1].name, p4]
  }
  query firsts() -> str? {
    """Compute."""
    return first(p.name for p in people() if p.score > 100)
  }
  query comps() -> map[str, int] {
    """Compute."""
    return {p.name: p.score * 2 for p in people() if p.score > 3}
  }
  query loops() -> list[int] {
    """Compute."""
    let out: list[int] = []
    for i in range(10) {
      if i == 2 { continue }
      if i == 5 { break }
      out.append(i)
    }
    for i, x in enumerate([10, 20]) { out.append(i * 100 + x) }
    for a, b in zip([1, 2, 3], [4, 5]) { out.append(a * b) }
    for k, v in m.items() { out.append(v) }
    return out
  }
  query dates() -> list[str] {
    """Compute."""
    let d = date("2024-01-31")
    let t = datetime("2024-03-10T23:30:00Z")
    return [str(add_months(d, 1)), str(d + days(1)), str(date_of(t)), str(weekday(d)), str(days_between(d, date("2024-03-01"))), str(minutes_between(t, t + hours(2))), str(t + minutes(45)), str(total_minutes(hours(1) + minutes(5)))]
  }
  query maps() -> list[int] {
    """Compute."""
    let za = m.get("a") else "fails"
    return [m["a"], za, len(m.keys()), sum(m.values())]
  }
  query optional() -> list[str] {
    """Compute."""
    let r = rows.get("R1") else "missing"
    let t = r.tag if r.tag != none else "untagged"
    let u = rows["R2"].tag
    return [t, u if u is not none else "no", str(len(rows)), str([x.id for x in rows])]
  }
  query div0() -> float {
    """Compute."""
    let z = 0
    return 1 / z
  }
  query mod0() -> int {
    """Compute."""
    let z = 0
    return 1 % z
  }
  query idx() -> int {
    """Compute."""
    let xs = [1]
    return xs[3]
  }
  query emptymin() -> int {
    """Compute."""
    let xs: list[int] = []
    return min(xs)
  }
  query badint() -> int {
    """Compute."""
    return int("x")
  }
  query baddate() -> date {
    """Compute."""
    return date("2024-02-" + "30")
  }
  query mapmiss() -> int {
    """Compute."""
    return m["nope"]
  }
  query levels() -> list[Level] {
    """Compute."""
    return Level.values()
  }
  query nested() -> list[list[int]] {
    """Compute."""
    return [[i * j for j in range(3)] for i in range(3)]
  }
  query setcomp() -> set[int] {
    """Compute."""
    return {x % 3 for x in range(10)}
  }
  query intcast() -> list[int] {
    """Compute."""
    return [int(3.9), int("12"), int(-2.5)]
  }
  query join_ints() -> str {
    """Compute."""
    return f"{[1, 2]}|{ Level.mid }|{none}"
  }
  fn row_ids(rs: list[Row]) -> list[str] = [r.id for r in rs]
  query tables() -> list[str] {
    """A table where a list is expected is the list of its rows (a new list)."""
    let xs: list[Row] = rows
    xs.append(Row(id="R9", n=9))
    let few = rows if len(rows) > 5 else []
    let all = rows
    if len(all) > 5 {
      all = []
    }
    return row_ids(rows) + row_ids(xs) + row_ids(rows[1:]) + [str(len(rows)), str(rows == []), str(rows == [r for r in rows]), str(len(few)), str(len(all))]
  }
  query date_conv() -> list[str] {
    """date(t) of a datetime is date_of(t); datetime(d) of a date is its midnight."""
    let t = datetime("2024-03-10T23:30:00Z")
    return [str(date(t)), str(datetime(date(t)))]
  }
}
'''


def all_sources() -> dict[str, str]:
    """Module name -> freshly generated source, for the examples and the expression spec."""
    sources = {name: compiled_example(name).artifacts["module"] for name in NAMES}
    expr = compiled_text(EXPR)
    sources[expr.artifacts["name"]] = expr.artifacts["module"]
    return sources


# ---- the module contract (DESIGN.md section 4) ----------------------------------------------------


def test_mypy_strict_accepts_generated_modules(tmp_path: Path) -> None:
    for name, source in all_sources().items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    env = dict(os.environ, MYPYPATH=str(REPO))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            "--python-version",
            "3.11",
            *sorted(p.name for p in tmp_path.glob("*.py")),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found in" in done.stdout


def imported_modules(tree: ast.Module) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            assert node.module is not None
            if node.module == "envdsl":
                found.extend(f"envdsl.{alias.name}" for alias in node.names)
            else:
                found.append(node.module)
    return found


@pytest.mark.parametrize("name", NAMES)
def test_generated_module_imports_only_stdlib_and_the_runtime(name: str) -> None:
    tree = ast.parse(compiled_example(name).artifacts["module"])
    modules = imported_modules(tree)
    assert "envdsl.runtime" in modules
    for module in modules:
        root = module.split(".")[0]
        allowed = root in sys.stdlib_module_names or module == "envdsl.runtime"
        allowed = allowed or module.startswith("envdsl.runtime.")
        assert allowed, f"{name} imports {module}"
    # the imports are at the top of the module, not hidden in functions
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    nested = [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert len(top) == len(nested)


@pytest.mark.parametrize("name", NAMES)
def test_generated_module_calls_no_dynamic_code(name: str) -> None:
    tree = ast.parse(compiled_example(name).artifacts["module"])
    banned = {"eval", "exec", "compile", "__import__", "open", "globals", "locals", "input"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id not in banned, f"{name} calls {node.func.id}"
        if isinstance(node, ast.Name):
            assert node.id not in ("os", "sys", "subprocess", "random", "time", "uuid"), node.id


@pytest.mark.parametrize("name", NAMES)
def test_generated_module_is_black_formatted(name: str) -> None:
    source = compiled_example(name).artifacts["module"]
    mode = black.Mode(line_length=100, target_versions={black.TargetVersion.PY311})
    assert black.format_str(source, mode=mode) == source


@pytest.mark.parametrize("name", NAMES)
def test_generated_module_layout(name: str) -> None:
    result = compiled_example(name)
    source = result.artifacts["module"]
    assert source.startswith('"Generated by envdsl from ')
    assert f"{name}.env" in source.splitlines()[0]
    module = load_module(source, result.artifacts["name"])
    env_class = environment_class(module)
    checked = result.checked
    assert isinstance(checked, CheckedSpec)
    assert env_class.__name__ == f"{checked.env.name.text}Env"
    assert env_class.__doc__ == env_class.DESCRIPTION
    assert env_class.DESCRIPTION
    public = [c.name for c in checked.callables.values() if c.kind != "fn" and not c.internal]
    internal = [c.name for c in checked.callables.values() if c.kind != "fn" and c.internal]
    assert list(env_class.TOOLS) == public
    for tool in internal:  # no typed method (an inherited Environment method may share the name)
        assert tool not in env_class.TOOLS
        assert tool not in vars(env_class)
    for tool in public:
        method = getattr(env_class, tool)
        assert method.__doc__ == env_class.TOOLS[tool].description
    # entities and records are slotted dataclasses, enums are Enums
    import dataclasses
    import enum

    # an imported module's declarations are there only when the spec uses them
    used = used_module_names(checked)
    for record, info in checked.records.items():
        if info.module is not None and record not in used:
            assert not hasattr(module, record), record
            continue
        cls = getattr(module, record)
        assert dataclasses.is_dataclass(cls) and hasattr(cls, "__slots__"), record
    for enum_name, enum_info in checked.enums.items():
        if enum_info.module is not None and enum_name not in used:
            assert not hasattr(module, enum_name), enum_name
            continue
        assert issubclass(getattr(module, enum_name), enum.Enum), enum_name


def test_examples_have_internal_tools_that_stay_hidden() -> None:
    """online_shop and library_lending declare internal actions: callable from code only."""
    for name, internal in [
        ("online_shop", "refund_and_restock"),
        ("library_lending", "offer_to_next_hold"),
    ]:
        env_class = env_class_of(compiled_example(name))
        env = env_class()
        assert internal not in [s["function"]["name"] for s in env.tool_schemas()]
        result = env.call(internal, {})
        assert result["success"] is False and "unknown tool" in result["error"]


def test_unformatted_output_is_valid_and_behaves_the_same() -> None:
    result = compiled_example("online_shop")
    assert isinstance(result.checked, CheckedSpec)
    raw = generate(result.checked, formatted=False)
    ast.parse(raw)
    raw_class = environment_class(load_module(raw, "online_shop_raw"))
    formatted_class = env_class_of(result)
    for task in formatted_class.TASKS:
        a, b = raw_class(), formatted_class()
        assert a.solve(task) == b.solve(task)
        assert a.state_hash() == b.state_hash()


def test_docs_examples_compile_and_solve() -> None:
    """The complete specs in docs/language.md generate environments whose tasks are solved."""
    text = (REPO / "docs" / "language.md").read_text("utf-8")
    blocks = re.findall(r"```envdsl\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 2
    for number, block in enumerate(blocks):
        env_class = env_class_of(compiled_text(block, f"doc{number}.env"))
        for task in env_class.TASKS:
            env = env_class()
            assert all(r["success"] for r in env.solve(task)), (number, task)
            assert env.evaluate()["success"] is True, (number, task)


# ---- what the translated expressions compute ------------------------------------------------------


@pytest.fixture(scope="module")
def expr_env() -> Environment:
    env = env_class_of(compiled_text(EXPR))()
    env.reset(state={"rows": [{"id": "R1", "n": 1}, {"id": "R2", "n": 2, "tag": "t"}]})
    return env


EXPECTED: dict[str, Any] = {
    # floor division and modulo round towards minus infinity, round() is Python's
    "arith": [3, -4, 1, 2, 1024, 4, 2, 4, 13],
    "floats": [3.5, 2.67, 1.5, 3.0],
    "strings": [
        "abcd",
        "X",
        "pad",
        "b",
        "bbb",
        "middle",  # str() of an enum member is its JSON value
        "3.14|007|high",
        "x-y",
        "true",
        "none",
        "\u00c9",
    ],
    "bools": [True, True, True, True, True, True, True, True, True, False, True, False],
    "collections": [1, 4, 1, 8, 17, 3, 1, 8, 2, 2, 1, 2],
    "keyed": ["bob", "ann", "cy", "bob"],
    "firsts": None,
    "comps": {"bob": 18, "cy": 10},
    "loops": [0, 1, 3, 4, 10, 120, 4, 10, 2, 1],
    "dates": [
        "2024-02-29",  # add_months caps the day at the month's end
        "2024-02-01",
        "2024-03-10",
        "2",  # 2024-01-31 is a Wednesday
        "30",
        "120",
        "2024-03-11T00:15:00Z",
        "65",
    ],
    "maps": [1, 1, 2, 3],
    "optional": ["untagged", "t", "2", "[R1, R2]"],
    "levels": ["low", "middle", "high"],
    "nested": [[0, 0, 0], [0, 1, 2], [0, 2, 4]],
    "setcomp": [0, 1, 2],
    "intcast": [3, 12, -2],
    "join_ints": "[1, 2]|middle|none",
    "tables": ["R1", "R2", "R1", "R2", "R9", "R2", "2", "false", "true", "0", "2"],
    "date_conv": ["2024-03-10", "2024-03-10T00:00:00Z"],
}

FAILURES = {
    "div0": "division by zero",
    "mod0": "division by zero",
    "idx": "out of range",
    "emptymin": "empty",
    "badint": "'x' is not an integer",
    "baddate": "'2024-02-30' is not a date",
    "mapmiss": "'nope' not found",
}


def test_every_expression_query_is_covered(expr_env: Environment) -> None:
    assert set(expr_env.TOOLS) == set(EXPECTED) | set(FAILURES)


@pytest.mark.parametrize("query", sorted(EXPECTED))
def test_expression_values(expr_env: Environment, query: str) -> None:
    result = expr_env.call(query, {})
    assert result == {"success": True, "data": EXPECTED[query]}


@pytest.mark.parametrize("query", sorted(FAILURES))
def test_runtime_errors_fail_the_call_cleanly(expr_env: Environment, query: str) -> None:
    before = json.dumps(expr_env.state_json())
    result = expr_env.call(query, {})
    assert result["success"] is False, result
    assert FAILURES[query] in result["error"]
    assert expr_env.last_exception is None, expr_env.last_exception
    assert json.dumps(expr_env.state_json()) == before


ROW_OR_REF = '''
env RowOrRef {
  """A conditional whose branches are a row and a ref: its value is a ref (the row's key)."""
  entity User {
    key user_id: str
    name: str
  }
  entity Log {
    key log_id: str
    user: ref User
  }
  state {
    users: table User
    logs: table Log
  }
  query who(log_id: str, mine: bool) -> str {
    """The log's user, or the first user."""
    let l = logs[log_id]
    let u = first(users) else "no users"
    let k = u if mine else l.user
    return k.name + "/" + str(k)
  }
}
'''


@pytest.mark.parametrize("mine, expected", [(True, "a/A"), (False, "b/B")])
def test_a_conditional_of_a_row_and_a_ref_gives_the_key(mine: bool, expected: str) -> None:
    env = env_class_of(compiled_text(ROW_OR_REF))()
    users = [{"user_id": "A", "name": "a"}, {"user_id": "B", "name": "b"}]
    env.reset(state={"users": users, "logs": [{"log_id": "L", "user": "B"}]})
    assert env.call("who", {"log_id": "L", "mine": mine}) == {"success": True, "data": expected}


def test_code_that_is_only_executed_is_not_formatted() -> None:
    """envdsl.load (and run, explore, schema) execute the module in memory: black, most of
    the compile time, must not run; `envdsl compile` output stays formatted."""
    script = (
        "import sys, envdsl\n"
        "env = envdsl.load('examples/sleep_tracking.env')()\n"
        "env.reset(task='reactivate_and_log')\n"
        "print('black' in sys.modules)\n"
    )
    repo = Path(__file__).resolve().parent.parent
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=repo, check=True
    )
    assert out.stdout.strip() == "False"


def test_module_without_loaders_verifies_the_same() -> None:
    """Verification's module leaves out the bulk loaders where no task starts `init from` a
    file (pipeline._verify): no loader is written, every table loads the reference way, and
    every task replays and verifies as with them."""
    from envdsl.diagnostics import DiagnosticSink
    from envdsl.tasks.verify import verify_tasks

    result = compiled_example("online_shop")
    assert isinstance(result.checked, CheckedSpec)
    bare = generate(result.checked, formatted=False, loaders=False)
    assert "def _load_row_" not in bare and "loader=None" in bare
    bare_class = environment_class(load_module(bare, "online_shop_bare", register=False))
    full_class = env_class_of(result)
    assert all(spec.loader is None for spec in bare_class.TABLES.values())
    for task in full_class.TASKS:
        a, b = bare_class(), full_class()
        assert a.solve(task) == b.solve(task)
        assert a.state_hash() == b.state_hash()
    reports = []
    for source in (bare, generate(result.checked, formatted=False)):
        sink = DiagnosticSink()
        module = load_module(source, "online_shop_verify", register=False)
        found = verify_tasks(result.checked, module, sink)
        reports.append(([r.as_json() for r in found], [str(d) for d in sink.sorted()]))
    assert reports[0] == reports[1]


@pytest.mark.parametrize("name", NAMES)
def test_module_without_whole_calls_verifies_the_same(name: str) -> None:
    """Verification's module leaves out the tools' whole calls, their typed-argument methods,
    the row rules, the inserters, field writers, record factories and sizers
    (pipeline._verify): every call takes the reference path, and every task verifies with
    the same reports and diagnostics as on the full module."""
    from envdsl.diagnostics import DiagnosticSink
    from envdsl.tasks.verify import verify_tasks

    result = compiled_example(name)
    assert isinstance(result.checked, CheckedSpec)
    bare = generate(result.checked, formatted=False, calls=False)
    assert "def _call_" not in bare and "def _rules_" not in bare
    # nor the other forms written out for the speed of calls (the reference forms serve)
    for written_out in ("def _insert_", "def _write_", "def _new_", "def _stored_size"):
        assert written_out not in bare
    assert "def _call_" in generate(result.checked, formatted=False)
    bare_class = environment_class(load_module(bare, f"{name}_bare", register=False))
    assert all(not t.call and not t.json_arguments for t in bare_class.TOOLS.values())
    assert not any(hasattr(bare_class, method) for method in _typed_method_names(result))
    reports = []
    for source in (bare, generate(result.checked, formatted=False)):
        sink = DiagnosticSink()
        module = load_module(source, f"{name}_verify", register=False)
        found = verify_tasks(result.checked, module, sink)
        reports.append(([r.as_json() for r in found], [str(d) for d in sink.sorted()]))
    assert reports[0] == reports[1]


def _typed_method_names(result: CompileResult) -> list[str]:
    full_class = env_class_of(result)
    names = [n for n in vars(full_class) if not n.startswith("_") and n not in vars(Environment)]
    methods = [n for n in names if callable(getattr(full_class, n)) and not n.isupper()]
    assert methods  # every example has tools
    return methods


def test_verification_keeps_the_loaders_for_init_from(monkeypatch: pytest.MonkeyPatch) -> None:
    """A task that starts `init from` a file loads its state in bulk in verification too."""
    import envdsl.codegen.emit
    from envdsl.pipeline import check_file

    asked: list[bool] = []
    real = envdsl.codegen.emit.generate

    def spy(
        checked: CheckedSpec, *, formatted: bool = True, loaders: bool = True, calls: bool = True
    ) -> str:
        asked.append(loaders)
        return real(checked, formatted=formatted, loaders=loaders, calls=calls)

    monkeypatch.setattr(envdsl.codegen.emit, "generate", spy)
    tasks = Path(__file__).parent / "task_files"
    assert check_file(tasks / "demo.env", task_files=[tasks / "demo.tasks.env"]).ok
    assert check_file(example_specs.REPO / "examples" / "personal_notes.env").ok
    assert asked == [True, False]


def test_used_module_names_without_imports() -> None:
    checked = compiled_example("online_shop").checked
    assert isinstance(checked, CheckedSpec)
    assert used_module_names(checked) == set()


@pytest.mark.parametrize(
    "code",
    [
        "(a) + (b)",
        "(a and b)",
        "((a))",
        "(f(x)[1])",
        "(a",
        "(a))",
        "()",
        "(x)(y)",
        "([a] + {b: c})",
        "('(' + b)",
        "('a)' + (b))",
        '("""x)""" + y)',
        "(r'\\'' + ')')",
        "(f'{a})' + b)",
        "('\\\\' + (c))",
        "('''a''' + ')')",
        "(a # c)",
        "(a)\n",
        "('x\\\n)",
        '("it\'s")',
        "(self.t_docs.row('D-1').content == 'Q2 (final)')",
    ],
)
def test_unparenthesized_reads_brackets_as_the_tokenizer(code: str) -> None:
    """The one-line scan of unparenthesized finds the brackets Python's tokenizer finds."""
    from envdsl.codegen.translate import _unparenthesized_by_tokens, unparenthesized

    assert unparenthesized(code) == _unparenthesized_by_tokens(code)


def test_line_of_counts_newlines() -> None:
    from envdsl.util.source import line_of

    for text in ["", "a", "\n", "a\nb\n", "\n\nx\n"]:
        for offset in range(len(text) + 2):
            assert line_of(text, offset) == text.count("\n", 0, offset) + 1
