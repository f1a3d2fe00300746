"""envdsl.adapters.trl: TRL-style environment classes, their tool methods read by
`transformers.utils.get_json_schema` as TRL reads them (issue 11, item 4)."""

from __future__ import annotations

import functools
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from test_runtime import build

import envdsl
from envdsl.adapters.dataset_records import task_records
from envdsl.adapters.trl import environment_factory
from envdsl.runtime import Environment

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
TASK = "reactivate_and_log"


@functools.cache
def sleep() -> type[Environment]:
    return envdsl.load(SLEEP)


def test_the_class_has_the_shape_trl_reads() -> None:
    import transformers.utils as transformers_utils  # the [trl] extra, part of .[dev]

    cls = environment_factory(sleep(), tasks=[TASK])
    env = cls()  # a zero-argument constructor
    public = sorted(
        n for n, v in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")
    )
    assert public == sorted([*sleep().TOOLS, "reset", "get_reward"])
    expected = {s["function"]["name"]: s["function"] for s in sleep()().tool_schemas()}
    for name, function in expected.items():
        schema = transformers_utils.get_json_schema(getattr(env, name))["function"]
        assert schema["name"] == name and schema["description"] == function["description"]
        parameters = schema["parameters"]
        assert sorted(parameters["required"]) == sorted(function["parameters"]["required"])
        for prop, wanted in function["parameters"]["properties"].items():
            got = parameters["properties"][prop]
            assert got["type"] == wanted["type"] and got.get("enum") == wanted.get("enum")
            assert got["description"]  # TRL needs a description of every argument
    assert inspect.signature(cls.reset).return_annotation in (str, "str")
    assert inspect.signature(cls.get_reward).return_annotation in (float, "float")


def _solution() -> list[dict[str, Any]]:
    records = task_records(sleep(), SLEEP.read_text("utf-8"))
    calls: list[dict[str, Any]] = json.loads(
        next(r for r in records if r["task"] == TASK)["solution"]
    )
    return calls


def test_a_rollout_through_the_methods_earns_the_reward() -> None:
    env = environment_factory(sleep())()
    assert env.get_reward() == 0.0
    # a dataset row from `envdsl tasks --format jsonl` comes in as keyword arguments
    instruction = env.reset(task=TASK, instruction="ignored", spec_hash="x")
    assert instruction == sleep().TASKS[TASK].instruction
    before = env.env.state_hash()
    failed = json.loads(env.set_status(user_id="U9", status="active"))
    assert failed == {"success": False, "error": "user not found"}
    assert json.loads(env.set_status(user_id="U2", status="bogus"))["success"] is False
    assert env.env.state_hash() == before and env.get_reward() < 1.0
    for call in _solution():
        arguments = {k: v for k, v in call["arguments"].items() if v is not None}
        assert json.loads(getattr(env, call["name"])(**arguments))["success"] is True
    assert env.get_reward() == 1.0


def test_tasks_are_taken_in_turn_without_a_task_column() -> None:
    cls = environment_factory(sleep(), tasks=["close_account", TASK])
    first, second = cls(), cls()
    assert first.reset() == sleep().TASKS["close_account"].instruction
    assert second.reset() == sleep().TASKS[TASK].instruction
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        first.reset(task="nope")
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        environment_factory(sleep(), tasks=["nope"])


def test_a_tool_named_like_the_classs_own_method_is_refused() -> None:
    clash = build('''
env Clash {
  """A tool named like the TRL environment's reset."""
  entity C { key id: str }
  state { cs: table C }
  query reset() -> int {
    """How many rows there are."""
    return len(cs)
  }
}
''')
    with pytest.raises(ValueError, match="tool 'reset' of Clash collides"):
        environment_factory(clash)
