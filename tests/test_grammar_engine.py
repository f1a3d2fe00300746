"""The exported GBNF grammar against a real grammar engine: xgrammar, the engine behind vLLM's
structured outputs (and whose EBNF is llama.cpp's GBNF). No model is needed: xgrammar matches
text character by character against a grammar compiled for an empty vocabulary.

Every spec, task file and stdlib module of the repository that envdsl's own parser accepts
must be accepted (guided decoding must never forbid a valid spec), and the syntax-error
fixtures must be rejected, except those that only the post-lexer or the size limits reject:
the GBNF grammar is a documented superset (docs/synth.md, envdsl/llm/grammar.py).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from envdsl.diagnostics.diagnostic import DiagnosticSink
from envdsl.llm.grammar import gbnf_grammar
from envdsl.syntax.parse import parse_file
from envdsl.util.source import SourceFile

REPO = Path(__file__).resolve().parent.parent
SYNTAX_FIXTURES = REPO / "tests" / "fixtures" / "syntax"
CORPUS = sorted(
    [*REPO.glob("examples/*.env"), *REPO.glob("stdlib/*.env"), *REPO.glob("tests/**/*.env")]
)
DOC_BLOCKS = [
    (f"{doc.name}#block{number}", block)
    for doc in sorted((REPO / "docs").glob("*.md"))
    for number, block in enumerate(
        re.findall(r"```(?:envdsl|env)\n(.*?)```", doc.read_text("utf-8"), flags=re.S)
    )
]
# Syntax errors the GBNF grammar cannot see, with the reason.
SUPERSET = {
    "enum_member_named_none.env": "NAME also matches reserved words",
    "increment_operator.env": "a newline is whitespace (`count+` + `+return`), words are names",
    "blocks_nested_too_deep.env": "size limits are not grammar",
    "expression_nested_too_deep.env": "size limits are not grammar",
    "integer_literal_too_long.env": "size limits are not grammar",
    "line_too_long.env": "size limits are not grammar",
}


def _xgrammar() -> Any:
    """The engine, imported by the tests that use it, not when the module is collected: it
    loads torch and transformers (2 s), which every worker of the suite would pay."""
    return pytest.importorskip("xgrammar", reason="the grammar engine is part of .[dev]")


@lru_cache(maxsize=1)
def _compiled() -> Any:
    xgrammar = _xgrammar()
    grammar = xgrammar.Grammar.from_ebnf(gbnf_grammar())  # raises on what the engine rejects
    compiler = xgrammar.GrammarCompiler(xgrammar.TokenizerInfo([]), cache_enabled=False)
    return compiler.compile_grammar(grammar)


def engine_accepts(text: str) -> bool:
    matcher = _xgrammar().GrammarMatcher(_compiled(), terminate_without_stop_token=True)
    return bool(matcher.accept_string(text)) and bool(matcher.is_terminated())


def envdsl_parses(source: SourceFile) -> bool:
    return parse_file(source, DiagnosticSink()) is not None


def _source(path: Path) -> SourceFile:
    return SourceFile(str(path.relative_to(REPO)), path.read_text("utf-8"))


def test_the_corpus_is_what_the_repository_holds() -> None:
    names = {path.relative_to(REPO).parts[0] for path in CORPUS}
    assert names == {"examples", "stdlib", "tests"} and len(CORPUS) > 200
    assert any(path.name.endswith(".tasks.env") for path in CORPUS) and DOC_BLOCKS


def test_every_text_that_parses_is_accepted_by_the_engine() -> None:
    sources = [_source(path) for path in CORPUS]
    sources += [SourceFile(name, text) for name, text in DOC_BLOCKS]
    parsed = [source for source in sources if envdsl_parses(source)]
    assert len(parsed) > 200  # nearly everything: only syntax fixtures fail to parse
    refused = [source.path for source in parsed if not engine_accepts(source.text)]
    assert refused == []


def test_syntax_errors_are_rejected_unless_the_superset_allows_them() -> None:
    """The syntax fixtures the parser rejects (the others are errors the AST builder reports
    in text the grammar accepts, such as `lower(x) = y`: the test above has them)."""
    fixtures = [_source(path) for path in sorted(SYNTAX_FIXTURES.glob("*.env"))]
    unparsed = {Path(s.path).name: s for s in fixtures if not envdsl_parses(s)}
    assert set(SUPERSET) <= set(unparsed) and len(unparsed) - len(SUPERSET) >= 10
    accepted = {name for name, source in unparsed.items() if engine_accepts(source.text)}
    assert accepted == set(SUPERSET)


@pytest.mark.parametrize(
    "text",
    [
        "env X {",  # unclosed
        "env X { let }",
        'env X {\n  """Doc."""\n  state {\n    a: int +\n  }\n}\n',
        "env X {\n  state {\n    a: int =\n  }\n}\n",  # a default left out
        "env X {\n  action a() -> int {\n    return 1;\n  }\n}\n",
        'env X {\n  const S: str = "unterminated\n}\n',
    ],
)
def test_broken_text_is_rejected(text: str) -> None:
    assert not envdsl_parses(SourceFile("broken.env", text))
    assert not engine_accepts(text)


def test_the_engine_follows_the_documented_superset() -> None:
    # A newline before `(` is a statement end for envdsl, whitespace in GBNF (a call `abs (2)`).
    text = 'env X {\n  """Doc."""\n  const A: int = abs\n    (2)\n}\n'
    assert engine_accepts(text) and not envdsl_parses(SourceFile("split.env", text))
