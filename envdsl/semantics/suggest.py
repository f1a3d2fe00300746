"""Did-you-mean suggestions for unknown names, with a machine-applicable fix."""

from __future__ import annotations

import difflib
from typing import Iterable

from envdsl.diagnostics import Edit, Fix
from envdsl.syntax import ast
from envdsl.util.source import Span


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The known name `name` is most likely a slip of, or None when none is close enough.

    difflib ranks the candidates; a candidate is offered only within a few typing slips of
    `name` (insertions, deletions, substitutions, swapped neighbours), fewer for short names:
    a similarity ratio alone offers `same` for `state` and, for three-letter names, nearly
    anything, and a suggestion that is wrong also comes with a fix `check --fix` applies.
    """
    pool = sorted(set(candidates))
    lowered = {candidate.lower(): candidate for candidate in pool}
    if name.lower() in lowered:  # a case slip is the most likely mistake
        return lowered[name.lower()]
    limit = max(1, (len(name) - 1) // 3)
    for match in difflib.get_close_matches(name, pool, n=3, cutoff=0.6):
        if slips(name.lower(), match.lower()) <= limit:
            return match
    return None


def slips(a: str, b: str) -> int:
    """The optimal-string-alignment distance: edits of one character, and swaps of two
    neighbours (`emial` -> `email` is one slip)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                current[j] = min(current[j], previous2[j - 2] + 1)
        previous2, previous = previous, current
    return previous[len(b)]


def did_you_mean(
    name: str, candidates: Iterable[str], span: Span
) -> tuple[str | None, tuple[Fix, ...]]:
    """A help text and a rename fix, or (None, ()) when nothing is close."""
    suggestion = closest(name, candidates)
    if suggestion is None:
        return None, ()
    fix = Fix(f"replace '{name}' with '{suggestion}'", (Edit(span, suggestion),))
    return f"did you mean '{suggestion}'?", (fix,)


def as_function_call(function: str, attribute: ast.Attribute, end: int) -> tuple[Fix, ...]:
    """The fix that rewrites Python's `x.m()` / `x.attr` (`attribute`, up to `end`) as
    `function(x)`, keeping the receiver's own text; none for a receiver in parentheses,
    whose closing one is not in the receiver's span."""
    receiver = attribute.obj.span
    if attribute.span.start != receiver.start:
        return ()
    start = Span(receiver.file, receiver.start, receiver.start)
    rest = Span(receiver.file, receiver.end, end)
    return (Fix(f"write `{function}(...)`", (Edit(start, f"{function}("), Edit(rest, ")"))),)
