"""Builtins of the DSL as used by generated code (`rt.h.<name>`).

Each one fails the call with a message an agent can act on (`Fail`) instead of letting a
Python exception through: a division by zero, a missing map key, `min` of nothing.
"""

from __future__ import annotations

import copy

import calendar
import datetime as dt
import enum
from typing import Any, Callable, Iterable, TypeVar

from envdsl.runtime.errors import Fail
from envdsl.runtime.values import UTC, format_datetime, ordered, parse_date, parse_datetime

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


def to_str(value: object) -> str:
    """`str(x)` and f-string holes: enums show their JSON value, bools true/false."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, dt.datetime):
        return format_datetime(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        seconds = value.total_seconds()
        return f"{int(seconds) if seconds.is_integer() else seconds}s"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_str(item) for item in value) + "]"
    if isinstance(value, (set, frozenset)):
        return "{" + ", ".join(to_str(item) for item in ordered(value)) + "}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{to_str(k)}: {to_str(v)}" for k, v in value.items()) + "}"
    return str(value)


def fmt(value: object, spec: str) -> str:
    try:
        return format(value, spec)
    except (ValueError, TypeError):
        raise Fail(f"cannot format {to_str(value)} with '{spec}'") from None


def div(a: float, b: float) -> float:
    if b == 0:
        raise Fail("division by zero")
    return a / b


def div_duration(a: dt.timedelta, b: Any) -> Any:
    if not b:
        raise Fail("division by zero")
    return a / b


def floordiv(a: T, b: Any) -> T:
    if b == 0:
        raise Fail("division by zero")
    result: T = a // b
    return result


def mod(a: T, b: Any) -> T:
    if b == 0:
        raise Fail("division by zero")
    result: T = a % b
    return result


def at(items: list[T], index: int) -> T:
    try:
        return items[index]
    except IndexError:
        raise Fail(f"index {index} is out of range (length {len(items)})") from None


def char_at(text: str, index: int) -> str:
    try:
        return text[index]
    except IndexError:
        raise Fail(f"index {index} is out of range (length {len(text)})") from None


def lookup(mapping: dict[K, V], key: K) -> V:
    try:
        return mapping[key]
    except KeyError:
        raise Fail(f"key {to_str(key)!r} not found") from None


def list_remove(items: list[T], item: T) -> None:
    try:
        items.remove(item)
    except ValueError:
        raise Fail(f"{to_str(item)!r} is not in the list") from None


def set_remove(items: set[T], item: T) -> None:
    if item not in items:
        raise Fail(f"{to_str(item)!r} is not in the set")
    items.remove(item)


def map_remove(mapping: dict[K, V], key: K) -> None:
    if key not in mapping:
        raise Fail(f"key {to_str(key)!r} not found")
    del mapping[key]


def list_index(items: list[T], item: T) -> int:
    try:
        return items.index(item)
    except ValueError:
        raise Fail(f"{to_str(item)!r} is not in the list") from None


def first(items: Iterable[T]) -> T | None:
    return next(iter(ordered(items)), None)


def count(items: Iterable[object]) -> int:
    return sum(1 for _ in items)


def to_int(value: object) -> int:
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (ValueError, TypeError, OverflowError):
        raise Fail(f"{to_str(value)!r} is not an integer") from None


def to_float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (ValueError, TypeError):
        raise Fail(f"{to_str(value)!r} is not a number") from None


def date(text: str) -> dt.date:
    try:
        return parse_date(text)
    except ValueError:
        raise Fail(f"{text!r} is not a date (YYYY-MM-DD)") from None


def datetime(text: str) -> dt.datetime:
    try:
        return parse_datetime(text)
    except ValueError:
        raise Fail(f"{text!r} is not a datetime (ISO 8601)") from None


def days(n: float) -> dt.timedelta:
    return dt.timedelta(days=n)


def hours(n: float) -> dt.timedelta:
    return dt.timedelta(hours=n)


def minutes(n: float) -> dt.timedelta:
    return dt.timedelta(minutes=n)


def seconds(n: float) -> dt.timedelta:
    return dt.timedelta(seconds=n)


def date_of(value: dt.datetime) -> dt.date:
    return value.astimezone(UTC).date() if value.tzinfo else value.date()


def datetime_of(value: dt.date) -> dt.datetime:
    return dt.datetime(value.year, value.month, value.day, tzinfo=UTC)


def days_between(a: dt.date, b: dt.date) -> int:
    delta = b - a
    return delta.days


def minutes_between(a: dt.datetime, b: dt.datetime) -> int:
    return int((b - a).total_seconds() // 60)


def total_minutes(value: dt.timedelta) -> int:
    return int(value.total_seconds() // 60)


def total_seconds(value: dt.timedelta) -> int:
    return int(value.total_seconds())


D = TypeVar("D", dt.date, dt.datetime)


def add_months(value: D, months: int) -> D:
    """Calendar months; the day is capped at the month's end (Jan 31 + 1 month = Feb 28/29)."""
    index = value.year * 12 + value.month - 1 + months
    year, month = divmod(index, 12)
    if not 1 <= year <= 9999:
        raise Fail("date out of range")
    day = min(value.day, calendar.monthrange(year, month + 1)[1])
    return value.replace(year=year, month=month + 1, day=day)


def weekday(value: dt.date) -> int:
    return value.weekday()


def shift(value: D, delta: dt.timedelta, sign: int = 1) -> D:
    try:
        result: D = value + delta if sign > 0 else value - delta
    except OverflowError:
        raise Fail("date out of range") from None
    return result


def split(text: str, sep: str | None = None) -> list[str]:
    if sep == "":
        raise Fail("split() separator is empty")
    return text.split(sep)


def power(base: Any, exponent: Any) -> Any:
    """`**` with a bound: a huge power would run for minutes, which a call may not."""
    if isinstance(exponent, int) and abs(exponent) > 10_000 and abs(base) > 1:
        raise Fail("the power is too large")
    try:
        return base**exponent
    except (OverflowError, ZeroDivisionError) as error:
        raise Fail(f"cannot compute the power: {error}") from None


def unwrap(value: T | None) -> T:
    """A value the checker proved not none (flow narrowing) that Python cannot see as such."""
    if value is None:
        raise Fail("a value that was tested not to be none is none")
    return value


def fresh(value: T) -> T:
    """A new copy of a constant's value (lists, maps, sets and records of constants are read
    as new values: a write through a local bound to one must not change the constant)."""
    return copy.deepcopy(value)


def min_of(items: Iterable[T], key: Callable[[T], Any] | None = None) -> T:
    values = list(items)
    if not values:
        raise Fail("min() of an empty collection")
    return min(values, key=key) if key is not None else min(values)  # type: ignore[type-var]


def max_of(items: Iterable[T], key: Callable[[T], Any] | None = None) -> T:
    values = list(items)
    if not values:
        raise Fail("max() of an empty collection")
    return max(values, key=key) if key is not None else max(values)  # type: ignore[type-var]


def min_or(items: Iterable[T], default: V, key: Callable[[T], Any] | None = None) -> T | V:
    values = list(items)
    return min_of(values, key) if values else default


def max_or(items: Iterable[T], default: V, key: Callable[[T], Any] | None = None) -> T | V:
    values = list(items)
    return max_of(values, key) if values else default


def set_at(items: list[T], index: int, value: T) -> None:
    try:
        items[index] = value
    except IndexError:
        raise Fail(f"index {index} is out of range (length {len(items)})") from None


def in_order(items: Iterable[T]) -> list[T]:
    """A snapshot of a collection to loop over: sets in canonical order, the rest as is."""
    return list(ordered(items))
