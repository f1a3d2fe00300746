"""Comparisons that grade as people mean: `same_items(a, b)` and `mentions(text, v)`.

Agents write free text (an answer, a note): `$150`, `150.00` and `150 dollars` are one price,
`U2,` and `u2` one id. A substring check (`"150" in answer`) fails those forms and passes an
answer that lists every candidate ("U1, U2, U3 or U4"), the hole the Agentic Benchmark
Checklist found in tau-bench. `mentions` compares normalized words (a count may be written out:
"two"), and refuses an answer that names the value negated ("not 7.5"), offers it as one of a
choice of numbers ("7.5 or 8", "between 7 and 8"), or names another value the state holds in
the same field as the value (another user id when the value is a user id, another price when
it is a price).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

from envdsl.runtime.limits import charge

Words = tuple[str, ...]

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_NEGATIONS = frozenset(
    "not no never isnt arent wasnt werent doesnt dont didnt nor neither cannot cant wont".split()
)
_NEGATION_REACH = 2  # "not 7.5", "is not the 7.5": a negation this many words before a mention

# counts written out ("two logs"); not "one", which is as often a pronoun ("the one with")
_UNITS = "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen"
_UNITS += " fifteen sixteen seventeen eighteen nineteen"
_NUMBER_NAMES = {name: str(n) for n, name in enumerate(_UNITS.split()) if name != "_"}
_TENS = {
    name: 10 * n
    for n, name in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split())
    if name != "_"
}
_DIGIT_NAMES = {
    name: n for n, name in enumerate("_ one two three four five six seven eight nine".split())
}

# a number offered with another as a choice ("2 or 3", "either 2 or 3", "between 2 and 3"): an
# answer that hedges names no one value. Dates and times are taken out first (their parts are
# no choice); "2-3", "2/3" and "from 2 to 3" are left alone: a score, a fraction, a change.
_DATES_AND_TIMES = re.compile(
    r"\d{4}-\d{1,2}(?:-\d{1,2})?(?:[t ]\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?z?)?"
    r"|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}:\d{2}(?::\d{2})?"
)
_NUMBER = r"\$?(\d+(?:[.,]\d+)*)"
_HEDGE = re.compile(
    rf"(?<![\w.,])(?:between\s+{_NUMBER}\s+and\s+{_NUMBER}|{_NUMBER}\s+or\s+{_NUMBER})(?![\w])"
)


def words(text: str) -> Words:
    """The normalized words of a text: lower case, no punctuation or spacing, letters and
    digits apart (`U2` is `u 2`), numbers in one form (`$1,500.00` is `1500`, `7.50` is
    `7.5`; `0001` keeps its zeros: it is a code, not a number)."""
    text = text.lower().replace("'", "").replace("\u2019", "")
    found: list[str] = []
    tens_at = -1  # where the last tens word ("twenty") stands, for a unit after it
    for token in _TOKEN.findall(text):
        if token[0].isdigit():
            found += _number_words(token)
        elif token in _DIGIT_NAMES and found and tens_at == len(found) - 1:
            found[-1] = str(int(found[-1]) + _DIGIT_NAMES[token])  # "twenty-five"
            tens_at = -1
        elif token in _NUMBER_NAMES:
            found.append(_NUMBER_NAMES[token])
        elif token in _TENS:
            found.append(str(_TENS[token]))
            tens_at = len(found) - 1
        else:
            found.append(token)
    return tuple(found)


def _number_words(token: str) -> list[str]:
    if _GROUPED.fullmatch(token):
        token = token.replace(",", "")  # 1,500 is a thousand five hundred, not 1 and 500
    parts = token.split(",")
    return [_one_number(part) for part in parts if part]


def _one_number(part: str) -> str:
    if part.count(".") == 1:
        whole, fraction = part.split(".")
        fraction = fraction.rstrip("0")
        return f"{whole}.{fraction}" if fraction else whole
    return part  # an integer, or a dotted code such as a version 1.2.3


def value_words(value: object) -> Words:
    """The words of a value a check looks for: a string, or a number as an agent writes it."""
    if isinstance(value, bool):
        return ("true",) if value else ("false",)
    if isinstance(value, float) and value.is_integer():
        return words(str(int(value)))
    return words(str(value))


def same_items(a: Iterable[Any], b: Iterable[Any]) -> bool:
    """Equal as multisets: the same elements as often, in any order."""
    left, right = list(a), list(b)
    if len(left) != len(right):
        return False
    charge(len(left) * len(right))
    unmatched = right
    for item in left:
        for index, other in enumerate(unmatched):
            if item == other:
                del unmatched[index]
                break
        else:
            return False
    return True


def mentions(text: str, expected: object, state: dict[str, Any]) -> bool:
    """Whether `text` names the expected value (or each of a list of them), never negated, and
    names no other value that `state` (canonical state JSON) holds in a field holding one of
    the expected values: the answer names what was asked, not every candidate."""
    wanted = list(expected) if isinstance(expected, (list, tuple, set, frozenset)) else [expected]
    wanted_words = [w for w in (value_words(v) for v in wanted) if w]
    if not wanted_words:
        return False
    said = words(text)
    charge(len(said) * len(wanted_words))
    covered: list[tuple[int, int]] = []
    hedged = _hedged_numbers(text)
    for target in wanted_words:
        if target in hedged:
            return False  # offered with another number as a choice: no one value named
        hits = list(_occurrences(said, target))
        if not any(not _negated(said, start) for start in hits):
            return False
        covered += [(start, start + len(target)) for start in hits]
    for other in _rivals(state, set(wanted_words)):
        for start in _occurrences(said, other):
            end = start + len(other)
            if not any(a <= start and end <= b for a, b in covered):
                return False  # another candidate named, outside any expected value's words
    return True


def _hedged_numbers(text: str) -> set[Words]:
    """The numbers `text` offers as one of a choice with another number (`2 or 3`)."""
    plain = _DATES_AND_TIMES.sub(" ", text.lower())
    hedged: set[Words] = set()
    for match in _HEDGE.finditer(plain):
        first, second = (tuple(_number_words(n)) for n in match.groups() if n is not None)
        if first != second:
            hedged |= {first, second}
    return hedged


def _occurrences(said: Words, target: Words) -> Iterator[int]:
    size = len(target)
    for start in range(len(said) - size + 1):
        if said[start : start + size] == target:
            yield start


def _negated(said: Words, start: int) -> bool:
    return any(word in _NEGATIONS for word in said[max(0, start - _NEGATION_REACH) : start])


def _rivals(state: dict[str, Any], wanted: set[Words]) -> set[Words]:
    """The other values of every state field (a table's column, a scalar, a list's elements)
    that holds one of the wanted values."""
    by_place: dict[str, set[Words]] = {}
    for place, value in _leaves(state, ""):
        found = value_words(value)
        if found:
            by_place.setdefault(place, set()).add(found)
    rivals: set[Words] = set()
    for values in by_place.values():
        if values & wanted:
            rivals |= values
    return rivals - wanted


def _leaves(value: Any, place: str, depth: int = 0) -> Iterator[tuple[str, object]]:
    """(place, scalar) of a state JSON; rows of one table share their places (`users.name`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            # a table is keyed by row: its rows are one place; a row's fields are places
            inner = place if depth == 1 else f"{place}.{key}"
            yield from _leaves(item, inner, depth + 1)
            if depth == 1:
                yield f"{place}.<key>", key
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, f"{place}[]", depth + 1)
    elif value is not None and not isinstance(value, bool):
        yield place, value
