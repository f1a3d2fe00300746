"""The long explanation of every diagnostic code, shown by `envdsl explain CODE`.

One Markdown file per code lies in explanations/ (as rustc keeps one per error code): what the
rule is and why it exists, then a small spec that breaks the rule (`## wrong`) and the same spec
repaired (`## right`), each in an ```env fence; `## file NAME` sections hold other files the
examples name (a task file's env), which lie next to the example. The examples are complete
specs so that tests can run them through the checker: `wrong` must report the code, `right`
must not. Internal errors (E9001) have no spec that triggers them on purpose: their sections
say `(none)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Iterator, Mapping

EXPLANATIONS_DIR = Path(__file__).resolve().parent / "explanations"

_SECTION = re.compile(r"^## (wrong|right|file (?P<name>\S+))\n", re.MULTILINE)
_FENCE = re.compile(r"\A\s*```env\n(?P<body>.*?)^```\s*\Z", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Explanation:
    text: str
    wrong: str
    right: str
    # other files the examples name (a task file's env), by name; they lie next to the example
    files: Mapping[str, str] = field(default_factory=dict)


class ExplanationFileError(ValueError):
    """An explanation file out of its format (a test reads every one)."""


def parse_explanation(markdown: str, code: str) -> Explanation:
    heading, _, rest = markdown.partition("\n")
    if heading.strip() != f"# {code}":
        raise ExplanationFileError(f"{code}: the first line must be '# {code}'")
    sections = list(_SECTION.finditer(rest))
    if not sections:
        raise ExplanationFileError(f"{code}: no '## wrong' and '## right' sections")
    text = " ".join(rest[: sections[0].start()].split())
    bodies: dict[str, str] = {}
    files: dict[str, str] = {}
    for index, section in enumerate(sections):
        end = sections[index + 1].start() if index + 1 < len(sections) else len(rest)
        content = rest[section.end() : end]
        if content.strip() == "(none)":
            body = ""
        else:
            fenced = _FENCE.match(content)
            if fenced is None:
                raise ExplanationFileError(f"{code}: '## {section.group(1)}' holds no ```env block")
            body = fenced.group("body")
        if section.group("name"):
            files[section.group("name")] = body
        else:
            bodies[section.group(1)] = body
    if set(bodies) != {"wrong", "right"}:
        raise ExplanationFileError(f"{code}: needs exactly one '## wrong' and one '## right'")
    return Explanation(text, bodies["wrong"], bodies["right"], files)


class _Explanations(Mapping[str, Explanation]):
    """Code -> Explanation, read from the files on first use (`envdsl check` never reads them)."""

    @staticmethod
    @cache
    def _all() -> dict[str, Explanation]:
        return {
            path.stem: parse_explanation(path.read_text(encoding="utf-8"), path.stem)
            for path in sorted(EXPLANATIONS_DIR.glob("*.md"))
        }

    def __getitem__(self, code: str) -> Explanation:
        return self._all()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


EXPLANATIONS: Mapping[str, Explanation] = _Explanations()
