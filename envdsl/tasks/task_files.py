"""Task files: tasks kept outside the env spec, in `tasks for "shop.env" { task ... }`.

A task file names its env relative to its own directory, under the confinement rules of
`init from` (envdsl.tasks.init_files): no absolute path, nothing outside the task file's directory
tree once symlinks are resolved, a regular file. Its tasks are merged into the env's
declarations before analysis, with their spans in the task file, so every later stage
(types, verification, code generation) treats them as the spec's own tasks and every
diagnostic shows the task file's text.

`bundle_paths` groups command-line files: each env with the task files given for it, and
task files whose env was not given with the env they name.
"""

from __future__ import annotations

import dataclasses
import os
import re
from typing import Sequence

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.syntax import ast
from envdsl.tasks.init_files import read_confined
from envdsl.util.frozen_node import node
from envdsl.util.source import MAX_FILE_CHARS, SourceFile, SourceMap
from envdsl.util.spec_paths import file_identity

# what a file starts with when it is a task file (comments and blank lines may come first);
# only for grouping files: the parser decides what the file really is
_HEADER = re.compile(r'\A\ufeff?(?:\s+|#[^\n]*)*tasks\s+for\s+"([^"\\\n]*)"')


def named_env(text: str) -> str | None:
    """The env path a task file's header names (as written), or None if it is no task file."""
    match = _HEADER.match(text[:10_000])
    return match.group(1) if match else None


def is_task_file(path: str | os.PathLike[str]) -> bool:
    """Whether the file starts like a task file (False for one that cannot be read)."""
    return _task_file_target(os.fspath(path)) is not None


def env_path(task_path: str, relative: str) -> str:
    """The path of the env a task file names, as a path to open from here."""
    return os.path.normpath(os.path.join(os.path.dirname(task_path), relative))


def same_file(first: str, second: str) -> bool:
    return file_identity(first) == file_identity(second)


# ---- grouping command-line files -------------------------------------------------------------


@node
class Bundle:
    """One env to compile: `path` (the spec, or a task file whose env was not given) and the
    task files whose tasks it gets."""

    path: str
    task_files: tuple[str, ...] = ()


def bundle_paths(paths: Sequence[str]) -> list[Bundle]:
    """Each env once, in the order of first mention, with the task files given for it.

    A file that cannot be read, or whose header names no env, counts as a spec (reading it
    later reports what is wrong). Task files for an env that is not among `paths` form one
    bundle led by the first of them, which loads the env it names.
    """
    specs: dict[str, str | None] = {}  # env identity -> the spec given for it
    task_files: dict[str, list[str]] = {}
    for path in paths:
        target = _task_file_target(path)
        key = file_identity(target if target is not None else path)
        specs.setdefault(key, None)
        if target is None:
            specs[key] = specs[key] or path
        else:
            task_files.setdefault(key, []).append(path)
    bundles = []
    for key, spec in specs.items():
        given = task_files.get(key, [])
        lead, rest = (spec, given) if spec is not None else (given[0], given[1:])
        bundles.append(Bundle(lead, tuple(rest)))
    return bundles


def unloaded_task_files(bundle: Bundle, task: str) -> list[str]:
    """Task files beside the bundle's env, for that env and not in the bundle, that seem to
    declare `task` (a text search, for a hint when a command is asked for a task its files
    lack: commands load only the task files they are given)."""
    directory = os.path.dirname(bundle.path) or "."
    declares = re.compile(rf"^[ \t]*task[ \t]+{re.escape(task)}\b", re.MULTILINE)
    given = {file_identity(path) for path in (bundle.path, *bundle.task_files)}
    found = []
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    for name in names:
        path = os.path.join(directory, name)
        if not name.endswith(".env") or file_identity(path) in given:
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read(MAX_FILE_CHARS)
        except (OSError, UnicodeDecodeError):
            continue
        relative = named_env(text)
        if relative is None or not same_file(env_path(path, relative), bundle.path):
            continue
        if declares.search(text):
            found.append(path)
    return found


def _task_file_target(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            relative = named_env(handle.read(10_000))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return env_path(path, relative) if relative is not None else None


# ---- resolving and merging -------------------------------------------------------------------


def load_env(
    task_file: ast.SpecFile, sources: SourceMap, sink: DiagnosticSink
) -> ast.SpecFile | None:
    """Parse and build the env a task file names; None (with a diagnostic) if it cannot."""
    from envdsl.syntax.build import build_ast
    from envdsl.syntax.parse import parse_file

    assert task_file.tasks_for is not None
    target = task_file.tasks_for.target
    read = read_confined(task_file.path, target.value, "env file", 4 * MAX_FILE_CHARS)
    if read.problem:
        outside = read.kind == "outside"
        sink.report(
            codes.TASK_ENV_OUTSIDE if outside else codes.TASK_ENV_MISSING,
            read.problem,
            target.span,
            help=(
                "name the env relative to the task file, in its directory or below it"
                if outside
                else "the path is relative to the task file"
            ),
        )
        return None
    try:
        text = read.raw.decode("utf-8")
    except UnicodeDecodeError as error:
        sink.report(
            codes.TASK_ENV_MISSING,
            f"cannot read env file '{target.value[:200]}': {error.reason}",
            target.span,
            help="an env file is UTF-8 text",
        )
        return None
    source = sources.add(SourceFile(env_path(task_file.path, target.value), text))
    tree = parse_file(source, sink)
    if tree is None:
        return None
    spec = build_ast(tree, source, sink)
    if spec.tasks_for is not None:
        _not_an_env(target, "is a task file itself", sink)
        return None
    if spec.env is None or spec.env.is_module:
        _not_an_env(target, "declares no env", sink)
        return None
    return spec


def _not_an_env(target: ast.Text, why: str, sink: DiagnosticSink) -> None:
    sink.report(
        codes.TASK_ENV_MISMATCH,
        f"'{target.value[:200]}' {why}",
        target.span,
        help='a task file names the spec of its env: `tasks for "shop.env" { ... }`',
    )


def merge_tasks(
    spec: ast.SpecFile, task_files: Sequence[ast.SpecFile], sink: DiagnosticSink
) -> ast.SpecFile:
    """The spec with the task files' tasks appended to its env (spans stay in the task
    files). A task file for another env, and a task named like an earlier one of another
    file, are reported and left out; two tasks of one name in one file are left to the
    resolver's duplicate check, as in a spec."""
    assert spec.env is not None
    owners = {task.name.text: task.name.span for task in spec.env.of_type(ast.TaskDecl)}
    members = list(spec.env.members)
    texts: dict[str, str] = {}
    for task_file in task_files:
        block = task_file.tasks_for
        assert block is not None
        if not same_file(env_path(task_file.path, block.target.value), spec.path):
            sink.report(
                codes.TASK_ENV_MISMATCH,
                f"this task file is for '{block.target.value[:200]}', not for {spec.path}",
                block.target.span,
                help="give each task file with the env it names, or on its own",
            )
            continue
        texts[task_file.path] = task_file.text
        if not block.tasks:
            sink.report(
                codes.EMPTY_TASK_FILE,
                "this task file has no tasks",
                block.target.span,
                help="add `task name { ... }` blocks, or delete the file",
            )
        for task in block.tasks:
            first = owners.get(task.name.text)
            if first is not None and first.file != task.name.span.file:
                sink.report(
                    codes.TASK_NAME_CLASH,
                    f"task '{task.name.text}' is already declared in {first.file}",
                    task.name.span,
                    help="rename this task: task names are unique across the spec and its "
                    "task files",
                )
                continue
            owners.setdefault(task.name.text, task.name.span)
            members.append(task)
    env = dataclasses.replace(spec.env, members=tuple(members))
    return dataclasses.replace(spec, env=env, task_texts=texts)
