"""Checking a spec leaves no reference cycle that holds its AST or semantic model.

A batch `envdsl check` makes each spec's tree, types and tables (thousands of objects a spec)
and drops them when the spec is done. Held by a cycle, they wait for the cyclic garbage
collector, whose passes then walk and free them: about a tenth of a batch's time before
close_effects' recursive `visit` and BodyChecker's alias lookup stopped making such cycles.
Freed by reference counting, they go as soon as the result does.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from envdsl import pipeline
from envdsl.semantics.model import CheckedSpec
from envdsl.syntax import ast
from envdsl.util.source import SourceFile

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _cyclic_garbage_after(check: object) -> list[object]:
    """What the cyclic collector finds once `check()`'s result is dropped (nothing else
    collected meanwhile)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        assert callable(check)
        check()  # its result is dropped at once
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_enabled:
            gc.enable()


@pytest.mark.parametrize(
    "name, verify", [("sleep_tracking", True), ("clinic_scheduling", True), ("hris", False)]
)
def test_a_checked_spec_is_freed_by_reference_counting(name: str, verify: bool) -> None:
    path = EXAMPLES / f"{name}.env"
    pipeline.check_file(path, verify=verify)  # first imports and caches out of the way
    garbage = _cyclic_garbage_after(lambda: pipeline.check_file(path, verify=verify))
    held = [
        type(item).__name__
        for item in garbage
        if isinstance(item, (CheckedSpec, ast.SpecFile, ast.EnvDecl, ast.ToolDecl))
    ]
    assert held == []


def test_a_spec_with_a_syntax_error_leaves_no_cycle_either() -> None:
    text = (EXAMPLES / "sleep_tracking.env").read_text(encoding="utf-8")
    source = SourceFile("broken.env", text.replace("}", "", 1))
    pipeline.check_source(source)
    garbage = _cyclic_garbage_after(lambda: pipeline.check_source(source))
    assert not [item for item in garbage if isinstance(item, (CheckedSpec, ast.SpecFile))]
