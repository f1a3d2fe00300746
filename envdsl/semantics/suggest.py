"""Did-you-mean suggestions for unknown names, with a machine-applicable fix."""

from __future__ import annotations

import difflib
from typing import Iterable

from envdsl.diagnostics import Edit, Fix
from envdsl.util.source import Span


def closest(name: str, candidates: Iterable[str]) -> str | None:
    pool = sorted(set(candidates))
    lowered = {candidate.lower(): candidate for candidate in pool}
    if name.lower() in lowered:  # a case slip is the most likely mistake
        return lowered[name.lower()]
    matches = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(
    name: str, candidates: Iterable[str], span: Span
) -> tuple[str | None, tuple[Fix, ...]]:
    """A help text and a rename fix, or (None, ()) when nothing is close."""
    suggestion = closest(name, candidates)
    if suggestion is None:
        return None, ()
    fix = Fix(f"replace '{name}' with '{suggestion}'", (Edit(span, suggestion),))
    return f"did you mean '{suggestion}'?", (fix,)
