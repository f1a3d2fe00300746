"""Write gold_calls.jsonl: the gold tool calls of τ-bench retail's test tasks, in task order.

Run from the repository root (the output is committed; run again only if the vendored tasks
file changes):

    python3 benchmarks/taubench_retail/extract_gold_calls.py

The tasks file (vendor/tau_bench/envs/retail/tasks_test.py.gz, unchanged but gzipped) builds
pydantic objects, `Task(..., actions=[Action(name=..., kwargs={...}), ...])`; it is read with
`ast` rather than imported, so neither pydantic nor the rest of τ-bench is needed. Each line is
`{"task": <index in TASKS_TEST>, "name": <tool>, "kwargs": {...}}`.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TASKS = HERE / "vendor" / "tau_bench" / "envs" / "retail" / "tasks_test.py.gz"
OUTPUT = HERE / "gold_calls.jsonl"


def gold_calls(source: str) -> tuple[int, list[dict[str, Any]]]:
    """The number of tasks, and their gold calls in order."""
    module = ast.parse(source)
    (assignment,) = [
        node
        for node in module.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "TASKS_TEST" for t in node.targets)
    ]
    assert isinstance(assignment.value, ast.List)
    calls: list[dict[str, Any]] = []
    for index, task in enumerate(assignment.value.elts):
        assert isinstance(task, ast.Call)
        (actions,) = [k.value for k in task.keywords if k.arg == "actions"]
        assert isinstance(actions, ast.List)
        for action in actions.elts:
            assert isinstance(action, ast.Call)
            fields = {k.arg: ast.literal_eval(k.value) for k in action.keywords}
            calls.append({"task": index, "name": fields["name"], "kwargs": fields["kwargs"]})
    return len(assignment.value.elts), calls


def main() -> int:
    tasks, calls = gold_calls(gzip.decompress(TASKS.read_bytes()).decode("utf-8"))
    with OUTPUT.open("w", encoding="utf-8") as out:
        for call in calls:
            out.write(json.dumps(call, ensure_ascii=False, sort_keys=True) + "\n")
    with_calls = len({call["task"] for call in calls})
    print(f"{len(calls)} gold calls in {with_calls} of {tasks} tasks -> {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
