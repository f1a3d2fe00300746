"""Dataset records of specs' tasks: `envdsl tasks SPEC... --format jsonl`, one per task.

A record holds what a training or evaluation harness needs without envdsl at hand: the chat
`prompt` an agent starts from (the system message of `envdsl rollout`, then the instruction as
the user's message: the conversational column TRL's trainers and verifiers read), the tools
the agent gets, the instruction, the initial state, the reference solution's calls, its
reference `answer` (what a question task's checks compare the agent's final message with; ""
when the solution states none, as verifiers' own datasets do) and the checks that judge the
run; `env` names the environment, `spec` and `task_files` say where it was read from, and
`spec_hash` and `envdsl_version` say which text and compiler made it (the environment itself
is rebuilt from the spec with `envdsl.load`). The tools, the initial state and the solution
are JSON text: their shapes differ from spec to spec (and from tool to tool), and a column of
one type is what lets records of many specs form one dataset.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterator, Sequence

import envdsl
from envdsl.episode.messages import system_message
from envdsl.runtime import Environment


def spec_hash(text: str) -> str:
    """SHA-256 of the spec's source text (`envdsl tasks` with task files: the spec's and
    theirs, joined by NUL characters, in the order given)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def chat_prompt(env_class: type[Environment], instruction: str) -> list[dict[str, str]]:
    """The messages an agent's episode opens with, as `envdsl rollout` sends them."""
    return [
        {"role": "system", "content": system_message(env_class)},
        {"role": "user", "content": instruction},
    ]


def task_records(
    env_class: type[Environment],
    spec_text: str,
    spec: str = "",
    task_files: Sequence[str] = (),
) -> Iterator[dict[str, Any]]:
    digest = spec_hash(spec_text)
    schemas = env_class().tool_schemas()
    for name, task in env_class.TASKS.items():
        env = env_class()
        env.reset(task=name)
        initial = env.state_json()
        env.solve(name)  # the solution's calls, as they are recorded in the trace
        solution = [{"name": t.name, "arguments": t.arguments} for t in env.trace]
        yield {
            "env": env_class.NAME,
            "spec": spec,
            "task_files": list(task_files),
            "spec_hash": digest,
            "task": name,
            "prompt": chat_prompt(env_class, task.instruction),
            "instruction": task.instruction,
            "tools": _text(schemas),
            "initial_state": _text(initial),
            "solution": _text(solution),
            "answer": task.answer or "",
            "checks": [text for text, _ in task.checks],
            "envdsl_version": envdsl.__version__,
        }


def _text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
