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
from envdsl.adapters.trl import envdsl_reward, environment_factory
from envdsl.runtime import Environment

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
TASK = "reactivate_and_log"
QUESTION = "nickname_and_tags_question"


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
    # no get_reward: TRL would count it as a second reward beside envdsl_reward
    assert public == sorted([*sleep().TOOLS, "reset"])
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


def _solution() -> list[dict[str, Any]]:
    records = task_records(sleep(), SLEEP.read_text("utf-8"))
    calls: list[dict[str, Any]] = json.loads(
        next(r for r in records if r["task"] == TASK)["solution"]
    )
    return calls


def _reward(env: Any, answer: str = "") -> float:
    [reward] = envdsl_reward([[{"role": "assistant", "content": answer}]], [env])
    assert reward is not None
    return reward


def test_a_rollout_through_the_methods_earns_the_reward() -> None:
    cls = environment_factory(sleep())
    env = cls()
    # a dataset row from `envdsl tasks --format jsonl` comes in as keyword arguments
    instruction = env.reset(task=TASK, instruction="ignored", spec_hash="x")
    assert instruction == sleep().TASKS[TASK].instruction
    before = env.env.state_hash()
    failed = json.loads(env.set_status(user_id="U9", status="active"))
    assert failed == {"success": False, "error": "user not found"}
    assert json.loads(env.set_status(user_id="U2", status="bogus"))["success"] is False
    assert env.env.state_hash() == before
    for call in _solution():
        arguments = {k: v for k, v in call["arguments"].items() if v is not None}
        assert json.loads(getattr(env, call["name"])(**arguments))["success"] is True
    assert _reward(env, "Done.") == 1.0
    # the answer ended the episode: a later call is refused and changes nothing
    after = env.env.state_hash()
    assert json.loads(env.set_status(user_id="U1", status="closed"))["success"] is False
    assert env.env.state_hash() == after
    # doing nothing earns what evaluate() says of the start, no more
    idle = cls()
    idle.reset(task=TASK)
    assert _reward(idle) == idle.env.evaluate()["reward"] < 1.0


def test_a_question_is_graded_on_the_completions_last_message() -> None:
    cls = environment_factory(SLEEP, [SLEEP.with_suffix(".tasks.env")], tasks=[QUESTION])
    right, wrong, cut = cls(), cls(), cls()
    rows = {"task": QUESTION}
    for env in (right, wrong, cut):
        env.reset(**rows)
        env.get_user(user_id="U5")
    call = {"type": "function", "function": {"name": "get_user", "arguments": {"user_id": "U5"}}}
    completions = [
        [{"role": "assistant", "content": "", "tool_calls": [call]},
         {"role": "tool", "name": "get_user", "content": "{}"},
         {"role": "assistant", "content": "Owl; tagged insomnia and shift-work."}],
        [{"role": "assistant", "content": "Lark, no tags."}],
        # cut off while calling a tool: no answer was given
        [{"role": "assistant", "content": "", "tool_calls": [call]}],
    ]  # fmt: skip
    rewards = envdsl_reward(completions, [right, wrong, cut])
    assert rewards[0] == 1.0 and rewards[1] is not None and rewards[1] < 1.0
    assert cut.episode.answer == "" and rewards[2] == cut.env.evaluate(answer="")["reward"]
    # text completions: the text is the answer
    text = cls()
    text.reset(task=QUESTION)
    assert envdsl_reward(["Owl, insomnia, shift-work"], [text]) == [1.0]


def test_reset_leaves_out_an_instruction_the_prompt_holds() -> None:
    env = environment_factory(sleep(), tasks=[TASK])()
    instruction = sleep().TASKS[TASK].instruction
    prompt = [{"role": "system", "content": "You act for the user."},
              {"role": "user", "content": instruction}]  # fmt: skip
    assert env.reset(task=TASK, prompt=prompt) is None  # TRL would append it a second time
    assert env.reset(task=TASK, prompt=[{"role": "user", "content": ""}]) == instruction


def test_the_arguments_follow_envdsl_load() -> None:
    tasks_file = SLEEP.with_suffix(".tasks.env")
    # the second positional argument is task files, as in envdsl.load(spec, task_files)
    cls = environment_factory(SLEEP, [tasks_file])
    assert QUESTION in cls().episode.env_class.TASKS
    with pytest.raises(TypeError, match="tasks= keyword takes names"):
        environment_factory(SLEEP, str(tasks_file))  # type: ignore[arg-type]


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
