"""TRL: `environment_factory(spec, task_files, tasks=...)` gives the class that TRL's
`GRPOTrainer(environment_factory=..., reward_funcs=envdsl_reward)` instantiates and resets per
rollout (TRL 1.16's contract, trl/trainer/grpo_trainer.py).  Its arguments follow
`envdsl.load(spec, task_files)`; `tasks` (names) picks among the tasks.

The class has a zero-argument constructor; `reset(**row)` (TRL passes the dataset row: its
`task` column, as `envdsl tasks --format jsonl` writes it, picks the task, else the tasks are
taken in turn) starts an episode (envdsl.episode) and returns the task's instruction, which
TRL appends to the row's last prompt message, or None when the row's `prompt` holds the
instruction already; one public method per tool with typed parameters and a docstring with an
`Args:` section (what TRL, through `transformers.utils.get_json_schema`, turns into the tool's
schema), each one step of the episode, returning the call's result envelope as JSON text.

The reward is `envdsl_reward`, a TRL reward function: the last assistant message of each
completion is the episode's final answer (what question tasks' checks read), and the reward is
`evaluate()`'s.  The class has no `get_reward`, which TRL would add as a second reward source
(the reward counted twice), and which could not see the answer.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
from typing import Any, Callable, Literal, Optional, Sequence

import envdsl
from envdsl.episode import Episode, EpisodeError
from envdsl.runtime import Environment, ParamSpec, ToolSpec
from envdsl.runtime.values import (
    BoolSpec,
    DateSpec,
    DateTimeSpec,
    DurationSpec,
    EnumSpec,
    FloatSpec,
    IntSpec,
    ListSpec,
    MapSpec,
    OptionalSpec,
    RecordSpec,
    VariantSpec,
    RefSpec,
    StrSpec,
    TypeSpec,
)

RESERVED = frozenset({"reset", "get_reward", "env", "task", "episode"})


def python_type(spec: TypeSpec) -> Any:
    """The annotation a JSON-schema generator reads for a parameter of this type."""
    if isinstance(spec, OptionalSpec):
        return Optional[python_type(spec.inner)]
    if isinstance(spec, RefSpec):
        return python_type(spec.key)
    if isinstance(spec, EnumSpec):
        return Literal[tuple(spec.by_value)]
    if isinstance(spec, (StrSpec, DateSpec, DateTimeSpec)):
        return str  # dates and datetimes travel as ISO 8601 text
    if isinstance(spec, IntSpec):
        return int
    if isinstance(spec, (FloatSpec, DurationSpec)):
        return float
    if isinstance(spec, BoolSpec):
        return bool
    if isinstance(spec, ListSpec):  # and SetSpec
        return list[python_type(spec.inner)]  # type: ignore[misc]
    if isinstance(spec, MapSpec):
        return dict[str, python_type(spec.value)]  # type: ignore[misc]
    if isinstance(spec, (RecordSpec, VariantSpec)):
        return dict
    return Any  # json


def _describe(param: ParamSpec) -> str:
    parts = [param.description] if param.description else []
    spec = param.spec.inner if isinstance(param.spec, OptionalSpec) else param.spec
    if isinstance(spec, (DateSpec, DateTimeSpec, DurationSpec, RecordSpec, RefSpec, VariantSpec)):
        parts.append(spec.name)
    if not parts:
        parts.append(param.spec.name)
    return "; ".join(parts)


def _tool_method(tool: ToolSpec) -> Callable[..., str]:
    names = {p.attribute: p.name for p in tool.params}  # Python name -> JSON name

    def method(self: Any, **kwargs: Any) -> str:
        arguments = {names[k]: v for k, v in kwargs.items() if k in names}
        return json.dumps(self.episode.call(tool.name, arguments).result, ensure_ascii=False)

    parameters = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for param in tool.params:
        annotation = python_type(param.spec)
        default: Any = inspect.Parameter.empty
        if param.default is not None:
            default = param.spec.to_json(param.default())
        elif not param.required:
            default = None
        parameters.append(
            inspect.Parameter(
                param.attribute,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=default,
                annotation=annotation,
            )
        )
        annotations[param.attribute] = annotation
    annotations["return"] = str
    lines = [tool.description or tool.name]
    if tool.params:
        lines += ["", "Args:"]
        lines += [f"    {p.attribute}: {_describe(p)}" for p in tool.params]
    method.__name__ = method.__qualname__ = tool.name
    method.__doc__ = "\n".join(lines)
    method.__annotations__ = annotations
    method.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    return method


def environment_factory(
    spec: str | os.PathLike[str] | type[Environment],
    task_files: Sequence[str | os.PathLike[str]] = (),
    *,
    tasks: Sequence[str] | None = None,
) -> type[Any]:
    """A TRL environment class over a spec file (compiled with envdsl.load, with the tasks of
    `task_files`; or a task file alone) or an environment class; `tasks`: the task names to
    take in turn (default: all)."""
    if isinstance(task_files, (str, os.PathLike)):
        raise TypeError("task_files is a list of task files (the tasks= keyword takes names)")
    env_class = spec if isinstance(spec, type) else envdsl.load(spec, task_files)
    clashes = sorted(RESERVED & set(env_class.TOOLS))
    if clashes:
        raise ValueError(
            f"tool {clashes[0]!r} of {env_class.NAME} collides with the TRL environment's own "
            f"{clashes[0]!r}: rename the tool in the spec"
        )
    chosen = list(tasks) if tasks is not None else list(env_class.TASKS)
    for name in chosen:
        if name not in env_class.TASKS:
            raise ValueError(env_class.unknown_task(name))
    if not chosen:
        raise ValueError(f"{env_class.NAME} has no tasks: a TRL environment needs one")
    turns = itertools.cycle(chosen)

    def __init__(self: Any) -> None:
        self.episode = Episode(env_class)

    def reset(self: Any, **row: Any) -> str | None:
        """Start an episode: the `task` keyword (a dataset column) or the next task in turn."""
        task = row.get("task")
        if task is None:
            task = next(turns)
        try:
            start = self.episode.start(task=task)
        except EpisodeError as error:
            raise ValueError(str(error)) from None
        instruction: str = start["instruction"]
        prompt = row.get("prompt")
        if _holds(prompt, instruction):
            return None  # TRL would append it to the prompt a second time
        return instruction

    namespace: dict[str, Any] = {
        "__init__": __init__,
        "reset": reset,
        "env": property(lambda self: self.episode.env, doc="The episode's runtime environment"),
        "task": property(lambda self: self.episode.task, doc="The episode's task"),
        "__doc__": env_class.DESCRIPTION or f"The {env_class.NAME} environment.",
        "__module__": __name__,
    }
    for tool in env_class.TOOLS.values():
        namespace[tool.name] = _tool_method(tool)
    return type(f"{env_class.NAME}TRLEnvironment", (), namespace)


def _holds(prompt: Any, instruction: str) -> bool:
    """Whether a dataset row's prompt (text or chat messages) already holds the instruction."""
    if isinstance(prompt, str):
        return instruction in prompt
    if isinstance(prompt, list):
        return any(instruction in _content(m) for m in prompt if isinstance(m, dict))
    return False


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # multimodal parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def final_answer(completion: Any) -> str:
    """The agent's final answer in a TRL completion: its last message when that is the
    assistant's without tool calls (text completions: the text), else empty."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion:
        last = completion[-1]
        if (
            isinstance(last, dict)
            and last.get("role") == "assistant"
            and not last.get("tool_calls")
        ):
            return _content(last)
    return ""


def envdsl_reward(
    completions: Sequence[Any], environments: Sequence[Any] | None = None, **_: Any
) -> list[float | None]:
    """TRL reward function: each completion's final answer ends its environment's episode;
    the reward is `evaluate()`'s (None for a rollout without an envdsl environment)."""
    if environments is None:
        raise ValueError("envdsl_reward needs GRPOTrainer(environment_factory=...)")
    rewards: list[float | None] = []
    for completion, environment in zip(completions, environments, strict=True):
        episode = getattr(environment, "episode", None)
        if not isinstance(episode, Episode):
            rewards.append(None)
            continue
        step = episode.give_answer(final_answer(completion))
        evaluation = step.evaluation if step.result["success"] else episode.evaluation()
        rewards.append(float(evaluation["reward"]) if evaluation is not None else None)
    return rewards
