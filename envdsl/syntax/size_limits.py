"""Documented input limits (docs/language.md §8), checked before anything that could grow
super-linearly or recurse: the size of the file and of a line, the nesting of brackets, blocks
and expressions, and the length of an integer literal.

Specs come from LLMs and are untrusted: below these limits every stage runs in time and memory
linear in the input, and the generated Python stays inside CPython's own limits (20 statically
nested blocks, 100 indentation levels, 200 nested brackets, 4,300-digit int strings); above
them the spec gets one diagnostic at the construct, at once.
"""

from __future__ import annotations

import itertools
import re

from envdsl.diagnostics import DiagnosticSink, codes
from envdsl.syntax.tokens import Token
from envdsl.syntax.tree import Node
from envdsl.util.source import MAX_FILE_CHARS, SourceFile, Span

__all__ = ["MAX_FILE_CHARS", "check_text", "check_tree"]
MAX_LINE_CHARS = 10_000
MAX_BRACKET_DEPTH = 64  # (, [ and { together, outside strings and comments
MAX_BLOCK_DEPTH = 12  # nested `{ }` statement blocks in one tool or fn body
MAX_EXPR_DEPTH = 40  # nested operators, calls, attributes, ... in one expression
MAX_INT_DIGITS = 1_000

_OPEN, _CLOSE = "([{", ")]}"
# rules that begin a new expression rather than nest inside one
STRUCTURE_SUFFIXES = ("_decl", "_stmt", "_members", "_block", "_item", "_clause")
STRUCTURE_RULES = {"start", "params", "param", "state_field", "field_decl", "init_assign",
              "solution_step", "enum_member", "docstring", "check_item", "row_invariant",
              "init_from", "block"}  # fmt: skip


_INTERESTING = re.compile(r"[#\"'()\[\]{}]")
# the lexer's string rules (grammar/envdsl.lark), in chunks so that a long string is quick;
# the long string's chunks are possessive (`*+`): an unterminated one that ends in a
# backslash matches nowhere, and backtracking through the ways to cut its text into chunks
# took exponential time (seconds for 30 characters)
_SHORT_STRING = {
    '"': re.compile(r'"(?:[^"\\\n]+|\\.)*"?'),
    "'": re.compile(r"'(?:[^'\\\n]+|\\.)*'?"),
}
_LONG_STRING = re.compile(r'"""(?:[^"\\]+|\\.|"(?!""))*+(?:"""|$)', re.DOTALL)


# what the depth scan below steps over, as one pattern: a run of plain text, a comment, a
# string (as the scan reads them), or a bracket (group 1, the only group: findall gives the
# brackets alone)
_UNITS = re.compile(
    r"""[^#"'()\[\]{}]+|"""
    r'#[^\n]*|(?s:"{3}(?:[^"\\]+|\\.|"(?!""))*+(?:"{3}|$))'
    r"""|"(?:[^"\\\n]+|\\.)*"?|'(?:[^'\\\n]+|\\.)*'?|([()\[\]{}])"""
)
_DEPTH_CHANGE = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def _brackets_within_limit(text: str) -> bool:
    """Whether the bracket depth the scan of check_text finds stays within the limit, worked
    out at C speed (True), or has to be scanned (False): the running sum of +1 per opening and
    -1 per closing bracket outside strings and comments is that depth while it never goes below
    zero (the scan does not count a closing bracket below zero)."""
    if text.endswith("\\"):  # where an open long string stops the pattern, not the scan
        return False
    brackets = "".join(_UNITS.findall(text))
    if not brackets:
        return True
    depths = list(itertools.accumulate(map(_DEPTH_CHANGE.__getitem__, brackets)))
    return min(depths) >= 0 and max(depths) <= MAX_BRACKET_DEPTH


def check_text(text: str, source: SourceFile, offset: int, sink: DiagnosticSink) -> bool:
    """File size, line length and bracket depth, in linear scans; False after a report."""
    if len(text) > MAX_FILE_CHARS:
        _report_size(source, offset + MAX_FILE_CHARS, sink, "file", MAX_FILE_CHARS)
        return False
    lines = text.split("\n")
    if max(map(len, lines)) > MAX_LINE_CHARS:  # the common case costs one C-speed pass
        line_start = 0
        for line in lines:
            if len(line) > MAX_LINE_CHARS:
                at = offset + line_start + MAX_LINE_CHARS
                _report_size(source, at, sink, "line", MAX_LINE_CHARS)
                return False
            line_start += len(line) + 1
    if _brackets_within_limit(text):  # the common case
        return True
    depth = 0
    match = _INTERESTING.search(text)
    while match is not None:
        char, index = match.group(), match.start()
        resume = index + 1
        if char == "#":
            end = text.find("\n", index)
            resume = len(text) if end < 0 else end
        elif char in "\"'":
            long = text.startswith('"""', index)
            string = (_LONG_STRING if long else _SHORT_STRING[char]).match(text, index)
            resume = string.end() if string is not None and string.end() > index else index + 1
        elif char in _OPEN:
            depth += 1
            if depth > MAX_BRACKET_DEPTH:
                message = f"brackets nested over {MAX_BRACKET_DEPTH} deep"
                _report_nesting(source, offset + index, sink, message)
                return False
        else:
            depth = max(0, depth - 1)
        match = _INTERESTING.search(text, resume)
    return True


def check_tree(tree: Node, source: SourceFile, offset: int, sink: DiagnosticSink) -> bool:
    """Block and expression depth of a parse tree, without recursion; False after a report."""
    stack: list[tuple[Node | Token, int, int]] = [(tree, 0, 0)]
    while stack:
        node, expr_depth, block_depth = stack.pop()
        if isinstance(node, Token):
            if node.type == "INT" and _digits(str(node.value)) > MAX_INT_DIGITS:
                start = offset + (node.start_pos or 0)
                sink.report(
                    codes.NUMBER_TOO_LONG,
                    f"integer literal of {_digits(str(node.value)):,} digits",
                    Span(source.path, start, start + len(node.value)),
                    help=f"integers in a spec have at most {MAX_INT_DIGITS:,} digits",
                )
                return False
            continue
        rule = str(node.data)
        if rule == "block":
            block_depth += 1
            expr_depth = 0
            if block_depth > MAX_BLOCK_DEPTH:
                _report_nesting(
                    source,
                    offset + _start(node),
                    sink,
                    f"blocks nested over {MAX_BLOCK_DEPTH} deep",
                )
                return False
        elif rule in STRUCTURE_RULES or rule.endswith(STRUCTURE_SUFFIXES):
            expr_depth = 0
        else:
            expr_depth += 1
            if expr_depth > MAX_EXPR_DEPTH:
                _report_nesting(
                    source,
                    offset + _start(node),
                    sink,
                    f"expression nested over {MAX_EXPR_DEPTH} deep",
                )
                return False
        for child in reversed(node.children):
            if child is not None:
                stack.append((child, expr_depth, block_depth))
    return True


def _digits(text: str) -> int:
    return sum(char.isdigit() for char in text)


def _start(node: Node) -> int:
    return node.start if node.start is not None else 0


def _report_size(source: SourceFile, at: int, sink: DiagnosticSink, what: str, limit: int) -> None:
    sink.report(
        codes.INPUT_TOO_LARGE,
        f"{what} longer than {limit:,} characters",
        Span(source.path, at, at + 1),
        help=f"a spec's {what} has at most {limit:,} characters: split it up",
    )


def _report_nesting(source: SourceFile, at: int, sink: DiagnosticSink, message: str) -> None:
    sink.report(
        codes.NESTING_TOO_DEEP,
        message,
        Span(source.path, at, at + 1),
        help="move the inner part into a `fn` or a `let` variable",
    )
