"""The import graph of a package, read from its sources with `ast` (nothing is imported).

Every import statement counts, wherever it stands: at the top, inside a function (a deferred
import still makes one module need the other) and under `if TYPE_CHECKING:` (a type-only
import is a dependency of the code's meaning, and what mypy follows). An import of a package
counts as an import of its `__init__`; `from pkg import name` counts as an import of the
submodule `pkg.name` where one exists.
"""

from __future__ import annotations

import ast
from pathlib import Path


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package in directory `root`."""
    modules: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports."""
    modules = module_files(root, package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        here = name.split(".") if is_package else name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            for imported in _imported_names(node, here, modules):
                target = _owning_module(imported, modules)
                if target is not None and target != name:
                    targets.add(target)
        graph[name] = targets
    return graph


def _imported_names(node: ast.AST, here: list[str], modules: dict[str, Path]) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = here[: len(here) - (node.level - 1)]
        module = ".".join([*base, *([node.module] if node.module else [])])
    else:
        module = node.module or ""
    # `from pkg import sub` imports the submodule where there is one, else a name of pkg
    return [
        f"{module}.{alias.name}" if f"{module}.{alias.name}" in modules else module
        for alias in node.names
    ]


def _owning_module(dotted: str, modules: dict[str, Path]) -> str | None:
    """The longest module name that `dotted` is or lies in (None outside the package)."""
    while dotted:
        if dotted in modules:
            return dotted
        dotted = dotted.rpartition(".")[0]
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module, each sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:
        # iterative, so a deep graph cannot exhaust Python's recursion limit
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)
