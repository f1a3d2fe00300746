"""Stage 1's parser: lark's own LALR tables and lexer, driven by a loop of envdsl's that
builds a light tree.

lark's parse calls, at every reduction, a chain of wrapper objects (placeholder filling,
single-child inlining, `propagate_positions`'s meta bookkeeping) and builds `Tree`s with a
`Meta` each; the grammar's precedence levels (`expr` -> `cond_expr` -> ... -> `atom`) make
most reductions a single child passed up unchanged: some 24,000 callbacks for 6,200 tokens.
Here a run of reductions that pass their one child up unchanged costs one memoized lookup,
and the other rules build a `Node` whose positions are the ones lark propagates (the span of
its first and last token, counting the tokens the tree leaves out, such as the parentheses
around an inlined expression). The tree has the same shape as lark's: the same rule names,
the same children, the same `None` placeholders.

A syntax error comes back as a `Rejected`: what lark's exception would say (the token, and
the terminals its interactive parser's `accepts()` finds, simulated on the same tables), so
envdsl.syntax.parse words the same diagnostic without parsing the text again.

While reducing, each node also records how deep the nesting under it goes (expression nodes
in a row, and blocks), so the depth limits (envdsl/syntax/size_limits.py) are walked for only the
rare tree that may break them.

The tables pickle without lark's objects and the tokens are envdsl's (tokens.py): once the
tables are cached, parsing imports no lark at all.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Any, Iterator, Union

from envdsl.syntax import size_limits as limits
from envdsl.syntax.tokens import Token
from envdsl.syntax.tree import Node

if TYPE_CHECKING:
    from lark import Lark


ParseTree = Node
Value = Union[Node, Token, None]

# a rule's program (see _program): (goto symbol, size, _PASS_UP) for a rule that passes its
# one child up unchanged; (goto symbol, 1, (name, expression depth)) for a rule of one token
# kept as it is (a name, a literal: two in five of the other reductions); else (goto symbol,
# size, (name, include, trailing Nones, inline a single child, depth kind, INT positions,
# kept)); include: (index, splice the child's children, Nones before it); kept: the children
# as they are, where nothing is added
_PASS_UP = None
_EXPRESSION, _STRUCTURE, _BLOCK = 0, 1, 2


class Tables:
    """lark's parse table with each action made a plain value: a shift is the next state (an
    int), a reduction its rule's program (a tuple); and lark's lexer as a `_Scanner`. It
    pickles without lark's objects (under a third of the size of lark's pickled parser, loaded in
    about a millisecond), so a cold start needs neither lark's parser nor lark."""

    def __init__(self, parser: Lark) -> None:
        from lark.parsers.lalr_analysis import Shift

        frontend: Any = parser.parser
        table = frontend.parser.parser.parse_table
        self.start_states: dict[str, int] = dict(table.start_states)
        self.end_states: dict[str, int] = dict(table.end_states)
        programs: dict[Any, tuple[Any, ...]] = {}
        self.states: dict[int, dict[str, Any]] = {}
        for state, actions in table.states.items():
            row: dict[str, Any] = {}
            for symbol, (action, argument) in actions.items():
                # plain str keys: lark's symbol names are Tokens, whose __eq__ is Python code
                if action is Shift:
                    row[str(symbol)] = argument
                else:
                    if argument not in programs:
                        programs[argument] = _program(argument, parser.options.maybe_placeholders)
                    row[str(symbol)] = programs[argument]
            self.states[state] = row
        assert len(self.states) < 1 << 16  # parse() packs two states into one memo key
        # the text of each terminal that is a fixed string (`"env"`), for the error messages
        self.literals: dict[str, str] = {}
        for terminal in parser.terminals:
            if terminal.pattern.type == "str":
                self.literals.setdefault(terminal.name, str(terminal.pattern.value))
        basic = getattr(frontend.lexer, "lexer", frontend.lexer)  # under the post-lexer
        self.scanner = _Scanner.of(basic)
        self.postlexer = getattr(frontend.lexer, "postlexer", None)
        self.lark_lexer: Any = basic if self.scanner is None else None
        # per lookahead: (state below << 16 | state on top) -> the state after the run of
        # pass-up reductions there; a pure function of the tables, so kept between parses
        self.chains: dict[str, dict[int, int]] = {}

    @property
    def picklable(self) -> bool:
        return self.lark_lexer is None

    def pass_up(self, below: int, top: int, lookahead: str) -> int:
        """The state on top after every pass-up reduction in a row: each replaces the top
        state by the goto from the state below it, which none of them changes."""
        while True:
            action = self.states[top].get(lookahead)
            if action is None or action.__class__ is int or action[2] is not _PASS_UP:
                return top
            top = self.states[below][action[0]]

    def rejected(self, state_stack: list[int], token: Token, start: str) -> Rejected:
        """The error at `token`: the terminals lark's `accepts()` finds there (each fed to a
        copy of the stack as lark's interactive parser feeds it: reductions until a shift, or
        for $END until the end state), else those with an action in the state on top."""
        row = self.states[state_stack[-1]]
        choices = [symbol for symbol in row if symbol.isupper()]
        accepted = {t for t in choices if self._takes(list(state_stack), t, start)}
        return Rejected(token.start_pos or 0, token, accepted or set(choices))

    def _takes(self, stack: list[int], terminal: str, start: str) -> bool:
        end_state = self.end_states[start]
        while True:
            action = self.states[stack[-1]].get(terminal)
            if action is None:
                return False
            if action.__class__ is int:
                return terminal != "$END"  # lark's parser never shifts the end
            goto, size, _ = action
            if size:
                del stack[-size:]
            stack.append(self.states[stack[-1]][goto])
            if terminal == "$END" and stack[-1] == end_state:
                return True

    def tokens(self, text: str) -> Iterator[Token]:
        """The post-lexed tokens of `text`; raises _Reject where lark's lexer raises
        UnexpectedCharacters."""
        if self.scanner is None:
            tokens = _lark_tokens(self.lark_lexer, text)
        else:
            tokens = self.scanner.tokens(text)
        return tokens if self.postlexer is None else self.postlexer.process(tokens)


def _lark_tokens(lexer: Any, text: str) -> Iterator[Token]:
    """lark's own lexer (for a grammar whose lexer _Scanner cannot stand in for)."""
    from lark.exceptions import UnexpectedCharacters
    from lark.lexer import LexerThread

    thread = LexerThread.from_text(lexer, text)
    try:
        for token in thread.lex(None):  # type: ignore[no-untyped-call]
            yield Token(token.type, token.value, token.start_pos, token.end_pos)
    except UnexpectedCharacters as error:
        raise _Reject(error.pos_in_stream or 0) from None


class _Scanner:
    """lark's basic lexer without the line and column counting nothing here reads: the same
    terminals in lark's order, the same ignored terminals, and lark's keyword check on names
    (UnlessCallback) as a table of the keywords.

    lark matches one union of every terminal at each position, and Python's `re` tries its
    alternatives in order until one matches. Here the character at the position picks a
    smaller union made of only the terminals a match can start with (`_first_chars`), in the
    same order, so the first alternative that matches is the same one; a one-character
    terminal that nothing else starts with (`(`, `,`, ...) is taken without a match at all.
    """

    def __init__(
        self,
        pattern: re.Pattern[str],
        ignore: frozenset[str],
        keywords: dict[str, dict[str, str]],
        by_first: dict[str, re.Pattern[str] | str] | None = None,
        otherwise: re.Pattern[str] | None = None,
    ) -> None:
        self.pattern = pattern
        self.ignore = ignore
        self.keywords = keywords  # NAME -> {"env": "ENV", ...}
        # first character -> the union of the terminals that can start with it, or the name
        # of the one-character terminal it is; any other character -> `otherwise` (the
        # terminals whose first characters are not worked out), None: no terminal matches
        self.by_first: dict[str, re.Pattern[str] | str] = {} if by_first is None else by_first
        self.otherwise = pattern if by_first is None else otherwise

    @classmethod
    def of(cls, basic: Any) -> _Scanner | None:
        """None for a lexer this cannot reproduce exactly (then lark's own lexer runs)."""
        from lark.lexer import BasicLexer, UnlessCallback

        if type(basic) is not BasicLexer or basic.re is not re:
            return None
        scanner = basic.scanner  # builds lark's scanner, and with it the callbacks
        if len(scanner._mres) != 1 or set(basic.callback) & basic.ignore_types:
            return None
        keywords: dict[str, dict[str, str]] = {}
        for kind, callback in basic.callback.items():
            if type(callback) is not UnlessCallback or callback.scanner.g_regex_flags:
                return None
            table: dict[str, str] = {}
            for terminal in callback.scanner.terminals:
                if terminal.pattern.type != "str" or terminal.pattern.flags:
                    return None  # a keyword that matches more than its own text
                table.setdefault(terminal.pattern.value, terminal.name)  # lark: first wins
            keywords[kind] = table
        pattern = scanner._mres[0]
        ignore = frozenset(basic.ignore_types)
        # lark's union, alternative by alternative (lark.lexer.Scanner._build_mres); when it
        # is not exactly that, no dispatch: every position takes the whole union
        alternatives = [
            (t.name, f"(?P<{t.name}>{t.pattern.to_regexp()})", t) for t in scanner.terminals
        ]
        if "|".join(source for _, source, _ in alternatives) != pattern.pattern:
            return cls(pattern, ignore, keywords)
        firsts = [_first_chars(source, pattern.flags) for _, source, _ in alternatives]
        chars = sorted(set().union(*(f for f in firsts if f is not None)))
        starting = {c: tuple(i for i, f in enumerate(firsts) if f is None or c in f) for c in chars}
        suffix = _blanks_after(alternatives, firsts, starting, ignore)
        by_first: dict[str, re.Pattern[str] | str] = {}
        unions: dict[tuple[int, ...], re.Pattern[str]] = {}
        for char in chars:
            taken = starting[char]
            name, _, terminal = alternatives[taken[0]]
            if (
                len(taken) == 1
                and terminal.pattern.type == "str"
                and terminal.pattern.value == char
                and not terminal.pattern.flags
                and name not in ignore
                and name not in keywords
            ):
                by_first[char] = name
                continue
            if taken not in unions:
                source = "|".join(alternatives[i][1] for i in taken)
                unions[taken] = re.compile(f"(?:{source}){suffix}", pattern.flags)
            by_first[char] = unions[taken]
        rest = [source for (_, source, _), f in zip(alternatives, firsts) if f is None]
        otherwise = re.compile("|".join(rest), pattern.flags) if rest else None
        return cls(pattern, ignore, keywords, by_first, otherwise)

    def tokens(self, text: str) -> Iterator[Token]:
        by_first, otherwise = self.by_first, self.otherwise
        ignore, keywords = self.ignore, self.keywords
        # each token as Token(kind, value, position, after) makes it, without the frame of
        # its Python-level __new__ (about half of the 450 ns a token takes to make)
        new = str.__new__
        position, end = 0, len(text)
        while position < end:
            how: Any = by_first.get(text[position], otherwise)
            if how.__class__ is str:  # a one-character terminal
                token = new(Token, text[position])
                token.type, token.value = how, text[position]
                token.start_pos, token.end_pos = position, position + 1
                yield token
                position += 1
                continue
            found = None if how is None else how.match(text, position)
            if found is None:
                raise _Reject(position)
            kind: Any = found.lastgroup  # the terminal's name: every group is one
            if kind in ignore:
                position = found.end()
                continue
            value = found.group(kind)  # without the blanks after it (see _blanks_after)
            if kind in keywords:
                kind = keywords[kind].get(value, kind)
            token = new(Token, value)
            token.type, token.value = kind, value
            token.start_pos, token.end_pos = position, position + len(value)
            yield token
            position = found.end()


def _blanks_after(
    alternatives: list[tuple[str, str, Any]],
    firsts: list[frozenset[str] | None],
    starting: dict[str, tuple[int, ...]],
    ignore: frozenset[str],
) -> str:
    """What each union matches after its token: the blanks lark ignores (`%ignore /[ \\t\\f]+/`),
    three lexemes in ten of a spec, each a turn of the scanner's loop of its own otherwise;
    "" where that would not be exactly the next turn: the blanks' terminal must be the only
    one that can start with each of its characters (then the next turn's union is it alone,
    and matches what this optional group does; at any other character both match nothing)."""
    for index, (name, _, terminal) in enumerate(alternatives):
        first = firsts[index]
        if name not in ignore or first is None or not first <= frozenset(" \t\f"):
            continue
        if all(starting[char] == (index,) for char in first):
            return f"(?:{terminal.pattern.to_regexp()})?"
    return ""


def _first_chars(regexp: str, flags: int) -> frozenset[str] | None:
    """The characters a match of `regexp` can start with, from `re`'s own parse of it; None
    where that is not worked out here (a class by category or negated, any character, a
    look-around or anchor first, a match that may be empty, case folding): any character."""
    try:
        parsed = importlib.import_module("re._parser").parse(regexp, flags)
    except Exception:  # another Python's private parser: no dispatch
        return None
    if parsed.state.flags & re.IGNORECASE:
        return None
    chars, may_be_empty = _first_of_sequence(list(parsed))
    return None if chars is None or may_be_empty else frozenset(chars)


def _first_of_sequence(items: list[tuple[Any, Any]]) -> tuple[set[str] | None, bool]:
    """(the first characters of a sequence of parsed items or None, whether it may match
    empty)."""
    chars: set[str] = set()
    for op, argument in items:
        first, may_be_empty = _first_of_item(str(op), argument)
        if first is None:
            return None, False
        chars |= first
        if not may_be_empty:
            return chars, False
    return chars, True


def _first_of_item(op: str, argument: Any) -> tuple[set[str] | None, bool]:
    if op == "LITERAL":
        return {chr(argument)}, False
    if op == "IN":
        chars: set[str] = set()
        for kind, value in argument:
            if str(kind) == "LITERAL":
                chars.add(chr(value))
            elif str(kind) == "RANGE" and value[1] - value[0] < 4096:
                chars.update(chr(code) for code in range(value[0], value[1] + 1))
            else:  # NEGATE, CATEGORY, a huge range
                return None, False
        return chars, False
    if op == "SUBPATTERN":
        _, add_flags, _, inner = argument
        if add_flags & re.IGNORECASE:
            return None, False
        return _first_of_sequence(list(inner))
    if op == "ATOMIC_GROUP":
        return _first_of_sequence(list(argument))
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _, inner = argument
        chars_inner, may_be_empty = _first_of_sequence(list(inner))
        return chars_inner, may_be_empty or low == 0
    if op == "BRANCH":
        union: set[str] = set()
        empty = False
        for branch in argument[1]:
            first, may_be_empty = _first_of_sequence(list(branch))
            if first is None:
                return None, False
            union |= first
            empty = empty or may_be_empty
        return union, empty
    return None, False  # ANY, NOT_LITERAL, AT, ASSERT, GROUPREF, ...


def _program(rule: Any, placeholders: bool) -> tuple[Any, ...]:
    """What lark's ParseTreeBuilder does for `rule` (parse_tree_builder.py), as data."""
    expansion = rule.expansion
    options = rule.options
    empty = options.empty_indices if placeholders else None
    if empty:
        runs = "".join(str(int(flag)) for flag in empty).split("0")
        nones_at = [len(run) for run in runs]
    else:
        nones_at = [0] * (len(expansion) + 1)
    include: list[tuple[int, bool, int]] = []
    pending = 0
    for index, symbol in enumerate(expansion):
        pending += nones_at[index]
        if options.keep_all_tokens or not (symbol.is_term and symbol.filter_out):
            splice = not symbol.is_term and symbol.name.startswith("_")
            include.append((index, splice, pending))
            pending = 0
    pending += nones_at[len(expansion)]
    inline = bool(options.expand1 and not rule.alias)
    goto = str(rule.origin.name)
    if inline and len(expansion) == 1 and include == [(0, False, 0)] and pending == 0:
        return (goto, 1, _PASS_UP)  # the child itself, positions and all
    name = str(rule.alias or options.template_source or rule.origin.name)
    if name == "block":
        kind = _BLOCK
    elif name in limits.STRUCTURE_RULES or name.endswith(limits.STRUCTURE_SUFFIXES):
        kind = _STRUCTURE
    else:
        kind = _EXPRESSION
    digits = tuple(i for i, symbol in enumerate(expansion) if symbol.name == "INT")
    # the children as they are (True: all of them), or None: placeholders or splices to add
    kept: tuple[int, ...] | bool | None = None
    if pending == 0 and not any(splice or nones for _, splice, nones in include):
        kept = tuple(index for index, _, _ in include)
        if kept == tuple(range(len(expansion))):
            kept = True  # a singleton, also once unpickled
    if len(expansion) == 1 and expansion[0].is_term and kept is True and not inline:
        if not digits and kind != _BLOCK:  # what _reduce makes of it, done in parse()
            return (goto, 1, (name, 1 if kind == _EXPRESSION else 0))
    if len(expansion) == 1 and kept is True and not inline and not digits:
        if kind == _EXPRESSION:  # one rule's value kept as it is: done in parse() too
            return (goto, 1, (name,))
    return (goto, len(expansion), (name, tuple(include), pending, inline, kind, digits, kept))


class _Reject(Exception):
    """No terminal matches at `position` (lark's UnexpectedCharacters)."""

    def __init__(self, position: int) -> None:
        super().__init__(position)
        self.position = position


class Rejected:
    """Where a text stops being the grammar's, as lark's exception (and its interactive
    parser's `accepts()`) would tell it: `token` None for a character no terminal matches at
    `position`, else the token the tables take no action on ($END at the end of the text),
    with the terminals that would have been taken there."""

    __slots__ = ("position", "token", "expected")

    def __init__(self, position: int, token: Token | None, expected: set[str]) -> None:
        self.position = position
        self.token = token
        self.expected = expected


def parse(tables: Tables, text: str, start: str) -> tuple[Value, bool] | Rejected:
    """(the tree, whether it may break a nesting limit), or where the syntax error is."""
    states = tables.states
    chains = tables.chains
    state_stack = [tables.start_states[start]]
    value_stack: list[Any] = []
    suspect = [False]
    token: Token | None = None
    try:
        for token in tables.tokens(text):
            kind = token.type
            while True:
                action = states[state_stack[-1]].get(kind)
                if action is None:
                    return tables.rejected(state_stack, token, start)
                if action.__class__ is int:
                    state_stack.append(action)
                    value_stack.append(token)
                    break
                goto, size, program = action
                if program is _PASS_UP:  # a run of them: one lookup (see Tables.pass_up)
                    key = (state_stack[-2] << 16) | state_stack[-1]
                    memo = chains.get(kind)
                    if memo is None:
                        memo = chains[kind] = {}
                    top = memo.get(key)
                    if top is None:
                        top = memo[key] = tables.pass_up(state_stack[-2], state_stack[-1], kind)
                    state_stack[-1] = top
                    continue
                if len(program) == 2:  # one token (see _program); never past a depth limit
                    child = value_stack[-1]
                    value_stack[-1] = Node(
                        program[0], [child], child.start_pos, child.end_pos, program[1]
                    )
                    state_stack[-1] = states[state_stack[-2]][goto]
                    continue
                if len(program) == 1:  # an expression of one rule's value (see _program)
                    value_stack[-1] = _wrap_one(program[0], value_stack[-1], suspect)
                    state_stack[-1] = states[state_stack[-2]][goto]
                    continue
                value = _reduce(program, value_stack, size, suspect)
                if size:
                    del state_stack[-size:]
                state_stack.append(states[state_stack[-1]][goto])
                value_stack.append(value)
    except _Reject as error:
        return Rejected(error.position, None, set())
    # lark's end token: the last token's position, or the start of the text
    end = Token("$END", "", 0) if token is None else token.update("$END", "")
    end_state = tables.end_states[start]
    while True:
        action = states[state_stack[-1]].get("$END")
        if action is None or action.__class__ is int:
            return tables.rejected(state_stack, end, start)
        goto, size, program = action
        if program is _PASS_UP:
            state_stack[-1] = states[state_stack[-2]][goto]
        elif len(program) == 2:
            child = value_stack[-1]
            value_stack[-1] = Node(program[0], [child], child.start_pos, child.end_pos, program[1])
            state_stack[-1] = states[state_stack[-2]][goto]
        elif len(program) == 1:
            value_stack[-1] = _wrap_one(program[0], value_stack[-1], suspect)
            state_stack[-1] = states[state_stack[-2]][goto]
        else:
            value = _reduce(program, value_stack, size, suspect)
            if size:
                del state_stack[-size:]
            state_stack.append(states[state_stack[-1]][goto])
            value_stack.append(value)
        if state_stack[-1] == end_state:
            return value_stack[-1], suspect[0]


def _wrap_one(name: str, child: Any, suspect: list[bool]) -> Node:
    """What _reduce makes of an expression rule of one symbol, kept as it is (484 of the
    1,732 reductions a corpus spec that _reduce made): the node over it, with its positions
    and depths."""
    if child.__class__ is Node:
        depth = child.expr_depth + 1
        if depth > limits.MAX_EXPR_DEPTH:
            suspect[0] = True
        if child.start is None:
            return Node(name, [child], None, None, depth, child.block_depth)
        return Node(name, [child], child.outer_start, child.outer_end, depth, child.block_depth)
    first = child.start_pos  # a token
    return Node(name, [child], first, None if first is None else child.end_pos, 1, 0)


def _reduce(
    program: tuple[Any, ...], value_stack: list[Any], size: int, suspect: list[bool]
) -> Any:
    name, include, trailing, inline, kind, digits, kept = program
    if size:
        raw = value_stack[-size:]
        del value_stack[-size:]
    else:
        raw = []
    if kept is not None:  # no placeholders, nothing spliced: the common case
        children = raw if kept is True else [raw[index] for index in kept]
    else:
        children = []
        for index, splice, nones in include:
            if nones:
                children += [None] * nones
            if splice:
                children += raw[index].children
            else:
                children.append(raw[index])
        if trailing:
            children += [None] * trailing
    for index in digits:
        if len(raw[index]) > limits.MAX_INT_DIGITS:
            suspect[0] = True
    # lark's PropagatePositions: from the first and the last raw child that has a position
    first = last = None
    for child in raw:
        if child.__class__ is Token:
            first = child.start_pos
            break
        if child.__class__ is Node and child.start is not None:
            first = child.outer_start
            break
    if first is not None:
        for child in reversed(raw):
            if child.__class__ is Token:
                last = child.end_pos
                break
            if child.__class__ is Node and child.start is not None:
                last = child.outer_end
                break
    if inline and len(children) == 1:  # the child itself, now inside a larger extent
        node = children[0]
        if node.__class__ is Node and first is not None:
            if node.start is None:
                node.start, node.end = first, last
            node.outer_start, node.outer_end = first, last
        return node
    expr_depth = block_depth = 0
    for child in children:
        if child.__class__ is Node:
            if child.expr_depth > expr_depth:
                expr_depth = child.expr_depth
            if child.block_depth > block_depth:
                block_depth = child.block_depth
    if kind == _EXPRESSION:
        expr_depth += 1
        if expr_depth > limits.MAX_EXPR_DEPTH:
            suspect[0] = True
        return Node(name, children, first, last, expr_depth, block_depth)
    if kind == _BLOCK:
        block_depth += 1
        if block_depth > limits.MAX_BLOCK_DEPTH:
            suspect[0] = True
    return Node(name, children, first, last, 0, block_depth)
