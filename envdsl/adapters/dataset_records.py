"""Dataset records of a spec's tasks: `envdsl tasks spec.env --format jsonl`, one per task.

A record holds what a training or evaluation harness needs without envdsl at hand: the tools
the agent gets, the instruction, the initial state, the reference solution's calls and the
checks that judge the run; `spec_hash` and `envdsl_version` say which spec and compiler made
it (the environment itself is rebuilt from the spec with `envdsl.load`).  The tools, the
initial state and the solution are JSON text: their shapes differ from spec to spec (and from
tool to tool), and a column of one type is what lets records of many specs form one dataset.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterator

import envdsl
from envdsl.runtime import Environment


def spec_hash(text: str) -> str:
    """SHA-256 of the spec's source text (`envdsl tasks` with task files: the spec's and
    theirs, joined by NUL characters, in the order given)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def task_records(env_class: type[Environment], spec_text: str) -> Iterator[dict[str, Any]]:
    digest = spec_hash(spec_text)
    schemas = env_class().tool_schemas()
    for name, spec in env_class.TASKS.items():
        env = env_class()
        env.reset(task=name)
        initial = env.state_json()
        env.solve(name)  # the solution's calls, as they are recorded in the trace
        solution = [{"name": t.name, "arguments": t.arguments} for t in env.trace]
        yield {
            "env": env_class.NAME,
            "spec_hash": digest,
            "task": name,
            "instruction": spec.instruction,
            "tools": _text(schemas),
            "initial_state": _text(initial),
            "solution": _text(solution),
            "checks": [text for text, _ in spec.checks],
            "envdsl_version": envdsl.__version__,
        }


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
