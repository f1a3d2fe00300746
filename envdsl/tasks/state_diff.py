"""How two canonical JSON states differ, in the words an author reads: `contacts["C2"] deleted`,
`contacts["C1"].notes: "call back" -> "x"`, `now: ... -> ...`.

Mutation testing shows it for a surviving wrong run against the reference's end.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import Any


def state_changes(
    before: dict[str, Any], after: dict[str, Any], tables: Collection[str], limit: int = 5
) -> list[str]:
    """The first `limit` differences from `before` to `after` (canonical `state_json()`
    documents), tables and rows in their canonical order."""
    found: list[str] = []
    for line in _changes(before, after, tables):
        if len(found) == limit:
            found.append("...")
            break
        found.append(line)
    return found


def _changes(
    before: dict[str, Any], after: dict[str, Any], tables: Collection[str]
) -> Iterator[str]:
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if name not in tables or not isinstance(old, dict) or not isinstance(new, dict):
            yield f"{name}: {_shown(old)} -> {_shown(new)}"
            continue
        for key, row in old.items():
            if key not in new:
                yield f"{name}[{_shown(key)}] deleted"
            elif new[key] != row:
                for field in sorted(set(row) | set(new[key])):
                    if row.get(field) != new[key].get(field):
                        yield (
                            f"{name}[{_shown(key)}].{field}: {_shown(row.get(field))} -> "
                            f"{_shown(new[key].get(field))}"
                        )
        for key, row in new.items():
            if key not in old:
                yield f"{name}[{_shown(key)}] inserted: {_shown(row)}"


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."
