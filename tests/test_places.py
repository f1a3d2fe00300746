"""Places and values: a local bound to a value drawn from state *is* that value.

Every alias form of issue 9 is exercised twice: without a failure the write lands in state
(as in the Python the spec replaces), and followed by a failure it is rolled back exactly.
The effect analysis must count each write (E3001 in a query, re-checked invariants in an
action), and a property test runs random sequences of these forms and random failures,
checking after every call that a failed call changed nothing, that every value in state is
owned by the place it lives in, and that no two places share a value.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_runtime import build, canonical

from envdsl.pipeline import check_source, compile_source
from envdsl.runtime import Environment
from envdsl.runtime.places import OwnedDict, OwnedList, OwnedSet, Place, Value, place_of
from envdsl.semantics.model import CheckedSpec
from envdsl.util.source import SourceFile

ALIASES = '''
env Aliases {
  """Orders whose lines and tags are changed through locals of every kind."""
  record Line { sku: str, qty: int, tags: list[str] = [] }
  record Method { kind: str, balance: float }
  record Address { city: str }
  entity Customer {
    key customer_id: str
    address: Address
    methods: map[str, Method] = {}
  }
  entity Order {
    key order_id: str
    customer: ref Customer
    lines: list[Line]
    tags: list[list[str]] = []
    prices: map[str, int] = {}
    invariant "no negative quantity": all(l.qty >= 0 for l in lines)
  }
  state {
    customers: table Customer
    orders: table Order
    discounts: map[str, float] = {}
    log: list[str] = []
  }
  fn line0(o: Order) -> Line = o.lines[0]
  internal action bump(l: Line, by: int) {
    l.qty += by
  }
  action act(modes: list[str], value: int = 7, fail_after: bool = false) -> int {
    """Writes through locals of the kinds given, in order, then (optionally) a failure."""
    let o = orders["O1"]
    for mode in modes {
    if mode == "comprehension element" {
      let item = [it for it in o.lines if it.sku == "B"][0]
      item.qty = value
    } elif mode == "map element record" {
      let pm = o.customer.methods["card"]
      pm.balance = round(pm.balance - value, 2)
    } elif mode == "map get" {
      let pm = o.customer.methods.get("card") else "no card"
      pm.balance += value
    } elif mode == "loop variable" {
      for line in o.lines { line.qty = value }
    } elif mode == "first" {
      let l = first(o.lines) else "no lines"
      l.qty = value
    } elif mode == "inner list" {
      for inner in o.tags { inner.append("x") }
    } elif mode == "internal action" {
      bump(o.lines[0], value)
    } elif mode == "fn result" {
      let l = line0(o)
      l.qty = value
    } elif mode == "conditional" {
      let xs = o.tags[0] if len(o.tags) > 0 else []
      xs.append("sneaked")
    } elif mode == "map field" {
      let m = o.prices
      m["P"] = value
    } elif mode == "ref follow" {
      let a = o.customer.address
      a.city = "Z" + str(value)
    } elif mode == "scalar map" {
      let d = discounts
      d["X"] = 0.5
    } elif mode == "extend in place" {
      let ts = o.lines[1].tags
      ts += ["e"]
    } elif mode == "reassigned in a branch" {
      let ls = [Line(sku="fresh", qty=0)]
      if value > 0 { ls = o.lines }
      ls[0].qty = value
    } elif mode == "nested path" {
      let ls = o.lines
      ls[1].tags.append("n")
    } elif mode == "scalar list" {
      let lg = log
      lg.append("entry")
    } else {
      fail "unknown mode"
    }
    }
    require not fail_after else "failed after: " + ", ".join(modes)
    return 1
  }
  task start {
    """One order with two lines, a customer with a card."""
    init {
      customers = [Customer(customer_id="C1", address=Address(city="A"),
                            methods={"card": Method(kind="card", balance=100.0)})]
      orders = [Order(order_id="O1", customer="C1",
                      lines=[Line(sku="A", qty=1), Line(sku="B", qty=2, tags=["t"])],
                      tags=[["a"], ["b"]])]
    }
    solution {
      act(modes=["comprehension element"], value=5)
    }
    check "line B has 5": any(l.sku == "B" and l.qty == 5 for l in orders["O1"].lines)
  }
}
'''

# mode -> (JSON path into state_json(), the value there after act(mode, value=7))
EXPECTED: dict[str, tuple[tuple[Any, ...], Any]] = {
    "comprehension element": (("orders", "O1", "lines", 1, "qty"), 7),
    "map element record": (("customers", "C1", "methods", "card", "balance"), 93.0),
    "map get": (("customers", "C1", "methods", "card", "balance"), 107.0),
    "loop variable": (("orders", "O1", "lines", 0, "qty"), 7),
    "first": (("orders", "O1", "lines", 0, "qty"), 7),
    "inner list": (("orders", "O1", "tags", 1), ["b", "x"]),
    "internal action": (("orders", "O1", "lines", 0, "qty"), 8),
    "fn result": (("orders", "O1", "lines", 0, "qty"), 7),
    "conditional": (("orders", "O1", "tags", 0), ["a", "sneaked"]),
    "map field": (("orders", "O1", "prices", "P"), 7),
    "ref follow": (("customers", "C1", "address", "city"), "Z7"),
    "scalar map": (("discounts", "X"), 0.5),
    "extend in place": (("orders", "O1", "lines", 1, "tags"), ["t", "e"]),
    "reassigned in a branch": (("orders", "O1", "lines", 0, "qty"), 7),
    "nested path": (("orders", "O1", "lines", 1, "tags"), ["t", "n"]),
    "scalar list": (("log",), ["entry"]),
}


@pytest.fixture(scope="module")
def aliases() -> type[Environment]:
    return build(ALIASES)


def at(state: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        state = state[step]
    return state


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_write_through_a_local_lands_in_state(aliases: type[Environment], mode: str) -> None:
    env = aliases()
    env.reset(task="start")
    assert env.call("act", {"modes": [mode]}) == {"success": True, "data": 1}
    path, expected = EXPECTED[mode]
    assert at(env.state_json(), path) == expected
    assert_well_owned(env)


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_write_through_a_local_rolls_back(aliases: type[Environment], mode: str) -> None:
    env = aliases()
    env.reset(task="start")
    before, before_hash = canonical(env), env.state_hash()
    result = env.call("act", {"modes": [mode], "fail_after": True})
    assert result == {"success": False, "error": f"failed after: {mode}"}
    assert env.last_exception is None
    assert canonical(env) == before and env.state_hash() == before_hash
    assert_well_owned(env)
    # and the same write still lands afterwards: the undo left the values owned
    assert env.call("act", {"modes": [mode]})["success"] is True
    assert at(env.state_json(), EXPECTED[mode][0]) == EXPECTED[mode][1]


@pytest.mark.parametrize(
    "mode", ["comprehension element", "loop variable", "first", "fn result", "internal action"]
)
def test_the_owning_rows_invariant_is_rechecked(aliases: type[Environment], mode: str) -> None:
    env = aliases()
    env.reset(task="start")
    before = canonical(env)
    result = env.call("act", {"modes": [mode], "value": -5})
    assert result["success"] is False
    assert result["error"].startswith("no negative quantity"), result
    assert canonical(env) == before


def test_writes_through_locals_are_in_the_effect_summary() -> None:
    result = check_source(SourceFile("spec.env", ALIASES))
    assert result.ok, [d.message for d in result.sink.diagnostics]
    checked = result.checked
    assert isinstance(checked, CheckedSpec)
    writes = checked.effects["act"].writes
    assert {"orders.lines", "orders.tags", "orders.prices", "customers.methods"} <= writes
    assert {"customers.address", "discounts", "log"} <= writes
    assert checked.effects["bump"].writes == {"orders.lines"}


def test_solution_verification_sees_the_write() -> None:
    """The task's check reads a write made through a comprehension element: verification
    (which replays the solution) passes only because the write lands."""
    result = compile_source(SourceFile("spec.env", ALIASES))
    assert result.ok
    assert not [d for d in result.sink.diagnostics if d.code.code.startswith("E4")]


def test_snapshot_and_restore_keep_values_owned(aliases: type[Environment]) -> None:
    env = aliases()
    env.reset(task="start")
    snap = env.snapshot()
    assert env.call("act", {"modes": ["first"]})["success"] is True
    env.restore(snap)
    assert_well_owned(env)
    before = canonical(env)
    assert env.call("act", {"modes": ["nested path"], "fail_after": True})["success"] is False
    assert canonical(env) == before


def test_values_handed_out_are_copies_so_their_reader_cannot_change_the_state() -> None:
    """A result and state_json() are the agent's and the caller's to change: every list,
    map, record and `json` object or array in them is a copy, however deep in the value."""
    env_class = build('''
env Out {
  """Rows holding every kind of mutable value."""
  record Box { meta: json, items: list[json] = [] }
  entity R {
    key id: str
    meta: json
    metas: list[json] = []
    by_name: map[str, json] = {}
    box: Box
    tags: list[str] = []
  }
  state { rs: table R, config: json? }
  query get(id: str) -> R {
    """One row."""
    return rs[id]
  }
  query config_of() -> json {
    """The config."""
    return config
  }
}
''')
    deep = {"a": [1, {"b": [2]}]}
    row = {"id": "R1", "meta": deep, "metas": [deep], "by_name": {"x": deep}, "tags": ["t"]}
    row["box"] = {"meta": deep, "items": [deep]}
    env = env_class()
    env.reset(state={"rs": [row], "config": deep})
    before, digest = canonical(env), env.state_hash()

    def scribble(value: Any) -> None:
        if isinstance(value, dict):
            for item in list(value.values()):
                scribble(item)
            value["scribbled"] = True
        elif isinstance(value, list):
            for item in list(value):
                scribble(item)
            value.append("scribbled")

    for handed_out in (
        env.call("get", {"id": "R1"}),
        env.call("config_of", {}),
        env.state_json(),
    ):
        scribble(handed_out)
        assert canonical(env) == before
        assert env.state_hash() == digest == env.reference_state_hash()


def test_stored_values_are_copies_so_places_never_share() -> None:
    env_class = build('''
env Share {
  """Two rows; one's tags are assigned to the other."""
  entity R { key id: str, tags: list[str] = [] }
  state { rs: table R }
  action share() {
    """Copy R1's tags to R2, then change R1's."""
    rs["R2"].tags = rs["R1"].tags
    rs["R1"].tags.append("only R1")
  }
  action keep(fail_after: bool) {
    """Replace R1's tags, then change the old list through an alias."""
    let old = rs["R1"].tags
    rs["R1"].tags = ["new"]
    old.append("stale")
    require not fail_after else "undo"
  }
}
''')
    env = env_class()
    env.reset(state={"rs": [{"id": "R1", "tags": ["a"]}, {"id": "R2"}]})
    assert env.call("share", {})["success"] is True
    assert env.state_json()["rs"]["R2"]["tags"] == ["a"]
    assert env.state_json()["rs"]["R1"]["tags"] == ["a", "only R1"]
    before = canonical(env)
    assert env.call("keep", {"fail_after": True}) == {"success": False, "error": "undo"}
    assert canonical(env) == before  # the stale alias's write does not survive the undo
    assert env.call("keep", {"fail_after": False})["success"] is True
    assert env.state_json()["rs"]["R1"]["tags"] == ["new"]
    assert_well_owned(env)


# ---- ownership: every value in state lives at exactly one place -----------------------------


def assert_well_owned(env: Environment) -> None:
    seen: dict[int, Place] = {}

    def walk(value: Any, place: Place) -> None:
        if isinstance(value, (list, dict, set, Value)):
            owner = place_of(value)
            assert owner is not None, f"an unowned value in state at {place}: {value!r}"
            assert (owner.table, owner.attr) == (place.table, place.attr)
            assert owner.row is place.row, f"a value owned by another row object at {place}"
            assert isinstance(value, (OwnedList, OwnedDict, OwnedSet, Value))
            assert id(value) not in seen, f"two places share one value: {seen[id(value)]}, {place}"
            seen[id(value)] = place
        if isinstance(value, list):
            for item in value:
                walk(item, place)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item, place)
        elif isinstance(value, Value):
            for name in getattr(type(value), "__dataclass_fields__"):
                walk(getattr(value, name), place)

    for table_name, table in env._tables.items():
        for row in table.rows():
            for name in getattr(type(row), "__dataclass_fields__"):
                walk(getattr(row, name), Place(table_name, row, name))
    for name, value in env._scalars.items():
        walk(value, Place(None, None, name))


MODES = sorted(EXPECTED)


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(MODES), min_size=1, max_size=5),
            st.integers(-3, 9),
            st.booleans(),
        ),
        min_size=1,
        max_size=10,
    )
)
def test_random_alias_writes_never_escape_the_journal(
    aliases: type[Environment], calls: list[tuple[list[str], int, bool]]
) -> None:
    """Random bodies (sequences of the alias forms), random values, random late failures."""
    env = aliases()
    env.reset(task="start")
    written = set(check_effects()["act"])
    for modes, value, fail_after in calls:
        before_json, before_hash = env.state_json(), env.state_hash()
        result = env.call("act", {"modes": modes, "value": value, "fail_after": fail_after})
        assert env.last_exception is None, env.last_exception
        if not result["success"]:
            assert env.state_hash() == before_hash
        else:
            assert changed_places(before_json, env.state_json()) <= written
        assert_well_owned(env)


_EFFECTS: dict[str, set[str]] = {}


def check_effects() -> dict[str, set[str]]:
    if not _EFFECTS:
        result = check_source(SourceFile("spec.env", ALIASES), verify=False)
        assert isinstance(result.checked, CheckedSpec)
        _EFFECTS.update({k: v.writes for k, v in result.checked.effects.items()})
    return _EFFECTS


def changed_places(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """'table.field' and scalar names whose JSON differs between two states."""
    changed: set[str] = set()
    for name in before:
        old, new = before[name], after[name]
        if old == new:
            continue
        if isinstance(old, dict) and all(isinstance(r, dict) for r in old.values()):
            if set(old) != set(new):
                changed.add(name)
            for key in set(old) & set(new):
                for field_name in old[key]:
                    if json.dumps(old[key][field_name]) != json.dumps(new[key][field_name]):
                        changed.add(f"{name}.{field_name}")
        else:
            changed.add(name)
    return changed


def test_a_constant_cannot_be_changed_through_a_local() -> None:
    env_class = build('''
env Consts {
  """Rows get default tags from a constant."""
  const DEFAULT_TAGS: list[str] = ["new"]
  entity R { key id: str, tags: list[str] = [] }
  state { rs: table R }
  action add(id: str) -> list[str] {
    """Insert a row with the default tags plus one of its own."""
    let ts = DEFAULT_TAGS
    ts.append(id)
    rs.insert(R(id=id, tags=ts))
    return DEFAULT_TAGS
  }
}
''')
    env = env_class()
    env.reset(state={"rs": []})
    assert env.call("add", {"id": "a"}) == {"success": True, "data": ["new"]}
    assert env.call("add", {"id": "b"}) == {"success": True, "data": ["new"]}
    assert env.state_json()["rs"]["b"]["tags"] == ["new", "b"]
    assert env_class().call("add", {"id": "c"})["data"] == ["new"]


def test_an_immutable_field_cannot_change_through_a_parameter() -> None:
    """The checker rejects writes on a path to an immutable field (E3009), but a fn's or
    internal tool's parameter may be any value of its type: the runtime refuses the write."""
    env_class = build('''
env Audit {
  """Entries whose lines are fixed when written."""
  entity Entry {
    key entry_id: str
    lines: list[str] immutable
    notes: list[str] = []
  }
  state { entries: table Entry }
  internal action add_line(ls: list[str], line: str) {
    ls.append(line)
  }
  action amend(entry_id: str, line: str) {
    """Add a line to an entry's lines (which are immutable)."""
    let e = entries.get(entry_id) else "no such entry"
    add_line(e.lines, line)
  }
  action note(entry_id: str, line: str) {
    """Add a note to an entry."""
    let e = entries.get(entry_id) else "no such entry"
    add_line(e.notes, line)
  }
}
''')
    env = env_class()
    env.reset(state={"entries": [{"entry_id": "E1", "lines": ["a"]}]})
    before = canonical(env)
    result = env.call("amend", {"entry_id": "E1", "line": "b"})
    assert result["success"] is False and "immutable" in result["error"], result
    assert canonical(env) == before
    assert env.call("note", {"entry_id": "E1", "line": "n"})["success"] is True
    assert env.state_json()["entries"]["E1"]["notes"] == ["n"]


ADDS = '''
env Adds {
  """Sets and maps that grow by one element in a call."""
  entity Bag {
    key bag_id: str
    items: set[str] = set()
    counts: map[str, int] = {}
  }
  state {
    bags: table Bag
    seen: set[str] = set()
  }
  action add(item: str, count: int, fail_after: bool = false) -> int {
    """Adds one element to a row's set and map and to a scalar set."""
    let b = bags["B1"]
    b.items.add(item)
    b.counts[item] = count
    seen.add(item)
    require not fail_after else "failed after the adds"
    return len(b.items)
  }
  task start {
    """One bag."""
    init {
      bags = [Bag(bag_id="B1")]
    }
  }
}
'''


def test_adding_to_a_set_or_map_journals_the_element_not_a_copy() -> None:
    """`s.add(x)` and `m[k] = v` cost O(1) in the journal (issue 14 leftover): a big set or
    map is not copied, and a failed call still gives back exactly the state before it."""
    env = build(ADDS)()
    items = [f"i{i}" for i in range(5000)]
    big = {"bag_id": "B1", "items": items, "counts": {item: 1 for item in items}}
    env.reset(state={"bags": [big], "seen": items})
    snap = env.snapshot()  # keeps the successful call's journal in the history
    assert env.call("add", {"item": "new", "count": 2})["data"] == 5001
    history = env._world.history
    assert {entry[0] for entry in history} <= {"discard", "unput", "reput"} and len(history) == 3
    assert env.call("add", {"item": "i7", "count": 5})["success"]  # present: replaced value
    assert [entry[0] for entry in history[3:]] == ["reput"]
    before, before_hash = canonical(env), env.state_hash()
    assert not env.call("add", {"item": "other", "count": 3, "fail_after": True})["success"]
    assert canonical(env) == before and env.state_hash() == before_hash
    assert env.state_hash() == env.reference_state_hash()
    assert_well_owned(env)
    env.restore(snap)
    state = env.state_json()
    assert "new" not in state["bags"]["B1"]["items"] and state["bags"]["B1"]["counts"]["i7"] == 1
    assert "new" not in state["seen"] and env.state_hash() == env.reference_state_hash()
