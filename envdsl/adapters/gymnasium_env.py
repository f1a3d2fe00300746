"""Gymnasium: an envdsl environment as a `gymnasium.Env` over the episode contract
(envdsl.episode: what a step, an answer, a reward and the end of an episode are).

- action: one tool call or the final answer, as envdsl.episode.actions takes them
  (`{"name", "arguments"}`, an OpenAI tool call, `{"answer": "..."}`, or either as JSON text);
  `env.unwrapped.sample_call()` draws a valid call from the current state
  (`action_space.sample()` draws random text, which is never a tool call);
- observation: JSON text in printable ASCII (non-ASCII and control characters escaped), so
  the Text spaces' character set holds every character an observation can contain and
  `gymnasium.make_vec(..., vectorization_mode="async")` can share it: after reset
  `{"task", "instruction"}`, after a step the call's result envelope;
- reward, terminated: the episode contract's (a step's change of the task's reward, counted
  from 0 at reset; terminated when the answer is given or every check passes);
- truncated: `max_steps` actions were taken;
- `reset(seed=..., options={"task": ...} | {"state": {...}})` is deterministic: the task is the
  one asked for, else the one `make` was given, else one of `tasks` drawn with the seed.
`info` carries the episode id and the tools' schemas (at reset), the call's result, the
evaluation and the state hash.  `max_text` bounds an observation's length (async vectors copy that many characters per
step: lower it for speed where results are short).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence as SequenceABC
from typing import Any, Iterator, Sequence, SupportsFloat

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import read_from_shared_memory

import envdsl
from envdsl.adapters.sampling import sample_call
from envdsl.episode import Episode, EpisodeError
from envdsl.runtime import Environment

MAX_TEXT = 1_000_000
# json.dumps(..., ensure_ascii=True) writes only these: every other character is escaped
PRINTABLE_ASCII = "".join(chr(c) for c in range(32, 127))


class JSONText(spaces.Text):
    """Printable-ASCII text up to `max_length` characters: an observation's JSON text."""

    def __init__(self, max_length: int = MAX_TEXT, seed: int | None = None) -> None:
        super().__init__(max_length=max_length, min_length=0, charset=PRINTABLE_ASCII, seed=seed)

    def __repr__(self) -> str:
        return f"JSONText({self.max_length})"


class SharedTexts(SequenceABC[str]):
    """The observations of an async vector env's workers, read from its shared memory when
    asked for.  gymnasium's own reader for Text turns the buffer into strings once, when the
    vector env is made, so every later observation would read as that first, empty one;
    AsyncVectorEnv hands out `deepcopy(observations)`, which here is the texts as they are
    now.  JSONText's characters are printable ASCII in code-point order, so a row decodes as
    bytes (not character by character)."""

    def __init__(self, space: JSONText, shared_memory: Any, n: int) -> None:
        self.padding = len(space.character_list)
        self.rows = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape(
            (n, space.max_length)
        )

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        row = self.rows[index]
        codes = row[row < self.padding] + ord(PRINTABLE_ASCII[0])
        return codes.astype(np.uint8).tobytes().decode("ascii")

    def __iter__(self) -> Iterator[str]:
        return (self[i] for i in range(len(self)))

    def __deepcopy__(self, memo: dict[int, Any]) -> tuple[str, ...]:
        return tuple(self)

    def __repr__(self) -> str:
        return repr(tuple(self))


@read_from_shared_memory.register(JSONText)
def _read_json_texts(space: JSONText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(space, shared_memory, n)


class ActionText(spaces.Text):
    """Any text up to `max_length` characters: an action's arguments hold whatever text the
    agent writes, which no fixed character set covers (sampling draws printable ones)."""

    def __init__(self, max_length: int = MAX_TEXT, seed: int | None = None) -> None:
        super().__init__(max_length=max_length, min_length=0, charset=PRINTABLE_ASCII, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"ActionText({self.max_length})"


def _ascii_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=True)


class EnvdslEnv(gymnasium.Env[str, str]):
    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        env_class: type[Environment],
        *,
        task: str | None = None,
        tasks: Sequence[str] | None = None,
        max_steps: int = 50,
        render_mode: str | None = None,
        max_text: int = MAX_TEXT,
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
        self.render_mode = render_mode
        self.observation_space = JSONText(max_text)
        self.action_space = ActionText(max_text)
        self.episode = Episode(env_class, max_steps=max_steps)
        self._calls = random.Random()
        self._last = ""

    @property
    def env(self) -> Environment:
        """The runtime environment of the current episode."""
        return self.episode.env

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._calls.seed(seed)
        options = options or {}
        task: str | None = None
        if "state" not in options:
            task = options.get("task") or self.task
            if task is None:
                if not self.tasks:
                    raise ValueError(f"{self.env_class.NAME} has no tasks: reset with a state")
                task = self.tasks[int(self.np_random.integers(len(self.tasks)))]
        try:
            start = self.episode.start(task=task, state=options.get("state"))
        except EpisodeError as error:
            raise ValueError(str(error)) from None
        # the episode id (random) stays out of the observation: a seeded reset repeats it
        self._last = _ascii_json({"task": start["task"], "instruction": start["instruction"]})
        info = {key: start[key] for key in ("task", "episode_id", "tools", "state_hash")}
        return self._last, info

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        step = self.episode.step(action)
        self._last = _ascii_json(step.result)
        return self._last, step.reward, step.done, step.truncated, step.info()

    def sample_call(self) -> str:
        """A valid tool call (JSON text, the action form) drawn from the current state, with
        the generator `reset(seed=...)` seeded; the state is left as it was."""
        return _ascii_json(sample_call(self.env, self._calls))

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
    render_mode: str | None = None,
    task_files: Sequence[str | os.PathLike[str]] = (),
    max_text: int = MAX_TEXT,
) -> EnvdslEnv:
    """A gymnasium.Env over a spec file (compiled with envdsl.load, with the tasks of
    `task_files`; or a task file alone) or an environment class."""
    env_class = spec if isinstance(spec, type) else envdsl.load(spec, task_files)
    return EnvdslEnv(
        env_class,
        task=task,
        tasks=tasks,
        max_steps=max_steps,
        render_mode=render_mode,
        max_text=max_text,
    )


ENV_ID = "envdsl/Environment-v0"
# `gymnasium.make("envdsl.gym:envdsl/Environment-v0", spec="x.env", task=...)` imports this
# module and builds the environment through gymnasium's registry (with its wrappers and spec)
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="envdsl.adapters.gymnasium_env:make")
