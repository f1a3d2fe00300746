"""Gymnasium: an envdsl environment as a `gymnasium.Env` whose action is one tool call.

- action: one tool call (see envdsl.adapters.actions: `{"name", "arguments"}`, an OpenAI
  tool-call object or either as JSON text);
- observation: the call's result envelope as JSON text (after `reset`, the task's instruction);
- reward: the change of the task's reward (the share of its checks that pass), counted from
  0 at reset, so the rewards of an episode add up to its final reward;
- terminated: all checks pass, or the agent called a finish action (`finish` or `answer`:
  the spec's own tool of that name is called first; without one it only ends the episode);
- truncated: `max_steps` actions were taken;
- `reset(seed=..., options={"task": ...} | {"state": {...}})` is deterministic: the task is the
  one asked for, else the one `make` was given, else one of `tasks` drawn with the seed.
`info` carries the tools' schemas (at reset), the evaluation and the state hash.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence, SupportsFloat

import gymnasium
from gymnasium import spaces

import envdsl
from envdsl.adapters.actions import BadAction, parse_action
from envdsl.runtime import Environment, InvalidState

FINISH_ACTIONS = ("finish", "answer")
MAX_TEXT = 1_000_000


class JSONText(spaces.Text):
    """Any text up to `max_length` characters: results hold whatever text the state holds, which
    no fixed character set covers (sampling still draws from printable characters)."""

    def __init__(self, max_length: int = MAX_TEXT, seed: int | None = None) -> None:
        printable = "".join(chr(c) for c in range(32, 127))
        super().__init__(max_length=max_length, min_length=0, charset=printable, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"JSONText({self.max_length})"


class EnvdslEnv(gymnasium.Env[str, str]):
    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        env_class: type[Environment],
        *,
        task: str | None = None,
        tasks: Sequence[str] | None = None,
        max_steps: int = 50,
        finish_actions: Sequence[str] = FINISH_ACTIONS,
        render_mode: str | None = None,
    ) -> None:
        for name in [task, *(tasks or [])]:
            if name is not None and name not in env_class.TASKS:
                raise ValueError(env_class.unknown_task(name))
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        if max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        self.env_class = env_class
        self.task = task
        self.tasks = list(tasks) if tasks is not None else list(env_class.TASKS)
        self.max_steps = max_steps
        self.finish_actions = tuple(finish_actions)
        self.render_mode = render_mode
        self.observation_space = JSONText()
        self.action_space = JSONText()
        self.env: Environment = env_class()
        self.steps = 0
        self._reward = 0.0
        self._last = ""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        self.env = self.env_class()
        self.steps = 0
        self._reward = 0.0
        if "state" in options:
            state = options["state"]
            try:
                self.env.reset(
                    state=json.loads(json.dumps(state)) if isinstance(state, dict) else state
                )
            except (InvalidState, json.JSONDecodeError) as error:
                raise ValueError(f"invalid state: {error}") from None
            observation = ""
        else:
            task = options.get("task") or self.task
            if task is None:
                if not self.tasks:
                    raise ValueError(f"{self.env_class.NAME} has no tasks: reset with a state")
                task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
            if task not in self.env_class.TASKS:
                raise ValueError(self.env_class.unknown_task(task))
            self.env.reset(task=task)
            observation = self.env_class.TASKS[task].instruction
        self._last = observation
        info = {
            "task": self.env.task,
            "tools": self.env.tool_schemas(),
            "state_hash": self.env.state_hash(),
        }
        return observation, info

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        self.steps += 1
        finished = False
        try:
            name, arguments = parse_action(action)
        except BadAction as error:
            result: dict[str, Any] = {"success": False, "error": str(error)}
        else:
            finished = name in self.finish_actions
            if finished and name not in self.env.TOOLS:
                result = {"success": True, "data": None}
            else:
                result = self.env.call(name, arguments)
        info: dict[str, Any] = {"result": result, "state_hash": self.env.state_hash()}
        reward = 0.0
        success = False
        if self.env.task is not None:
            evaluation = self.env.evaluate()
            info["evaluation"] = evaluation
            current = float(evaluation["reward"])
            reward, self._reward = current - self._reward, current
            success = bool(evaluation["success"])
        terminated = finished or success
        truncated = not terminated and self.steps >= self.max_steps
        self._last = json.dumps(result, ensure_ascii=False)
        return self._last, reward, terminated, truncated, info

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self._last
        return None


def make(
    spec: str | os.PathLike[str] | type[Environment],
    task: str | None = None,
    *,
    tasks: Sequence[str] | None = None,
    max_steps: int = 50,
    finish_actions: Sequence[str] = FINISH_ACTIONS,
    render_mode: str | None = None,
    task_files: Sequence[str | os.PathLike[str]] = (),
) -> EnvdslEnv:
    """A gymnasium.Env over a spec file (compiled with envdsl.load, with the tasks of
    `task_files`; or a task file alone) or an environment class."""
    env_class = spec if isinstance(spec, type) else envdsl.load(spec, task_files)
    return EnvdslEnv(
        env_class,
        task=task,
        tasks=tasks,
        max_steps=max_steps,
        finish_actions=finish_actions,
        render_mode=render_mode,
    )


ENV_ID = "envdsl/Environment-v0"
# `gymnasium.make("envdsl.gym:envdsl/Environment-v0", spec="x.env", task=...)` imports this
# module and builds the environment through gymnasium's registry (with its wrappers and spec)
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="envdsl.adapters.gymnasium_env:make")
