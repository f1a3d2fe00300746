"""Decoding of string literals and splitting of f-strings into text and holes."""

from __future__ import annotations

import inspect

from envdsl.util.frozen_node import node

# Private-use characters mark `\{` and `\}` between unescaping and hole splitting; a real
# backslash followed by a brace (`"a\\{"`) must stay a backslash and a brace.
_ESCAPED_OPEN = "\ue000"
_ESCAPED_CLOSE = "\ue001"

_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "0": "\0",
    "{": _ESCAPED_OPEN,  # marked so the f-string splitter can tell it from a hole
    "}": _ESCAPED_CLOSE,
}


@node
class DecodedString:
    value: str
    bad_escapes: tuple[int, ...]  # offsets of unknown escapes, relative to the token start


def decode_literal(token_text: str) -> DecodedString:
    """The value of a STRING or LONG_STRING token (quotes included in token_text)."""
    if token_text.startswith('"""'):
        body_start, body = 3, token_text[3:-3]
    else:
        body_start, body = 1, token_text[1:-1]
    if "\\" in body or _ESCAPED_OPEN in body or _ESCAPED_CLOSE in body:
        value, bad = _unescape(body, body_start)
        value = value.replace(_ESCAPED_OPEN, "{").replace(_ESCAPED_CLOSE, "}")
    else:  # most strings: nothing to unescape, no marker put in
        value, bad = body, ()
    if token_text.startswith('"""'):
        value = inspect.cleandoc(value)
    return DecodedString(value, bad)


def _unescape(body: str, base: int) -> tuple[str, tuple[int, ...]]:
    out: list[str] = []
    bad: list[int] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            follower = body[index + 1]
            if follower in _ESCAPES:
                out.append(_ESCAPES[follower])
            elif follower == "\n":
                pass  # a backslash at the end of a line joins the lines
            else:
                bad.append(base + index)
                out.append(follower)
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out), tuple(bad)


@node
class FStringHole:
    text: str  # the expression source
    offset: int  # where the expression starts, relative to the token start
    format_spec: str | None


@node
class FStringPieces:
    parts: tuple[str | FStringHole, ...]
    bad_escapes: tuple[int, ...]
    error: tuple[int, str] | None  # (offset, message) of the first malformed hole


def split_fstring(token_text: str) -> FStringPieces:
    """Split `f"a {x} b {y:.2f}"` into text and holes; `{{` and `}}` are literal braces."""
    body_start = 2
    body = token_text[2:-1]
    parts: list[str | FStringHole] = []
    text: list[str] = []
    bad: list[int] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            decoded, escapes = _unescape(body[index : index + 2], body_start + index)
            text.append(decoded.replace(_ESCAPED_OPEN, "{").replace(_ESCAPED_CLOSE, "}"))
            bad.extend(escapes)
            index += 2
        elif char == "{" and body.startswith("{{", index):
            text.append("{")
            index += 2
        elif char == "}" and body.startswith("}}", index):
            text.append("}")
            index += 2
        elif char == "}":
            return FStringPieces(tuple(parts), tuple(bad), (body_start + index, "single '}'"))
        elif char == "{":
            end = _hole_end(body, index + 1)
            if end < 0:
                return FStringPieces(tuple(parts), tuple(bad), (body_start + index, "unclosed '{'"))
            inner = body[index + 1 : end]
            expression, spec = _split_format_spec(inner)
            if not expression.strip():
                return FStringPieces(tuple(parts), tuple(bad), (body_start + index, "empty '{}'"))
            if text:
                parts.append("".join(text))
                text = []
            parts.append(FStringHole(expression, body_start + index + 1, spec))
            index = end + 1
        else:
            text.append(char)
            index += 1
    if text:
        parts.append("".join(text))
    return FStringPieces(tuple(parts), tuple(bad), None)


def _hole_end(body: str, start: int) -> int:
    """The index of the '}' closing a hole, skipping nested brackets and strings."""
    depth = 0
    quote: str | None = None
    index = start
    while index < len(body):
        char = body[index]
        if quote:
            if char == "\\":
                index += 1
            elif char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            if depth == 0:
                return index if char == "}" else -1
            depth -= 1
        index += 1
    return -1


def _split_format_spec(inner: str) -> tuple[str, str | None]:
    """`x:.2f` -> (`x`, `.2f`): a ':' outside brackets and strings starts a format spec."""
    depth = 0
    quote: str | None = None
    for index, char in enumerate(inner):
        if quote:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == ":" and depth == 0 and "lambda" not in inner[:index]:
            return inner[:index], inner[index + 1 :]
    return inner, None
