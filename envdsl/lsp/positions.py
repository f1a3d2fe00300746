"""Offsets in a SourceFile <-> LSP positions (0-based lines, columns in UTF-16 code units)."""

from __future__ import annotations

from envdsl.util.source import SourceFile


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def to_line_col(source: SourceFile, offset: int) -> tuple[int, int]:
    position = source.position(offset)
    line = source.line_text(position.line)
    return position.line - 1, utf16_length(line[: position.col - 1])


def to_offset(source: SourceFile, line: int, character: int) -> int:
    if line >= source.line_count:
        return len(source.text)
    start = source.line_start(line + 1)
    text = source.line_text(line + 1)
    units = 0
    for index, char in enumerate(text):
        if units >= character:
            return start + index
        units += 2 if ord(char) > 0xFFFF else 1
    return start + len(text)
