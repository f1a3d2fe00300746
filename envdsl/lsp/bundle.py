"""Which files a rename in the editor spans: a spec and the task files written for it.

A task file names its env relative to its own directory and may not reach outside that
directory's tree (envdsl.tasks.task_files), so the task files of a spec lie in the spec's
directory or in a directory above it: those are searched, up to the workspace folder that holds
the spec (only the spec's own directory when no workspace folder does).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from envdsl.tasks.task_files import env_path, named_env, same_file

ReadText = Callable[[str], "str | None"]  # the text of a file (an open editor's, else the disk's)


def spec_path(path: str, text: str) -> str:
    """The spec a document belongs to: itself, or the env a task file names."""
    named = named_env(text)
    return env_path(path, named) if named is not None else path


def task_files_for(spec: str, read: ReadText, roots: Sequence[str] = ()) -> list[str]:
    """The task files (`tasks for "..."`) whose env is `spec`, nearest directory first."""
    found = []
    for directory in _search_directories(spec, roots):
        for candidate in sorted(directory.glob("*.env")):
            path = str(candidate)
            if same_file(path, spec):
                continue
            text = read(path)
            named = named_env(text) if text is not None else None
            if named is not None and same_file(env_path(path, named), spec):
                found.append(path)
    return found


def _search_directories(spec: str, roots: Sequence[str]) -> list[Path]:
    here = Path(os.path.realpath(spec)).parent
    holding = [Path(os.path.realpath(root)) for root in roots]
    holding = [root for root in holding if root == here or root in here.parents]
    if not holding:
        return [here]
    top = max(holding, key=lambda root: len(root.parts))  # the innermost workspace folder
    directories = [here]
    while directories[-1] != top:
        directories.append(directories[-1].parent)
    return directories
