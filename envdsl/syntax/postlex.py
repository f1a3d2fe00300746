"""Newline handling between lark's lexer and its LALR parser.

A newline ends a declaration or statement, as in Python, except where the line obviously
goes on: inside `()`, `[]` and map/set literal braces, after a token that cannot end an
expression (an operator, `,`, `=`, `:`, `->`), and before a line that starts with `else`,
`elif`, `and`, `or`, `.`, `->`, `{`, `}` or a binary operator.  Python's implicit line joining
and Go's semicolon insertion are the models.  The grammar can then treat `_NL` as a plain
separator, which keeps it LALR(1).

The same pass tells a block brace from a map-literal brace: `{` opens a map or set literal
exactly when the token before it cannot end an expression (`x = {`, `f({`, `[{`), and a block
otherwise (`) {`, `name {`, `else {`).
"""

from __future__ import annotations

from typing import Iterator

from envdsl.syntax.tokens import Token  # the fast parse's; lark's tokens pass too

NEWLINE = "_NL"
MAP_LBRACE = "MAP_LBRACE"

# Tokens whose *type* means they end an operand.
_OPERAND_TYPES = frozenset(
    {"NAME", "INT", "FLOAT", "STRING", "LONG_STRING", "FSTRING", "NONE", "RBRACE"}
)
# Values of punctuation and keywords after which a line is unfinished.
_UNFINISHED_AFTER = frozenset(
    {
        "+", "-", "*", "/", "//", "%", "**", "=", "+=", "-=", "==", "!=", "<", "<=", ">",
        ">=", ",", "(", "[", "{", ":", ".", "->", "and", "or", "not", "in", "is", "else",
        "elif", "if", "lambda",
    }
)  # fmt: skip
# Values that, starting a line, continue the previous one.
_CONTINUES_BEFORE = frozenset(
    {
        "else", "elif", "and", "or", ".", "->", "{", "}", ")", "]", ",", "+", "-", "*", "/",
        "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "is",
    }
)  # fmt: skip
# Keywords (reserved words and operators) are matched by value; names and literals never are.
_LITERAL_TYPES = frozenset({"NAME", "INT", "FLOAT", "STRING", "LONG_STRING", "FSTRING"})


def _is_keyword(token: Token, words: frozenset[str]) -> bool:
    return token.type not in _LITERAL_TYPES and token.value in words


def _leaves_line_open(token: Token | None) -> bool:
    return token is None or token.type == NEWLINE or _is_keyword(token, _UNFINISHED_AFTER)


class NewlinePostLexer:
    """lark post-lexer: see the module docstring."""

    always_accept = (NEWLINE,)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        # Each open bracket: '(' '[' 'map' or 'block'. Newlines count only outside brackets
        # and map braces, i.e. at the top level or directly inside a block.
        open_brackets: list[str] = []
        previous: Token | None = None
        pending_newline: Token | None = None

        for token in stream:
            if token.type == NEWLINE:
                if open_brackets and open_brackets[-1] != "block":
                    continue
                if pending_newline is None and not _leaves_line_open(previous):
                    pending_newline = token
                continue

            if pending_newline is not None:
                if not _is_keyword(token, _CONTINUES_BEFORE):
                    yield pending_newline
                    previous = pending_newline
                pending_newline = None

            if token.type == "LBRACE":
                if _opens_map_literal(previous):
                    token = token.update(MAP_LBRACE)  # a lark Token stays one
                    open_brackets.append("map")
                else:
                    open_brackets.append("block")
            elif token.value in ("(", "[") and token.type not in _LITERAL_TYPES:
                open_brackets.append(token.value)
            elif token.value in (")", "]", "}") and token.type not in _LITERAL_TYPES:
                if open_brackets:
                    open_brackets.pop()

            yield token
            previous = token
        # A trailing newline at the end of the file separates nothing.


def _opens_map_literal(previous: Token | None) -> bool:
    if previous is None or previous.type == NEWLINE:
        return False
    if previous.value == "else" and previous.type not in _LITERAL_TYPES:
        return False  # `} else {` is the common case; a map after `else` needs parentheses
    return _is_keyword(previous, _UNFINISHED_AFTER) or previous.value == "return"
