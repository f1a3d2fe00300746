"""Write gold_calls.jsonl: the gold tool calls of τ-bench retail's test tasks, in task order.

Run from the repository root (the output is committed; run again only if the vendored tasks
file changes):

    python3 benchmarks/taubench_retail/extract_gold_calls.py

The tasks file (vendor/tau_bench/envs/retail/tasks_test.py.gz, unchanged but gzipped) is read
with `ast` (benchmarks/taubench_gold.py). Each line is
`{"task": <index in TASKS_TEST>, "name": <tool>, "kwargs": {...}}`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TASKS = HERE / "vendor" / "tau_bench" / "envs" / "retail" / "tasks_test.py.gz"
OUTPUT = HERE / "gold_calls.jsonl"
VARIABLE = "TASKS_TEST"
sys.path.insert(0, str(HERE.parent))

import taubench_gold  # noqa: E402


def gold_calls(source: str) -> tuple[int, list[dict[str, Any]]]:
    """The number of tasks, and their gold calls in order."""
    return taubench_gold.gold_calls(source, VARIABLE)


if __name__ == "__main__":
    raise SystemExit(taubench_gold.write_gold_calls(TASKS, VARIABLE, OUTPUT))
