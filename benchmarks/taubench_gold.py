"""The gold tool calls of a τ-bench tasks file, read with `ast` (shared by the retail and airline
ports' extract_gold_calls.py).

τ-bench's tasks files build pydantic objects, `Task(..., actions=[Action(name=..., kwargs={...}),
...])`; reading them with `ast` rather than importing them needs neither pydantic nor the rest of
τ-bench. Each call is `{"task": <index in the tasks list>, "name": <tool>, "kwargs": {...}}`.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any


def gold_calls(source: str, variable: str) -> tuple[int, list[dict[str, Any]]]:
    """The number of tasks in the list assigned to `variable`, and their gold calls in order."""
    module = ast.parse(source)
    (assignment,) = [
        node
        for node in module.body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets)
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


def write_gold_calls(tasks_gz: Path, variable: str, output: Path) -> int:
    """Write the gold calls of a gzipped tasks file to `output`, one JSON object a line."""
    source = gzip.decompress(tasks_gz.read_bytes()).decode("utf-8")
    tasks, calls = gold_calls(source, variable)
    with output.open("w", encoding="utf-8") as out:
        for call in calls:
            out.write(json.dumps(call, ensure_ascii=False, sort_keys=True) + "\n")
    with_calls = len({call["task"] for call in calls})
    print(f"{len(calls)} gold calls in {with_calls} of {tasks} tasks -> {output}")
    return 0
