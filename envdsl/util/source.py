"""Source files and spans: the one place that maps byte offsets to lines and columns."""

from __future__ import annotations

import bisect
import functools
import itertools
from dataclasses import field

from envdsl.util.frozen_node import node, record

# The longest spec, in characters (docs/language.md §8; reported by envdsl.syntax.size_limits).
MAX_FILE_CHARS = 1_000_000


@node
class Span:
    """A half-open range of character offsets [start, end) in one source file."""

    file: str
    start: int
    end: int

    def cover(self, other: Span) -> Span:
        """The smallest span that contains both spans (same file assumed)."""
        return Span(self.file, min(self.start, other.start), max(self.end, other.end))


@node
class Position:
    line: int  # 1-based
    col: int  # 1-based, in characters
    offset: int


@record
class SourceFile:
    """The text of one spec (or stdlib module) plus a line index built once."""

    path: str
    text: str
    _line_starts: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        # one text whatever the file's origin: a UTF-8 byte order mark is not part of the spec,
        # and CR-LF or CR-only line ends read as `\n`, as `open()` reads them for the CLI
        text = self.text[1:] if self.text.startswith("\ufeff") else self.text
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        self.text = text
        # line starts, computed at C speed (a Python loop over a 1 MB file takes half a second)
        # and only as far as a spec may go (envdsl.syntax.size_limits reports a longer one there)
        lengths = map((1).__add__, map(len, text[: MAX_FILE_CHARS + 1].split("\n")))
        self._line_starts = [0, *itertools.accumulate(lengths)][:-1]

    def position(self, offset: int) -> Position:
        offset = max(0, min(offset, len(self.text)))
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        return Position(line_index + 1, offset - self._line_starts[line_index] + 1, offset)

    def line_start(self, line: int) -> int:
        """The offset where a 1-based line starts (the end of the text past the last line)."""
        if line < 1:
            return 0
        return self._line_starts[line - 1] if line <= len(self._line_starts) else len(self.text)

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


def line_of(text: str, offset: int) -> int:
    """The 1-based line of `offset` (0 <= offset) in `text`: `text.count("\\n", 0, offset) + 1`,
    by bisection: code generation asks for the lines of hundreds of places in one spec."""
    return bisect.bisect_right(_lines_after(text), offset) + 1


@functools.lru_cache(maxsize=4)  # the spec being compiled and its task files
def _lines_after(text: str) -> list[int]:
    """The offset just past each newline of `text` (at C speed, as SourceFile's line starts)."""
    return list(itertools.accumulate(map((1).__add__, map(len, text.split("\n")))))[:-1]


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
