"""Which spec files command-line arguments name: files, directories (every `*.env` below,
sorted; hidden files and directories are skipped) and glob patterns (`*`, `?`, `[...]`, `**`),
expanded here because users quote them; and one line saying why a file could not be read."""

from __future__ import annotations

import glob
import os
from typing import Sequence

from envdsl.util.frozen_node import node

PATTERN_CHARS = frozenset("*?[")


class BatchUsageError(Exception):
    """Arguments that name no spec; each message is one line on stderr."""

    def __init__(self, messages: Sequence[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = list(messages)


# ---- expanding the arguments -----------------------------------------------------------------


@node
class Expansion:
    files: list[str]
    batch: bool  # some argument was a directory or a pattern


def expand_arguments(arguments: Sequence[str], *, batch: bool = False) -> Expansion:
    """Files, directories and patterns -> spec files, de-duplicated, in a stable order.

    Raises BatchUsageError when a directory or pattern matches nothing (and, in a batch, when a
    named file does not exist). `batch=True` forces batch semantics (`--format jsonl`).
    """
    problems: list[str] = []
    files: list[str] = []
    seen: set[str] = set()
    named: list[str] = []
    for argument in arguments:
        if os.path.isdir(argument):
            batch = True
            found = _spec_files_under(argument)
            if not found:
                problems.append(f"no *.env files under directory '{argument}'")
        elif PATTERN_CHARS.intersection(argument) and not os.path.lexists(argument):
            batch = True
            found = sorted(
                (path for path in glob.glob(argument, recursive=True) if os.path.isfile(path)),
                key=_path_key,
            )
            if not found:
                problems.append(f"no files match '{argument}'")
        else:
            found = [argument]
            named.append(argument)
        for path in found:
            identity = file_identity(path)
            if identity not in seen:
                seen.add(identity)
                files.append(path)
    if batch:  # one by one, a missing file is reported when it is read, as it always was
        problems.extend(
            f"cannot read '{path}': no such file" for path in named if not os.path.lexists(path)
        )
    if problems:
        raise BatchUsageError(problems)
    return Expansion(files, batch)


def file_identity(path: str) -> str:
    """One spelling for every path to the same file (links resolved, case folded where the
    file system folds it)."""
    return os.path.normcase(os.path.realpath(path))


def _spec_files_under(directory: str) -> list[str]:
    found: list[str] = []
    for root, directories, names in os.walk(directory):
        directories[:] = sorted(name for name in directories if not name.startswith("."))
        for name in names:
            path = os.path.join(root, name)
            if name.endswith(".env") and not name.startswith(".") and os.path.isfile(path):
                found.append(path)
    return sorted(found, key=_path_key)


def _path_key(path: str) -> list[str]:
    return os.path.normpath(path).split(os.sep)


def describe_read_error(error: OSError | UnicodeDecodeError) -> str:
    if isinstance(error, UnicodeDecodeError):
        return f"not valid UTF-8 (byte 0x{error.object[error.start]:02x} at offset {error.start})"
    if isinstance(error, FileNotFoundError):
        return "no such file"
    if isinstance(error, IsADirectoryError):
        return "is a directory"
    if isinstance(error, PermissionError):
        return "permission denied"
    return (error.strerror or str(error)).lower()
