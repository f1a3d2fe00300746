"""Finding, reading and compiling the specs, task files and state files that commands name."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Sequence

import click

from envdsl.cli.group import EXIT_ERRORS, fail_usage, one_line, stderr_color, stdout_color
from envdsl.util.spec_paths import BatchUsageError, describe_read_error, expand_arguments

if TYPE_CHECKING:
    from envdsl.rollout.plan import EnvSource
    from envdsl.runtime import Environment
    from envdsl.tasks.task_files import Bundle


def failed_file(error: OSError | UnicodeDecodeError, bundle: "Bundle") -> str:
    """The file of a bundle whose reading raised `error` (a decode error names none)."""
    filename = getattr(error, "filename", None)
    return str(filename) if filename else bundle.path


def file_paths(arguments: Sequence[str]) -> list[str]:
    """Files, directories and patterns, expanded as `check` expands them: specs and task
    files alike (fmt and --fix rewrite each file on its own)."""
    try:
        return expand_arguments(arguments).files
    except BatchUsageError as error:
        fail_usage("; ".join(error.messages))


def spec_bundles(arguments: Sequence[str]) -> "list[Bundle]":
    """The files of `arguments`, each env with the task files given for it
    (envdsl.tasks.task_files)."""
    from envdsl.tasks.task_files import bundle_paths

    return bundle_paths(file_paths(arguments))


def one_spec(arguments: Sequence[str]) -> "Bundle":
    """The one env a single-env command takes: a spec and task files for it, a task file
    alone, or a directory or pattern that finds exactly one env."""
    bundles = spec_bundles(arguments)
    if len(bundles) != 1:
        paths = [bundle.path for bundle in bundles]
        shown = ", ".join(paths[:3]) + (", ..." if len(paths) > 3 else "")
        named = " ".join(f"'{argument}'" for argument in arguments)
        verb = "names" if len(arguments) == 1 else "name"
        fail_usage(f"{named} {verb} {len(paths)} specs ({shown}); give one")
    return bundles[0]


def compile_or_exit(
    bundle: "Bundle",
    color: bool | None = None,
    *,
    formatted: bool = True,
    valid_tasks: bool = False,
) -> object:
    """Compile one spec with its task files; on errors print them like `check` does and
    exit 1. With `valid_tasks`, errors only inside tasks leave those tasks out instead: they
    are printed on stderr and the rest is used (a command grading one task)."""
    from envdsl.diagnostics.render_text import render_text
    from envdsl.pipeline import compile_file

    try:
        result = compile_file(bundle.path, formatted=formatted, task_files=bundle.task_files)
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read '{failed_file(error, bundle)}': {describe_read_error(error)}")
    if valid_tasks and result.invalid_tasks and "module" in result.artifacts:
        use_color = stderr_color(None)
        shown = render_text(result.diagnostics, result.sources, color=use_color)
        click.echo(shown, err=True, color=use_color)
        for name, why in result.invalid_tasks.items():
            click.echo(f"envdsl: task '{name}' left out for its errors: {why}", err=True)
        return result
    if not result.ok:
        use_color = stdout_color(color)
        click.echo(
            render_text(result.diagnostics, result.sources, color=use_color), color=use_color
        )
        sys.exit(EXIT_ERRORS)
    return result


def load_class(bundle: "Bundle", *, valid_tasks: bool = False) -> "type[Environment]":
    """The environment class of a spec (see compile_or_exit for `valid_tasks`)."""
    from envdsl.generated.loader import environment_of
    from envdsl.pipeline import CompileResult

    # only executed, never written
    result = compile_or_exit(bundle, formatted=False, valid_tasks=valid_tasks)
    assert isinstance(result, CompileResult)
    return environment_of(result)


def require_task(env_class: "type[Environment]", name: str, bundle: "Bundle") -> None:
    """A --task must name a valid task: one left out for its errors is the spec's error (exit
    1, saying which), any other name a usage error (exit 2), which names a task file beside
    the spec that has it when one was not given."""
    if name in env_class.TASKS:
        return
    if name in env_class.INVALID_TASKS:
        click.echo(f"envdsl: error: {env_class.unknown_task(name)}", err=True)
        sys.exit(EXIT_ERRORS)
    fail_usage(env_class.unknown_task(name) + task_file_hint(bundle, name))


def task_file_hint(bundle: "Bundle", task: str) -> str:
    """For an unknown task: the task files beside the spec that declare it, which the
    command was not given (commands read only the files they are given), or ''."""
    from envdsl.tasks.task_files import unloaded_task_files

    found = unloaded_task_files(bundle, task)
    if not found:
        return ""
    shown = " ".join(f"'{path}'" for path in found)
    return f" (it is in {shown}: give that file after the spec)"


def env_source(bundle: "Bundle") -> "EnvSource":
    """A spec with its task files as rollout workers load it (with its hashes); errors exit
    as `check` does, but tasks with errors of their own are left out (and printed)."""
    from envdsl.pipeline import CompileResult, read_sources
    from envdsl.rollout.plan import env_source

    result = compile_or_exit(bundle, formatted=False, valid_tasks=True)
    assert isinstance(result, CompileResult)
    texts = [source.text for source in read_sources(bundle.path, bundle.task_files)]
    return env_source(bundle.path, "\0".join(texts), result)  # hashed as `tasks` does


def read_state_file(state_file: str) -> Any:
    """The JSON of a --state file; anything unreadable is a usage error (exit 2)."""
    try:
        with open(state_file, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, UnicodeDecodeError) as error:
        fail_usage(f"cannot read state '{state_file}': {describe_read_error(error)}")
    except (ValueError, RecursionError) as error:  # bad JSON, too deep, huge numbers
        fail_usage(f"cannot read state '{state_file}': {one_line(error)}")
