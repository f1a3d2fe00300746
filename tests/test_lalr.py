"""The fast parse (envdsl/syntax/lalr.py) builds the tree lark builds: the same rule names,
children, placeholders and propagated positions, on every example and fixture and on their
first halves; it rejects exactly the texts lark rejects; and the nesting it records flags
every tree the depth limits would refuse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from envdsl.diagnostics import DiagnosticSink
from envdsl.syntax import lalr, parse
from envdsl.syntax import size_limits as limits
from envdsl.syntax import tokens, tree
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent
TEXTS = sorted([*REPO.glob("examples/*.env"), *REPO.glob("tests/fixtures/**/*.env")])
EXPRESSIONS = [
    "a.b[c] + f(x, y=2) * -3 ** 2",
    "x if y else z",
    "[k for k in ks if k]",
    "(a + (b))",
    "((x))[1:]",
    "{k: v for k, v in m}",
    "not a in b and c is not none or (lambda q: q)(1)",
]


def _lark_shape(node: Any) -> Any:
    if isinstance(node, Token):
        return (node.type, str(node), node.start_pos, node.end_pos)
    if isinstance(node, Tree):
        meta = node.meta
        where = None if meta.empty else (meta.start_pos, meta.end_pos)
        return (str(node.data), where, tuple(_lark_shape(child) for child in node.children))
    return node


def _fast_shape(node: Any) -> Any:
    if isinstance(node, tokens.Token):
        return (node.type, str(node), node.start_pos, node.end_pos)
    if isinstance(node, tree.Node):
        where = None if node.start is None else (node.start, node.end)
        return (node.data, where, tuple(_fast_shape(child) for child in node.children))
    return node


def _lark_error(error: UnexpectedInput) -> Any:
    """What _report reads of lark's exception: the position, the token, the expected set."""
    if isinstance(error, UnexpectedCharacters):
        return (error.pos_in_stream, None, set())
    assert isinstance(error, UnexpectedToken) and error.interactive_parser is not None
    token = error.token
    expected = set(error.interactive_parser.accepts()) or set(error.expected)
    return (token.start_pos, (token.type, str(token), token.start_pos, token.end_pos), expected)


def _fast_error(error: lalr.Rejected) -> Any:
    token = error.token
    if token is None:
        return (error.position, None, error.expected)
    return (
        error.position,
        (token.type, str(token), token.start_pos, token.end_pos),
        error.expected,
    )


def _same_outcome(text: str, start: str = "start") -> None:
    fast = lalr.parse(parse._tables(), text, start)
    try:
        expected = _lark_shape(parse._parser().parse(text, start=start))
    except UnexpectedInput as error:
        assert isinstance(fast, lalr.Rejected)
        assert _fast_error(fast) == _lark_error(error)
        return
    assert not isinstance(fast, lalr.Rejected)
    assert _fast_shape(fast[0]) == expected


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(REPO)))
def test_the_tree_is_the_one_lark_builds(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    _same_outcome(text)
    _same_outcome(text[: len(text) // 2])


def test_expressions_parse_as_lark_parses_them() -> None:
    for expression in EXPRESSIONS:
        _same_outcome(expression, "expr")
    for broken in ("a +", "(a", "a b", "", "f(x=)", "a @ b", "[1, 2"):
        _same_outcome(broken, "expr")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "env",
        "env E {",
        "env E {\n  state {\n",
        "env E {\n  action a() -> int {\n    return 1 +\n  }\n}\n",
        "env E {\n  fn f() -> int = 1 $ 2\n}\n",
        'env E {\n  const s: str = "open\n}\n',
        "env E {\n  action a() {\n    while x {\n    }\n  }\n}\n",
        "env E {\n  enum K { none }\n}\n",
        "env E { } }",
    ],
)
def test_errors_are_the_ones_lark_raises(text: str) -> None:
    _same_outcome(text)


def test_every_cut_of_an_example_fails_where_lark_fails() -> None:
    text = (REPO / "examples" / "sleep_tracking.env").read_text(encoding="utf-8")
    for cut in range(0, len(text), 97):
        _same_outcome(text[:cut])
        _same_outcome(text[:cut] + "\n} )" + text[cut:])


def _nesting_refused(text: str) -> bool:
    parsed = lalr.parse(parse._tables(), text, "start")
    assert not isinstance(parsed, lalr.Rejected)
    tree, suspect = parsed
    refused = not limits.check_tree(tree, SourceFile("t.env", text), 0, DiagnosticSink())
    assert suspect or not refused  # a tree the limits refuse is always flagged
    return refused


def test_deep_expressions_are_flagged() -> None:
    refused = [
        _nesting_refused(f"env E {{\n  const c: int = {' + '.join(['1'] * terms)}\n}}\n")
        for terms in range(limits.MAX_EXPR_DEPTH - 5, limits.MAX_EXPR_DEPTH + 5)
    ]
    assert refused[0] is False and refused[-1] is True
    nested = "(" * 30 + "-x" + ")" * 30
    assert not _nesting_refused(f"env E {{\n  const c: int = {nested}\n}}\n")


def test_no_example_is_flagged() -> None:
    for path in REPO.glob("examples/*.env"):
        parsed = lalr.parse(parse._tables(), path.read_text(encoding="utf-8"), "start")
        assert not isinstance(parsed, lalr.Rejected) and parsed[1] is False, path


@pytest.mark.parametrize("depth", [limits.MAX_BLOCK_DEPTH, limits.MAX_BLOCK_DEPTH + 1])
def test_deep_blocks_are_flagged(depth: int) -> None:
    body = "if true {\n" * (depth - 1) + "return 1\n" + "}\n" * (depth - 1)
    text = f"env E {{\n  fn f() -> int {{\n{body}return 0\n  }}\n}}\n"
    assert _nesting_refused(text) == (depth > limits.MAX_BLOCK_DEPTH)


def test_a_long_integer_is_flagged() -> None:
    digits = "9" * (limits.MAX_INT_DIGITS + 1)
    assert _nesting_refused(f"env E {{\n  const c: int = {digits}\n}}\n")
    parsed = lalr.parse(parse._tables(), "env E {\n  const c: int = 12\n}\n", "start")
    assert not isinstance(parsed, lalr.Rejected) and parsed[1] is False


def _unclosed_brace_by_characters(text: str) -> int | None:
    """parse._unclosed_brace as first written, one character at a time: the reference."""
    stack: list[tuple[int, int]] = []
    mismatch: int | None = None
    index, limit = 0, len(text)
    while index < limit:
        char = text[index]
        if char == "#":
            newline = text.find("\n", index)
            index = limit if newline < 0 else newline
            continue
        if char in "\"'":
            quote = char * 3 if text.startswith(char * 3, index) else char
            index += len(quote)
            while index < limit and not text.startswith(quote, index):
                if text[index] == "\n" and len(quote) == 1:
                    break
                index += 2 if text[index] == "\\" else 1
            index += len(quote)
            continue
        if char == "{":
            stack.append((index, parse._indent_at(text, index)))
        elif char == "}" and stack:
            opened, indent = stack.pop()
            line_start = text.rfind("\n", 0, index) + 1
            starts_line = not text[line_start:index].strip()
            if mismatch is None and starts_line and parse._indent_at(text, index) < indent:
                mismatch = opened
        index += 1
    if not stack:
        return None
    return mismatch if mismatch is not None else stack[-1][0]


def test_the_unclosed_brace_is_found_as_by_the_character_loop() -> None:
    import random

    rng = random.Random(13)
    tricky = ['"a\\"{"', "'{'", '"""{\n"}"""', "# {\n", '"open {\n', "\\", '"\\\n{"', "}", "{"]
    texts = [path.read_text(encoding="utf-8") for path in TEXTS[:60]]
    for text in texts:
        lines = text.splitlines(keepends=True)
        for _ in range(5):
            edited = list(lines)
            for _ in range(rng.randrange(1, 4)):
                at = rng.randrange(len(edited) + 1)
                if rng.random() < 0.5 and edited:
                    del edited[min(at, len(edited) - 1)]
                else:
                    edited.insert(at, rng.choice(tricky))
            mutated = "".join(edited)
            assert parse._unclosed_brace(mutated) == _unclosed_brace_by_characters(mutated)
    for piece in tricky:
        for text in (piece, "env E {\n" + piece, piece + "\n}"):
            assert parse._unclosed_brace(text) == _unclosed_brace_by_characters(text), text


def _lexed(tables: lalr.Tables, text: str, lark_lexer: bool) -> Any:
    """The scanner's tokens (before the post-lexer) and where it stopped, by the dispatching
    scanner or by lark's own lexer."""
    found: list[Any] = []
    basic = parse._parser().parser.lexer.lexer  # type: ignore[attr-defined]
    assert tables.scanner is not None
    stream = lalr._lark_tokens(basic, text) if lark_lexer else tables.scanner.tokens(text)
    try:
        for token in stream:
            found.append((token.type, str(token), token.start_pos, token.end_pos))
    except lalr._Reject as error:
        return found, error.position
    return found, None


def test_the_scanner_dispatches_on_the_first_character() -> None:
    scanner = parse._tables().scanner
    assert scanner is not None
    assert scanner.by_first["("] == "LPAR"  # a one-character terminal: no match at all
    # the blanks after a token are taken with it (lalr._blanks_after)
    blanks = "(?:[ \t\x0c]+)?"
    assert scanner.by_first["a"].pattern == "(?:(?P<NAME>[A-Za-z_][A-Za-z0-9_]*))" + blanks
    assert scanner.by_first["f"].groupindex.keys() == {"FSTRING", "NAME"}
    assert "@" not in scanner.by_first and scanner.otherwise is None


def test_mutated_specs_parse_as_lark_parses_them(tmp_path: Path) -> None:
    """The specs of bench_batch's corpus (line edits of the examples: half of them break the
    syntax) give lark's trees and errors."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_batch", REPO / "benchmarks/bench_batch.py")
    assert spec is not None and spec.loader is not None
    bench_batch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_batch)
    bench_batch.make_corpus(tmp_path, 24, 2026)
    for path in sorted(tmp_path.glob("*.env")):
        _same_outcome(path.read_text(encoding="utf-8"))


def test_random_edits_lex_as_lark_lexes_them() -> None:
    """Random character edits of the examples, with the characters that start or end terminals
    (quotes, backslashes, digits, exponents, `f`, `#`, odd whitespace, non-ASCII): the same
    tokens as lark's lexer and the same position where no terminal matches."""
    import random

    rng = random.Random(18)
    tables = parse._tables()
    alphabet = list("\"'f#e.0_9xE+-=<>!*/{}()[]:,?% \t\x0c\r\n\u00e9\u2028@$`;") + [
        '"""',
        "f'",
        "1e",
        "\\\n",
    ]
    texts = [path.read_text(encoding="utf-8") for path in TEXTS if "examples" in path.parts]
    compared = 0
    for _ in range(1500):
        text = rng.choice(texts)
        at = rng.randrange(len(text))
        piece = list(text[at : at + rng.randrange(20, 200)])
        for _ in range(rng.randrange(1, 4)):
            where = rng.randrange(len(piece) + 1)
            change = rng.choice(alphabet)
            if rng.random() < 0.5:
                piece[where : where + 1] = [change]
            else:
                piece.insert(where, change)
        edited = "".join(piece)
        assert _lexed(tables, edited, False) == _lexed(tables, edited, True), repr(edited)
        compared += 1
    assert compared == 1500


def test_lark_s_own_lexer_gives_the_same_trees() -> None:
    """The tables fall back to lark's lexer for a grammar _Scanner cannot stand in for."""
    tables = lalr.Tables(parse._parser())
    assert tables.scanner is not None
    tables.lark_lexer = parse._parser().parser.lexer.lexer  # type: ignore[attr-defined]
    tables.scanner = None
    for path in TEXTS[::7]:
        text = path.read_text(encoding="utf-8")
        for part in (text, text[: len(text) // 3]):
            fast, reference = lalr.parse(tables, part, "start"), lalr.parse(
                parse._tables(), part, "start"
            )
            if isinstance(reference, lalr.Rejected):
                assert isinstance(fast, lalr.Rejected)
                assert _fast_error(fast) == _fast_error(reference), path
            else:
                assert not isinstance(fast, lalr.Rejected)
                assert _fast_shape(fast[0]) == _fast_shape(reference[0]), path


_PROBE = """
import sys
from envdsl.cli import main
try:
    main(["check", "--no-verify", sys.argv[1]], prog_name="envdsl", standalone_mode=False)
except SystemExit:
    pass
print("lark imported" if "lark" in sys.modules else "no lark")
"""


def test_checking_a_spec_imports_no_lark_once_the_tables_are_cached(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), PYTHONPATH=str(REPO))
    spec = str(REPO / "examples" / "sleep_tracking.env")
    broken = tmp_path / "broken.env"
    broken.write_text("env E {\n  state {\n", encoding="utf-8")
    runs = [
        subprocess.run(
            [sys.executable, "-c", _PROBE, path], capture_output=True, text=True, env=env
        ).stdout.split("\n")[-2]
        for path in (spec, spec, str(broken))
    ]
    assert runs == ["lark imported", "no lark", "no lark"]  # built, then read from the cache
