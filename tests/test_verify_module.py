"""The module verification generates and runs in memory (pipeline._verify): nothing of it may
outlive the check, since `envdsl check` of a directory loads one per spec with tasks."""

from __future__ import annotations

import gc
import types
import weakref
from pathlib import Path

import pytest

import envdsl.generated.modules
from envdsl.pipeline import check_file

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("name", ["online_shop", "clinic_scheduling"])
def test_the_verify_module_is_freed_after_the_check(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runtime cache keyed by a generated class (record fields, sizers) kept each checked
    spec's whole module alive: a batch check grew by ~150 KB a spec, and every full garbage
    collection walked all of it."""
    loaded: list[weakref.ref[type]] = []  # its classes (they hold its globals, not it)
    load = envdsl.generated.modules.load_module

    def watched(source: str, module_name: str, *, register: bool = True) -> types.ModuleType:
        module = load(source, module_name, register=register)
        loaded.extend(
            weakref.ref(value)
            for value in vars(module).values()
            if isinstance(value, type) and value.__module__ == module.__name__
        )
        return module

    monkeypatch.setattr(envdsl.generated.modules, "load_module", watched)
    result = check_file(EXAMPLES / f"{name}.env")
    assert result.ok and result.task_reports and loaded
    del result
    gc.collect()
    assert [ref() for ref in loaded if ref() is not None] == []
