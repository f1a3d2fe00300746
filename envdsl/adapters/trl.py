"""TRL-style environment classes: `environment_factory(spec, tasks=...)` gives a class that a
trainer instantiates once per rollout (`GRPOTrainer(environment_factory=...)`).

The class has a zero-argument constructor, `reset(**kwargs) -> str` (the row of the training
dataset comes in as keyword arguments; its `task` column, as written by `envdsl tasks --format
jsonl`, picks the task, else the tasks are taken in turn; it returns the task's instruction),
one public method per tool with typed parameters and a docstring with an `Args:` section (what
TRL, through `transformers.utils.get_json_schema`, turns into the tool's schema), each returning
the call's result envelope as JSON text, and `get_reward() -> float`, the share of the task's
checks that pass.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
from typing import Any, Callable, Literal, Optional, Sequence

import envdsl
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
    RefSpec,
    StrSpec,
    TypeSpec,
)

RESERVED = frozenset({"reset", "get_reward", "env", "task"})


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
    if isinstance(spec, RecordSpec):
        return dict
    return Any  # json


def _describe(param: ParamSpec) -> str:
    parts = [param.description] if param.description else []
    spec = param.spec.inner if isinstance(param.spec, OptionalSpec) else param.spec
    if isinstance(spec, (DateSpec, DateTimeSpec, DurationSpec, RecordSpec, RefSpec)):
        parts.append(spec.name)
    if not parts:
        parts.append(param.spec.name)
    return "; ".join(parts)


def _tool_method(tool: ToolSpec) -> Callable[..., str]:
    names = {p.attribute: p.name for p in tool.params}  # Python name -> JSON name

    def method(self: Any, **kwargs: Any) -> str:
        arguments = {names[k]: v for k, v in kwargs.items() if k in names}
        return json.dumps(self.env.call(tool.name, arguments), ensure_ascii=False)

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
    tasks: Sequence[str] | None = None,
    task_files: Sequence[str | os.PathLike[str]] = (),
) -> type[Any]:
    """A TRL environment class over a spec file (compiled with envdsl.load, with the tasks of
    `task_files`; or a task file alone) or a class."""
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
        self.env = env_class()
        self.task = None

    def reset(self: Any, **kwargs: Any) -> str:
        """Start an episode: the `task` keyword (a dataset column) or the next task in turn."""
        task = kwargs.get("task")
        if task is None or task not in env_class.TASKS:
            if task is not None:
                raise ValueError(env_class.unknown_task(task))
            task = next(turns)
        self.env = env_class()
        self.env.reset(task=task)
        self.task = task
        return env_class.TASKS[task].instruction

    def get_reward(self: Any) -> float:
        """The share of the task's checks that pass now (0.0 before reset)."""
        if self.task is None:
            return 0.0
        return float(self.env.evaluate()["reward"])

    namespace: dict[str, Any] = {
        "__init__": __init__,
        "reset": reset,
        "get_reward": get_reward,
        "__doc__": env_class.DESCRIPTION or f"The {env_class.NAME} environment.",
        "__module__": __name__,
    }
    for tool in env_class.TOOLS.values():
        namespace[tool.name] = _tool_method(tool)
    return type(f"{env_class.NAME}TRLEnvironment", (), namespace)
