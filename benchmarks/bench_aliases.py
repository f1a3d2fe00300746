"""A tool that binds values from state inside a loop, generated vs plain Python, in one run.

Run from the repository root:

    python3 benchmarks/bench_aliases.py                 # 50 variants per product, 1.0 s per side
    python3 benchmarks/bench_aliases.py --variants 200 --budget 2
    python3 benchmarks/bench_aliases.py --quick         # a few calls, to keep the script working

The tool is τ-bench retail's modify_items shape: for each item of an order, find the item by a
comprehension, bind the product's variant map to a local, look the new variant up in it, and
write the item's id and price through the local. Until locals became the values they are bound to
(places and values), each `let` deep-copied the variant map, and the writes were lost.

The plain side is the same tool on dicts of dicts, as the Python that envdsl replaces: the same
checks in the same order, the same messages, the same effects (the script compares results and
states before timing). Both sides alternate timed batches; the median per-call time is reported,
with the ratio generated / plain. A failing call (the last item's new variant is unavailable,
after the earlier items were written) is timed too: the generated side rolls back.
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import statistics
import sys
import tempfile
import timeit
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import envdsl  # noqa: E402

SPEC = '''env Retail {
  """Orders of products with variants."""
  record Variant { item_id: str, price: float, available: bool, options: map[str, str] }
  record Item { item_id: str, product_id: str, price: float }
  entity Product { key product_id: str, name: str, variants: map[str, Variant] }
  entity Order { key order_id: str, items: list[Item], status: str, balance: float = 0.0 }
  state {
    products: table Product
    orders: table Order
  }
  action modify_items(order_id: str, item_ids: list[str], new_item_ids: list[str]) -> float {
    """Swap items of a pending order for other variants of the same products."""
    let o = orders.get(order_id) else "order not found"
    require o.status == "pending" else "non-pending order cannot be modified"
    require len(item_ids) == len(new_item_ids) else "the number of items to be exchanged should match"
    let diff = 0.0
    for i in range(len(item_ids)) {
      let matches = [it for it in o.items if it.item_id == item_ids[i]]
      require len(matches) > 0 else f"{item_ids[i]} not found"
      let item = matches[0]
      let variants = products[item.product_id].variants
      let v = variants.get(new_item_ids[i]) else "new item not found"
      require v.available else "new item not available"
      diff += v.price - item.price
      item.item_id = v.item_id
      item.price = v.price
    }
    o.balance = round(o.balance + diff, 2)
    return o.balance
  }
}
'''


class PlainRetail:
    """The same tool as plain Python over dicts, as a careful hand-written environment is: it
    checks every item before writing any, so a failed call leaves the state as it was."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.products: dict[str, Any] = copy.deepcopy(state["products"])
        self.orders: dict[str, Any] = copy.deepcopy(state["orders"])

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            return {"success": True, "data": getattr(self, name)(**arguments)}
        except ValueError as error:
            return {"success": False, "error": str(error)}

    def modify_items(self, order_id: str, item_ids: list[str], new_item_ids: list[str]) -> float:
        order = self.orders.get(order_id)
        if order is None:
            raise ValueError("order not found")
        if order["status"] != "pending":
            raise ValueError("non-pending order cannot be modified")
        if len(item_ids) != len(new_item_ids):
            raise ValueError("the number of items to be exchanged should match")
        changes = []
        for item_id, new_item_id in zip(item_ids, new_item_ids):
            matches = [it for it in order["items"] if it["item_id"] == item_id]
            if not matches:
                raise ValueError(f"{item_id} not found")
            item = matches[0]
            variants = self.products[item["product_id"]]["variants"]
            variant = variants.get(new_item_id)
            if variant is None:
                raise ValueError("new item not found")
            if not variant["available"]:
                raise ValueError("new item not available")
            changes.append((item, variant))
        diff = 0.0
        for item, variant in changes:
            diff += variant["price"] - item["price"]
            item["item_id"] = variant["item_id"]
            item["price"] = variant["price"]
        order["balance"] = round(order["balance"] + diff, 2)
        result: float = order["balance"]
        return result


def build_state(variants: int, items: int) -> dict[str, Any]:
    products = {}
    for p in range(items):
        product_id = f"P{p}"
        products[product_id] = {
            "product_id": product_id,
            "name": f"Product {p}",
            "variants": {
                f"{product_id}-V{v}": {
                    "item_id": f"{product_id}-V{v}",
                    "price": 10.0 + v,
                    "available": v != variants - 1,  # the last variant is sold out
                    "options": {"color": f"c{v}", "size": "M"},
                }
                for v in range(variants)
            },
        }
    order_items = [
        {"item_id": f"P{p}-V0", "product_id": f"P{p}", "price": 10.0} for p in range(items)
    ]
    orders = {"O1": {"order_id": "O1", "items": order_items, "status": "pending", "balance": 0.0}}
    return {"products": products, "orders": orders}


def swaps(items: int, variants: int) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """V0 -> V1, V1 -> V0 (so every call changes the state and two calls bring it back), and
    a failing call whose last item asks for the sold-out variant."""
    old = [f"P{p}-V0" for p in range(items)]
    new = [f"P{p}-V1" for p in range(items)]
    forth = {"order_id": "O1", "item_ids": old, "new_item_ids": new}
    back = {"order_id": "O1", "item_ids": new, "new_item_ids": old}
    bad_new = new[:-1] + [f"P{items - 1}-V{variants - 1}"]
    failing = {"order_id": "O1", "item_ids": old, "new_item_ids": bad_new}
    return forth, back, failing


def plain_state(env: PlainRetail) -> str:
    return json.dumps({"orders": env.orders, "products": env.products}, sort_keys=True)


def generated_state(env: Any) -> str:
    state = env.state_json()
    return json.dumps({"orders": state["orders"], "products": state["products"]}, sort_keys=True)


def per_call(run: Callable[[], None], calls_per_run: int, budget: float) -> list[float]:
    """Microseconds per call over batches of about 10 ms until the budget is spent."""
    timer = timeit.Timer(run)
    number = max(1, int(0.01 / max(timer.timeit(1), 1e-7)))
    samples: list[float] = []
    spent = 0.0
    while spent < budget or len(samples) < 3:
        elapsed = timer.timeit(number)
        spent += elapsed
        samples.append(elapsed / (number * calls_per_run) * 1e6)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", type=int, default=50, help="variants per product")
    parser.add_argument("--items", type=int, default=3, help="items in the order")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per side and case")
    parser.add_argument("--quick", action="store_true", help="a few calls only")
    args = parser.parse_args(argv)
    if args.quick:
        args.variants, args.budget = 5, 0.02

    retail = _load()
    state = build_state(args.variants, args.items)
    forth, back, failing = swaps(args.items, args.variants)

    generated = retail()
    generated.reset(state=state)
    plain = PlainRetail(state)
    for arguments in (forth, back, failing):  # same results, same effects
        g, p = generated.call("modify_items", arguments), plain.call("modify_items", arguments)
        if g != p:
            print(f"results differ: generated {g}, plain {p}", file=sys.stderr)
            return 1
        if generated_state(generated) != plain_state(plain):
            print("states differ after the call", file=sys.stderr)
            return 1

    def swap(env: Any) -> Callable[[], None]:
        def run() -> None:
            env.call("modify_items", forth)
            env.call("modify_items", back)

        return run

    def fail(env: Any) -> Callable[[], None]:
        return lambda: env.call("modify_items", failing)

    rows = []
    for case, make, calls in (("modify (2 swaps)", swap, 2), ("late failure", fail, 1)):
        g_samples: list[float] = []
        p_samples: list[float] = []
        for _ in range(3):  # alternate the sides so that machine noise hits both
            g_samples += per_call(make(generated), calls, args.budget / 3)
            p_samples += per_call(make(plain), calls, args.budget / 3)
        g_median, p_median = statistics.median(g_samples), statistics.median(p_samples)
        rows.append((case, p_median, g_median, g_median / p_median))
    before = generated.state_hash()
    generated.call("modify_items", failing)
    if generated.state_hash() != before:
        print("a failed call changed the generated state", file=sys.stderr)
        return 1

    print(
        f"bench_aliases.py, Python {platform.python_version()}, {platform.machine()}; "
        f"{args.items} items, {args.variants} variants per product"
    )
    print()
    print("| case | plain Python µs | generated µs | generated / plain |")
    print("|---|---:|---:|---:|")
    for case, plain_us, generated_us, ratio in rows:
        print(f"| {case} | {plain_us:.1f} | {generated_us:.1f} | {ratio:.2f} |")
    return 0


def _load() -> Any:
    """The spec compiled in memory by envdsl.load (which reads a file)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "retail.env"
        path.write_text(SPEC, encoding="utf-8")
        return envdsl.load(str(path))


if __name__ == "__main__":
    raise SystemExit(main())
