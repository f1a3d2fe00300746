"""envdsl has no import circle, type-only and deferred imports included (issue 24, point 2)."""

from __future__ import annotations

from pathlib import Path

from import_graph import cycles, import_graph

PACKAGE_ROOT = Path(__file__).resolve().parent.parent / "envdsl"


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "pkg"


def test_envdsl_has_no_import_circle() -> None:
    graph = import_graph(PACKAGE_ROOT, "envdsl")
    assert len(graph) > 100  # the walker saw the whole package
    found = cycles(graph)
    assert found == [], "import circles (shared data belongs in a leaf module): " + "; ".join(
        " <-> ".join(circle) for circle in found
    )


def test_the_stages_import_no_face() -> None:
    # the pipeline's stages sit below the faces people use: none imports cli, serve or lsp
    graph = import_graph(PACKAGE_ROOT, "envdsl")
    stages = ("envdsl.syntax", "envdsl.semantics", "envdsl.codegen", "envdsl.runtime")
    faces = ("envdsl.cli", "envdsl.serve", "envdsl.lsp", "envdsl.adapters")
    wrong = sorted(
        (module, target)
        for module, targets in graph.items()
        if module.startswith(stages)
        for target in targets
        if target.startswith(faces)
    )
    assert wrong == []


def test_a_type_only_circle_is_found(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "__init__.py": "",
            "model.py": "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from pkg.scope import Local\n",
            "scope.py": "from pkg.model import Info\n",
            "leaf.py": "import pkg.model\n",
        },
    )
    assert cycles(import_graph(root, "pkg")) == [["pkg.model", "pkg.scope"]]


def test_deferred_and_relative_imports_count(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "__init__.py": "",
            "sub/__init__.py": "from . import a\n",
            "sub/a.py": "def later():\n    from ..b import thing\n    return thing\n",
            "b.py": "from pkg.sub import a as _a\nthing = 1\n",
            "c.py": "from pkg import b\n",
        },
    )
    graph = import_graph(root, "pkg")
    assert graph["pkg.sub.a"] == {"pkg.b"}
    assert graph["pkg.c"] == {"pkg.b"}  # the submodule, not the package's __init__
    assert cycles(graph) == [["pkg.b", "pkg.sub.a"]]


def test_a_tree_without_circles_passes(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        {
            "__init__.py": "from pkg.top import run\n",
            "top.py": "from pkg import leaf\nfrom pkg.leaf import VALUE\nrun = VALUE\n",
            "leaf.py": "import os\nVALUE = os.sep\n",
        },
    )
    graph = import_graph(root, "pkg")
    assert graph == {"pkg": {"pkg.top"}, "pkg.top": {"pkg.leaf"}, "pkg.leaf": set()}
    assert cycles(graph) == []
