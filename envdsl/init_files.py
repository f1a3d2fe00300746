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


def read_init_file(spec_path: str, relative: str) -> InitFile:
    """The parsed JSON of `relative` (as written in the spec), or the reason it is refused."""
    spec_dir = Path(os.path.realpath(Path(spec_path).parent))
    shown = relative[:200]
    if os.path.isabs(relative) or relative.startswith("~"):
        return _outside(f"init file '{shown}' is an absolute path")
    target = Path(os.path.realpath(spec_dir / relative))
    if target != spec_dir and spec_dir not in target.parents:
        return _outside(f"init file '{shown}' is outside the spec's directory ({spec_dir}/)")
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked on the
        # open descriptor, so the file checked is the file read
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return InitFile(
            code=codes.INIT_FILE_UNREADABLE,
            problem=f"init file '{shown}' does not exist (looked in {spec_dir}/)",
            help="the path is relative to the spec file",
        )
    except OSError as error:
        return _unreadable(f"cannot read init file '{shown}': {error.strerror}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return _unsuitable(f"init file '{shown}' is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_INIT_BYTES + 1)
    except OSError as error:
        return _unreadable(f"cannot read init file '{shown}': {error.strerror}")
    finally:
        os.close(fd)
    if len(raw) > MAX_INIT_BYTES:
        return _unsuitable(f"init file '{shown}' is larger than {MAX_INIT_BYTES:,} bytes")
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
        help="put the file next to the spec (or below it) and name it relative to the spec",
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
        help="the path is relative to the spec file",
    )
