"""editors/: the TextMate grammar tokenises every example, and the VS Code extension's files
are consistent.

The tokenizer below follows TextMate's rules for the parts the grammar uses (match, begin/end,
captures, includes; at each position the leftmost match wins, a rule's end before its inner
patterns, then the order of the patterns), with Python's `re` standing in for Oniguruma:
the grammar keeps to the syntax both share. The envdsl lexer is the oracle for what the
highlighting must say: its keywords get keyword scopes, its strings string scopes, its names
no keyword scope, and the comments between its tokens comment scopes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from envdsl.fmt.comments import find_comments
from envdsl.syntax.parse import lex_tokens

ROOT = Path(__file__).resolve().parent.parent
VSCODE = ROOT / "editors" / "vscode"
GRAMMAR = json.loads((VSCODE / "syntaxes" / "envdsl.tmLanguage.json").read_text(encoding="utf-8"))
EXAMPLES = sorted((ROOT / "examples").glob("*.env"))
KEYWORD_SCOPES = ("keyword.", "storage.", "constant.language.")


@dataclass
class Rule:
    name: str | None = None
    match: re.Pattern[str] | None = None
    begin: re.Pattern[str] | None = None
    end: re.Pattern[str] | None = None
    captures: dict[int, str] = field(default_factory=dict)
    patterns: list[Rule] = field(default_factory=list)


def _rules(items: list[dict[str, Any]], repository: dict[str, Any]) -> list[Rule]:
    rules: list[Rule] = []
    for item in items:
        if "include" in item:
            included = repository[item["include"].lstrip("#")]
            rules.extend(_rules(included.get("patterns", [included]), repository))
            continue
        if "patterns" in item and "match" not in item and "begin" not in item:
            rules.extend(_rules(item["patterns"], repository))
            continue
        rule = Rule(name=item.get("name"))
        for key in ("match", "begin", "end"):
            if key in item:
                setattr(rule, key, re.compile(item[key]))
        rule.captures = {int(k): v["name"] for k, v in item.get("captures", {}).items()}
        rule.patterns = _rules(item.get("patterns", []), repository) if "begin" in item else []
        rules.append(rule)
    return rules


TOP = _rules(GRAMMAR["patterns"], GRAMMAR["repository"])


def tokenize(text: str) -> list[str | None]:
    """The innermost scope of each character of `text` (None: no rule matched it)."""
    scopes: list[str | None] = [None] * len(text)
    stack: list[Rule] = []  # the begin/end rules we are inside
    offset = 0
    for line in text.split("\n"):
        position = 0
        while True:
            inside = stack[-1] if stack else None
            candidates: list[tuple[int, int, Rule, re.Match[str]]] = []
            if inside is not None and inside.end is not None:
                found = inside.end.search(line, position)
                if found:
                    candidates.append((found.start(), 0, inside, found))
            for order, rule in enumerate(inside.patterns if inside else TOP, start=1):
                pattern = rule.match or rule.begin
                found = pattern.search(line, position) if pattern else None
                if found:
                    candidates.append((found.start(), order, rule, found))
            if not candidates:
                if inside is not None:
                    _paint(scopes, offset + position, offset + len(line), inside.name)
                break
            start, order, rule, found = min(candidates, key=lambda c: (c[0], c[1]))
            if inside is not None:  # what lies before the match belongs to the open rule
                _paint(scopes, offset + position, offset + start, inside.name)
            if order == 0:  # the end of the rule we are inside
                _paint(scopes, offset + start, offset + found.end(), rule.name)
                stack.pop()
            else:
                _paint(scopes, offset + start, offset + found.end(), rule.name)
                for group, name in rule.captures.items():
                    if found.group(group) is not None:
                        _paint(scopes, offset + found.start(group), offset + found.end(group), name)
                if rule.begin is not None:
                    stack.append(rule)
            advanced = found.end() > position
            position = found.end()
            if not advanced and order != 0 and rule.begin is None:
                position += 1  # an empty match must not stop the line
            if position > len(line) or (not advanced and position == len(line) and not stack):
                break
        if stack:  # an open rule covers the newline too
            _paint(scopes, offset + len(line), offset + len(line) + 1, stack[-1].name)
        offset += len(line) + 1
    return scopes


def _paint(scopes: list[str | None], start: int, end: int, name: str | None) -> None:
    for index in range(start, min(end, len(scopes))):
        if name is not None:
            scopes[index] = name


def test_the_grammar_uses_only_what_python_re_and_oniguruma_share() -> None:
    patterns: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            patterns.extend(node[k] for k in ("match", "begin", "end") if k in node)
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(GRAMMAR)
    assert len(patterns) > 15
    for pattern in patterns:
        re.compile(pattern)
        assert not re.search(r"\\[hHAzZG]|\(\?[<>]|\\p\{|\(\?~", pattern), pattern


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_character_of_an_example_is_highlighted_as_the_lexer_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    scopes = tokenize(text)
    unmatched = [i for i, char in enumerate(text) if not char.isspace() and scopes[i] is None]
    assert not unmatched, [text[i - 10 : i + 10] for i in unmatched[:5]]
    keywords = strings = 0
    for kind, value, start, _ in lex_tokens(text):
        scope = scopes[start] or ""
        if kind in ("STRING", "LONG_STRING", "FSTRING"):
            strings += 1
            assert scope.startswith("string."), (value, scope)
        elif kind == "NAME":
            assert not scope.startswith(KEYWORD_SCOPES), (value, scope)
        elif value.isalpha():  # a keyword: the lexer's own terminal
            keywords += 1
            assert scope.startswith(KEYWORD_SCOPES), (value, scope)
    for comment in find_comments(text):
        assert scopes[comment.start] == "comment.line.number-sign.envdsl"
    assert keywords > 50 and strings > 20


def test_a_docstring_spans_lines_and_an_fstring_hole_is_marked() -> None:
    text = 'env E {\n  """one\n  two"""\n  fn f(x: int) -> str = f"{x} and {{x}}"\n}\n'
    scopes = tokenize(text)
    assert scopes[text.index("two")] == "string.quoted.docstring.triple.envdsl"
    assert scopes[text.index("{x}")] == "meta.interpolation.envdsl"
    assert scopes[text.index("{{x")] == "constant.character.escape.envdsl"
    assert scopes[text.index("fn")] == "storage.type.function.envdsl"
    assert scopes[text.index("f(")] == "entity.name.function.envdsl"


def test_the_extension_points_at_its_grammar_configuration_and_server() -> None:
    package = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    (language,) = package["contributes"]["languages"]
    (grammar,) = package["contributes"]["grammars"]
    assert grammar["scopeName"] == GRAMMAR["scopeName"] and grammar["language"] == language["id"]
    assert (VSCODE / grammar["path"]).is_file()
    json.loads((VSCODE / language["configuration"]).read_text(encoding="utf-8"))
    entry = (VSCODE / package["main"]).read_text(encoding="utf-8")
    assert 'args: ["lsp"]' in entry and "vscode-languageclient" in package["dependencies"]
