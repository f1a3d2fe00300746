"""Builtins of the DSL as used by generated code (`rt.h.<name>`).

Each one fails the call with a message an agent can act on (`Fail`) instead of letting a
Python exception through: a division by zero, a missing map key, `min` of nothing.
"""

from __future__ import annotations

import copy

import calendar
import datetime as dt
import enum
import math
import re
from typing import Any, Callable, Iterable, TypeVar, overload

from envdsl.runtime.errors import Fail
from envdsl.runtime.limits import (
    MAX_ITEMS,
    MAX_INT,
    MAX_STR,
    MIN_INT,
    charge,
    check_float,
    check_int,
    check_items,
)
from envdsl.runtime.limits import int_size as int_size  # re-exported: generated sizers call
from envdsl.runtime.limits import stored_size as stored_size  # these as h.<name>
from envdsl.runtime.limits import text_size as text_size

# the grading comparisons live in their own module; generated code calls them as h.<name>
from envdsl.runtime.text_match import mentions as mentions
from envdsl.runtime.text_match import same_items as same_items
from envdsl.runtime.typed import to_json as to_json  # (generated _json_<tool> methods)
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
        return _joined("[", [to_str(item) for item in value], "]")
    if isinstance(value, (set, frozenset)):
        return _joined("{", [to_str(item) for item in ordered(value)], "}")
    if isinstance(value, dict):
        return _joined("{", [f"{to_str(k)}: {to_str(v)}" for k, v in value.items()], "}")
    try:
        return str(value)
    except ValueError:  # an integer of more than 4,300 digits (built by additions)
        raise Fail("the integer is too large to show") from None


def _joined(open_: str, parts: list[str], close: str) -> str:
    """The text of a collection, within the string limit (its parts may each be long)."""
    size = sum(map(len, parts)) + 2 * len(parts)
    check_str_size(size)
    charge(size)
    return open_ + ", ".join(parts) + close


def check_str_size(size: int) -> None:
    if size > MAX_STR:
        raise Fail(f"a string of {size} characters is longer than the limit ({MAX_STR})")


def fmt(value: object, spec: str) -> str:
    """An f-string hole with a format spec; its width and precision are bounded
    (`{x:>999999999}` would build a gigabyte)."""
    for number in re.findall(r"\d+", spec):
        if len(number) > 7 or int(number) > MAX_STR:
            raise Fail(f"the format '{spec}' is wider than the string limit ({MAX_STR})")
    try:
        text = format(value, spec)
    except (ValueError, TypeError, OverflowError):
        raise Fail(f"cannot format {to_str(value)} with '{spec}'") from None
    charge(len(text))
    return text


def concat(a: str, b: str) -> str:
    """`a + b` of strings: the one place a string grows by doubling itself."""
    size = len(a) + len(b)
    if size > MAX_STR:
        check_str_size(size)
    charge(size)
    return a + b


def concat_lists(a: list[T], b: list[T]) -> list[T]:
    size = len(a) + len(b)
    check_items(size)
    charge(size)
    return [*a, *b]


def extend(items: list[T], more: Iterable[T]) -> None:
    """`xs.extend(ys)` and `xs += ys`: `xs.extend(xs)` doubles a list."""
    added = list(more)
    check_items(len(items) + len(added))
    charge(len(added))
    items.extend(added)


@overload
def mul(a: int, b: int) -> int: ...
@overload
def mul(a: float, b: float) -> float: ...
@overload
def mul(a: str, b: int) -> str: ...
@overload
def mul(a: int, b: str) -> str: ...
@overload
def mul(a: list[T], b: int) -> list[T]: ...
@overload
def mul(a: int, b: list[T]) -> list[T]: ...
@overload
def mul(a: dt.timedelta, b: float) -> dt.timedelta: ...
@overload
def mul(a: float, b: dt.timedelta) -> dt.timedelta: ...
def mul(a: Any, b: Any) -> Any:
    """`a * b`: numbers within their range, repetitions of strings and lists within the
    size limits, checked before anything large is built."""
    kind_a, kind_b = type(a), type(b)
    if kind_a is int and kind_b is int:
        if a.bit_length() + b.bit_length() > 130:  # the product certainly is out of range
            raise Fail("integer overflow: the result is outside the 64-bit range")
        return check_int(a * b)
    if kind_a is float or kind_b is float:
        return check_float(a * b)
    if kind_a is int and kind_b is not int:
        a, b, kind_a, kind_b = b, a, kind_b, kind_a
    if kind_b is int and isinstance(a, (str, list)):
        size = len(a) * max(b, 0)
        if isinstance(a, str):
            check_str_size(size)
        else:
            check_items(size)
        charge(size)
    try:
        return a * b
    except OverflowError:
        raise Fail("a value is out of range") from None


def mul_float(a: float, b: float) -> float:
    """`a * b` of floats, either of which may hold an int (a float's integral value as the
    data wrote it): Python's product, exact while it is in the 64-bit range, a float beyond."""
    if type(a) is int and type(b) is int and a.bit_length() + b.bit_length() > 130:
        return check_float(float(a) * float(b))  # not the huge int: a float, inf if it is one
    return check_float(a * b)


def power_float(base: float, exponent: float) -> float:
    """`**` with a float result: an int base to an int power stays an int (Python's) while in
    range; to a negative or too large power it is computed as a float, as a float base is."""
    if type(base) is int and type(exponent) is int:
        if exponent >= 0 and (abs(base) <= 1 or (abs(base).bit_length() - 1) * exponent <= 64):
            return check_float(base**exponent)
        base = float(base)
    result: float = power(base, exponent)
    return result


def add_float(a: float, b: float) -> float:
    return check_float(a + b)


def sub_float(a: float, b: float) -> float:
    return check_float(a - b)


def fsum(items: Iterable[float]) -> float:
    """`sum` of floats, finite. Over a set it is `math.fsum`, exact and so independent of the
    order (float addition is not associative, and a set's order is the hash order); over a
    list it adds in the list's order, as Python does."""
    if isinstance(items, (set, frozenset)):
        try:
            if all(type(item) is int for item in items):
                return check_float(sum(items))  # exact (and so order-free) already
            return check_float(math.fsum(items))
        except OverflowError:
            raise Fail("the result is not a finite number") from None
    return check_float(sum(items))  # Python's: ints add up to an int, `0` when empty


def join(sep: str, items: Iterable[str]) -> str:
    parts = list(ordered(items))
    size = sum(map(len, parts)) + len(sep) * max(len(parts) - 1, 0)
    check_str_size(size)
    charge(size)
    return sep.join(parts)


def replace(text: str, old: str, new: str) -> str:
    """`replace`: an empty or short `old` with a long `new` multiplies the length."""
    if len(new) > len(old):
        occurrences = text.count(old) if old else len(text) + 1
        size = len(text) + occurrences * (len(new) - len(old))
        check_str_size(size)
        charge(size)
    return text.replace(old, new)


def div(a: float, b: float) -> float:
    if b == 0:
        raise Fail("division by zero")
    try:
        return check_float(a / b)
    except OverflowError:  # an integer too large for a float
        raise Fail("the result is not a finite number") from None


def div_duration(a: dt.timedelta, b: Any) -> Any:
    if not b:
        raise Fail("division by zero")
    try:
        return a / b
    except (OverflowError, ValueError):
        raise Fail("the duration is out of range") from None


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
        number: int = int(value)  # type: ignore[call-overload]
    except (ValueError, TypeError, OverflowError):
        shown = to_str(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise Fail(f"{shown!r} is not an integer") from None
    if not MIN_INT <= number <= MAX_INT:
        raise Fail("integer overflow: the result is outside the 64-bit range")
    return number


def to_float(value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (ValueError, TypeError, OverflowError):
        number = math.nan
    if not math.isfinite(number):  # float("nan"), float("inf"): never in state
        shown = to_str(value)
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        raise Fail(f"{shown!r} is not a finite number")
    return number


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


def _duration(**amount: float) -> dt.timedelta:
    try:
        return dt.timedelta(**amount)
    except OverflowError:  # beyond 999,999,999 days
        raise Fail("the duration is out of range") from None


def days(n: float) -> dt.timedelta:
    return _duration(days=n)


def hours(n: float) -> dt.timedelta:
    return _duration(hours=n)


def minutes(n: float) -> dt.timedelta:
    return _duration(minutes=n)


def seconds(n: float) -> dt.timedelta:
    return _duration(seconds=n)


def date_of(value: dt.datetime) -> dt.date:
    try:
        return value.astimezone(UTC).date() if value.tzinfo else value.date()
    except OverflowError:
        raise Fail("date out of range") from None


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
    """`split` within the collection limit and the size budget: a 10^6-character string cut
    at every character is 10^6 pieces built in one step, so the pieces are charged to the
    call's budget and cutting stops one piece past the limit (bounded work, then a failure)."""
    if sep == "":
        raise Fail("split() separator is empty")
    parts = text.split(sep, MAX_ITEMS)
    check_items(len(parts))
    charge(len(parts))
    return parts


def power(base: Any, exponent: Any) -> Any:
    """`**` within the value limits: an int power out of the 64-bit range fails before it is
    computed (a power tower would run for minutes), and so does a result that is not a
    finite real number (`(-1) ** 0.5` is complex, `10.0 ** 400` overflows)."""
    if type(base) is int and type(exponent) is int and exponent < 0:
        # Python gives a float (2 ** -1 == 0.5, 1 ** -1 == 1.0) where the checker typed an
        # int: stored in an int field it broke the field's type (found by fuzz_grammar.py)
        raise Fail("an int to a negative power is not an int: write a float base (2.0 ** -1)")
    if type(base) is int and type(exponent) is int and exponent > 1 and abs(base) > 1:
        if (abs(base).bit_length() - 1) * exponent > 64:
            raise Fail("integer overflow: the power is outside the 64-bit range")
        return check_int(base**exponent)
    if type(exponent) is int and abs(exponent) > 10_000 and abs(base) > 1:
        raise Fail("the power is too large")
    try:
        result = base**exponent
    except (OverflowError, ZeroDivisionError) as error:
        raise Fail(f"cannot compute the power: {error}") from None
    if isinstance(result, complex):
        raise Fail("the power is not a real number (a negative number to a fractional power)")
    if type(result) is float:
        return check_float(result)
    return check_int(result) if type(result) is int else result


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
    values: list[T] = list(ordered(items))  # ties under `key`: the first in canonical order
    if not values:
        raise Fail("min() of an empty collection")
    return min(values, key=key) if key is not None else min(values)  # type: ignore[type-var]


def max_of(items: Iterable[T], key: Callable[[T], Any] | None = None) -> T:
    values: list[T] = list(ordered(items))
    if not values:
        raise Fail("max() of an empty collection")
    return max(values, key=key) if key is not None else max(values)  # type: ignore[type-var]


def min_or(items: Iterable[T], default: V, key: Callable[[T], Any] | None = None) -> T | V:
    values = list(ordered(items))
    return min_of(values, key) if values else default


def max_or(items: Iterable[T], default: V, key: Callable[[T], Any] | None = None) -> T | V:
    values = list(ordered(items))
    return max_of(values, key) if values else default


def sorted_of(
    items: Iterable[T], key: Callable[[T], Any] | None = None, reverse: bool = False
) -> list[T]:
    """`sorted`: a set is first put in canonical order, so that elements with equal keys
    keep that order (the sort is stable), never the hash order of this process."""
    values: list[T] = list(ordered(items))
    return sorted(values, key=key, reverse=reverse)  # type: ignore[type-var, arg-type]


def set_at(items: list[T], index: int, value: T) -> None:
    try:
        items[index] = value
    except IndexError:
        raise Fail(f"index {index} is out of range (length {len(items)})") from None


def in_order(items: Iterable[T]) -> list[T]:
    """A snapshot of a collection to loop over: sets in canonical order, the rest as is."""
    return list(ordered(items))
