"""Where the comments of a spec are: the lexer drops them, so they are the `#...` runs in the
gaps between the tokens the (successful) lexer yields."""

from __future__ import annotations

from dataclasses import dataclass

from envdsl.syntax.parse import lex_tokens


@dataclass(frozen=True, slots=True)
class Comment:
    start: int  # offset of the '#'
    text: str  # from '#' to the end of its line, trailing blanks dropped
    own_line: bool  # nothing but blanks before it on its line


def find_comments(text: str) -> list[Comment]:
    comments: list[Comment] = []
    position = 0
    for _, _, start, end in [*lex_tokens(text), ("", "", len(text), len(text))]:
        gap_index = text.find("#", position, start)
        while gap_index >= 0:
            line_end = text.find("\n", gap_index, start)
            line_end = start if line_end < 0 else line_end
            line_start = text.rfind("\n", 0, gap_index) + 1
            own_line = not text[line_start:gap_index].strip()
            comments.append(Comment(gap_index, text[gap_index:line_end].rstrip(), own_line))
            gap_index = text.find("#", line_end, start)
        position = max(position, end)
    return comments
