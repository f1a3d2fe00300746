"""`envdsl check --fix`: apply the machine fixes that diagnostics carry, until none applies.

A diagnostic's fix is applied only when it is the diagnostic's one fix (several are choices for
a person) and all its edits lie in the spec being fixed. Within a round no two applied edits
overlap or insert at the same place: a fix that would touch what an earlier fix of the round
touches waits for the next round, where the spec is checked again. Rounds stop when nothing
applies, when a text comes back that was seen before, or after MAX_ROUNDS.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence, TextIO

from envdsl.diagnostics.diagnostic import Diagnostic, Edit, Fix
from envdsl.util.atomic_write import write_text_atomically
from envdsl.util.source import SourceFile

MAX_ROUNDS = 8


@dataclass(frozen=True, slots=True)
class AppliedFix:
    code: str
    message: str  # the fix's own words: "replace 'x' with 'y'"
    line: int  # where its first edit was, in the text of its round
    col: int


@dataclass(slots=True)
class FixOutcome:
    text: str
    applied: list[AppliedFix] = field(default_factory=list)


def choose_fixes(diagnostics: Sequence[Diagnostic], path: str) -> list[tuple[Diagnostic, Fix]]:
    """The fixes to apply in one round: single, in this file, not overlapping one another."""
    taken: list[Edit] = []
    chosen: list[tuple[Diagnostic, Fix]] = []
    for diagnostic in sorted(diagnostics, key=lambda d: (d.span.start, d.code.code)):
        if len(diagnostic.fixes) != 1:
            continue
        fix = diagnostic.fixes[0]
        edits = list(fix.edits)
        if not edits or any(edit.span.file != path for edit in edits):
            continue
        if any(_overlap(a, b) for i, a in enumerate(edits) for b in edits[i + 1 :] + taken):
            continue
        taken.extend(edits)
        chosen.append((diagnostic, fix))
    return chosen


def _overlap(a: Edit, b: Edit) -> bool:
    if a.span.start == b.span.start:
        return True  # two edits at one place: their order would be a guess
    return a.span.start < b.span.end and b.span.start < a.span.end


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """Apply non-overlapping edits (from the end, so earlier offsets stay valid)."""
    for edit in sorted(edits, key=lambda e: e.span.start, reverse=True):
        text = text[: edit.span.start] + edit.replacement + text[edit.span.end :]
    return text


def fix_source(source: SourceFile) -> FixOutcome:
    from envdsl.pipeline import check_source

    outcome = FixOutcome(source.text)
    seen = {source.text}
    for _ in range(MAX_ROUNDS):
        current = SourceFile(source.path, outcome.text)
        result = check_source(current, verify=False)  # task runs carry no fixes
        chosen = choose_fixes(result.diagnostics, source.path)
        if not chosen:
            break
        text = apply_edits(current.text, [edit for _, fix in chosen for edit in fix.edits])
        if text in seen:
            break  # fixes that undo one another: stop before going round in circles
        seen.add(text)
        for diagnostic, fix in chosen:
            where = current.position(min(edit.span.start for edit in fix.edits))
            outcome.applied.append(
                AppliedFix(diagnostic.code.code, fix.message, where.line, where.col)
            )
        outcome.text = text
    return outcome


def fix_files(paths: Sequence[str], err: TextIO) -> int:
    """Fix each spec in place and report each applied fix on `err`; returns how many files
    changed. A file that cannot be read is left to the check that follows to report."""
    from envdsl.util.terminal import printable

    changed = applied = 0
    for path in paths:
        try:
            original = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        outcome = fix_source(SourceFile(path, original))
        if not outcome.applied:
            continue
        try:
            write_text_atomically(path, outcome.text)
        except OSError as error:
            err.write(f"envdsl: error: cannot write '{path}': {error.strerror or error}\n")
            continue
        changed += 1
        for fix in outcome.applied:
            applied += 1
            where = f"{printable(path)}:{fix.line}:{fix.col}"
            err.write(f"fixed {where}: {fix.code} {printable(fix.message, keep_tabs=False)}\n")
    if applied:
        files = "file" if changed == 1 else "files"
        err.write(f"applied {applied} fix{'es' if applied != 1 else ''} in {changed} {files}\n")
    return changed
