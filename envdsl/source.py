"""Source files and spans: the one place that maps byte offsets to lines and columns."""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open range of character offsets [start, end) in one source file."""

    file: str
    start: int
    end: int

    def cover(self, other: Span) -> Span:
        """The smallest span that contains both spans (same file assumed)."""
        return Span(self.file, min(self.start, other.start), max(self.end, other.end))


@dataclass(frozen=True, slots=True)
class Position:
    line: int  # 1-based
    col: int  # 1-based, in characters
    offset: int


@dataclass(slots=True)
class SourceFile:
    """The text of one spec (or stdlib module) plus a line index built once."""

    path: str
    text: str
    _line_starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        starts = [0]
        for index, char in enumerate(self.text):
            if char == "\n":
                starts.append(index + 1)
        self._line_starts = starts

    def position(self, offset: int) -> Position:
        offset = max(0, min(offset, len(self.text)))
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        return Position(line_index + 1, offset - self._line_starts[line_index] + 1, offset)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        if line < 1 or line > len(self._line_starts):
            return ""
        start = self._line_starts[line - 1]
        end = self.text.find("\n", start)
        return self.text[start:] if end < 0 else self.text[start:end]

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def span(self, start: int, end: int) -> Span:
        return Span(self.path, start, end)

    def whole(self) -> Span:
        return Span(self.path, 0, len(self.text))


class SourceMap:
    """All files taking part in one compilation, by path, so renderers can show any span."""

    def __init__(self) -> None:
        self._files: dict[str, SourceFile] = {}

    def add(self, source: SourceFile) -> SourceFile:
        self._files[source.path] = source
        return source

    def get(self, path: str) -> SourceFile | None:
        return self._files.get(path)

    def __contains__(self, path: str) -> bool:
        return path in self._files
