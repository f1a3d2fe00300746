"""Expressions, types and bracketed lists as pretty-printer documents.

The AST keeps no parentheses, so they are put back from the grammar's precedence: an operand
gets parentheses exactly when its own precedence is below what its position takes. Literals
are copied from the source as written (`1_000`, quote style, f-strings with their holes).
Line breaks are only ever placed inside brackets (a statement-level operator expression gets
optional parentheses when it breaks), where the post-lexer ignores newlines.
"""

from __future__ import annotations

from typing import Sequence

from envdsl.fmt.comments import Comment
from envdsl.fmt.doc import LINE, SOFTLINE, Doc, HARDLINE, BreakParent, IfBreak, group, indent
from envdsl.syntax import ast
from envdsl.syntax.visitor import EXPRESSIONS, TYPES, Visitor

# Precedence levels, loosest first (grammar/envdsl.lark, Python's order).
LAMBDA, CONDITIONAL, OR, AND, NOT, COMPARE, SUM, TERM, UNARY, POWER, POSTFIX, ATOM = range(12)
_BINARY_LEVEL = {"+": SUM, "-": SUM, "*": TERM, "/": TERM, "//": TERM, "%": TERM, "**": POWER}
# Expressions that break between operands: at statement level, they get parentheses when they
# break (a comparison never breaks between its operands, only inside them).
_OPERATORS = (ast.Binary, ast.BoolOp, ast.Conditional, ast.Lambda)


class CommentQueue:
    """The comments not yet written, in source order; each is taken exactly once."""

    def __init__(self, comments: Sequence[Comment]) -> None:
        self._comments = list(comments)
        self._next = 0

    def take_before(self, offset: int) -> list[Comment]:
        start = self._next
        while self._next < len(self._comments) and self._comments[self._next].start < offset:
            self._next += 1
        return self._comments[start : self._next]

    def peek(self) -> Comment | None:
        return self._comments[self._next] if self._next < len(self._comments) else None

    def take_all(self) -> list[Comment]:
        rest = self._comments[self._next :]
        self._next = len(self._comments)
        return rest


def starts_with_brace(expr: ast.Expr) -> bool:
    """Whether the expression's first token is `{`: after a newline, `fail`, `require`, `if` or
    `else` that brace would open a block (envdsl/syntax/postlex.py), so it needs parentheses."""
    return _STARTS_WITH_BRACE.starts(expr)


class _StartsWithBrace(Visitor):
    """`visit_<Expr>(e) -> bool`: a brace, or the first token of the leftmost operand."""

    families = (EXPRESSIONS,)

    def starts(self, e: ast.Expr) -> bool:
        starts: bool = self.visit(e)
        return starts

    def visit_MapLit(self, e: ast.MapLit | ast.SetLit) -> bool:
        return True

    visit_SetLit = visit_MapLit

    def visit_Comprehension(self, e: ast.Comprehension) -> bool:
        return e.kind in ("set", "map")

    def visit_Attribute(self, e: ast.Attribute | ast.Index | ast.Slice) -> bool:
        return self.starts(e.obj)

    visit_Index = visit_Slice = visit_Attribute

    def visit_Call(self, e: ast.Call) -> bool:
        return self.starts(e.func)

    def visit_Binary(self, e: ast.Binary | ast.BoolOp) -> bool:
        return self.starts(e.left)

    visit_BoolOp = visit_Binary

    def visit_Compare(self, e: ast.Compare) -> bool:
        return self.starts(e.operands[0])

    def visit_Conditional(self, e: ast.Conditional) -> bool:
        return self.starts(e.body)

    def visit_ListLit(self, e: ast.Expr) -> bool:
        return False  # starts with `[`, a word, a literal or a prefix operator

    visit_IntLit = visit_FloatLit = visit_StrLit = visit_BoolLit = visit_NoneLit = visit_ListLit
    visit_FString = visit_NameRef = visit_Unary = visit_Not = visit_Lambda = visit_ListLit


_STARTS_WITH_BRACE = _StartsWithBrace()


class ExpressionPrinter(Visitor):
    """An expression as a document: `visit_<Expr>(e) -> (doc, precedence level)`."""

    families = (EXPRESSIONS,)

    def __init__(self, text: str, comments: CommentQueue) -> None:
        self.text = text
        self.comments = comments

    def source(self, node: ast.Expr | ast.Text) -> str:
        return self.text[node.span.start : node.span.end]

    # ---- statement-level positions --------------------------------------------------------
    def root(self, expr: ast.Expr, *, lead: bool = False, before_else: bool = False) -> Doc:
        """An expression that stands outside any bracket. `lead`: a `{` may not start it;
        `before_else`: an `else` follows, which a conditional or lambda would take."""
        if (lead and starts_with_brace(expr)) or (
            before_else and isinstance(expr, (ast.Conditional, ast.Lambda))
        ):
            return self.parenthesised(self.expr(expr, LAMBDA))
        doc = self.expr(expr, LAMBDA)
        if isinstance(expr, _OPERATORS):
            return group(IfBreak("("), indent(SOFTLINE, doc), SOFTLINE, IfBreak(")"))
        return doc

    @staticmethod
    def parenthesised(doc: Doc) -> Doc:
        return group("(", indent(SOFTLINE, doc), SOFTLINE, ")")

    # ---- expressions ----------------------------------------------------------------------
    def expr(self, expr: ast.Expr, minimum: int) -> Doc:
        doc, level = self._expr(expr)
        return self.parenthesised(doc) if level < minimum else doc

    def _expr(self, e: ast.Expr) -> tuple[Doc, int]:
        """The document of an expression and its precedence level."""
        doc: tuple[Doc, int] = self.visit(e)
        return doc

    def visit_IntLit(
        self, e: ast.IntLit | ast.FloatLit | ast.StrLit | ast.FString
    ) -> tuple[Doc, int]:
        return self.source(e), ATOM  # as written: `1_000`, the quotes, the f-string's holes

    visit_FloatLit = visit_StrLit = visit_FString = visit_IntLit

    def visit_BoolLit(self, e: ast.BoolLit) -> tuple[Doc, int]:
        return ("true" if e.value else "false"), ATOM

    def visit_NoneLit(self, e: ast.NoneLit) -> tuple[Doc, int]:
        return "none", ATOM

    def visit_NameRef(self, e: ast.NameRef) -> tuple[Doc, int]:
        return (f"state.{e.name}" if e.qualified else e.name), ATOM

    def visit_Attribute(self, e: ast.Attribute) -> tuple[Doc, int]:
        return [self.expr(e.obj, POSTFIX), ".", e.name.text], POSTFIX

    def visit_Call(self, e: ast.Call) -> tuple[Doc, int]:
        return [self.expr(e.func, POSTFIX), self.call_arguments(e)], POSTFIX

    def visit_Index(self, e: ast.Index) -> tuple[Doc, int]:
        inner = group("[", indent(SOFTLINE, self.expr(e.index, LAMBDA)), SOFTLINE, "]")
        return [self.expr(e.obj, POSTFIX), inner], POSTFIX

    def visit_Slice(self, e: ast.Slice) -> tuple[Doc, int]:
        lower = self.expr(e.lower, LAMBDA) if e.lower is not None else ""
        upper = self.expr(e.upper, LAMBDA) if e.upper is not None else ""
        return [self.expr(e.obj, POSTFIX), group("[", lower, ":", upper, "]")], POSTFIX

    def visit_Unary(self, e: ast.Unary) -> tuple[Doc, int]:
        # `- -x` would read as the `--` people try to write: keep the inner one bracketed
        operand = (
            self.parenthesised(self.expr(e.operand, LAMBDA))
            if isinstance(e.operand, ast.Unary)
            else self.expr(e.operand, UNARY)
        )
        return [e.op, operand], UNARY

    def visit_Not(self, e: ast.Not) -> tuple[Doc, int]:
        return ["not ", self.expr(e.operand, NOT)], NOT

    def visit_Compare(self, e: ast.Compare) -> tuple[Doc, int]:
        parts: list[Doc] = [self.expr(e.operands[0], SUM)]
        for op, right in zip(e.ops, e.operands[1:]):
            parts.extend([f" {op} ", self.expr(right, SUM)])
        return parts, COMPARE

    def visit_Conditional(self, e: ast.Conditional) -> tuple[Doc, int]:
        orelse = (
            self.parenthesised(self.expr(e.orelse, LAMBDA))
            if starts_with_brace(e.orelse)
            else self.expr(e.orelse, LAMBDA)
        )
        return (
            group(
                self.expr(e.body, OR),
                [LINE, "if ", self.expr(e.test, OR), LINE, "else ", orelse],
            ),
            CONDITIONAL,
        )

    def visit_Lambda(self, e: ast.Lambda) -> tuple[Doc, int]:
        params = ", ".join(p.text for p in e.params)
        return ["lambda ", params, ": ", self.expr(e.body, LAMBDA)], LAMBDA

    def visit_ListLit(self, e: ast.ListLit) -> tuple[Doc, int]:
        items = [(i, self.expr(i, CONDITIONAL)) for i in e.items]
        return self.bracketed("[", items, "]", e.span.end), ATOM

    def visit_SetLit(self, e: ast.SetLit) -> tuple[Doc, int]:
        items = [(i, self.expr(i, CONDITIONAL)) for i in e.items]
        return self.bracketed("{", items, "}", e.span.end), ATOM

    def visit_MapLit(self, e: ast.MapLit) -> tuple[Doc, int]:
        entries = [(entry, self._map_entry(entry.key, entry.value)) for entry in e.entries]
        return self.bracketed("{", entries, "}", e.span.end), ATOM

    def visit_Comprehension(self, e: ast.Comprehension) -> tuple[Doc, int]:
        return self._comprehension(e), ATOM

    def _map_entry(self, key: ast.Expr, value: ast.Expr) -> Doc:
        return group(self.expr(key, CONDITIONAL), ":", indent(LINE, self.expr(value, CONDITIONAL)))

    def visit_Binary(self, e: ast.Binary) -> tuple[Doc, int]:
        level = _BINARY_LEVEL[e.op]
        if e.op == "**":  # right-associative, binds tighter than a unary minus on its left
            return (
                [self.expr(e.left, POSTFIX), " ** ", self.expr(e.right, UNARY)],
                POWER,
            )
        # a left-associative chain `a + b - c` breaks before each operator
        chain: list[tuple[str, ast.Expr]] = []
        left: ast.Expr = e
        while isinstance(left, ast.Binary) and _BINARY_LEVEL[left.op] == level:
            chain.append((left.op, left.right))
            left = left.left
        parts: list[Doc] = [self.expr(left, level)]
        for op, right in reversed(chain):
            parts.append([LINE, op, " ", self.expr(right, level + 1)])
        return group(*parts), level

    def visit_BoolOp(self, e: ast.BoolOp) -> tuple[Doc, int]:
        level = OR if e.op == "or" else AND
        chain: list[ast.Expr] = []
        left: ast.Expr = e
        while isinstance(left, ast.BoolOp) and left.op == e.op:
            chain.append(left.right)
            left = left.left
        parts: list[Doc] = [self.expr(left, level)]
        for right in reversed(chain):
            parts.append([LINE, e.op, " ", self.expr(right, level + 1)])
        return group(*parts), level

    def _comprehension(self, e: ast.Comprehension) -> Doc:
        element = (
            self._map_entry(e.element, e.value)
            if e.value is not None
            else self.expr(e.element, CONDITIONAL)
        )
        parts: list[Doc] = [element]
        for clause in e.clauses:
            if isinstance(clause, ast.CompFor):
                targets = ", ".join(t.text for t in clause.targets)
                parts.append([LINE, "for ", targets, " in ", self.expr(clause.iterable, OR)])
            else:
                parts.append([LINE, "if ", self.expr(clause.cond, OR)])
        if e.kind == "gen":
            return parts
        opener, closer = ("[", "]") if e.kind == "list" else ("{", "}")
        return group(opener, indent(SOFTLINE, *parts), SOFTLINE, closer)

    def call_arguments(self, call: ast.Call) -> Doc:
        if len(call.args) == 1 and isinstance(call.args[0], ast.Comprehension):
            if call.args[0].kind == "gen":  # `f(x for x in xs)`: no trailing comma allowed
                body = self._comprehension(call.args[0])
                return group("(", indent(SOFTLINE, body), SOFTLINE, ")")
        items: list[tuple[ast.Expr | ast.KeywordArg, Doc]] = [
            (arg, self.expr(arg, LAMBDA)) for arg in call.args
        ]
        for keyword in call.kwargs:
            items.append((keyword, [keyword.name.text, "=", self.expr(keyword.value, LAMBDA)]))
        return self.bracketed("(", items, ")", call.span.end)

    # ---- bracketed lists ------------------------------------------------------------------
    def bracketed(
        self,
        opener: str,
        items: Sequence[tuple[object, Doc]],
        closer: str,
        end: int,
        *,
        padded: bool = False,
        trailing_comma: bool = True,
    ) -> Doc:
        """`(a, b)` flat, or one item a line with a trailing comma; the comments between the
        items stay with them (a comment forces the broken layout). `padded`: `{ a, b }`."""
        if not items and not self._has_comment_before(end):
            return opener + closer
        head: list[Doc] = []  # a comment after the opening bracket, on its line
        body: list[Doc] = []
        for index, (node, doc) in enumerate(items):
            start = _start_of(node)
            if index:
                body.append(",")
            own_line: list[Comment] = []
            for comment in self.comments.take_before(start):
                if comment.own_line or (head and not index):
                    own_line.append(comment)
                else:
                    (body if index else head).extend(["  " + comment.text, BreakParent()])
            if index:
                body.append(LINE)
            for comment in own_line:
                body.extend([comment.text, HARDLINE])
            body.append(doc)
        body.append(IfBreak(",") if trailing_comma and items else "")
        for number, comment in enumerate(self.comments.take_before(end)):
            if number == 0 and not items:  # `[  # nothing yet` + `]`
                body.extend([comment.text, BreakParent()])
            elif number == 0 and not comment.own_line:
                body.extend(["  " + comment.text, BreakParent()])
            else:
                body.extend([HARDLINE, comment.text])
        edge = LINE if padded else SOFTLINE
        return group(opener, *head, indent(edge, *body), edge, closer)

    def _has_comment_before(self, end: int) -> bool:
        pending = self.comments.peek()
        return pending is not None and pending.start < end


def _start_of(node: object) -> int:
    span = getattr(node, "span")
    return int(span.start)


def type_text(node: ast.TypeExpr | ast.TableType) -> str:
    """Types never break: they are short, and `[` in a type is not an index."""
    text: str = _TYPE_TEXT.visit(node)
    return text


class _TypeText(Visitor):
    """A written type as text: `visit_<TypeExpr>(node) -> str`."""

    families = (TYPES, (ast.TableType,))  # a state field's `table T` is typed alongside

    def visit_NamedType(self, node: ast.NamedType) -> str:
        return node.name.text

    def visit_GenericType(self, node: ast.GenericType) -> str:
        return f"{node.name.text}[{', '.join(type_text(arg) for arg in node.args)}]"

    def visit_RefType(self, node: ast.RefType) -> str:
        return f"ref {node.entity.text}"

    def visit_TableType(self, node: ast.TableType) -> str:
        return f"table {node.entity.text}"

    def visit_OptionalType(self, node: ast.OptionalType) -> str:
        return f"{type_text(node.inner)}?"


_TYPE_TEXT = _TypeText()
