"""The tokens of the fast parse (envdsl/syntax/lalr.py): a `str` with lark's Token's
attributes, so that checking a spec need not import lark (a third of a cold start).

Only what the parse tree's readers use is kept: the type, the text and the offsets; a token
carries no line or column (spans are offsets; envdsl.util.source.SourceFile finds the lines).
"""

from __future__ import annotations


class Token(str):
    __slots__ = ("type", "value", "start_pos", "end_pos")

    # lark's Token has these too; the fast parse never counts lines (the post-lexer's tokens
    # and lark's both answer None here when asked)
    line = column = end_line = end_column = None

    type: str
    value: str
    start_pos: int | None
    end_pos: int | None

    def __new__(
        cls, type: str, value: str, start_pos: int | None = None, end_pos: int | None = None
    ) -> Token:
        token = str.__new__(cls, value)
        token.type = type
        token.value = value
        token.start_pos = start_pos
        token.end_pos = end_pos
        return token

    def update(self, type: str | None = None, value: str | None = None) -> Token:
        """A token of another type (or text) at the same place, as lark's `update`."""
        return Token(
            self.type if type is None else type,
            self.value if value is None else value,
            self.start_pos,
            self.end_pos,
        )

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (Token, (self.type, self.value, self.start_pos, self.end_pos))
