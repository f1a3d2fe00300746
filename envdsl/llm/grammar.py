"""The grammar for people and for constrained decoding: the lark file as it is, or converted
to llama.cpp's GBNF, which is also the EBNF of xgrammar, the engine of vLLM's structured outputs
(tests/test_grammar_engine.py runs it with xgrammar on every spec of the repository).

The conversion is rule for rule: every lark rule and named terminal becomes a GBNF rule of the
same name (`_` becomes `-`, leading underscores go: GBNF names are letters, digits and dashes),
EBNF operators carry over, and terminal regexes are translated exactly. What GBNF cannot say:

- There is no lexer. Whitespace and comments (lark's %ignore) are written out: every token is
  preceded by `ws`, which also allows newlines. In envdsl a newline ends a statement and the
  post-lexer (envdsl/syntax/postlex.py) decides where it does; in GBNF newlines are allowed as
  whitespace between any two tokens, while `_NL` (`eol`) still needs one. So the GBNF grammar
  is a superset: it also accepts, say, an expression split after a complete operand.
- The lexer's longest match and keyword reservation: `NAME` also matches reserved words, and
  two words may run together (`letx`). Terminal priorities do not exist in GBNF; they only
  choose between tokenizations, so the set of accepted texts is unaffected.
- MAP_LBRACE (the post-lexer's name for a `{` that opens a map or set literal) is a plain `{`.
- Regex lookahead: LONG_STRING's `"(?!"")` is rewritten to the equivalent "one or two quotes,
  then a character that is not a quote" (see _REWRITES).
"""

from __future__ import annotations

import ast as pyast
from dataclasses import dataclass
from typing import Any, Union

from envdsl.util.resources import grammar_path

RESERVED = ("root", "ws", "sp", "eol")
NEWLINE_TERMINAL = "_NL"
# Terminals the post-lexer produces (%declare) and what they are in the text.
DECLARED = {"MAP_LBRACE": '"{"'}
# Regexes GBNF cannot express literally, with an exact equivalent: in a triple-quoted string,
# a run of one or two quotes must be followed by a character that is not a quote.
_REWRITES = {
    '"""(?:[^"\\\\]|\\\\.|"(?!""))*"""': (
        '"\\"\\"\\"" (("\\"" "\\""?)? ([^"\\\\] | "\\\\" ([^\\n] | "\\n")))* "\\"\\"\\""'
    ),
}


class GrammarConversionError(ValueError):
    """A construct of the lark grammar that the converter cannot translate faithfully."""


def lark_grammar() -> str:
    return grammar_path().read_text(encoding="utf-8")


# ---- regexes ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Lit:
    char: str


@dataclass(frozen=True, slots=True)
class _Class:
    negate: bool
    ranges: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _Any:
    dotall: bool


@dataclass(frozen=True, slots=True)
class _Seq:
    items: tuple["_Node", ...]


@dataclass(frozen=True, slots=True)
class _Alt:
    options: tuple["_Node", ...]


@dataclass(frozen=True, slots=True)
class _Rep:
    item: "_Node"
    op: str  # ?, *, + or {m,n}


_Node = Union[_Lit, _Class, _Any, _Seq, _Alt, _Rep]
_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "v": "\v", "0": "\0"}


class _RegexParser:
    """A parser for the regex subset GBNF can express; anything else is an error."""

    def __init__(self, pattern: str, dotall: bool) -> None:
        self.text = pattern
        self.pos = 0
        self.dotall = dotall

    def fail(self, what: str) -> GrammarConversionError:
        return GrammarConversionError(f"regex /{self.text}/: {what} at offset {self.pos}")

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self) -> str:
        char = self.peek()
        if not char:
            raise self.fail("unexpected end")
        self.pos += 1
        return char

    def parse(self) -> _Node:
        node = self.alternation()
        if self.pos != len(self.text):
            raise self.fail(f"unexpected {self.peek()!r}")
        return node

    def alternation(self) -> _Node:
        options = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else _Alt(tuple(options))

    def sequence(self) -> _Node:
        items: list[_Node] = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.quantified(self.atom()))
        return items[0] if len(items) == 1 else _Seq(tuple(items))

    def quantified(self, node: _Node) -> _Node:
        while self.peek() in ("?", "*", "+", "{"):
            if self.peek() == "{":
                end = self.text.find("}", self.pos)
                body = self.text[self.pos + 1 : end] if end > 0 else ""
                if not body.replace(",", "").isdigit():
                    raise self.fail("a '{' that is not a repetition count")
                node, self.pos = _Rep(node, "{" + body + "}"), end + 1
            else:
                node = _Rep(node, self.take())
            if self.peek() == "?":  # lazy: same language for a whole-token match
                self.pos += 1
        return node

    def atom(self) -> _Node:
        char = self.take()
        if char == "(":
            if self.text.startswith("?:", self.pos):
                self.pos += 2
            elif self.peek() == "?":
                raise self.fail("lookaround or a group flag")
            node = self.alternation()
            if self.take() != ")":
                raise self.fail("an unclosed group")
            return node
        if char == "[":
            return self.char_class()
        if char == ".":
            return _Any(self.dotall)
        if char in "^$":
            raise self.fail("an anchor")
        if char == "\\":
            return _Lit(self.escape())
        return _Lit(char)

    def escape(self) -> str:
        char = self.take()
        if char in _ESCAPES:
            return _ESCAPES[char]
        if char.isalnum():  # \d \w \s \b, backreferences, \x..: not used, not supported
            raise self.fail(f"the escape \\{char}")
        return char

    def char_class(self) -> _Class:
        negate = self.peek() == "^"
        if negate:
            self.pos += 1
        ranges: list[tuple[str, str]] = []
        first = True
        while first or self.peek() != "]":
            first = False
            low = self.class_char()
            if self.peek() == "-" and self.text[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.pos += 1
                ranges.append((low, self.class_char()))
            else:
                ranges.append((low, low))
        self.pos += 1
        return _Class(negate, tuple(ranges))

    def class_char(self) -> str:
        char = self.take()
        if char == "\\":
            return self.escape()
        if char == "[":
            raise self.fail("a nested class")
        return char


_CLASS_SAFE = set(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 _!#$%&'()*+,./:;<=>?@{|}~\"`"
)
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def _class_char(char: str) -> str:
    if char in _CLASS_SAFE:
        return char
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    if char in "[]":
        return "\\" + char
    return _hex(char)


def _hex(char: str) -> str:
    code = ord(char)
    return (
        f"\\x{code:02X}"
        if code < 0x100
        else f"\\u{code:04X}" if code < 0x10000 else f"\\U{code:08X}"
    )


def gbnf_string(text: str) -> str:
    out = []
    for char in text:
        if char == '"':
            out.append('\\"')
        elif char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(_hex(char))
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


# Precedence of emitted GBNF: an alternation binds loosest, then a sequence, then an atom.
_ALT, _SEQ, _ATOM = 0, 1, 2


def _wrap(text: str, precedence: int, needed: int) -> str:
    return f"({text})" if precedence < needed else text


def _regex_gbnf(node: _Node) -> tuple[str, int]:
    if isinstance(node, _Lit):
        return gbnf_string(node.char), _ATOM
    if isinstance(node, _Class):
        body = "".join(
            _class_char(low) if low == high else f"{_class_char(low)}-{_class_char(high)}"
            for low, high in node.ranges
        )
        return f"[{'^' if node.negate else ''}{body}]", _ATOM
    if isinstance(node, _Any):
        return ('([^\\n] | "\\n")', _ATOM) if node.dotall else ("[^\\n]", _ATOM)
    if isinstance(node, _Rep):
        inner, precedence = _regex_gbnf(node.item)
        return _wrap(inner, precedence, _ATOM) + node.op, _ATOM
    if isinstance(node, _Alt):
        return " | ".join(_regex_gbnf(option)[0] for option in node.options), _ALT
    parts: list[str] = []
    run = ""  # consecutive literal characters become one string
    for item in node.items:
        if isinstance(item, _Lit):
            run += item.char
            continue
        if run:
            parts.append(gbnf_string(run))
            run = ""
        text, precedence = _regex_gbnf(item)
        parts.append(_wrap(text, precedence, _SEQ))
    if run:
        parts.append(gbnf_string(run))
    return " ".join(parts), _SEQ if len(parts) > 1 else _ATOM


def regex_to_gbnf(pattern: str, flags: str = "", *, strip_plus: bool = False) -> str:
    """A regex of the supported subset as a GBNF expression (strip_plus: `x+` becomes `x`)."""
    if set(flags) - {"s"}:
        raise GrammarConversionError(f"regex /{pattern}/{flags}: flags other than s")
    if pattern in _REWRITES:
        return _REWRITES[pattern]
    node = _RegexParser(pattern, "s" in flags).parse()
    if strip_plus and isinstance(node, _Rep) and node.op == "+":
        node = node.item
    return _regex_gbnf(node)[0]


# ---- rules -----------------------------------------------------------------------------------


def gbnf_name(lark_name: str) -> str:
    return lark_name.lstrip("_").replace("_", "-")


class _Converter:
    def __init__(self, grammar: Any) -> None:
        self.grammar = grammar
        self.names: dict[str, str] = {}

    def name(self, lark_name: str) -> str:
        mapped = gbnf_name(lark_name)
        if mapped in RESERVED:
            raise GrammarConversionError(f"'{lark_name}' maps to the reserved GBNF name {mapped}")
        previous = self.names.setdefault(mapped, lark_name)
        if previous != lark_name:
            raise GrammarConversionError(f"'{previous}' and '{lark_name}' both map to {mapped}")
        return mapped

    def expression(self, tree: Any) -> tuple[str, int]:
        kind = tree.data
        if kind == "expansions":
            options = [self.expression(child)[0] for child in tree.children]
            return (
                (" | ".join(options), _ALT)
                if len(options) > 1
                else self.expression(tree.children[0])
            )
        if kind == "alias":  # `-> name` only renames the tree node
            return self.expression(tree.children[0])
        if kind == "expansion":
            parts = [_wrap(*self.expression(child), _SEQ) for child in tree.children]
            if not parts:
                return '""', _ATOM
            return " ".join(parts), _SEQ if len(parts) > 1 else _ATOM
        if kind == "maybe":
            return _wrap(*self.expression(tree.children[0]), _ATOM) + "?", _ATOM
        if kind == "expr":
            child, op = tree.children[0], str(tree.children[1])
            if op not in ("?", "*", "+"):
                raise GrammarConversionError(f"the operator {op} (ranges, ~) is not supported")
            return _wrap(*self.expression(child), _ATOM) + op, _ATOM
        if kind == "value":
            return self.value(tree.children[0])
        raise GrammarConversionError(f"unsupported grammar construct '{kind}'")

    def rule_body(self, name: str, tree: Any) -> str:
        """A rule's alternatives; immediate left recursion (`sum: term | sum add_op term`),
        which GBNF parsers reject, becomes repetition: `sum ::= term (add-op term)*`."""
        from lark.grammar import NonTerminal

        def expansion(option: Any) -> Any:
            return option.children[0] if option.data == "alias" else option

        def is_left_recursive(option: Any) -> bool:
            items = expansion(option).children
            return (
                bool(items)
                and items[0].data == "value"
                and items[0].children[0] == (NonTerminal(name))
            )

        options = tree.children
        recursive = [expansion(o) for o in options if is_left_recursive(o)]
        if not recursive:
            return self.expression(tree)[0]
        bases = [self.expression(o)[0] for o in options if not is_left_recursive(o)]
        if not bases:
            raise GrammarConversionError(f"rule '{name}' is only left-recursive")
        tails = []
        for option in recursive:
            rest = [_wrap(*self.expression(child), _SEQ) for child in option.children[1:]]
            tails.append(" ".join(rest))
        base = bases[0] if len(bases) == 1 else "(" + " | ".join(bases) + ")"
        tail = tails[0] if len(tails) == 1 else " | ".join(tails)
        return f"{base} ({tail})*"

    def value(self, item: Any) -> tuple[str, int]:
        from lark.grammar import NonTerminal, Terminal

        if isinstance(item, NonTerminal):
            return self.name(item.name), _ATOM
        if isinstance(item, Terminal):
            if item.name == NEWLINE_TERMINAL:
                return "eol", _ATOM
            return f"ws {self.name(item.name)}", _SEQ
        if getattr(item, "data", None) == "literal":
            return f"ws {self.literal(item.children[0])}", _SEQ
        raise GrammarConversionError(f"unsupported grammar value {item!r}")

    def literal(self, token: Any, *, strip_plus: bool = False) -> str:
        text = str(token)
        if token.type == "STRING":
            if not text.endswith('"'):
                raise GrammarConversionError(f"string flags in {text}")
            value = pyast.literal_eval(text)
            assert isinstance(value, str)
            return gbnf_string(value)
        pattern, _, flags = text[1:].rpartition("/")
        return regex_to_gbnf(pattern, flags, strip_plus=strip_plus)

    def terminal_body(self, tree: Any, *, strip_plus: bool = False) -> str:
        """A terminal's definition: its strings and regexes, without whitespace between."""
        if tree.data == "expansions":
            options = [self.terminal_body(child, strip_plus=strip_plus) for child in tree.children]
            return options[0] if len(options) == 1 else " | ".join(f"({o})" for o in options)
        if tree.data == "expansion" and len(tree.children) == 1:
            value = tree.children[0]
            if value.data == "value" and getattr(value.children[0], "data", None) == "literal":
                return self.literal(value.children[0].children[0], strip_plus=strip_plus)
        raise GrammarConversionError(f"terminal construct '{tree.data}' is not supported")


def lark_to_gbnf(text: str) -> str:
    """Convert the envdsl lark grammar (text) to GBNF; see the module docstring."""
    from lark.load_grammar import GrammarBuilder

    builder = GrammarBuilder()
    builder.load_grammar(text, "envdsl.lark")
    grammar = builder.build()
    converter = _Converter(grammar)
    terminals = {str(name): tree for name, (tree, _priority) in grammar.term_defs}
    ignored = [str(name) for name in grammar.ignore]

    lines = [
        "# envdsl in GBNF (llama.cpp's grammar; vLLM's structured_outputs.grammar), generated",
        "# from grammar/envdsl.lark by `envdsl grammar --format gbnf`. It accepts a superset of",
        "# envdsl: newlines are whitespace between any two tokens (the post-lexer that makes them",
        "# statement ends cannot be expressed), NAME also matches reserved words and words may run",
        "# together. See docs/synth.md.",
        "",
        "root ::= start ws",
        "",
    ]
    for name, _params, tree, _options in grammar.rule_defs:
        lines.append(f"{converter.name(str(name))} ::= {converter.rule_body(str(name), tree)}")

    lines += ["", "# ---- terminals", ""]
    if NEWLINE_TERMINAL not in terminals:
        raise GrammarConversionError(f"the grammar has no {NEWLINE_TERMINAL} terminal")
    for name, tree in terminals.items():
        if name.startswith("__") or name == NEWLINE_TERMINAL:
            continue
        if tree is None:
            if name not in DECLARED:
                raise GrammarConversionError(f"%declare'd terminal {name} has no known text")
            body = DECLARED[name]
        else:
            body = converter.terminal_body(tree)
        lines.append(f"{converter.name(name)} ::= {body}")

    # `_NL` is a run of line ends; in GBNF one line end (plus what is ignored on the line
    # before it) ends a statement and the following blank lines are whitespace.
    newline = converter.terminal_body(terminals[NEWLINE_TERMINAL], strip_plus=True)
    same_line = []
    for name in ignored:
        body = converter.terminal_body(terminals[name], strip_plus=True)
        named = not name.startswith("__") and body == converter.terminal_body(terminals[name])
        same_line.append(converter.name(name) if named else f"({body})")
    lines += [
        "",
        "# ---- whitespace: lark's %ignore and the newline terminal",
        "",
        f"{converter.name(NEWLINE_TERMINAL)} ::= {newline}",
        f"sp ::= ({' | '.join(same_line)})*",
        f"eol ::= sp {converter.name(NEWLINE_TERMINAL)}",
        f"ws ::= (sp {converter.name(NEWLINE_TERMINAL)})* sp",
    ]
    return "\n".join(lines) + "\n"


def gbnf_grammar() -> str:
    return lark_to_gbnf(lark_grammar())
