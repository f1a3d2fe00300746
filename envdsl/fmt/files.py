"""`envdsl fmt` over files: format each, then write it, show the diff or only report it."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Sequence, TextIO

from envdsl.fmt import format_source
from envdsl.util.atomic_write import write_text_atomically
from envdsl.util.source import SourceFile, SourceMap

EXIT_OK = 0
EXIT_CHANGES_OR_ERRORS = 1  # --check found a file to change, or a spec could not be formatted
EXIT_USAGE = 2


def run_fmt(
    paths: Sequence[str],
    *,
    check: bool,
    diff: bool,
    color: bool,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Format the files (already expanded from the arguments); returns the exit code."""
    from envdsl.diagnostics.render_text import render_text
    from envdsl.util.spec_paths import describe_read_error

    out = out or sys.stdout
    err = err or sys.stderr
    changed = unchanged = failed = 0
    for path in paths:
        try:
            original = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            err.write(f"envdsl: error: cannot read '{path}': {describe_read_error(error)}\n")
            return EXIT_USAGE
        source = SourceFile(path, original)
        result = format_source(source)
        if result.text is None:
            failed += 1
            if result.problem is not None:
                err.write(f"envdsl: error: cannot format '{path}': {result.problem}\n")
            else:
                sources = SourceMap()
                sources.add(source)
                err.write(render_text(result.diagnostics, sources, color=color) + "\n")
            continue
        if result.text == original:
            unchanged += 1
            continue
        changed += 1
        if diff:
            out.writelines(
                difflib.unified_diff(
                    source.text.splitlines(keepends=True),
                    result.text.splitlines(keepends=True),
                    f"{path} (original)",
                    f"{path} (formatted)",
                )
            )
        if check or diff:
            err.write(f"would reformat {path}\n")
            continue
        try:
            write_text_atomically(path, result.text)
        except OSError as error:
            err.write(f"envdsl: error: cannot write '{path}': {describe_read_error(error)}\n")
            return EXIT_USAGE
        err.write(f"reformatted {path}\n")
    err.write(_summary(changed, unchanged, failed, written=not (check or diff)) + "\n")
    if failed or (check and changed):
        return EXIT_CHANGES_OR_ERRORS
    return EXIT_OK


def _summary(changed: int, unchanged: int, failed: int, *, written: bool) -> str:
    def files(count: int) -> str:
        return f"{count} file{'s' if count != 1 else ''}"

    parts = []
    if changed:
        parts.append(f"{files(changed)} {'reformatted' if written else 'would be reformatted'}")
    if unchanged:
        parts.append(f"{files(unchanged)} left unchanged")
    if failed:
        parts.append(f"{files(failed)} could not be formatted")
    return ", ".join(parts) or "no files"
