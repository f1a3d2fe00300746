"""Lints on checks that compare more strictly than a person would (W5021, W5022).

Both concern values the agent supplies: a list it passes to a tool (stored in the order it
chose) and prose it writes (a note, a message). A field is agent-supplied when a public
action stores into it an expression that reads one of the action's parameters.
"""

from __future__ import annotations

from envdsl.diagnostics import DiagnosticSink, Edit, Fix, codes
from envdsl.semantics import types as t
from envdsl.semantics.builtin_table import FUNCTIONS, Function, called_builtin
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast
from envdsl.util.prose import is_prose
from envdsl.util.source import SourceMap, Span

Place = tuple[str, str]  # (entity, field), or ("", state field)


def lint_check_wording(checked: CheckedSpec, sources: SourceMap, sink: DiagnosticSink) -> None:
    supplied = _agent_supplied(checked)
    if not supplied:
        return
    for task in checked.env.of_type(ast.TaskDecl):
        told = _folded(task.doc.value) if task.doc is not None else ""
        for check in task.checks:
            for node in ast.walk(check.cond):
                if isinstance(node, ast.Compare):
                    _ordered_list(checked, sources, sink, supplied, node)
                    _phrase_compare(checked, sink, supplied, told, node)
                elif isinstance(node, ast.Call):
                    _phrase_call(checked, sink, supplied, told, node)


def _text_builtin(checked: CheckedSpec, call: ast.Call) -> tuple[Function, list[ast.Expr]] | None:
    """The builtin a call reaches, called as a function or as a string's method (`s.lower()`),
    with its arguments, the string first."""
    if isinstance(call.func, ast.Attribute):
        builtin = FUNCTIONS.get(call.func.name.text)
        if builtin is None or not builtin.string_method:
            return None
        if checked.expr_types.get(id(call.func.obj)) != t.STR:
            return None  # a collection's method of that name (`tags.contains(x)`)
        return builtin, [call.func.obj, *call.args]
    builtin = called_builtin(call, checked)
    return (builtin, list(call.args)) if builtin is not None else None


def _folded(text: str) -> str:
    return " ".join(text.lower().split())


def _agent_supplied(checked: CheckedSpec) -> set[Place]:
    places: set[Place] = set()
    for info in checked.tools:
        if info.internal or info.kind != "action" or info.module is not None:
            continue
        params = {p.name for p in info.params}
        for node in ast.walk(info.decl.body):
            if isinstance(node, ast.Assign) and _reads_any(node.value, params):
                place = _place(checked, node.target)
                if place is not None:
                    places.add(place)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.NameRef):
                entity = checked.entity(node.func.name)
                if entity is None:
                    continue
                for kwarg in node.kwargs:
                    if _reads_any(kwarg.value, params):
                        places.add((entity.name, kwarg.name.text))
    return places


def _reads_any(expr: ast.Expr, names: set[str]) -> bool:
    return any(
        isinstance(n, ast.NameRef) and n.name in names and not n.qualified for n in ast.walk(expr)
    )


def _place(checked: CheckedSpec, expr: ast.Expr) -> Place | None:
    """The (entity, field) an expression reads or writes, or ("", name) of a state field."""
    if isinstance(expr, ast.Attribute):
        owner = checked.expr_types.get(id(expr.obj))
        if isinstance(owner, t.OptionalType):
            owner = owner.inner
        if isinstance(owner, t.RecordType) and owner.is_entity:
            return (owner.name, expr.name.text)
        if isinstance(owner, t.RefType):
            return (owner.entity, expr.name.text)
    if isinstance(expr, ast.NameRef) and expr.name in checked.state:
        return ("", expr.name)
    return None


def _ordered_list(
    checked: CheckedSpec,
    sources: SourceMap,
    sink: DiagnosticSink,
    supplied: set[Place],
    node: ast.Compare,
) -> None:
    if len(node.ops) != 1 or node.ops[0] not in ("==", "!="):
        return
    left, right = node.operands
    literal, other = (left, right) if isinstance(left, ast.ListLit) else (right, left)
    if not isinstance(literal, ast.ListLit) or len(literal.items) < 2:
        return  # one element has one order
    list_type = checked.expr_types.get(id(other))
    if not isinstance(list_type, t.ListType) or not _unordered_kind(list_type.elem):
        return  # numbers in a list are often a series (scores per page): their order counts
    if _place(checked, other) not in supplied:
        return
    source = sources.get(node.span.file)
    fixes: tuple[Fix, ...] = ()
    if source is not None:
        text = source.text
        a = text[other.span.start : other.span.end]
        b = text[literal.span.start : literal.span.end]
        negation = "not " if node.ops[0] == "!=" else ""
        replacement = f"{negation}same_items({a}, {b})"
        fixes = (Fix("compare the items, not their order", (Edit(node.span, replacement),)),)
    sink.report(
        codes.LIST_COMPARED_IN_ORDER,
        "this check compares a list the agent supplies with `==`: the same items in another "
        "order fail it",
        node.span,
        help="unless the order is part of the task, write `same_items(xs, [...])`",
        fixes=fixes,
    )


def _unordered_kind(elem: t.Type) -> bool:
    """Elements that name things (tags, categories, ids): a list of them is usually a set."""
    return elem == t.STR or isinstance(elem, (t.EnumType, t.RefType))


def _phrase_compare(
    checked: CheckedSpec, sink: DiagnosticSink, supplied: set[Place], told: str, node: ast.Compare
) -> None:
    # `==` demands the whole value: the instruction gave it, so exact is right
    if node.ops == ("in",):
        _phrase(checked, sink, supplied, told, node.operands[0], node.operands[1], node.span)


def _phrase_call(
    checked: CheckedSpec, sink: DiagnosticSink, supplied: set[Place], told: str, node: ast.Call
) -> None:
    called = _text_builtin(checked, node)
    if called is not None and called[0].text_role == "test" and len(called[1]) == 2:
        text, phrase = called[1]
        _phrase(checked, sink, supplied, told, phrase, text, node.span)


def _phrase(
    checked: CheckedSpec,
    sink: DiagnosticSink,
    supplied: set[Place],
    told: str,
    phrase: ast.Expr,
    text: ast.Expr,
    span: Span,
) -> None:
    if not isinstance(phrase, ast.StrLit) or not is_prose(phrase.value):
        return
    if _folded(phrase.value) in told:
        return  # the instruction gives these very words: the agent is asked to copy them
    place = _place(checked, _unfolded(checked, text))
    if place is None or place not in supplied:
        return
    if checked.expr_types.get(id(text)) != t.STR:
        return
    sink.report(
        codes.EXACT_PHRASE_OF_PROSE,
        f'this check demands the exact phrase "{phrase.value}" of text the agent writes: '
        "a paraphrase fails it",
        span,
        help="check the words that matter, each on its own: "
        '`mentions(n.body, "refund") and mentions(n.body, "R1")`',
    )


def _unfolded(checked: CheckedSpec, expr: ast.Expr) -> ast.Expr:
    """`lower(x)`, `x.strip()`: the text they fold."""
    while isinstance(expr, ast.Call):
        called = _text_builtin(checked, expr)
        if called is None or called[0].text_role != "fold" or not called[1]:
            break
        expr = called[1][0]
    return expr
