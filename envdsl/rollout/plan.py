"""What a rollout run does: the specs as workers load them, and one job per task sample.

A worker (a thread, a process, a Ray task on another machine) gets the generated module's
source rather than a path or a class: `load_module` runs it once per process, so the run needs
no shared file system and no compiler on the workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from envdsl.rollout.records import digest

if TYPE_CHECKING:
    from envdsl.pipeline import CompileResult
    from envdsl.runtime import Environment


@dataclass(frozen=True, slots=True)
class TaskHashes:
    task: str  # the task's text in the spec
    checks: str  # its checks' text: a change here re-grades old trajectories


@dataclass(frozen=True, slots=True)
class EnvSource:
    path: str
    env: str  # the environment's name
    module_name: str
    module: str  # the generated Python source
    spec_hash: str
    tasks: dict[str, TaskHashes]
    # tasks the compiler left out for their own errors (name -> why): not run, and named
    invalid_tasks: dict[str, str] = field(default_factory=dict)

    def environment_class(self) -> type[Environment]:
        from envdsl.generated.modules import environment_class, load_module

        env_class = environment_class(load_module(self.module, self.module_name))
        env_class.INVALID_TASKS = dict(self.invalid_tasks)
        return env_class


def env_source(path: str, spec_text: str, result: CompileResult) -> EnvSource:
    """The source of a spec that compiled (result.ok, with its module); `spec_text` is what
    its hash covers (the spec's and its task files' texts, as `envdsl tasks` hashes them)."""
    from envdsl.adapters.dataset_records import spec_hash
    from envdsl.syntax import ast

    spec = result.spec
    assert spec is not None and spec.env is not None
    hashes: dict[str, TaskHashes] = {}
    for task in spec.env.of_type(ast.TaskDecl):
        if task.name.text in result.invalid_tasks:
            continue
        text = spec.text_of(task.span)  # a task file's task lives in the task file's text
        checks = "\n".join(spec.text_of(c.span)[c.span.start : c.span.end] for c in task.checks)
        hashes[task.name.text] = TaskHashes(
            digest(text[task.span.start : task.span.end]), digest(checks)
        )
    return EnvSource(
        path=path,
        env=spec.env.name.text,
        module_name=result.artifacts["name"],
        module=result.artifacts["module"],
        spec_hash=spec_hash(spec_text),
        tasks=hashes,
        invalid_tasks=dict(result.invalid_tasks),
    )


@dataclass(frozen=True, slots=True)
class Job:
    source: int  # index into the run's sources
    task: str
    sample: int
    key: str
