"""What the generated tools' whole calls, row inserters and record writers
(envdsl/codegen/tool_calls.py, row_writes.py, serializers.py) name from the runtime, in one place: the generated module imports these under private names (`_MISSING`, ...).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from envdsl.runtime.limits import (
    INT_RESULT,
    MAX_INT,
    MAX_STR,
    MIN_INT,
    OVER_BUDGET,
    charge,
    per_thread,
    result_problem,
)
from envdsl.runtime.places import own_row_fields
from envdsl.runtime.row_rules import missing_parent, refused_transition, shared_unique
from envdsl.runtime.specs import INSERTED
from envdsl.runtime.values import UTC, format_datetime

# what `given.get(name, MISSING)` gives for an argument left out (None is JSON null); typed
# Any so that the value read is Any to the type checker, as the JSON it stands for
MISSING: Any = object()
# the message of a result too large to send (limits.result_problem's own, to the same count)
TOO_LARGE = "the result is too large (%d characters and elements)"
fromisoformat = dt.datetime.fromisoformat
ISO_SECONDS = "%04d-%02d-%02dT%02d:%02d:%02d"  # isoformat() of a datetime, no microsecond

__all__ = [
    "INSERTED",
    "ISO_SECONDS",
    "UTC",
    "INT_RESULT",
    "MAX_INT",
    "MAX_STR",
    "MIN_INT",
    "MISSING",
    "OVER_BUDGET",
    "missing_parent",
    "TOO_LARGE",
    "charge",
    "format_datetime",
    "fromisoformat",
    "own_row_fields",
    "per_thread",
    "refused_transition",
    "result_problem",
    "shared_unique",
]
