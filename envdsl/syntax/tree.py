"""The parse tree's node type, built by the parser (envdsl/syntax/lalr.py) and read by the
depth limits (size_limits.py) and the AST builder (build.py): kept apart so none of them
imports another for it."""

from __future__ import annotations

from typing import Any


class Node:
    """A rule's node: what lark's `Tree` would hold, positions as lark propagates them.

    `start`/`end` are None for a node that covers no token (an empty `start`). `outer_start`
    and `outer_end` are the extent of the largest rule that inlined this node (lark's
    `container_*`), which is what a parent's span is made of. `expr_depth` is the longest run
    of expression nodes from this one down; `block_depth` the blocks nested in it (itself too).
    """

    __slots__ = (
        "data",
        "children",
        "start",
        "end",
        "outer_start",
        "outer_end",
        "expr_depth",
        "block_depth",
    )

    def __init__(
        self,
        data: str,
        children: list[Any],
        start: int | None = None,
        end: int | None = None,
        expr_depth: int = 0,
        block_depth: int = 0,
    ) -> None:
        self.data = data
        self.children = children
        self.start = self.outer_start = start
        self.end = self.outer_end = end
        self.expr_depth = expr_depth
        self.block_depth = block_depth

    def __repr__(self) -> str:
        return f"Node({self.data!r}, {self.children!r})"
