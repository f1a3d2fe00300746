"""One episode of a task (or of a JSON state): the contract every face shares.

- `start(task=... | state=...)` loads the initial state; the episode's reward so far is 0;
- `step(action)` is one tool call, or the final answer (see envdsl.episode.actions), which
  ends the episode; a call or answer after the answer is refused (`success: false`, state
  untouched);
- the reward of a step is the change it made to the task's reward, as `evaluate()` gives it
  (with the answer given so far), counted from 0 at the start; so the rewards of an episode
  add up to its final `evaluate()` reward, whatever the face;
- `done` when the answer is given or `evaluate()` says `success`; `truncated` when
  `max_steps` steps were taken first;
- an episode of a state (no task) has no checks: its rewards are 0 and it has no evaluation.
Reward and success come from `Environment.evaluate()` only: no face grades by itself.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Mapping

from envdsl.episode.actions import BadAction, FinalAnswer, parse_action
from envdsl.runtime import Environment, InvalidState

ENDED = "the episode has ended (an answer was given): start a new one"


class EpisodeError(ValueError):
    """A start that cannot be made (unknown task, invalid state): a client's mistake, with the
    message to answer it with."""


@dataclass(frozen=True, slots=True)
class Step:
    """What one step gives back: the call's result envelope (for the answer,
    `{"success": true, "data": {"answer": ...}}`), its reward and the evaluation after it."""

    result: dict[str, Any]
    reward: float
    done: bool
    truncated: bool
    evaluation: dict[str, Any] | None
    state_hash: str

    @property
    def success(self) -> bool:
        return self.evaluation is not None and bool(self.evaluation["success"])

    def info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"result": self.result, "state_hash": self.state_hash}
        if self.evaluation is not None:
            info["evaluation"] = self.evaluation
        return info


@dataclass(slots=True)
class Episode:
    env_class: type[Environment]
    max_steps: int | None = None
    env: Environment = field(init=False)
    episode_id: str = ""
    steps: int = 0
    answer: str | None = None  # None until the agent gives its final answer
    reward: float = 0.0  # the sum of the step rewards so far
    done: bool = False  # answered, or every check passes

    def __post_init__(self) -> None:
        self.env = self.env_class()

    def start(
        self,
        task: str | None = None,
        state: Mapping[str, Any] | str | None = None,
        episode_id: str | None = None,
    ) -> dict[str, Any]:
        """Begin a new episode in a fresh environment; its first observation (the task, its
        instruction, the tools and the state hash)."""
        if task is not None and state is not None:
            raise EpisodeError("give a task or a state, not both")
        env = self.env_class()
        if task is not None:
            if task not in env.TASKS:
                raise EpisodeError(env.unknown_task(task))
            env.reset(task=task)
        else:
            try:
                # a copy: the loader must not hold on to the caller's objects
                env.reset(state=state if isinstance(state, (str, type(None))) else _copy(state))
            except (InvalidState, json.JSONDecodeError, TypeError) as error:
                raise EpisodeError(f"invalid state: {error}") from None
        self.env = env
        self.episode_id = episode_id or uuid.uuid4().hex
        self.steps, self.answer, self.reward, self.done = 0, None, 0.0, False
        return self.observation()

    @property
    def task(self) -> str | None:
        return self.env.task

    @property
    def instruction(self) -> str | None:
        spec = self.env.TASKS.get(self.env.task) if self.env.task is not None else None
        return spec.instruction if spec is not None else None

    def observation(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "task": self.task,
            "instruction": self.instruction,
            "tools": self.env.tool_schemas(),
            "state_hash": self.env.state_hash(),
        }

    def evaluation(self) -> dict[str, Any] | None:
        """The task's evaluation now, with the answer if one was given (None without a task)."""
        if self.env.task is None:
            return None
        return self.env.evaluate(answer=self.answer or "")

    def step(self, action: Any) -> Step:
        """One action: a tool call or the final answer, in any form parse_action takes."""
        try:
            parsed = parse_action(action)
        except BadAction as error:
            return self._finish_step({"success": False, "error": str(error)})
        if isinstance(parsed, FinalAnswer):
            return self.give_answer(parsed.text)
        return self.call(parsed.name, parsed.arguments)

    def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> Step:
        """One tool call of the spec's tools."""
        if self.answer is not None:
            return self._finish_step({"success": False, "error": ENDED})
        return self._finish_step(self.env.call(name, arguments))

    def give_answer(self, text: str) -> Step:
        """The agent's final answer: graded with the state, it ends the episode."""
        if self.answer is not None:
            return self._finish_step({"success": False, "error": ENDED})
        if not isinstance(text, str):
            return self._finish_step({"success": False, "error": "an answer is text"})
        self.answer = text
        return self._finish_step({"success": True, "data": {"answer": text}})

    def _finish_step(self, result: dict[str, Any]) -> Step:
        self.steps += 1
        evaluation = self.evaluation()
        reward = 0.0
        success = False
        if evaluation is not None:
            total = float(evaluation["reward"])
            reward, self.reward = total - self.reward, total
            success = bool(evaluation["success"])
        self.done = self.answer is not None or success
        truncated = not self.done and self.max_steps is not None and self.steps >= self.max_steps
        return Step(result, reward, self.done, truncated, evaluation, self.env.state_hash())


def _copy(state: Mapping[str, Any]) -> Any:
    return json.loads(json.dumps(state))
