"""τ-bench retail's 582 gold tool calls on the envdsl port and on τ-bench's own tools, in one run.

Run from the repository root:

    python3 benchmarks/bench_retail.py                  # every task, 5 rounds
    python3 benchmarks/bench_retail.py --rounds 9 --resets 9
    python3 benchmarks/bench_retail.py --quick          # 3 tasks, 1 round (the test suite runs it)

The envdsl side is benchmarks/taubench_retail/retail.env compiled in memory by `envdsl.load`;
the baseline is τ-bench's tool classes, vendored unchanged (benchmarks/taubench_retail/vendor),
called as `Env.step` calls them: `tool.invoke(data=data, **kwargs)`, an exception becoming
"Error: <exception>". Both read the same data, τ-bench's users, orders and products JSON.

First the script replays every task's gold calls on both sides, each task from the original data
(as τ-bench's `reset` reloads it), and compares call by call: the same success or failure (a
τ-bench result starting with "Error: " is a failure), the same message, the same value (τ-bench's
JSON text parsed; members that are null on one side and absent on the other, and the key
`user_id` that τ-bench's user objects lack, are set aside, see retail.env's header), and after
each task the same final state. It also runs `calculate`, which the port evaluates without
`eval`, on random expressions against τ-bench's. Any difference is printed and the exit status
is 1.

Then it times the calls: rounds of one pass over every task per side, the sides alternating
(which goes first alternates too), after one untimed pass each. In each pass a task starts from
a fresh state (τ-bench: the data parsed again from its JSON text; envdsl: `restore()` of a
snapshot taken after one `reset(state=...)`), with the cyclic GC off (`--gc`: on). It reports
calls/s per side (median over the rounds), the ratio envdsl / τ-bench (goal: >= 1x), the same
ratio for each task from its start (its reset and its calls, first calls included), per tool µs, and `env.call` with `json.dumps` of each result (τ-bench's
tools return text, so their cost includes the serialization). Resets are timed apart:
τ-bench's data parsed from its JSON text, envdsl's `reset(state=<the same text>)`,
`snapshot()` and `restore()`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from taubench_replay import Domain, comparable, main as replay_main  # noqa: E402

RETAIL = Domain(
    name="retail",
    data_files=("orders", "products", "users"),
    json_results=frozenset(
        {
            "get_user_details",
            "get_order_details",
            "get_product_details",
            "list_all_product_types",
            "cancel_pending_order",
            "modify_pending_order_address",
            "modify_pending_order_items",
            "modify_pending_order_payment",
            "modify_user_address",
            "exchange_delivered_order_items",
            "return_delivered_order_items",
        }
    ),
    user_results=frozenset({"get_user_details", "modify_user_address"}),
)
# what tests/test_taubench_retail.py uses
data_text, tau_step, tau_as_result, tau_state = (
    RETAIL.data_text,
    RETAIL.tau_step,
    RETAIL.tau_as_result,
    RETAIL.tau_state,
)
__all__ = ["RETAIL", "comparable", "data_text", "tau_step", "tau_as_result", "tau_state", "main"]


def main(argv: list[str] | None = None) -> int:
    return replay_main(RETAIL, __doc__ or "", argv)


if __name__ == "__main__":
    raise SystemExit(main())
