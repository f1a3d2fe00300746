"""Mermaid sources of the report's diagrams and charts: the entity-relationship diagram of a
spec's tables, one state diagram per `transitions` field, and xychart plots of rollout figures.

Mermaid (shipped in the output, see envdsl/report/site.py) draws them in the browser. Nothing a
spec or a trajectory file wrote reaches a Mermaid source as syntax: nodes get generated ids
(`e0`, `s1`) and show their names as quoted labels, and every label and title passes through
`_label`, which keeps letters, digits and a few harmless marks. Identifiers are already that,
so labels read as written; a hostile model name or title loses its quotes and brackets.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

_UNSAFE = re.compile(r"[^A-Za-z0-9 _.,:@^/+()-]")


def _label(text: str) -> str:
    """Text safe inside a Mermaid double-quoted label (no quote, bracket, brace or markup)."""
    return _UNSAFE.sub("_", text)[:80]


def _type_token(type_text: str) -> str:
    """A field type as Mermaid's erDiagram accepts it: one word of letters, digits, `_`, `-`
    and brackets (`map[str, int]?` becomes `map[str-int]`; optionality is a comment)."""
    word = type_text.replace("?", "").replace(", ", "-").replace(" ", "_")
    return re.sub(r"[^A-Za-z0-9_\[\]-]", "_", word) or "value"


def entity_relationships(entities: Sequence[dict[str, Any]]) -> str | None:
    """An erDiagram of the entities (None when the spec has none): each entity's fields with
    PK / FK / UK marks, and one relationship per `ref` field (many rows to one, or to zero or
    one for an optional ref), labelled with the field's name."""
    if not entities:
        return None
    ids = {entity["name"]: f"e{index}" for index, entity in enumerate(entities)}
    lines = ["erDiagram"]
    relations: list[str] = []
    for entity in entities:
        node = ids[entity["name"]]
        lines.append(f'  {node}["{_label(entity["name"])}"] {{')
        for field in entity["fields"]:
            marks = [
                mark
                for mark, present in (
                    ("PK", field["key"]),
                    ("FK", field["ref"] is not None),
                    ("UK", field["unique"]),
                )
                if present
            ]
            comment = ' "optional"' if field["optional"] else ""
            keys = f" {', '.join(marks)}" if marks else ""
            lines.append(
                f"    {_type_token(field['type'])} {_label(field['name']).replace(' ', '_')}"
                f"{keys}{comment}"
            )
        lines.append("  }")
        for field in entity["fields"]:
            target = ids.get(field["ref"] or "")
            if target is not None:
                cardinality = "o|" if field["optional"] else "||"
                relations.append(
                    f'  {node} }}o--{cardinality} {target} : "{_label(field["name"])}"'
                )
    return "\n".join(lines + relations)


def field_states(
    members: Sequence[str], transitions: Sequence[Sequence[str]], initial: str | None
) -> str:
    """A stateDiagram of an enum field's allowed changes: every member a state (an isolated one
    can be a row's first value but never be reached), an arrow per allowed change and, when the
    field has a default, the start arrow into it."""
    ids = {member: f"s{index}" for index, member in enumerate(members)}
    lines = ["stateDiagram-v2"]
    lines += [f'  state "{_label(member)}" as {node}' for member, node in ids.items()]
    if initial in ids:
        lines.append(f"  [*] --> {ids[initial]}")
    for source, target in transitions:
        if source in ids and target in ids:
            lines.append(f"  {ids[source]} --> {ids[target]}")
    return "\n".join(lines)


def line_chart(title: str, ks: Sequence[int], series: Sequence[Sequence[float]]) -> str:
    """An xychart of curves over k = 1..n (pass@k, pass^k), y from 0 to 1."""
    lines = [
        "xychart-beta",
        f'  title "{_label(title)}"',
        f"  x-axis \"k\" [{', '.join(str(k) for k in ks)}]",
        '  y-axis "rate" 0 --> 1',
    ]
    lines += [f"  line [{', '.join(_number(value) for value in values)}]" for values in series]
    return "\n".join(lines)


def bar_chart(title: str, labels: Sequence[str], values: Sequence[float], axis: str) -> str:
    """An xychart of bars, one per label (a reward histogram: samples per reward bin)."""
    shown = ", ".join(f'"{_label(label)}"' for label in labels)
    top = max(values, default=0)
    return "\n".join(
        [
            "xychart-beta",
            f'  title "{_label(title)}"',
            f"  x-axis [{shown}]",
            f'  y-axis "{_label(axis)}" 0 --> {_number(max(top, 1))}',
            f"  bar [{', '.join(_number(value) for value in values)}]",
        ]
    )


def _number(value: float) -> str:
    return f"{value:.4g}"
