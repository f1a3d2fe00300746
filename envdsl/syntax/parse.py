"""Stage 1: text -> parse tree (envdsl.syntax.lalr), or one syntax diagnostic in words a person
understands."""

from __future__ import annotations

import functools
import inspect
import re
from types import ModuleType
from typing import TYPE_CHECKING, Any

from envdsl.diagnostics import DiagnosticSink, Edit, Fix, codes
from envdsl.syntax import lalr, parser_cache, postlex
from envdsl.syntax import size_limits as limits
from envdsl.syntax.lalr import ParseTree
from envdsl.syntax.tokens import Token
from envdsl.syntax.tree import Node
from envdsl.util.private_dirs import grammar_cache_file
from envdsl.util.resources import grammar_path
from envdsl.util.source import SourceFile, Span

if TYPE_CHECKING:
    from lark import Lark

_OPTIONS: dict[str, Any] = dict(
    parser="lalr",
    lexer="basic",
    propagate_positions=True,
    maybe_placeholders=True,
    start=["start", "expr"],
)


@functools.cache
def _parser() -> Lark:
    """lark's parser: what the fast parse's tables are made from, and the formatter's lexer;
    checking a spec whose tables are cached never builds nor loads it."""
    from lark import Lark

    from envdsl.syntax.postlex import NewlinePostLexer

    grammar = grammar_path().read_text(encoding="utf-8")
    built = _parser_cache_file(grammar)
    if built is not None and (loaded := parser_cache.load(built)) is not None:
        return loaded
    cache = grammar_cache_file(grammar)  # never lark's default: a pickle in /tmp
    parser = Lark(
        grammar,
        postlex=NewlinePostLexer(),
        cache=cache if cache is not None else False,
        **_OPTIONS,
    )
    if built is not None:
        parser_cache.save(parser, built)
    return parser


@functools.cache
def _tables() -> lalr.Tables:
    """The tables of the fast parse (envdsl.syntax.lalr); from their own pickle when there
    is one, so that a text without a syntax error never needs lark's parser object."""
    key = _cache_key(grammar_path().read_text(encoding="utf-8"), lalr)
    path = parser_cache.tables_file(key) if key is not None else None
    if path is not None:
        loaded = parser_cache.load_tables(path)
        if isinstance(loaded, lalr.Tables):
            return loaded
    tables = lalr.Tables(_parser())
    if path is not None and tables.picklable:
        parser_cache.save_tables(tables, path)
    return tables


def _parser_cache_file(grammar: str) -> str | None:
    key = _cache_key(grammar)
    return parser_cache.cache_file(key) if key is not None else None


def _cache_key(grammar: str, *modules: ModuleType) -> str | None:
    """What a pickled parser (or tables) was built from: the grammar, the options, the
    post-lexer's source (and the source of `modules`, for the tables the code there lays
    out): a change to any is a new cache file. None where a source cannot be read."""
    try:
        sources = [inspect.getsource(module) for module in (postlex, *modules)]
    except (OSError, TypeError):
        return None
    return "\0".join([grammar, str(sorted(_OPTIONS.items())), *sources])


def parse_file(source: SourceFile, sink: DiagnosticSink) -> ParseTree | None:
    return _parse(source.text, "start", source, 0, sink)


def lex_tokens(text: str) -> list[tuple[str, str, int, int]]:
    """(type, text, start, end) of each token of a text that parses; the gaps between them
    hold only blanks, line continuations and comments (the formatter finds comments there)."""
    return [
        (token.type, str(token.value), token.start_pos or 0, token.end_pos or 0)
        for token in _parser().lex(text)
        if token.type != "_NL"
    ]


def parse_expression(
    text: str, source: SourceFile, offset: int, sink: DiagnosticSink
) -> ParseTree | None:
    """Parse an expression embedded in the file at `offset` (an f-string hole)."""
    return _parse(text, "expr", source, offset, sink)


def _parse(
    text: str, start: str, source: SourceFile, offset: int, sink: DiagnosticSink
) -> ParseTree | None:
    if not limits.check_text(text, source, offset, sink):
        return None
    parsed = lalr.parse(_tables(), text, start)
    if isinstance(parsed, lalr.Rejected):
        _report(parsed, text, source, offset, sink)
        return None
    tree, may_break_limits = parsed
    assert isinstance(tree, Node)
    if may_break_limits and not limits.check_tree(tree, source, offset, sink):
        return None  # nothing later may recurse over a tree deeper than the limits
    return tree


# ---- friendly messages ---------------------------------------------------------------------

_DESCRIPTIONS = {
    "NAME": "a name",
    "INT": "a number",
    "FLOAT": "a number",
    "STRING": "a string",
    "LONG_STRING": "a string",
    "FSTRING": "a string",
    "_NL": "a new line",
    "$END": "the end of the file",
    "MAP_LBRACE": "'{'",
}
_OPERATORS = {"+", "-", "*", "/", "//", "%", "**", "==", "!=", "<", "<=", ">", ">=", "in", "is"}
_STATEMENT_WORDS = {"let", "require", "fail", "return", "if", "for", "break", "continue"}


_PYTHON_WORDS = {
    "def": "declare helpers with `fn`, tools with `query` or `action`",
    "class": "declare types with `record` or `entity`",
    "while": "there is no `while`: loop over a collection or `range(n)` with `for`",
    "pass": "an empty block is just `{ }`",
    "try": 'there are no exceptions: check with `require cond else "message"`',
    "with": "`with` is not part of the language",
    "async": "tools are synchronous; `async` is not part of the language",
    "elseif": "write `elif`",
    "raise": 'fail the call with `fail "message"`',
    "assert": 'there is no `assert`: `require cond else "why it failed"`',
    "match": "there is no `match`: test a variant's cases with `if x is V.case { } elif ...`",
    "del": "there is no `del`: `m.remove(k)` (a map's key), `xs.remove(x)`, `t.delete(key)` (a row)",
}


def _terminal_text(name: str) -> str:
    if name in _DESCRIPTIONS:
        return _DESCRIPTIONS[name]
    literal = _tables().literals.get(name)
    return repr(literal) if literal is not None else name.lower()


def _expected_words(expected: set[str]) -> list[str]:
    words = {_terminal_text(name) for name in expected}
    if "a name" in words:  # soft keywords are names too; don't list them one by one
        words = {w for w in words if not (w.startswith("'") and w[1:-1].isalpha())} | {"a name"}
    operators = {w for w in words if w.strip("'") in _OPERATORS}
    if len(operators) > 2:
        words = (words - operators) | {"an operator"}
    if len(words & {f"'{word}'" for word in _STATEMENT_WORDS}) > 2:
        words = {w for w in words if w.strip("'") not in _STATEMENT_WORDS} | {"a statement"}
    return sorted(words)


def _found_text(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    if token.type == "_NL":
        return "end of line"
    if token.type in ("STRING", "LONG_STRING", "FSTRING"):
        return "a string"
    if token.type == "NAME":
        return f"name '{token.value}'"
    return f"'{token.value}'"


def _code_before(before: str) -> str:
    """The source up to the end of the last code on the lines before (comments dropped)."""
    end = len(before)
    while end > 0:
        line_start = before.rfind("\n", 0, end) + 1
        line = before[line_start:end]
        code = line.split("#", 1)[0].rstrip() if '"' not in line else line.rstrip()
        if code.strip():
            return before[: line_start + len(code)]
        end = line_start - 1
    return ""


def _help_for(token: Token | None, expected: set[str], before: str) -> str | None:
    """Targeted hints for the mistakes a Python-trained author (or LLM) makes first.

    `before` is the source text before the unexpected token: after `while cond` the parser
    trips over `cond`, but the word to explain is `while`.
    """
    if before.endswith(("++", "--")):
        return "there is no `++`/`--`: write `x += 1` or `x -= 1`"
    value = token.value if token is not None else ""
    if value == "if" and re.search(r"\belse$", before):
        return "there is no `else if`: write `elif cond { ... }`"
    word = _reserved_enum_member(token, before)
    if word is not None:
        return (
            f"`{word}` is a reserved word; name the member `{word}_` and give it the JSON "
            f'value "{word}": `{word}_ = "{word}"`'
        )
    # only the tail: a regex anchored at the end of a long text retries at every offset
    previous = re.search(r"([A-Za-z_]+)\s*$", before[-200:])
    if previous is not None and previous.group(1) in _PYTHON_WORDS and token is not None:
        return _PYTHON_WORDS[previous.group(1)]
    if value == ":" and re.search(r"\[[^\[\]]*:$", before[-200:]):  # `xs[::-1]`
        return "a slice takes no step: `xs[a:b]`; `sorted(xs, reverse=true)` orders backwards"
    if value == ":" and ("LBRACE" in expected or "MAP_LBRACE" in expected):
        return "blocks use braces, not a colon: `if cond { ... }`"
    if value in _PYTHON_WORDS:
        return _PYTHON_WORDS[value]
    if token is not None and token.type == "FOR" and "RPAR" in expected:
        return (
            "a generator stands alone, as a call's only argument: `first(x for x in xs if p)`, "
            "`any(...)`; elsewhere write a list, `[x for x in xs]`"
        )
    if value == "," and re.search(r"\blambda\s+\w+\s*:\s*\([^()]*$", before[-200:]):
        return (  # `key=lambda x: (x.a, x.b)`
            "there are no tuples: to sort by several keys, sort by the last first (sorts "
            "are stable): `sorted(sorted(xs, key=lambda x: x.b), key=lambda x: x.a)`"
        )
    if value == "," and expected == {"RPAR"}:  # `(a, b)`: a tuple, not a call's arguments
        return "there are no tuples: compare the values one by one, or group them in a record"
    if value == "answer" and "SOLUTION" in expected:  # a task's members, not its solution's
        return 'a reference answer is a step of the solution: `solution { ... answer "text" }`'
    expected_words = {_terminal_text(name) for name in expected}
    if value == "=" and "'=='" in expected_words:
        return "to compare, use `==`"
    if value == "else" and token is not None and token.type == "ELSE":
        unwrap = _unwrap_outside_let(before)
        if unwrap is not None:
            return unwrap
    if value == "?" and "IF" in expected:  # C's `c ? a : b`
        return "write a conditional expression: `a if cond else b`"
    if token is not None and token.type == "_NL" and "ELSE" in expected:
        return '`require` needs a message: `require cond else "why it failed"`'
    return _help_by_line(token, expected, expected_words, before)


def _help_by_line(
    token: Token | None, expected: set[str], expected_words: set[str], before: str
) -> str | None:
    """The helps that read the line the unexpected token stands on: a statement's, a
    declaration's or a task member's first words."""
    value = token.value if token is not None else ""
    line = before[before.rfind("\n") + 1 :].lstrip()
    if token is not None and token.type == "NAME" and "CHECK" in expected:
        task_member = _TASK_MEMBER_WORDS.get(str(value))
        if task_member is not None:
            return task_member
    if line == "check" and "STRING" in expected:  # `check cond`
        return 'a check says what it checks: `check "what the run achieved": cond`'
    assigns = "'='" in expected_words
    if value == "." and assigns and re.search(r"\binit\s*\{[^{}]*$", before[-2000:]):
        # `users.insert(User(...))` in an init
        return "`init` assigns state fields: `users = [User(...), ...]`, `now = datetime(...)`"
    if token is not None and token.type == "NAME" and line == "unique":  # `unique email`
        return f"mark the field itself, `{value}: T unique`, or write `unique(a, b)` for several"
    if line == "invariant" and "STRING" in expected:  # `invariant cond`
        return 'an invariant says what holds, then how: `invariant "what holds": cond`'
    if value == "," and line.startswith("require "):
        return '`require` takes its message after `else`: `require cond else "why it failed"`'
    if value == "," and assigns:
        return "there are no tuples: assign each place on a line of its own"
    return None


def _unwrap_outside_let(before: str) -> str | None:
    """`return users.get(id) else "msg"`, `u = users.get(id) else "msg"`: Python has no such
    `else`, and envdsl's unwraps an optional only where `let` binds it."""
    line = before[before.rfind("\n") + 1 :].strip()
    if line.startswith("return "):
        return (
            '`else "message"` unwraps an optional only in a `let`: '
            '`let x = opt else "message"`, then `return x`'
        )
    if _ASSIGNMENT.match(line) is not None:
        return (
            '`else "message"` unwraps an optional only in a `let`: '
            '`let x = opt else "message"` (a new local), then assign `x`'
        )
    return None


# a statement that assigns a place (`u = `, `row.f = `, `m[k] = `), not a `let`
_ASSIGNMENT = re.compile(r"(?!let\b)[A-Za-z_][\w.\[\]\"']*\s*[-+]?=(?!=)")


# characters no token starts with, which Python or C authors write
_CHARACTER_HELPS = {
    ";": "there are no semicolons: one statement per line",
    "!": "an f-string hole takes no `!r`/`!s` conversion: write `{x}` or `{str(x)}`",
}

# what an author calls a task's parts elsewhere -> how a task writes them
_TASK_INSTRUCTION = 'the instruction is the task\'s first string: `task t { """Do this.""" ... }`'
_TASK_CHECK = 'a check is a line of its own: `check "what the run achieved": cond`'
_TASK_MEMBER_WORDS = {
    "instruction": _TASK_INSTRUCTION,
    "description": _TASK_INSTRUCTION,
    "prompt": _TASK_INSTRUCTION,
    "checks": _TASK_CHECK,
    "expect": _TASK_CHECK,
    "expected": _TASK_CHECK,
    "verify": _TASK_CHECK,
    "setup": 'the start state is `init { field = value }` (or `init from "state.json"`)',
    "steps": "the reference run is `solution { tool(arg=value) }`",
}


_RESERVED = set(
    "let require fail return if elif else for in not and or is true false none lambda "
    "break continue".split()
)


def _reserved_enum_member(token: Token | None, before: str) -> str | None:
    """The reserved word that stands where an enum member's name should (`enum E { none }`)."""
    if token is None or token.value not in _RESERVED:
        return None
    if re.search(r"\benum\s+\w+\s*\{[^{}]*$", before) is None:
        return None
    return str(token.value)


def _fixes_for(
    token: Token | None, before: str, text: str, source: SourceFile, offset: int
) -> list[Fix]:
    """Machine edits for the mistakes whose repair is mechanical."""
    if token is None or token.start_pos is None or token.end_pos is None:
        return []
    start, end = offset + token.start_pos, offset + token.end_pos
    if token.value == "if" and re.search(r"\belse$", before):
        else_at = offset + len(before) - len("else")
        return [Fix("write `elif`", (Edit(Span(source.path, else_at, end), "elif"),))]
    word = _reserved_enum_member(token, before)
    if word is not None:
        has_value = text[token.end_pos :].lstrip(" \t").startswith("=")
        replacement = f"{word}_" if has_value else f'{word}_ = "{word}"'
        return [Fix(f"write `{replacement}`", (Edit(Span(source.path, start, end), replacement),))]
    return []


def _unclosed_brace(text: str) -> int | None:
    """Where the `{` lies that was most likely never closed, or None if every `{` is closed.

    Braces are matched over the whole file (strings and comments skipped). A `}` that starts
    a line indented less than the line of the `{` it closes means that an inner `}` is
    missing: the `{` it closed is the unclosed one. Without such a sign, the innermost `{`
    still open at the end of the file is.
    """
    stack: list[tuple[int, int]] = []  # (offset of `{`, indentation of its line)
    mismatch: int | None = None
    index, limit = 0, len(text)
    while True:
        found = _BRACE_OR_SKIP.search(text, index)
        if found is None:
            break
        index = found.start()
        char = text[index]
        if char == "#":
            newline = text.find("\n", index)
            index = limit if newline < 0 else newline
            continue
        if char in "\"'":
            quote = char * 3 if text.startswith(char * 3, index) else char
            # an unterminated short string ends at its line
            bodies = _LONG_BODY if len(quote) == 3 else _SHORT_BODY
            body = bodies[char].match(text, index + len(quote))
            assert body is not None  # a `*` pattern always matches
            index = body.end() + len(quote)
            continue
        if char == "{":
            stack.append((index, _indent_at(text, index)))
        elif stack:
            opened, indent = stack.pop()
            line_start = text.rfind("\n", 0, index) + 1
            starts_line = not text[line_start:index].strip()
            if mismatch is None and starts_line and _indent_at(text, index) < indent:
                mismatch = opened
        index += 1
    if not stack:
        return None  # balanced: the error is not a missing `}`
    return mismatch if mismatch is not None else stack[-1][0]


# what _unclosed_brace looks at; and a string's body up to its closing quote (a backslash
# escapes any character, a newline too), or up to the end of its line for a short string
_BRACE_OR_SKIP = re.compile(r"[#\"'{}]")
_SHORT_BODY = {q: re.compile(rf"(?:[^{q}\\\n]+|\\[\s\S])*") for q in "\"'"}
_LONG_BODY = {q: re.compile(rf"(?:[^{q}\\]+|\\[\s\S]|{q}(?!{q}{q}))*") for q in "\"'"}


def _indent_at(text: str, offset: int) -> int:
    line_start = text.rfind("\n", 0, offset) + 1
    # matched in place: a slice of the line would copy the rest of the file, once per brace
    found = _INDENT.match(text, line_start)
    assert found is not None  # a `*` pattern always matches
    return found.end() - line_start


_INDENT = re.compile(r"[ \t]*")


def _report(
    error: lalr.Rejected, text: str, source: SourceFile, offset: int, sink: DiagnosticSink
) -> None:
    if error.token is None:  # no terminal matches here
        in_text = error.position
        position = offset + in_text
        char = text[in_text] if in_text < len(text) else ""
        help: str | None
        if char in "\"'":
            message = "unterminated string"
            help = 'close the string on the same line, or use """...""" for several lines'
        else:
            message = f"unexpected character {char!r}"
            in_hole = text is not source.text  # `!` is Python's conversion only in a hole
            help = _CHARACTER_HELPS.get(char) if char != "!" or in_hole else None
        sink.report(
            codes.INVALID_TOKEN, message, Span(source.path, position, position + 1), help=help
        )
        return
    token: Token | None = error.token
    # LALR merges states, so the state's own actions can list tokens that are not acceptable
    # here: these are the ones the parser would really take (lark's `accepts()`)
    expected = error.expected
    if token is not None and token.type == "$END":
        position = offset + len(text)
        span = Span(source.path, position, position)
    elif token is not None and token.start_pos is not None:
        start = offset + token.start_pos
        end = offset + (token.end_pos if token.end_pos is not None else token.start_pos + 1)
        span = Span(source.path, start, max(end, start + 1) if token.type != "_NL" else start + 1)
    else:
        position = offset + len(text)
        span = Span(source.path, position, position)
    found = "the end of the file" if token is None else _found_text(token)
    words = _expected_words(expected)
    if len(words) > 6:
        words = words[:6] + ["..."]
    message = f"unexpected {found}"
    if words:
        message += f"; expected {', '.join(words)}" if len(words) > 1 else f"; expected {words[0]}"
    before = _code_before(text[: span.start - offset])
    if before.endswith(("++", "--")):  # `count++`: point at the operator, not beyond it
        at = offset + len(before) - 2
        span = Span(source.path, at, at + 2)
        message = f"there is no '{before[-2:]}' operator"
    help = _help_for(token, expected, before)
    notes: list[str] = []
    if offset == 0 and text is source.text:  # the whole file, not an f-string hole
        brace = _unclosed_brace(text)
        if brace is not None:
            where = source.position(offset + brace)
            line = text[text.rfind("\n", 0, brace) + 1 :].split("\n", 1)[0].strip()
            notes.append(
                f"the `{{` at line {where.line}, column {where.col} (`{line}`) is never closed"
            )
            help = help or "add the missing `}`"
    sink.report(
        codes.SYNTAX_ERROR,
        message,
        span,
        help=help,
        notes=notes,
        fixes=_fixes_for(token, before, text, source, offset),
    )
