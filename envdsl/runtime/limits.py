"""Value-size limits and the per-call size budget.

The step budget bounds iterations, not work: `x = x * x` 27 times, a power tower or a string
doubled 28 times are a handful of steps that run for minutes or take gigabytes.  So values
have bounded sizes too, checked at the few places a value can grow (multiplication, power,
string and list concatenation and repetition, `join`, `replace`, f-string widths) and where
one is stored into state, and every call has a size budget: the total size of the values
those places build and store (a string's characters, a list's elements), so that a loop that
builds a thousand large strings fails as cleanly as one that builds one huge string.

The budget is per thread (environments are not shared between threads, rollout workers may
run several at once) and counts only inside a tool call: outside one (constants at import,
task checks) the per-value limits alone apply.
"""

from __future__ import annotations

import datetime as dt
import enum
import math
import re
import threading
from typing import Any, Callable

from envdsl.runtime.errors import Fail
from envdsl.runtime.places import record_fields

# integers are signed 64-bit: what JSON peers, databases and agents can represent
MIN_INT = -(2**63)
MAX_INT = 2**63 - 1
MAX_STR = 1_000_000  # characters in one string
MAX_ITEMS = 100_000  # elements of one list, set or map
DEFAULT_SIZE_BUDGET = 10_000_000  # characters and elements built or stored by one call
MAX_JSON_DEPTH = 64  # nesting of arguments and `json` values
# Checking a whole state (reset, a task's init) is no tool call: its rules may take this many
# steps per row of the state on top of the step budget, so that a valid state with more rows
# than the budget loads, and a rule that loops over a table for every row still stops
STATE_CHECK_STEPS_PER_ROW = 100
MAX_NAME = 60  # characters of an unknown name echoed in an error

_SURROGATE = re.compile("[\ud800-\udfff]")


class Budget:
    """One thread's size budget: what is left of the running call's, None outside a call."""

    __slots__ = ("left",)

    def __init__(self) -> None:
        self.left: int | None = None


class _PerThread(threading.local):
    """Each thread's own Budget (made on the thread's first read). Reaching a thread-local's
    attribute costs as much as a small function call, so a call reads its Budget once and
    sets and clears `left` on that plain object."""

    def __init__(self) -> None:
        self.budget = Budget()


per_thread = _PerThread()


OVER_BUDGET = "the call exceeded its size budget (values built or stored are too large)"


def charge(size: int) -> None:
    """Count `size` characters or elements against the running call's size budget."""
    budget = per_thread.budget
    left = budget.left
    if left is not None:
        left -= size
        budget.left = left
        if left < 0:
            raise Fail(OVER_BUDGET)


def check_int(value: int) -> int:
    if not MIN_INT <= value <= MAX_INT:
        raise Fail("integer overflow: the result is outside the 64-bit range")
    return value


def check_float(value: float) -> float:
    """A float result: finite; an int (int arithmetic on a float's integral value) stays an
    int within the 64-bit range and becomes a float beyond it, as a float would have."""
    if type(value) is int:
        if MIN_INT <= value <= MAX_INT:
            return value
        try:
            value = float(value)
        except OverflowError:
            raise Fail("the result is not a finite number") from None
    if not math.isfinite(value):
        raise Fail("the result is not a finite number")
    return value


def check_str(value: str) -> str:
    if len(value) > MAX_STR:
        raise Fail(f"a string of {len(value)} characters is longer than the limit ({MAX_STR})")
    return value


def check_items(count: int) -> None:
    if count > MAX_ITEMS:
        raise Fail(f"a collection of {count} elements is larger than the limit ({MAX_ITEMS})")


def has_surrogate(text: str) -> bool:
    """A lone surrogate cannot be encoded as UTF-8: it would make state_hash() raise."""
    return not text.isascii() and _SURROGATE.search(text) is not None


def clip(name: object) -> str:
    """An untrusted name as it may appear in an error: repr, cut to a readable length."""
    text = repr(name) if isinstance(name, str) else type(name).__name__
    if len(text) > MAX_NAME:
        text = text[: MAX_NAME - 4] + "...'"
    return text


def json_problem(value: Any, depth: int = 0) -> str | None:
    """Why a parsed JSON value may not enter the environment (too deep, a number out of range,
    a lone surrogate, a non-string key), or None; iterative, so depth cannot crash it. `depth`:
    how deep the value lies in the JSON value it is part of."""
    stack: list[tuple[Any, int]] = [(value, depth)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is str:
            if has_surrogate(item):
                return "a string holds a lone surrogate (not valid Unicode)"
        elif kind is int:
            if not MIN_INT <= item <= MAX_INT:
                return "an integer is outside the 64-bit range"
        elif kind is float:
            if not math.isfinite(item):
                return "a number is not finite"
        elif kind is list or kind is dict:
            if depth >= MAX_JSON_DEPTH:
                return f"the value is nested more than {MAX_JSON_DEPTH} levels deep"
            if kind is dict:
                for key in item:
                    if type(key) is not str:
                        return "an object key is not a string"
                    if has_surrogate(key):
                        return "a key holds a lone surrogate (not valid Unicode)"
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)
        elif item is not None and kind is not bool:
            return f"{kind.__name__} is not a JSON value"
    return None


_SMALL = frozenset({bool, type(None), dt.date, dt.datetime, dt.timedelta})


def store(value: Any) -> None:
    """Check a value being stored into state or into a collection against the value limits
    and charge its size; the common scalars take a fast path (one type test), because this
    runs on every field write."""
    kind = type(value)
    if kind is int:
        if not MIN_INT <= value <= MAX_INT:
            raise Fail("integer overflow: the result is outside the 64-bit range")
    elif kind is str:
        if len(value) > 64:  # short strings cannot exhaust the budget before the steps do
            check_str(value)
            charge(len(value))
    elif kind is float:
        if not math.isfinite(value):
            raise Fail("the result is not a finite number")
    elif kind not in _SMALL and not isinstance(value, enum.Enum):
        charge(stored_size(value))


def stored_size(value: Any) -> int:
    """The size of a value being stored (characters of strings, elements of collections, one
    per other value), after checking every part of it against the value limits: numbers in
    range and finite, strings and collections within their lengths."""
    kind = type(value)
    if kind is str:
        check_str(value)
        return len(value) + 1
    if kind is int:
        check_int(value)
        return 1
    if kind is float:
        check_float(value)
        return 1
    if kind in _SMALL or isinstance(value, enum.Enum):
        return 1
    if isinstance(value, (list, set, frozenset)):
        check_items(len(value))
        return 1 + sum(1 if type(item) in _SMALL else stored_size(item) for item in value)
    if isinstance(value, dict):
        check_items(len(value))
        return 1 + sum(stored_size(k) + stored_size(v) for k, v in value.items())
    # a generated record or entity class writes its own sizer (codegen: _stored_size); any
    # other dataclass is sized by the reference walk over its fields.  Looked up on the class
    # each time (as fast as a dict of classes, which kept every class of a batch check alive)
    sizer: Callable[[Any], int] | None = getattr(kind, "_stored_size", None)
    return _record_size(value) if sizer is None else sizer(value)


def _record_size(value: Any) -> int:
    """The reference sizer of a record: one for the record, and each field's stored_size
    (what a generated `_stored_size` computes, field by field, from the declared types)."""
    return 1 + sum(stored_size(getattr(value, name)) for name in record_fields(type(value)))


def text_size(value: str) -> int:
    """stored_size of a field declared `str` (generated sizers call it)."""
    if len(value) <= MAX_STR:
        return len(value) + 1
    check_str(value)  # raises
    return 0


def int_size(value: int) -> int:
    """stored_size of a field declared `int` (generated sizers call it)."""
    if MIN_INT <= value <= MAX_INT:
        return 1
    check_int(value)  # raises
    return 0


def result_problem(data: Any, size_budget: int) -> str | None:
    """Why a tool's JSON result may not be sent (an integer outside the 64-bit range, which
    no JSON peer reads and `json.dumps` refuses past 4,300 digits; more characters and
    elements than the size budget), or None. Integers computed by `+` are not range-checked
    where they are made, and a collection built during the call need not have been stored."""
    kind = type(data)
    if kind is int:
        return None if MIN_INT <= data <= MAX_INT else INT_RESULT
    if kind is not list and kind is not dict:
        return None
    # the first level in one pass (most results are one flat row), then what it nests
    total = len(data)
    stack: list[Any] = []
    for item in data.values() if kind is dict else data:
        kind = type(item)
        if kind is str:
            total += len(item)
        elif kind is int:
            if not MIN_INT <= item <= MAX_INT:
                return INT_RESULT
        elif kind is list or kind is dict:
            stack.append(item)
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str:
            total += len(item)
        elif kind is int:
            if not MIN_INT <= item <= MAX_INT:
                return INT_RESULT
        elif kind is list:
            total += len(item)
            stack.extend(item)
        elif kind is dict:
            total += len(item)
            stack.extend(item.values())
    if total > size_budget:
        return f"the result is too large ({total} characters and elements)"
    return None


INT_RESULT = "integer overflow: the result is outside the 64-bit range"
