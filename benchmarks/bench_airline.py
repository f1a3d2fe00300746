"""τ-bench airline's 158 gold tool calls on the envdsl port and on τ-bench's own tools, in one run.

Run from the repository root:

    python3 benchmarks/bench_airline.py                 # every task, 5 rounds
    python3 benchmarks/bench_airline.py --rounds 9 --resets 9
    python3 benchmarks/bench_airline.py --quick         # 3 tasks, 1 round (the test suite runs it)

The envdsl side is benchmarks/taubench_airline/airline.env compiled in memory by `envdsl.load`;
the baseline is τ-bench's tool classes, vendored unchanged (benchmarks/taubench_airline/vendor),
called as `Env.step` calls them: `tool.invoke(data=data, **kwargs)`, an exception becoming
"Error: <exception>". Both read the same data, τ-bench's flights, reservations and users JSON.

The replay, comparison and timing are bench_retail.py's (benchmarks/taubench_replay.py): every
task's gold calls on both sides, each task from the original data, compared call by call
(success or failure, message, value; nulls on one side and absent members on the other and
the `user_id` of a user object set aside, see airline.env's header) and task by task (the final
state); `calculate` on random expressions; then rounds of timed passes, each task from its
start (τ-bench parses its data again, envdsl `restore()`s a snapshot), reporting the calls' rate
and the tasks' (reset + calls) envdsl / τ-bench (goal: >= 1x). Any difference: exit status 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from taubench_replay import Domain, comparable, main as replay_main  # noqa: E402

AIRLINE = Domain(
    name="airline",
    data_files=("flights", "reservations", "users"),
    json_results=frozenset(
        {
            "book_reservation",
            "cancel_reservation",
            "get_reservation_details",
            "get_user_details",
            "list_all_airports",
            "search_direct_flight",
            "search_onestop_flight",
            "update_reservation_baggages",
            "update_reservation_flights",
            "update_reservation_passengers",
        }
    ),
    user_results=frozenset({"get_user_details"}),
)
# what tests/test_taubench_airline.py uses
data_text, tau_step, tau_as_result, tau_state = (
    AIRLINE.data_text,
    AIRLINE.tau_step,
    AIRLINE.tau_as_result,
    AIRLINE.tau_state,
)
__all__ = ["AIRLINE", "comparable", "data_text", "tau_step", "tau_as_result", "tau_state", "main"]


def main(argv: list[str] | None = None) -> int:
    return replay_main(AIRLINE, __doc__ or "", argv)


if __name__ == "__main__":
    raise SystemExit(main())
