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
    assert "Reactivate" in observation and info["task"] == TASK


def test_the_solution_earns_the_final_reward_in_the_sum() -> None:
    env = envdsl.gym.make(sleep(), task=TASK)
    observation, info = env.reset(seed=0)
    assert observation == sleep().TASKS[TASK].instruction
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


def test_finish_ends_the_episode_and_max_steps_truncates() -> None:
    env = envdsl.gym.make(sleep(), task=TASK, max_steps=2)
    env.reset(seed=0)
    first = env.step({"name": "get_user", "arguments": {"user_id": "U1"}})
    assert first[2:4] == (False, False)
    assert env.step({"name": "get_user", "arguments": {"user_id": "U1"}})[2:4] == (False, True)
    env.reset(seed=0)
    _, _, terminated, truncated, info = env.step({"name": "finish", "arguments": {}})
    assert terminated and not truncated and info["evaluation"]["success"] is False


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
