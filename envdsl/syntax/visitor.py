"""One way to walk the AST: a pass is a `Visitor` with a `visit_<NodeClass>` method per node kind.

Every pass (the checkers, the alias analysis, the code generators, the formatter) names its
handlers the same way and says which node families it walks (`families`); the kinds of a family
it deliberately leaves alone it lists in `not_applicable`, each with the reason. The families
are read from the AST module's own unions (`ast.Expr`, `ast.Stmt`, ...), so a node class added
there is at once a kind every pass over its family must handle: tests/test_visitor.py fails
until each one has a handler or a reason (`missing_handlers`).

Dispatch is by the node's exact class: the handler is looked up once per class and pass
(`getattr` by name) and kept in the pass class's own table (`handlers`), so a visit is a dict
lookup and a call, not a string built and an attribute found per node. A handler assigned to a
pass class later (a test's monkeypatch) empties the tables it may be stale in.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Mapping, get_args

from envdsl.syntax import ast

Family = tuple[type, ...]

# The node families, from the unions that name them in the AST module.
EXPRESSIONS: Family = get_args(ast.Expr)
STATEMENTS: Family = get_args(ast.Stmt)
DECLARATIONS: Family = get_args(ast.Decl)
TYPES: Family = get_args(ast.TypeExpr)
TOP_LEVEL: Family = get_args(ast.TopLevel)

HANDLER_PREFIX = "visit_"


class NoHandler(TypeError):
    """A node kind reached a pass that has no handler for it: a bug in envdsl (the visitor
    test should have caught it), never the spec's fault."""


class _PassClass(type):
    """The class of the pass classes: a handler assigned or deleted on a pass class (a test's
    monkeypatch, a subclass patched at run time) empties the handler tables that may hold
    the old one, its own and its subclasses'."""

    def __setattr__(cls, name: str, value: object) -> None:
        super().__setattr__(name, value)
        if name.startswith(HANDLER_PREFIX):
            _forget_handlers(cls)

    def __delattr__(cls, name: str) -> None:
        super().__delattr__(name)
        if name.startswith(HANDLER_PREFIX):
            _forget_handlers(cls)


def _forget_handlers(cls: type) -> None:
    stack = [cls]
    while stack:
        current = stack.pop()
        getattr(current, "handlers").clear()
        stack.extend(current.__subclasses__())


class HandlerTable(dict[type, Callable[..., Any]]):
    """A pass class's handlers by node class, each looked up the first time its kind is met:
    `table[type(node)](pass, node, ...)` is the whole dispatch."""

    def __init__(self, pass_class: type[Visitor]) -> None:
        super().__init__()
        self.pass_class = pass_class

    def __missing__(self, kind: type) -> Callable[..., Any]:
        cls = self.pass_class
        handler: Callable[..., Any] | None = getattr(cls, HANDLER_PREFIX + kind.__name__, None)
        if handler is None:
            if kind not in cls.not_applicable:
                raise NoHandler(f"{cls.__name__} has no {HANDLER_PREFIX}{kind.__name__}")
            handler = cls.not_applicable_node
        self[kind] = handler
        return handler


class Visitor(metaclass=_PassClass):
    """Base of every AST pass: `self.visit(node, *args)` calls `visit_<NodeClass>(node, *args)`.

    `families`: the node families the pass walks (tests/test_visitor.py holds it to a handler
    for every kind in them). `not_applicable`: kinds of those families the pass has no handler
    for on purpose, each with the reason; a visit of one calls `not_applicable_node`.

    A pass's hottest entry (the checker's `expr`) may call `self.handlers[node.__class__](self,
    node, scope)` itself: the same dispatch, without `visit`'s call and `*args` (half the
    time of a visit)."""

    families: ClassVar[tuple[Family, ...]] = ()
    not_applicable: ClassVar[Mapping[type, str]] = {}
    handlers: ClassVar[HandlerTable]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.handlers = HandlerTable(cls)  # its own: a subclass may override handlers

    def visit(self, node: object, *args: Any) -> Any:
        return self.handlers[node.__class__](self, node, *args)

    def not_applicable_node(self, node: object, *args: Any) -> Any:
        """A kind listed in `not_applicable` was visited; a pass whose listed kinds can
        reach it overrides this with what they mean to it (nothing, no roots...)."""
        reason = self.not_applicable[node.__class__]
        raise NoHandler(f"{type(self).__name__} does not handle {type(node).__name__}: {reason}")


Visitor.handlers = HandlerTable(Visitor)


def node_classes() -> tuple[type, ...]:
    """Every node class of the AST module, in the order it defines them."""
    return tuple(
        value
        for value in vars(ast).values()
        if isinstance(value, type)
        and value.__module__ == ast.__name__
        and hasattr(value, "_node_fields")
    )


def walked_kinds(pass_class: type[Visitor]) -> tuple[type, ...]:
    """The node kinds of the families a pass walks, each once."""
    return tuple(dict.fromkeys(kind for family in pass_class.families for kind in family))


def missing_handlers(pass_class: type[Visitor]) -> list[str]:
    """What is wrong with a pass's coverage of its families, one line per problem: a kind
    with neither a handler nor a reason, a kind with both, a reason for a kind it does not
    walk, a handler named after no kind it walks (a renamed node or a typo)."""
    kinds = walked_kinds(pass_class)
    names = {kind.__name__ for kind in kinds}
    problems: list[str] = []
    for kind in kinds:
        handled = hasattr(pass_class, HANDLER_PREFIX + kind.__name__)
        excused = kind in pass_class.not_applicable
        if not handled and not excused:
            problems.append(f"no {HANDLER_PREFIX}{kind.__name__} and no reason to skip it")
        elif handled and excused:
            problems.append(f"{kind.__name__} has a handler and is listed as not applicable")
    for kind, reason in pass_class.not_applicable.items():
        if kind not in kinds:
            problems.append(f"{kind.__name__} is listed as not applicable but not walked")
        if not reason.strip():
            problems.append(f"{kind.__name__} is listed as not applicable with no reason")
    for attribute in dir(pass_class):
        if attribute.startswith(HANDLER_PREFIX) and attribute[len(HANDLER_PREFIX) :] not in names:
            problems.append(f"{attribute} handles no kind of the families walked")
    return problems
