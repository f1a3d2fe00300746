"""A `float` keeps an integral value that came in as a JSON integer as an integer (issue 26,
point 3): `100` stays `100`, `100.0` stays `100.0`, so a loaded state writes back byte-equal
and hashes as the original's; arithmetic is Python's (int op int stays int, `/` gives a float,
anything with a float is a float); schemas still say "number"."""

from __future__ import annotations

import functools
import json
from typing import Any

from envdsl.diagnostics.render_text import render_text
from envdsl.generated.loader import environment_class, load_module
from envdsl.pipeline import compile_source
from envdsl.runtime import Environment
from envdsl.util.source import SourceFile

SHOP = '''env Shop {
  entity Item {
    key item_id: str
    price: float
    amount: float
    history: list[float] = []
  }
  state {
    items: table Item
    rate: float = 1.5
    fees: map[float, float] = {}
  }
  action scale(item_id: str, by: float) -> float {
    """Multiply an item's price."""
    let it = items.get(item_id) else "no item"
    it.price = it.price * by
    return it.price
  }
  action halve(item_id: str) -> float {
    """Halve an item's price."""
    let it = items.get(item_id) else "no item"
    it.price = it.price / 2
    return it.price
  }
  action add(item_id: str, amount: float) -> float {
    """Add to an item's amount."""
    let it = items.get(item_id) else "no item"
    it.amount += amount
    it.history.append(amount)
    return it.amount
  }
  action invert(item_id: str) -> float {
    """Replace a price by its inverse."""
    let it = items.get(item_id) else "no item"
    it.price = it.price ** -1
    return it.price
  }
  query total() -> float {
    """The sum of all prices."""
    return sum(i.price for i in items)
  }
}
'''

TAU_STATE: dict[str, Any] = {
    "fees": {"1": 2, "2.5": 0.5},
    "items": {
        "P1": {"amount": 12.5, "history": [1, 2.0], "item_id": "P1", "price": 100},
        "P2": {"amount": 3, "history": [], "item_id": "P2", "price": 100.0},
    },
    "rate": 2,
}


@functools.lru_cache(maxsize=None)
def shop() -> type[Environment]:
    result = compile_source(SourceFile("shop.env", SHOP))
    assert result.ok, render_text(result.diagnostics, result.sources)
    module = load_module(result.artifacts["module"], result.artifacts["name"])
    return environment_class(module)


def loaded(state: dict[str, Any] | str = TAU_STATE) -> Environment:
    env = shop()()
    env.reset(state=state)
    return env


def test_a_loaded_state_writes_back_byte_equal() -> None:
    text = json.dumps(TAU_STATE, sort_keys=True)
    env = loaded(text)
    assert json.dumps(env.state_json(), sort_keys=True) == text
    # and through the keyed-dict form as well as the text
    assert loaded(TAU_STATE).state_json() == TAU_STATE


def test_the_state_hash_is_one_for_one_json() -> None:
    first, second = loaded(TAU_STATE), loaded(json.dumps(TAU_STATE))
    assert first.state_hash() == second.state_hash() == first.reference_state_hash()
    floated = json.loads(json.dumps(TAU_STATE).replace('"price": 100}', '"price": 100.0}'))
    assert type(floated["items"]["P1"]["price"]) is float
    assert loaded(floated).state_hash() != first.state_hash()  # `100.0` is written otherwise
    assert json.dumps(loaded(floated).state_json(), sort_keys=True) == json.dumps(
        floated, sort_keys=True
    )


def test_int_arithmetic_stays_int_and_a_float_stays_float() -> None:
    env = loaded()
    assert env.call("scale", {"item_id": "P1", "by": 2})["data"] == 200
    assert json.dumps(env.state_json()["items"]["P1"]["price"]) == "200"
    assert env.call("scale", {"item_id": "P2", "by": 2})["data"] == 200.0
    assert json.dumps(env.state_json()["items"]["P2"]["price"]) == "200.0"
    assert json.dumps(env.call("scale", {"item_id": "P1", "by": 0.5})["data"]) == "100.0"


def test_division_gives_a_float() -> None:
    env = loaded()
    result = env.call("halve", {"item_id": "P1"})["data"]
    assert result == 50.0 and type(result) is float


def test_int_plus_float_is_float_and_int_plus_int_is_int() -> None:
    env = loaded()
    assert json.dumps(env.call("add", {"item_id": "P2", "amount": 4})["data"]) == "7"
    assert json.dumps(env.call("add", {"item_id": "P2", "amount": 0.5})["data"]) == "7.5"
    assert env.state_json()["items"]["P2"]["history"] == [4, 0.5]


def test_an_int_to_a_negative_power_of_a_float_field_is_a_float() -> None:
    env = loaded()
    result = env.call("invert", {"item_id": "P1"})
    assert result == {"success": True, "data": 0.01}


def test_sums_are_pythons() -> None:
    assert json.dumps(loaded().call("total")["data"]) == "200.0"  # 100 + 100.0
    ints = json.loads(json.dumps(TAU_STATE).replace('"price": 100.0', '"price": 7'))
    assert json.dumps(loaded(ints).call("total")["data"]) == "107"


def test_an_int_product_beyond_the_64_bit_range_becomes_a_float() -> None:
    env = loaded()
    big = 2**62
    assert env.call("scale", {"item_id": "P1", "by": big})["data"] == 100 * float(big)
    assert type(env.state_json()["items"]["P1"]["price"]) is float


def test_the_schema_still_says_number() -> None:
    schemas = {s["function"]["name"]: s["function"] for s in shop()().tool_schemas()}
    assert schemas["scale"]["parameters"]["properties"]["by"] == {"type": "number"}
