"""A small Wadler-style pretty printer: documents of text, optional line breaks and groups.

A group is laid out flat (every `Line` a space or nothing) when it fits in the rest of the
line, and broken (every `Line` of the group itself a newline at the current indentation)
otherwise. `IfBreak` text appears only in a broken group (a trailing comma, optional
parentheses). A `HardLine` (after a comment) always breaks, and so breaks every group around it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True, slots=True)
class Line:
    flat: str = " "  # what the break is when its group fits: " " (a line) or "" (a soft line)


@dataclass(frozen=True, slots=True)
class HardLine:
    pass


@dataclass(frozen=True, slots=True)
class BreakParent:
    """Prints nothing; the groups around it break (after a trailing comment)."""


@dataclass(frozen=True, slots=True)
class IfBreak:
    broken: str
    flat: str = ""


@dataclass(frozen=True, slots=True)
class Indent:
    body: Doc


@dataclass(frozen=True, slots=True)
class Group:
    body: Doc
    hard: bool  # contains a HardLine: never flat


Doc = Union[str, Line, HardLine, BreakParent, IfBreak, Indent, Group, "list[Doc]"]

LINE = Line(" ")
SOFTLINE = Line("")
HARDLINE = HardLine()


def group(*parts: Doc) -> Group:
    body = list(parts)
    return Group(body, _has_hard_line(body))


def indent(*parts: Doc) -> Indent:
    return Indent(list(parts))


def _has_hard_line(doc: Doc) -> bool:
    if isinstance(doc, (HardLine, BreakParent)):
        return True
    if isinstance(doc, str):
        return "\n" in doc
    if isinstance(doc, list):
        return any(_has_hard_line(part) for part in doc)
    if isinstance(doc, Group):
        return doc.hard
    if isinstance(doc, Indent):
        return _has_hard_line(doc.body)
    return False


def has_hard_line(doc: Doc) -> bool:
    return _has_hard_line(doc)


_Command = tuple[int, bool, Doc]  # (indentation, broken, doc)


def render(doc: Doc, width: int, indentation: int, step: int = 2) -> str:
    """Lay `doc` out starting at column `indentation` (the caller writes that indentation
    before the first line); later lines carry their own indentation."""
    out: list[str] = []
    column = indentation
    stack: list[_Command] = [(indentation, True, doc)]
    while stack:
        level, broken, item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            newline = item.rfind("\n")
            column = len(item) - newline - 1 if newline >= 0 else column + len(item)
        elif isinstance(item, list):
            stack.extend((level, broken, part) for part in reversed(item))
        elif isinstance(item, Indent):
            stack.append((level + step, broken, item.body))
        elif isinstance(item, Group):
            flat = not item.hard and _fits([(level, False, item.body)], list(stack), width - column)
            stack.append((level, not flat, item.body))
        elif isinstance(item, BreakParent):
            pass
        elif isinstance(item, IfBreak):
            text = item.broken if broken else item.flat
            out.append(text)
            column += len(text)
        elif isinstance(item, HardLine) or (isinstance(item, Line) and broken):
            while out and out[-1].endswith(" "):  # no trailing spaces before a break
                out[-1] = out[-1].rstrip(" ")
            out.append("\n" + " " * level)
            column = level
        else:
            assert isinstance(item, Line)
            out.append(item.flat)
            column += len(item.flat)
    return "".join(out)


def _fits(next_commands: list[_Command], rest: list[_Command], room: int) -> bool:
    """Whether the commands, flat, and what follows them up to the next break fit in `room`."""
    pending = list(reversed(next_commands))
    rest_index = len(rest)
    while room >= 0:
        if not pending:
            if rest_index == 0:
                return True
            rest_index -= 1
            pending.append(rest[rest_index])
            continue
        level, broken, item = pending.pop()
        if isinstance(item, str):
            newline = item.find("\n")
            if newline >= 0:
                return room - newline >= 0
            room -= len(item)
        elif isinstance(item, list):
            pending.extend((level, broken, part) for part in reversed(item))
        elif isinstance(item, Indent):
            pending.append((level, broken, item.body))
        elif isinstance(item, Group):
            pending.append((level, broken or item.hard, item.body))
        elif isinstance(item, BreakParent):
            pass
        elif isinstance(item, IfBreak):
            room -= len(item.broken if broken else item.flat)
        elif isinstance(item, HardLine) or (isinstance(item, Line) and broken):
            return True
        else:
            assert isinstance(item, Line)
            room -= len(item.flat)
    return False
