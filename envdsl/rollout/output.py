"""The trajectory file of a run: held by one run at a time, and repaired before appending.

Two runs appending to one `--out` both read the same records as done and then both wrote every
missing one: each record twice.  So a run holds an exclusive lock on the file (flock, released
by the kernel when the process dies, kill -9 included) from before it reads the file until its
last record; a second run fails at once with OutputBusy.

A run killed mid-write leaves its last line cut off.  Before appending, that fragment is cut
away (the record it was is not scored, so the new run makes it again) and the run says so; a
last line that is a whole record, only without its newline, is kept and ended.
"""

from __future__ import annotations

import json
import os
from typing import IO

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; one run per file is up to the user
    fcntl = None  # type: ignore[assignment]

_TAIL_BLOCK = 1 << 16


class OutputBusy(Exception):
    """Another run is writing the same trajectory file."""


def open_locked(path: str | os.PathLike[str]) -> IO[bytes]:
    """The file opened for appending (created if missing) under an exclusive lock."""
    handle = open(path, "a+b")  # appending, and reading the torn end back
    if fcntl is not None:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise OutputBusy(
                f"'{os.fspath(path)}' is being written by another rollout run; wait for it to "
                "end, or give another --out"
            ) from None
    return handle


def repair_torn_end(handle: IO[bytes]) -> str | None:
    """Cut a last line without its newline off the locked file; say what was done, or None."""
    fd = handle.fileno()
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return None
    start = _last_line_start(fd, size)
    fragment = os.pread(fd, size - start, start)
    if _is_record(fragment):
        os.write(fd, b"\n")  # appending: the handle is in append mode
        return None
    os.ftruncate(fd, start)
    return (
        f"dropped a cut-off last line ({size - start} bytes, line {_line_count(fd, start) + 1}) "
        f"of '{handle.name}': a run was killed while writing it; its rollout runs again"
    )


def _last_line_start(fd: int, size: int) -> int:
    """The offset just after the last newline before `size` (0 when there is none)."""
    end = size
    while end > 0:
        begin = max(0, end - _TAIL_BLOCK)
        found = os.pread(fd, end - begin, begin).rfind(b"\n")
        if found >= 0:
            return begin + found + 1
        end = begin
    return 0


def _line_count(fd: int, end: int) -> int:
    count, offset = 0, 0
    while offset < end:
        block = os.pread(fd, min(_TAIL_BLOCK, end - offset), offset)
        count += block.count(b"\n")
        offset += len(block)
    return count


def _is_record(fragment: bytes) -> bool:
    try:
        record = json.loads(fragment)
    except ValueError:  # not JSON, or not UTF-8
        return False
    return isinstance(record, dict) and "key" in record
