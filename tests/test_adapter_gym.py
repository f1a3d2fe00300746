"""envdsl.gym: a gymnasium.Env per spec, checked by gymnasium's own env_checker and driven
through a task's solution (issue 11, item 3)."""

from __future__ import annotations

import functools
import json
import warnings
from pathlib import Path
from typing import Any

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import envdsl
import envdsl.gym
from envdsl.adapters.dataset_records import task_records
from envdsl.adapters.gymnasium_env import PRINTABLE_ASCII
from envdsl.runtime import Environment

ROOT = Path(__file__).resolve().parent.parent
SLEEP = ROOT / "examples" / "sleep_tracking.env"
TASK = "reactivate_and_log"


@functools.cache
def sleep() -> type[Environment]:
    return envdsl.load(SLEEP)  # compiled once: each compile verifies the spec's tasks


def _solution(task: str) -> list[dict[str, Any]]:
    records = task_records(sleep(), SLEEP.read_text("utf-8"))
    calls: list[dict[str, Any]] = json.loads(
        next(r for r in records if r["task"] == task)["solution"]
    )
    return calls


@pytest.mark.parametrize("task", [TASK, None])
def test_passes_gymnasiums_env_checker(task: str | None) -> None:
    env = envdsl.gym.make(sleep(), task=task)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env)
    # the only warning allowed: render modes cannot be tried without a registry spec
    assert [str(w.message) for w in caught if "render" not in str(w.message)] == []


@pytest.mark.filterwarnings("ignore:.*render fps")  # text rendering has no frame rate
def test_through_gymnasium_make_and_its_wrappers() -> None:
    env = gymnasium.make(f"envdsl.gym:{envdsl.gym.ENV_ID}", spec=str(SLEEP), task=TASK)
    assert env.spec is not None and env.spec.id == envdsl.gym.ENV_ID
    check_env(env.unwrapped)
    observation, info = env.reset(seed=3)
    assert "Reactivate" in json.loads(observation)["instruction"] and info["task"] == TASK


def test_the_solution_earns_the_final_reward_in_the_sum() -> None:
    env = envdsl.gym.make(sleep(), task=TASK)
    observation, info = env.reset(seed=0)
    assert json.loads(observation) == {"task": TASK, "instruction": sleep().TASKS[TASK].instruction}
    assert [t["function"]["name"] for t in info["tools"]] == list(sleep().TOOLS)
    calls = _solution(TASK)
    # three accepted forms: JSON text, an OpenAI tool call with JSON-text arguments, a dict
    actions: list[Any] = [json.dumps(calls[0])]
    actions += [
        {
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
        }
        for c in calls[1:]
    ]
    total = 0.0
    for index, action in enumerate(actions):
        observation, reward, terminated, truncated, info = env.step(action)
        assert json.loads(observation)["success"] is True
        total += float(reward)
        assert terminated is (index == len(actions) - 1) and truncated is False
    assert total == pytest.approx(1.0) and info["evaluation"]["success"] is True


def test_a_failed_call_changes_nothing_and_earns_nothing() -> None:
    env = envdsl.gym.make(sleep(), task=TASK)
    env.reset(seed=0)
    env.step({"name": "set_status", "arguments": {"user_id": "U2", "status": "active"}})
    before = env.env.state_hash()
    for action in [
        {"name": "set_status", "arguments": {"user_id": "U9", "status": "active"}},
        "not json at all",
        {"tool_calls": []},
        {"name": "no_such_tool", "arguments": {}},
    ]:
        observation, reward, terminated, truncated, info = env.step(action)
        assert json.loads(observation)["success"] is False
        assert reward == 0.0 and not terminated
        assert info["state_hash"] == before


def test_an_answer_ends_the_episode_and_max_steps_truncates() -> None:
    env = envdsl.gym.make(sleep(), task=TASK, max_steps=2)
    env.reset(seed=0)
    first = env.step({"name": "get_user", "arguments": {"user_id": "U1"}})
    assert first[2:4] == (False, False)
    assert env.step({"name": "get_user", "arguments": {"user_id": "U1"}})[2:4] == (False, True)
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step({"answer": "Done, I think."})
    assert terminated and not truncated and info["evaluation"]["success"] is False
    # after the answer the episode is over: a call is refused and changes nothing
    observation, reward, terminated, _, after = env.step(
        {"name": "set_status", "arguments": {"user_id": "U2", "status": "active"}}
    )
    assert json.loads(observation)["success"] is False and reward == 0.0 and terminated
    assert after["state_hash"] == info["state_hash"]


def test_reset_is_deterministic_and_takes_a_task_or_state() -> None:
    env = envdsl.gym.make(sleep())
    drawn = [env.reset(seed=s)[1]["task"] for s in range(6)]
    assert drawn == [env.reset(seed=s)[1]["task"] for s in range(6)]
    assert env.reset(seed=1, options={"task": "close_account"})[1]["task"] == "close_account"
    state = sleep()()
    state.reset(task=TASK)
    observation, info = env.reset(options={"state": state.state_json()})
    assert info["task"] is None and info["state_hash"] == state.state_hash()
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        env.reset(options={"task": "nope"})
    with pytest.raises(ValueError, match="unknown task"):
        envdsl.gym.make(sleep(), task="nope")


@functools.cache
def sleep_with_tasks() -> type[Environment]:
    return envdsl.load(SLEEP, [SLEEP.with_suffix(".tasks.env")])


def test_a_question_task_is_answered_and_graded() -> None:
    env = envdsl.gym.make(sleep_with_tasks(), task="nickname_and_tags_question")
    env.reset(seed=5)
    _, looked_up, terminated, _, _ = env.step({"name": "get_user", "arguments": {"user_id": "U5"}})
    assert not terminated
    # the answer as an assistant message without tool calls, the form a chat model ends with
    observation, answered, terminated, _, info = env.step(
        json.dumps({"role": "assistant", "content": "U5 is 'Owl', tagged insomnia, shift-work."})
    )
    assert terminated and json.loads(observation)["success"] is True
    assert info["evaluation"]["answer"] == "U5 is 'Owl', tagged insomnia, shift-work."
    assert info["evaluation"]["success"] is True
    assert float(looked_up) + float(answered) == pytest.approx(info["evaluation"]["reward"])
    # a wrong answer (the other user's nickname) scores below 1
    env.reset(seed=5)
    _, _, _, _, info = env.step({"answer": "Lark, tagged insomnia and shift-work"})
    assert info["evaluation"]["success"] is False


def test_observations_are_printable_ascii_whatever_the_state_holds() -> None:
    env = envdsl.gym.make(sleep(), task=TASK)
    probe = sleep()()
    probe.reset(task=TASK)
    state = probe.state_json()
    name = "Zoë\n\u202e\t\u00a0 \U0001f634 \x00"
    state["users"]["U1"]["name"] = name
    observation, _ = env.reset(options={"state": state})
    observation, _, _, _, _ = env.step({"name": "get_user", "arguments": {"user_id": "U1"}})
    assert set(observation) <= set(PRINTABLE_ASCII)
    assert env.observation_space.contains(observation)
    assert json.loads(observation)["data"]["name"] == name


def test_async_vector_environments_step_and_share_observations() -> None:
    vector = gymnasium.make_vec(
        f"envdsl.gym:{envdsl.gym.ENV_ID}",
        num_envs=2,
        vectorization_mode="async",
        spec=str(SLEEP),
        task_files=[str(SLEEP.with_suffix(".tasks.env"))],
        task="nickname_and_tags_question",
        max_text=4096,
    )
    try:
        observations, _ = vector.reset(seed=1)
        assert all("nickname" in json.loads(o)["instruction"] for o in observations)
        actions = (
            json.dumps({"name": "get_user", "arguments": {"user_id": "U5"}}),
            json.dumps({"name": "get_user", "arguments": {"user_id": "U6"}}),
        )
        observations, rewards, terminated, truncated, _ = vector.step(actions)
        assert json.loads(observations[0])["data"]["nickname"] == "Owl"
        assert json.loads(observations[1])["data"]["nickname"] == "Lark"
        answers = ({"answer": "Owl; insomnia, shift-work"}, {"answer": "I do not know"})
        observations, rewards, terminated, truncated, _ = vector.step(answers)
        assert list(terminated) == [True, True]
        assert rewards[0] > rewards[1]
    finally:
        vector.close()


def test_sample_call_draws_calls_that_succeed_and_changes_nothing() -> None:
    env = envdsl.gym.make(sleep(), task=TASK)
    env.reset(seed=11)
    before = env.env.state_hash()
    calls = [json.loads(env.unwrapped.sample_call()) for _ in range(20)]
    assert env.env.state_hash() == before and env.env.trace == []
    names = {c["name"] for c in calls}
    assert names <= set(sleep().TOOLS) and len(names) > 1
    for call in calls:
        probe = sleep()()
        probe.reset(task=TASK)
        assert probe.call(call["name"], call["arguments"])["success"] is True, call
    # the draws repeat with the seed
    env.reset(seed=11)
    assert [json.loads(env.sample_call()) for _ in range(20)] == calls
    # a random action_space sample is text, never a call: it fails cleanly
    observation, _, _, _, _ = env.step(env.action_space.sample())
    assert json.loads(observation)["success"] is False
