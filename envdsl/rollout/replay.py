"""Replaying a recorded rollout: `envdsl run spec.env --rollout traj.jsonl --index N`.

The record's tool calls (as the model wrote them) are run again from its task's initial state
and its final answer is graded by the task's checks as the spec has them now, so a changed
check re-grades old trajectories. The warnings say when the record was made from another
version of the spec or of the task's checks, and the result sets the recorded reward and state
hash beside the new ones.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from envdsl.rollout.plan import EnvSource
from envdsl.rollout.records import read_records


class ReplayError(Exception):
    """A record that cannot be replayed on this spec; the message is one line."""


@dataclass(slots=True)
class Replay:
    task: str
    calls: list[tuple[str, Any]]
    answer: str
    recorded: dict[str, Any]  # reward, success, state_hash as the record has them
    warnings: list[str] = field(default_factory=list)


def load_replay(path: str | os.PathLike[str], index: int, source: EnvSource) -> Replay:
    records = [record for _, record in read_records(path)]
    if not -len(records) <= index < len(records):
        raise ReplayError(
            f"--index {index} is out of range: '{os.fspath(path)}' has {len(records)} record(s)"
        )
    record = records[index]
    task = record.get("task")
    if record.get("env") != source.env:
        raise ReplayError(
            f"record {index} is a rollout of {record.get('env')!r}, not of {source.env!r}"
        )
    if not isinstance(task, str) or task not in source.tasks:
        raise ReplayError(f"record {index} is of task {task!r}, which {source.path} does not have")
    origin = record.get("provenance") or {}
    warnings = []
    if origin.get("spec_hash") != source.spec_hash:
        warnings.append(
            f"record {index} was made from another version of {source.path} (spec hash "
            f"{str(origin.get('spec_hash'))[:12]}, now {source.spec_hash[:12]}): its calls are "
            "replayed and graded on the spec as it is now"
        )
    if origin.get("checks_hash") != source.tasks[task].checks:
        warnings.append(f"the checks of task {task} changed since record {index}: it is re-graded")
    calls: list[tuple[str, Any]] = []
    for message in record.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict):
                    calls.append((str(function.get("name", "")), function.get("arguments", "")))
    answer = record.get("answer")
    recorded = {name: record.get(name) for name in ("reward", "success", "state_hash")}
    return Replay(task, calls, answer if isinstance(answer, str) else "", recorded, warnings)
