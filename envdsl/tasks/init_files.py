"""Reading an `init from "file.json"` safely: the file is chosen by the spec, and specs are
untrusted (an LLM writes them), while its content ends up in the compiled module and in the
state the agent sees.

So the path must be relative and stay inside the spec's directory once symlinks are resolved,
the file must be a regular file (not `/dev/zero`, a FIFO that blocks, a directory) and at most
MAX_INIT_BYTES long; reading never blocks and never reads past the limit.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from envdsl.diagnostics import codes
from envdsl.diagnostics.codes import Code

MAX_INIT_BYTES = 5_000_000


@dataclass(frozen=True)
class InitFile:
    data: object = None
    code: Code | None = None  # set when the file cannot be used
    problem: str = ""
    help: str = ""


@dataclass(frozen=True)
class ConfinedRead:
    """The bytes of a file named by a spec, or why it is refused (`problem` set)."""

    raw: bytes = b""
    problem: str = ""
    kind: str = ""  # 'outside' | 'missing' | 'unreadable' | 'unsuitable' when refused


def read_confined(base_file: str, relative: str, what: str, limit: int) -> ConfinedRead:
    """Read `relative` (as written in `base_file`) if it stays inside base_file's directory
    tree once symlinks are resolved, is a regular file and holds at most `limit` bytes.
    `what` names the file in the messages ("init file", "env file")."""
    base_dir = Path(os.path.realpath(Path(base_file).parent))
    shown = relative[:200]
    if os.path.isabs(relative) or relative.startswith("~"):
        return ConfinedRead(problem=f"{what} '{shown}' is an absolute path", kind="outside")
    target = Path(os.path.realpath(base_dir / relative))
    if target != base_dir and base_dir not in target.parents:
        problem = (
            f"{what} '{shown}' is outside the directory of {Path(base_file).name} ({base_dir}/)"
        )
        return ConfinedRead(problem=problem, kind="outside")
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked on the
        # open descriptor, so the file checked is the file read
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        problem = f"{what} '{shown}' does not exist (looked in {base_dir}/)"
        return ConfinedRead(problem=problem, kind="missing")
    except OSError as error:
        problem = f"cannot read {what} '{shown}': {error.strerror}"
        return ConfinedRead(problem=problem, kind="unreadable")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ConfinedRead(
                problem=f"{what} '{shown}' is not a regular file", kind="unsuitable"
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(limit + 1)
    except OSError as error:
        problem = f"cannot read {what} '{shown}': {error.strerror}"
        return ConfinedRead(problem=problem, kind="unreadable")
    finally:
        os.close(fd)
    if len(raw) > limit:
        problem = f"{what} '{shown}' is larger than {limit:,} bytes"
        return ConfinedRead(problem=problem, kind="unsuitable")
    return ConfinedRead(raw)


def read_init_file(spec_path: str, relative: str) -> InitFile:
    """The parsed JSON of `relative` (as written in the spec, or in a task file: `spec_path`
    is the file that names it), or the reason it is refused."""
    shown = relative[:200]
    read = read_confined(spec_path, relative, "init file", MAX_INIT_BYTES)
    if read.kind == "outside":
        return _outside(read.problem)
    if read.kind == "missing":
        return InitFile(
            code=codes.INIT_FILE_UNREADABLE,
            problem=read.problem,
            help="the path is relative to the file that names it",
        )
    if read.kind == "unreadable":
        return _unreadable(read.problem)
    if read.kind == "unsuitable":
        return _unsuitable(read.problem)
    raw = read.raw
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        return _unreadable(f"cannot read init file '{shown}': {error.reason}")
    except json.JSONDecodeError as error:
        return _unreadable(
            f"init file '{shown}' is not valid JSON: {error.msg} at line {error.lineno}"
        )
    except RecursionError:
        return _unreadable(f"init file '{shown}' is nested too deeply to be a state")
    if not isinstance(data, dict):
        return _unreadable(
            f"init file '{shown}' must hold a JSON object with one key per state field"
        )
    return InitFile(data)


def _outside(problem: str) -> InitFile:
    return InitFile(
        code=codes.INIT_PATH_OUTSIDE_SPEC,
        problem=problem,
        help="put the file next to the spec (or below it) and name it relative to the file that names it",
    )


def _unsuitable(problem: str) -> InitFile:
    return InitFile(
        code=codes.INIT_FILE_UNSUITABLE,
        problem=problem,
        help=f"an init file is a regular JSON file of at most {MAX_INIT_BYTES:,} bytes",
    )


def _unreadable(problem: str) -> InitFile:
    return InitFile(
        code=codes.INIT_FILE_UNREADABLE,
        problem=problem,
        help="the path is relative to the file that names it",
    )
