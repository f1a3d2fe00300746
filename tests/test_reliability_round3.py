"""Reliability, third round (issue 27, points 1-6): each case as the fuzzer found it.

Every test first builds the small spec or call that failed (a traceback, E9001, a check that
said ok before compile or run failed, a call that ran for seconds) and then asserts the clean
outcome: a diagnostic with a code and a span, or a failed call with the state untouched.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import check_source, compile_source
from envdsl.runtime import Environment
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent


def build(text: str) -> type[Environment]:
    result = compile_source(SourceFile("spec.env", text))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)


def codes(text: str) -> list[str]:
    result = check_source(SourceFile("spec.env", text))
    return [d.code.code for d in result.diagnostics]


def call(env: Environment, tool: str, **arguments: Any) -> dict[str, Any]:
    result = env.call(tool, arguments)
    json.dumps(result)  # every result is JSON: an MCP client or `envdsl run` prints it
    return result


# ---- 1, 2, 4. numbers that cannot be represented --------------------------------------------

BIG = "1" + "0" * 399  # a 400-digit integer

FLOAT_DEFAULT = ('''
env Shop {
  """Purpose-made: a float default written as a huge integer."""
  entity Product {
    key sku: str
    price: float = BIG
  }
  state { products: table Product }
  action add(sku: str) -> Product {
    """Add a product."""
    return products.insert(Product(sku=sku))
  }
  action reprice(sku: str, price: float) -> Product {
    """Change a price."""
    let p = products.get(sku) else "no such product"
    p.price = price
    return p
  }
}
''').replace("BIG", BIG)


def assert_reported(text: str, code: str, line_text: str) -> None:
    """Reported with that code on the line holding `line_text`, and never an internal error."""
    result = check_source(SourceFile("spec.env", text))
    found = [d for d in result.diagnostics if d.code.code == code]
    assert found, [(d.code.code, d.message) for d in result.diagnostics]
    assert not any(d.code.code == "E9001" for d in result.diagnostics)
    start = found[0].span.start
    line = text[text.rfind("\n", 0, start) + 1 : text.find("\n", start)]
    assert line_text in line, line
    compiled = compile_source(SourceFile("spec.env", text))
    assert not compiled.ok
    # an error inside a task leaves that task out and the module is still made (one bad task
    # does not block the others); anywhere else no module is made
    assert "module" not in compiled.artifacts or compiled.invalid_tasks


def test_float_default_of_400_digits_is_a_range_error_without_a_task() -> None:
    assert_reported(FLOAT_DEFAULT, "E2014", "price: float")


def test_float_solution_argument_of_400_digits_is_a_range_error() -> None:
    spec = FLOAT_DEFAULT.replace(BIG, "1.5").replace(
        "\n}\n",
        f"""
  task cheaper {{
    \"\"\"Make it cheaper.\"\"\"
    init {{ products = [Product(sku="a")] }}
    solution {{ reprice(sku="a", price={BIG}) }}
  }}
}}
""",
    )
    assert_reported(spec, "E2014", "reprice(")


def test_init_value_past_64_bits_is_a_range_error() -> None:
    spec = """
env Counter {
  \"\"\"Purpose-made: one counter.\"\"\"
  state { n: int = 0 }
  action bump() -> int {
    \"\"\"Add one.\"\"\"
    n += 1
    return n
  }
  task big {
    \"\"\"Bump a big counter.\"\"\"
    init { n = 100000000000000000000000 }
    solution { bump() }
  }
}
"""
    assert_reported(spec, "E2014", "init {")


def test_the_most_negative_int_literal_is_in_range() -> None:
    from envdsl.runtime.limits import MAX_INT, MIN_INT
    from envdsl.semantics.constant_values import MAX_INT as CHECKED_MAX

    assert CHECKED_MAX == MAX_INT
    spec = f"""
env Bounds {{
  \"\"\"Purpose-made: the int range's ends as literals.\"\"\"
  const LOW: int = {MIN_INT}
  const HIGH: int = {MAX_INT}
  state {{ n: int = LOW }}
  query ends() -> list[int] {{
    \"\"\"Both ends.\"\"\"
    return [LOW, HIGH, n]
  }}
}}
"""
    env = build(spec)()
    env.reset()
    assert call(env, "ends")["data"] == [MIN_INT, MAX_INT, MIN_INT]


def test_overflowing_constant_is_a_diagnostic_and_never_hangs() -> None:
    spec = """
env Tower {
  \"\"\"Purpose-made: a power tower.\"\"\"
  const HUGE: int = ((2 ** 10000) ** 10000) ** 10000
  query get() -> int {
    \"\"\"The constant.\"\"\"
    return HUGE
  }
}
"""
    started = time.perf_counter()
    assert_reported(spec, "E4024", "const HUGE")
    assert time.perf_counter() - started < 5.0
    for value, code in (
        ("9223372036854775807 + 1", "E4024"),
        ("-(2 ** 63)", "E4024"),  # as at run time: the power itself is out of range
        ("-9223372036854775807 - 2", "E4024"),
        ("3 * 3074457345618258603", "E4024"),
        ("7 // (2 - 2)", "E4024"),
    ):
        assert_reported(spec.replace("((2 ** 10000) ** 10000) ** 10000", value), code, "HUGE")
    # in range, and what is not plain arithmetic, loads and runs as before
    for value, expected in (("2 ** 62 + (2 ** 62 - 1)", 2**63 - 1), ("-(2 ** 62) * 2", -(2**63))):
        env = build(spec.replace("((2 ** 10000) ** 10000) ** 10000", value))()
        env.reset()
        assert call(env, "get")["data"] == expected


# ---- 3. typed values returned or stored as `json` --------------------------------------------

ROWS_AS_JSON = '''
env Directory {
  """Purpose-made: rows, enums, datetimes, sets and int keys flowing into json."""
  enum Level { junior, senior }
  entity Person {
    key person_id: str
    name: str
    level: Level = Level.junior
    joined: datetime? = none
  }
  state {
    people: table Person
    archive: json = []
  }
  query everyone() -> json {
    """Every person as JSON."""
    return [p for p in people]
  }
  query last_by_name() -> json {
    """The person whose name sorts last, or null."""
    return max(people, key=lambda p: p.name, default=none)
  }
  query levels_by_length() -> json {
    """Name lengths mapped to the set of levels."""
    return {len(p.name): {p.level} for p in people}
  }
  action archive_all() -> int {
    """Keep a copy of every row in the json field."""
    archive = [p for p in people]
    return len(people)
  }
  action hire(person_id: str, name: str) -> Person {
    """Add a person."""
    return people.insert(Person(person_id=person_id, name=name,
                                joined=datetime("2024-03-01T09:00:00Z")))
  }
}
'''


def test_rows_returned_as_json_are_json_objects() -> None:
    env = build(ROWS_AS_JSON)()
    env.reset()
    assert call(env, "last_by_name") == {"success": True, "data": None}  # nothing hired yet
    call(env, "hire", person_id="p9", name="Zoe")
    call(env, "hire", person_id="p1", name="Al")
    people = call(env, "everyone")["data"]
    assert sorted(p["person_id"] for p in people) == ["p1", "p9"]
    assert {p["level"] for p in people} == {"junior"}
    assert all(p["joined"] == "2024-03-01T09:00:00Z" for p in people)
    assert call(env, "last_by_name")["data"]["name"] == "Zoe"
    assert call(env, "levels_by_length")["data"] == {"2": ["junior"], "3": ["junior"]}


def test_rows_stored_in_a_json_field_keep_the_state_dumpable() -> None:
    env = build(ROWS_AS_JSON)()
    env.reset()
    call(env, "hire", person_id="x", name="Ida")
    assert call(env, "archive_all")["data"] == 1
    archived = env.state_json()["archive"]
    assert archived == [
        {"person_id": "x", "name": "Ida", "level": "junior", "joined": "2024-03-01T09:00:00Z"}
    ]
    json.dumps(env.state_json())
    before = env.state_hash()
    other = build(ROWS_AS_JSON)()
    other.reset(state=env.state_json())  # the dumped state loads back
    assert other.state_hash() == before


def test_pairs_into_json_are_refused_by_the_checker() -> None:
    spec = ROWS_AS_JSON.replace(
        "return [p for p in people]\n", "return enumerate([p.name for p in people])\n"
    )
    assert "E2001" in codes(spec), codes(spec)


def test_envdsl_run_prints_rows_without_traceback(tmp_path: Path) -> None:
    spec = tmp_path / "directory.env"
    spec.write_text(ROWS_AS_JSON)
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        '{"name": "hire", "arguments": {"person_id": "a", "name": "Bo"}}\n'
        '{"name": "everyone", "arguments": {}}\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "envdsl", "run", str(spec), "--calls", str(calls)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert '"person_id": "a"' in done.stdout


# ---- 5. split() within the collection limit and the call's budget -----------------------------

SPLITS = '''
env Splitter {
  """Purpose-made: split a text, once or many times over."""
  state { calls: int = 0 }
  query pieces(text: str, sep: str, times: int) -> int {
    """How many pieces `times` splits of the text make in all."""
    let total = 0
    for i in range(times) {
      total += len(text.split(sep))
    }
    return total
  }
  action count_words(text: str) -> int {
    """Count the words of a text and the call."""
    calls += 1
    return len(text.split())
  }
}
'''


def test_split_past_the_collection_limit_fails_fast() -> None:
    env = build(SPLITS)()
    env.reset()
    started = time.perf_counter()
    result = call(env, "pieces", text="," * 999_999, sep=",", times=1)
    assert result["success"] is False and "limit (100000)" in result["error"], result
    assert time.perf_counter() - started < 1.0


def test_many_large_splits_are_charged_to_the_call() -> None:
    """The 13.9 s call: split after split, each one step; now each piece costs budget."""
    env = build(SPLITS)()
    env.reset()
    before = env.state_hash()
    started = time.perf_counter()
    result = call(env, "pieces", text="a," * 99_998 + "a", sep=",", times=5_000)
    assert result["success"] is False and "size budget" in result["error"], result
    assert time.perf_counter() - started < 3.0
    assert env.state_hash() == before
    # an action that fails the same way leaves its write undone
    words = call(env, "count_words", text="w " * 100_001)
    assert words["success"] is False and env.state_hash() == before


def test_split_below_the_limit_is_exact() -> None:
    env = build(SPLITS)()
    env.reset()
    assert call(env, "pieces", text=" a  b c ", sep=" ", times=1)["data"] == 6
    assert call(env, "count_words", text=" a  b\tc ")["data"] == 3
    assert call(env, "count_words", text="x " * 100_000)["data"] == 100_000
    assert call(env, "pieces", text="a," * 99_999 + "a", sep=",", times=1)["data"] == 100_000


# ---- 6. Trojan Source: bidi and invisible characters ------------------------------------------

HIDDEN_SPEC = '''
env Notes {
  """Notes of one user.DOC"""
  state { notes: list[str] = [] }
  action add_note(text: str "The note's textPARAM") -> int {
    """Add a note."""
    # only the owner may add COMMENT notes
    require text != "secretSTRING" else "not allowed"
    notes.append(text)
    return len(notes)
  }
}
'''


def hidden_warnings(text: str) -> list[tuple[int, str]]:
    result = check_source(SourceFile("spec.env", text))
    return [
        (text.count("\n", 0, d.span.start) + 1, d.message)
        for d in result.diagnostics
        if d.code.code == "W5023"
    ]


def test_bidi_and_invisible_characters_are_warned_about_where_they_are() -> None:
    clean = HIDDEN_SPEC
    for mark in ("DOC", "PARAM", "COMMENT", "STRING"):
        clean = clean.replace(mark, "")
    assert hidden_warnings(clean) == []
    spec = (
        HIDDEN_SPEC.replace("DOC", "\u200b")
        .replace("PARAM", "\u2066")
        .replace("COMMENT", "\u202e } \u2066")  # two on one line: one warning
        .replace("STRING", "\u2069\ufeff")
    )
    warnings = hidden_warnings(spec)
    assert [line for line, _ in warnings] == [3, 5, 7, 8], warnings
    assert "U+200B ZERO WIDTH SPACE" in warnings[0][1]
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in warnings[2][1]
    # a warning, not an error: the spec still compiles (the author may mean it)
    assert compile_source(SourceFile("spec.env", spec)).ok


def test_hidden_characters_in_a_task_file_are_warned_about(tmp_path: Path) -> None:
    from envdsl.pipeline import check_file

    spec = HIDDEN_SPEC
    for mark in ("DOC", "PARAM", "COMMENT", "STRING"):
        spec = spec.replace(mark, "")
    (tmp_path / "notes.env").write_text(spec)
    tasks = tmp_path / "notes.tasks.env"
    tasks.write_text(
        'tasks for "notes.env" {\n  task one {\n    """Add the note \u202ehi."""\n'
        '    init { notes = [] }\n    solution { add_note(text="hi") }\n  }\n}\n'
    )
    result = check_file(tmp_path / "notes.env", task_files=[tasks])
    found = [d for d in result.diagnostics if d.code.code == "W5023"]
    assert [d.span.file for d in found] == [str(tasks)], result.diagnostics


# ---- found by the grammar fuzzer ---------------------------------------------------------------

OPTIONAL_INT_RESULT = '''
env Stock {
  """Purpose-made: a row with an optional int returned by a tool."""
  entity Item {
    key id: str
    reorder_at: int?
    count: int = 0
  }
  state { items: table Item }
  action add(id: str, reorder_at: int?) -> Item {
    """Add an item."""
    return items.insert(Item(id=id, reorder_at=reorder_at))
  }
  query get(id: str) -> Item {
    """One item."""
    let item = items.get(id) else "item not found"
    return item
  }
}
'''


def test_a_row_with_an_optional_int_field_is_a_result() -> None:
    """The written-out result check put `if ...: if ...:` on one line: a SyntaxError escaped
    every call of a tool whose result had an `int?` field, whatever its arguments."""
    env = build(OPTIONAL_INT_RESULT)()
    env.reset()
    assert call(env, "get", id="nope") == {"success": False, "error": "item not found"}
    assert call(env, "add", id="a", reorder_at=None)["data"]["reorder_at"] is None
    assert call(env, "add", id="b", reorder_at=5)["data"]["reorder_at"] == 5
    assert call(env, "get", id="b")["data"] == {"id": "b", "reorder_at": 5, "count": 0}


def test_a_json_state_field_may_default_to_null() -> None:
    """`blob: json = none` checked clean, then every reset said 'state field has no value'."""
    spec = ROWS_AS_JSON.replace("archive: json = []", "archive: json = none")
    env = build(spec)()
    env.reset()
    assert env.state_json()["archive"] is None
    call(env, "hire", person_id="p", name="Al")
    assert call(env, "archive_all")["data"] == 1
    assert env.state_json()["archive"][0]["person_id"] == "p"
    other = build(spec)()
    other.reset(state={"people": {}, "archive": None})
    assert other.state_json()["archive"] is None


def test_an_enum_without_members_generates_a_module_that_imports() -> None:
    """`enum Unused { }` checked clean; its generated class had no body (IndentationError)."""
    spec = '''
env Tags {
  """Purpose-made: an enum with no members yet."""
  enum Unused { }
  state { n: int = 0 }
  query get() -> int {
    """The counter."""
    return n
  }
}
'''
    env = build(spec)()
    env.reset()
    assert call(env, "get") == {"success": True, "data": 0}


def test_an_int_to_a_negative_power_fails_instead_of_storing_a_float() -> None:
    """`n ** (0 - k)` is typed int; Python made it a float (1 ** -64 == 1.0, 10 ** -2 == 0.01)
    and it was stored in an int field: the state no longer reloaded, or with another hash."""
    spec = '''
env Powers {
  """Purpose-made: a power with a parameter exponent."""
  state { n: int = 0 }
  action set_power(base: int, exponent: int) -> int {
    """Store base ** exponent."""
    n = base ** exponent
    return n
  }
}
'''
    env = build(spec)()
    env.reset()
    before = env.state_hash()
    for base, exponent in ((1, -64), (10, -2), (-1, -1), (0, -1)):
        result = call(env, "set_power", base=base, exponent=exponent)
        assert result["success"] is False and "negative power" in result["error"], result
        assert env.state_hash() == before
    assert call(env, "set_power", base=3, exponent=2)["data"] == 9
    assert call(env, "set_power", base=5, exponent=0)["data"] == 1
    assert type(env.state_json()["n"]) is int
